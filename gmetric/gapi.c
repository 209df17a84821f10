/* SPDX-License-Identifier: BSD-2-Clause */
/* libganglia's entry points through dlopen(3) (see gapi.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "err.h"
#include "gapi.h"

#ifndef LH_GANGLIA_SONAME
#define LH_GANGLIA_SONAME "libganglia.so.0"
#endif

const char gapi_soname[] = LH_GANGLIA_SONAME;

/* A symbol's name and where its address goes. */
struct gapi_sym {
	const char *name;
	size_t off; /* offset of its pointer in struct gapi */
};

#define SYM(field, name)                                                       \
	{                                                                      \
		name, offsetof(struct gapi, field)                             \
	}

static const struct gapi_sym gapi_syms[] = {
    SYM(pool_create, "Ganglia_pool_create"),
    SYM(pool_destroy, "Ganglia_pool_destroy"),
    SYM(gmond_config_create, "Ganglia_gmond_config_create"),
    SYM(udp_send_channels_create, "Ganglia_udp_send_channels_create"),
    SYM(metric_create, "Ganglia_metric_create"),
    SYM(metric_set, "Ganglia_metric_set"),
    SYM(metadata_add, "Ganglia_metadata_add"),
    SYM(metadata_send, "Ganglia_metadata_send"),
    SYM(value_send, "Ganglia_value_send"),
    SYM(metric_destroy, "Ganglia_metric_destroy"),
    SYM(xdr_metadata_msg, "xdr_Ganglia_metadata_msg"),
    SYM(xdr_value_msg, "xdr_Ganglia_value_msg"),
    SYM(xdrmem_create, "xdrmem_create"),
};

int
gapi_load(struct gapi *api, const char *soname, struct lh_err *err)
{
	struct gapi got;
	void *lib;
	size_t i;

	memset(&got, 0, sizeof(got));
	/* RTLD_NOW: a library that lacks a symbol it needs fails here, at
	 * start-up, not at the first metric.  RTLD_LOCAL: its names (and
	 * APR's) stay out of the way of everything else. */
	lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *why = dlerror();

		return lh_err_set(err, 0, -ENOENT,
		    "cannot load libganglia (%s): %s; is libganglia1 "
		    "installed?",
		    soname, why != NULL ? why : "unknown error");
	}
	for (i = 0; i < sizeof(gapi_syms) / sizeof(gapi_syms[0]); i++) {
		void *fn = dlsym(lib, gapi_syms[i].name);

		if (fn == NULL) {
			/* The handle stays open, like a good one would:
			 * closing a library APR initialised is not safe. */
			return lh_err_set(err, 0, -ENOENT,
			    "%s has no %s: not a libganglia this version "
			    "knows",
			    soname, gapi_syms[i].name);
		}
		/* POSIX guarantees a data pointer from dlsym() converts to
		 * a function pointer; memcpy says so without a cast. */
		memcpy((char *)&got + gapi_syms[i].off, &fn, sizeof(fn));
	}
	*api = got;
	return 0;
}
