/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The libganglia functions the sink calls, found at run time.
 *
 * One binary plays every role, but only an aggregator or a relay with a
 * gmond_conf sends to Ganglia.  Linked at build time, libganglia and what
 * it pulls in (APR, expat, libtirpc and through it Kerberos) would be
 * mapped into every gatherer too, about 1 MB of its resident memory on an
 * OSS for nothing (docs/performance.md).  So the sink opens the library
 * when it is first asked to send, by its soname, and keeps it: it is
 * never closed, as APR may leave handlers behind.
 */
#ifndef LH_GAPI_H
#define LH_GAPI_H

#include <ganglia.h>

struct lh_err;

struct gapi {
	Ganglia_pool (*pool_create)(Ganglia_pool parent);
	void (*pool_destroy)(Ganglia_pool pool);
	Ganglia_gmond_config (*gmond_config_create)(char *path, int fallback);
	Ganglia_udp_send_channels (*udp_send_channels_create)(Ganglia_pool p,
	    Ganglia_gmond_config config);
	Ganglia_metric (*metric_create)(Ganglia_pool parent);
	int (*metric_set)(Ganglia_metric m, char *name, char *value, char *type,
	    char *units, unsigned slope, unsigned tmax, unsigned dmax);
	void (*metadata_add)(Ganglia_metric m, char *name, char *value);
	int (*metadata_send)(Ganglia_metric m, Ganglia_udp_send_channels ch);
	int (*value_send)(Ganglia_metric m, Ganglia_udp_send_channels ch);
	void (*metric_destroy)(Ganglia_metric m);
	/* The packets' XDR encoders libganglia sends with (its own, so the
	 * bytes are its bytes), and libtirpc's memory stream they write
	 * to, found through libganglia's dependencies. */
	bool_t (*xdr_metadata_msg)(XDR *x, Ganglia_metadata_msg *m);
	bool_t (*xdr_value_msg)(XDR *x, Ganglia_value_msg *m);
	void (*xdrmem_create)(XDR *x, char *buf, u_int size, enum xdr_op op);
};

/* The soname the sink opens (CMake's LH_GANGLIA_SONAME). */
extern const char gapi_soname[];

/* Open the library soname (gapi_soname) and fill api.  Returns 0, or
 * -ENOENT (not installed, or a symbol missing) with err naming what and
 * why. */
int gapi_load(struct gapi *api, const char *soname, struct lh_err *err);

#endif
