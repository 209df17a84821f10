/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A parsed file into struct lh_config: values copied, defaults that
 * follow the interval worked out, and the checks that need more than one
 * key ("file: key: reason", without a line: they are not on one).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfgint.h"
#include "cidr.h"
#include "err.h"
#include "mdops.h"

static char *
dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

/* A key of the ganglia section, read where the file set it (cfgkeys.c):
 * in the section, or at its old place at the top level. */
static cfg_t *
ganglia(cfg_t *cfg, const char *key)
{
	return cfgkeys_where(cfg, cfgkeys_find(key));
}

int
cfgfill_list(cfg_t *cfg, const char *key, char ***ret, size_t *ret_n)
{
	unsigned n = cfg_size(cfg, key), i;

	*ret = NULL;
	*ret_n = 0;
	if (n == 0)
		return 0;
	*ret = calloc(n, sizeof(**ret));
	if (*ret == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		(*ret)[i] = strdup(cfg_getnstr(cfg, key, i));
		if ((*ret)[i] == NULL)
			return -ENOMEM;
		(*ret_n)++;
	}
	return 0;
}

/* Role, interval and the protocol limits. */
static int
fill_core(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	const char *role = cfg_getstr(cfg, "role");

	if (strcmp(role, "aggregator") == 0)
		c->role = LH_ROLE_AGGREGATOR;
	else if (strcmp(role, "relay") == 0)
		c->role = LH_ROLE_RELAY;
	else
		c->role = LH_ROLE_GATHERER;
	c->interval = (unsigned)cfg_getint(cfg, "interval");
	c->max_frame = (unsigned)cfg_getint(cfg, "max_frame");
	c->handshake_timeout = (unsigned)cfg_getint(cfg, "handshake_timeout");
	c->read_timeout = (unsigned)cfg_getint(cfg, "read_timeout");
	c->max_connections = (unsigned)cfg_getint(cfg, "max_connections");
	/* A peer that sends one batch an interval must never look idle
	 * (docs/protocol.md section 6). */
	if (c->read_timeout != 0 && c->read_timeout <= c->interval)
		return lh_err_set(err, 0, -EINVAL,
		    "%s: read_timeout: %u s is not above the interval (%u s)",
		    c->path, c->read_timeout, c->interval);
	return 0;
}

