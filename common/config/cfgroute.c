/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The relay's route sections: each names its LNet networks and its
 * downstream; no network may go to two routes (netroute.h decides).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfgint.h"
#include "err.h"
#include "netroute.h"

/* Route i, from its section, into c->routes[i]; its networks into t;
 * the default route if it is the one named dflt. */
static int
route_fill(struct lh_config *c, struct netroute *t, unsigned i, cfg_t *sec,
    const char *dflt, struct lh_err *err)
{
	struct lh_route *r = &c->routes[i];
	const char *name = cfg_title(sec);
	const char *server = cfg_getstr(sec, "server");
	struct lh_err e;
	size_t j;

	c->nroutes++;
	if (name == NULL || !cfgcheck_name_ok(name) || name[0] == '\0')
		return lh_err_set(err, 0, -EINVAL,
		    "%s: route '%s': not 1-63 printable characters "
		    "without blanks",
		    c->path, name != NULL ? name : "");
	if (server[0] == '\0')
		return lh_err_set(err, 0, -EINVAL, "%s: route '%s': no server",
		    c->path, name);
	if ((r->name = strdup(name)) == NULL ||
	    cfgcheck_host_port(server, false, &r->host, &r->port) < 0 ||
	    cfgfill_list(sec, "networks", &r->networks, &r->nnetworks) < 0)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	if (r->nnetworks == 0)
		return lh_err_set(err, 0, -EINVAL,
		    "%s: route '%s': no networks", c->path, name);
	for (j = 0; j < r->nnetworks; j++) {
		if (netroute_add(t, i, r->networks[j], &e) < 0)
			return lh_err_set(err, 0, -EINVAL, "%s: route '%s': %s",
			    c->path, name, e.reason);
	}
	if (dflt[0] != '\0' && strcmp(dflt, name) == 0)
		c->default_route = (int)i;
	return 0;
}

static int
routes_fill_all(struct lh_config *c, cfg_t *cfg, unsigned n, struct lh_err *err)
{
	const char *dflt = cfg_getstr(cfg, "default_route");
	struct netroute *t;
	unsigned i;
	int rc = 0;

	c->routes = calloc(n, sizeof(*c->routes));
	t = netroute_new();
	if (c->routes == NULL || t == NULL) {
		netroute_free(t);
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n && rc == 0; i++)
		rc = route_fill(c, t, i, cfg_getnsec(cfg, "route", i), dflt,
		    err);
	netroute_free(t);
	if (rc == 0 && dflt[0] != '\0' && c->default_route < 0)
		rc = lh_err_set(err, 0, -EINVAL,
		    "%s: default_route: no route '%s'", c->path, dflt);
	return rc;
}

int
cfgfill_routes(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	unsigned n = cfg_size(cfg, "route");

	c->default_route = -1;
	c->spoof = cfg_getbool(cfg, "spoof") != cfg_false;
	if (n == 0 && c->role == LH_ROLE_RELAY)
		return lh_err_set(err, 0, -EINVAL,
		    "%s: a relay needs at least one route section", c->path);
	if (n == 0)
		return 0;
	if (n > NETROUTE_MAX_ROUTES)
		return lh_err_set(err, 0, -EINVAL, "%s: more than %d routes",
		    c->path, NETROUTE_MAX_ROUTES);
	return routes_fill_all(c, cfg, n, err);
}
