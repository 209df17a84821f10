/* SPDX-License-Identifier: BSD-2-Clause */
/* Where lharvest finds the daemon: the http section of its configuration. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "err.h"
#include "lharvest.h"

/* The documented default of http { listen } (docs/api.md section 1). */
#define LHC_DEFAULT_TCP "127.0.0.1:8023"

int
lharvest_locate(struct lhc *c, const char *conf, const char *def)
{
	struct lh_config *cfg = NULL;
	struct lh_err err;
	int ret;

	if (conf == NULL && access(def, F_OK) < 0 && errno == ENOENT)
		return lhc_set_tcp(c, LHC_DEFAULT_TCP);
	if (config_load(conf ? conf : def, &cfg, &err) < 0) {
		(void)fprintf(stderr, "lharvest: %s\n", err.reason);
		return -1;
	}
	ret = lhc_set_tcp(c, LHC_DEFAULT_TCP);
	config_free(cfg);
	return ret;
}