/* name: empty means the host name, which must then do as one. */
static int
fill_name(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	char host[256];

	c->name = dup_or_null(cfg_getstr(cfg, "name"));
	if (c->name == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	if (c->name[0] != '\0')
		return 0;
	free(c->name);
	if (gethostname(host, sizeof(host)) < 0)
		(void)snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	c->name = strdup(host);
	if (c->name == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	if (c->name[0] == '\0' || !cfgcheck_name_ok(c->name))
		return lh_err_set(err, 0, -EINVAL,
		    "%s: name: the host name cannot be used as this "
		    "instance's name: set one",
		    c->path);
	return 0;
}

/* The gatherer's side: where it reads, what, and where it sends. */
static int
fill_gatherer(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	const char *server = cfg_getstr(cfg, "server");

	c->lustre_root = dup_or_null(cfg_getstr(cfg, "lustre_root"));
	c->secret_file = dup_or_null(cfg_getstr(cfg, "secret_file"));
	c->state_dir = dup_or_null(cfg_getstr(cfg, "state_dir"));
	c->user = dup_or_null(cfg_getstr(cfg, "user"));
	if (c->lustre_root == NULL || c->secret_file == NULL ||
	    c->state_dir == NULL || c->user == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	if (server != NULL && server[0] != '\0' &&
	    cfgcheck_host_port(server, false, &c->server_host,
	        &c->server_port) < 0)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	if (cfgfill_list(cfg, "filesystems", &c->filesystems,
	        &c->nfilesystems) < 0)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	return 0;
}

/* The listener, the NID-to-host view and the expected gatherers. */
static int
fill_listener(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	const char *hosts = cfg_getstr(cfg, "hosts_file");

	if (cfgcheck_host_port(cfg_getstr(cfg, "listen"), true, &c->listen_host,
	        &c->listen_port) < 0 ||
	    (hosts[0] != '\0' && (c->hosts_file = strdup(hosts)) == NULL) ||
	    cfgfill_list(cfg, "dns_servers", &c->dns_servers,
	        &c->ndns_servers) < 0 ||
	    cfgfill_list(cfg, "rewrite", &c->rewrites, &c->nrewrites) < 0 ||
	    cfgfill_list(cfg, "gatherers", &c->gatherers, &c->ngatherers) < 0)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	c->dns = cfg_getbool(cfg, "dns") != cfg_false;
	return 0;
}

/* The ganglia section, and the metrics every output is given. */
static int
fill_metrics(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	cfg_t *sec;
	unsigned i;

	c->gmond_conf =
	    dup_or_null(cfg_getstr(ganglia(cfg, "gmond_conf"), "gmond_conf"));
	c->totals_host =
	    dup_or_null(cfg_getstr(ganglia(cfg, "totals_host"), "totals_host"));
	if (c->gmond_conf == NULL || c->totals_host == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	c->extra_metrics = cfg_getbool(cfg, "extra_metrics") != cfg_false;
	for (i = 0; i < cfg_size(cfg, "metadata_ops"); i++) {
		int k = mdops_lookup(cfg_getnstr(cfg, "metadata_ops", i));

		c->metadata_ops |=
		    k >= 0 ? (uint32_t)1 << k : ((uint32_t)1 << MDOPS_N) - 1;
	}
	c->metadata_interval =
	    (unsigned)cfg_getint(ganglia(cfg, "metadata_interval"),
	        "metadata_interval");
	/* pace exists only in the section (no old place to read it at). */
	sec = cfg_getsec(cfg, "ganglia");
	c->ganglia_pace = sec != NULL ? (unsigned)cfg_getint(sec, "pace") :
	                                CONFIG_DEFAULT_GANGLIA_PACE;
	return 0;
}

/* Defaults that follow the interval: a sweep closes a quarter of an
 * interval after its boundary at the latest; gmond calls a metric stale
 * after tmax and deletes it after dmax. */
static int
fill_timing(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	double deadline = cfg_getfloat(cfg, "deadline");

	/* A relay closes earlier, so that what it sends on reaches the
	 * clusters' aggregators before their own deadline (a quarter). */
	if (deadline == 0)
		c->deadline_ms =
		    c->interval * (c->role == LH_ROLE_RELAY ? 125 : 250);
	else if (deadline * 1000 >= (double)c->interval * 1000)
		return lh_err_set(err, 0, -EINVAL,
		    "%s: deadline: %g s is not below the interval (%u s)",
		    c->path, deadline, c->interval);
	else
		c->deadline_ms = (unsigned)(deadline * 1000 + 0.5);
	c->tmax = (unsigned)cfg_getint(ganglia(cfg, "tmax"), "tmax");
	if (c->tmax == 0)
		c->tmax = c->interval * 3 > 60 ? c->interval * 3 : 60;
	c->dmax = (unsigned)cfg_getint(ganglia(cfg, "dmax"), "dmax");
	if (c->dmax == 0)
		c->dmax = c->interval * 10 > 600 ? c->interval * 10 : 600;
	return 0;
}

/* The filesystem sections: each filesystem's metric prefix. */
static int
fill_prefixes(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	unsigned i, n = cfg_size(cfg, "filesystem");

	if (n == 0)
		return 0;
	c->prefixes = calloc(n, sizeof(*c->prefixes));
	if (c->prefixes == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		cfg_t *sec = cfg_getnsec(cfg, "filesystem", i);
		const char *fs = cfg_title(sec);
		const char *prefix = cfg_getstr(sec, "metric_prefix");

		if (fs == NULL || !cfgcheck_fsname_ok(fs))
			return lh_err_set(err, 0, -EINVAL,
			    "%s: filesystem '%s': not a Lustre fsname (1-8 of "
			    "A-Z a-z 0-9 _ -)",
			    c->path, fs != NULL ? fs : "");
		c->prefixes[i].fs = strdup(fs);
		c->prefixes[i].prefix = strdup(prefix[0] != '\0' ? prefix : fs);
		c->nprefixes++;
		if (c->prefixes[i].fs == NULL || c->prefixes[i].prefix == NULL)
			return lh_err_set(err, 0, -ENOMEM, "out of memory");
	}
	return 0;
}

/* Listener admission (docs/reliability.md, findings 1 and 15). */
static int
fill_admission(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	unsigned n = cfg_size(cfg, "allow");

	c->frame_timeout = (unsigned)cfg_getint(cfg, "frame_timeout");
	c->max_unauthenticated =
	    (unsigned)cfg_getint(cfg, "max_unauthenticated");
	c->max_per_source = (unsigned)cfg_getint(cfg, "max_per_source");
	c->accept_rate = (unsigned)cfg_getint(cfg, "accept_rate");
	c->accept_burst = (unsigned)cfg_getint(cfg, "accept_burst");
	if (n == 0)
		return 0;
	c->allow = calloc(n, sizeof(*c->allow));
	if (c->allow == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	for (unsigned i = 0; i < n; i++) {
		if (cidr_parse(cfg_getnstr(cfg, "allow", i), &c->allow[i],
		        err) < 0)
			return -EINVAL; /* cfgcheck_allow saw it first */
	}
	c->nallow = n;
	return 0;
}

int
cfgfill_config(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	static int (*const steps[])(struct lh_config *, cfg_t *,
	    struct lh_err *) = {fill_core, fill_gatherer, fill_name,
	    fill_listener, fill_metrics, fill_timing, fill_prefixes,
	    fill_admission, cfgfill_binds, cfgfill_routes, cfgfill_prom,
	    cfgfill_http};
	size_t i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int rc = steps[i](c, cfg, err);

		if (rc < 0)
			return rc;
	}
	return 0;
}
