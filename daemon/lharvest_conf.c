/* SPDX-License-Identifier: BSD-2-Clause */
/* Where lharvest finds the daemon: the http section of its configuration. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "err.h"
#include "lharvest.h"

/* The address of cfg's http section, as lharvest asks it. */
static int
from_config(struct lhc *c, const struct lh_config *cfg)
{
	char hostport[LHC_ADDR_MAX];
	const char *h = cfg->http_listen_host;

	if (cfg->role == LH_ROLE_GATHERER) {
		(void)fprintf(stderr,
		    "lharvest: %s: a gatherer answers no questions; name an "
		    "aggregator's or relay's configuration, or -H\n",
		    cfg->path);
		return -1;
	}
	if (h == NULL && cfg->http_socket != NULL)
		return lhc_set_socket(c, cfg->http_socket);
	if (h == NULL) {
		(void)fprintf(stderr,
		    "lharvest: %s: http is off (listen = \"\" and no socket)\n",
		    cfg->path);
		return -1;
	}
	/* A listener on every address is asked on the loopback. */
	if (strcmp(h, "0.0.0.0") == 0)
		h = "127.0.0.1";
	else if (strcmp(h, "::") == 0)
		h = "::1";
	(void)snprintf(hostport, sizeof(hostport),
	    strchr(h, ':') ? "[%s]:%u" : "%s:%u", h, cfg->http_listen_port);
	return lhc_set_tcp(c, hostport);
}

int
lharvest_locate(struct lhc *c, const char *conf, const char *def)
{
	struct lh_config *cfg = NULL;
	struct lh_err err;
	int ret;

	/* No configuration where it usually is: the documented default. */
	if (conf == NULL && access(def, F_OK) < 0 && errno == ENOENT)
		return lhc_set_tcp(c, CONFIG_DEFAULT_HTTP_LISTEN);
	if (config_load(conf ? conf : def, &cfg, &err) < 0) {
		(void)fprintf(stderr, "lharvest: %s\n", err.reason);
		return -1;
	}
	ret = from_config(c, cfg);
	config_free(cfg);
	return ret;
}
