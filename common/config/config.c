/* SPDX-License-Identifier: BSD-2-Clause */
/* libconfuse file -> struct lh_config, with line-precise errors. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <confuse.h>

#include "cidr.h"
#include "config.h"
#include "mdops.h"
#include "mprefix.h"
#include "netroute.h"
#include "err.h"

/*
 * libconfuse's error callback gets no user pointer, so the one error slot
 * of the config_load() call in progress is reached through this variable.
 * It is set and cleared inside config_load() only, and thread-local, so
 * nothing outlives the call.
 */
static _Thread_local struct lh_err *parse_err;

static void confuse_err_cb(cfg_t *cfg, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void
confuse_err_cb(cfg_t *cfg, const char *fmt, va_list ap)
{
	char msg[LH_ERR_REASON_MAX];

	if (parse_err == NULL || parse_err->reason[0] != '\0')
		return; /* keep the first error: it is the cause */
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	if (cfg != NULL && cfg->filename != NULL && cfg->line > 0)
		(void)lh_err_set(parse_err, (unsigned)cfg->line, -EINVAL,
		    "%s:%d: %s", cfg->filename, cfg->line, msg);
	else if (cfg != NULL && cfg->filename != NULL)
		(void)lh_err_set(parse_err, 0, -EINVAL, "%s: %s", cfg->filename,
		    msg);
	else
		(void)lh_err_set(parse_err, 0, -EINVAL, "%s", msg);
}

static int
validate_role(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (strcmp(v, "gatherer") != 0 && strcmp(v, "aggregator") != 0 &&
	    strcmp(v, "relay") != 0) {
		cfg_error(cfg,
		    "role: '%s' is not one of gatherer, aggregator, relay", v);
		return -1;
	}
	return 0;
}

static int
validate_interval(cfg_t *cfg, cfg_opt_t *opt)
{
	long v = cfg_opt_getnint(opt, cfg_opt_size(opt) - 1);

	if (v < 1 || v > 3600) {
		cfg_error(cfg,
		    "interval: %ld is not between 1 and 3600 seconds", v);
		return -1;
	}
	return 0;
}

/* Lustre fsnames are 1-8 characters of [A-Za-z0-9_-]. */
static bool
fsname_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 8 &&
	    strspn(s,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789_-") == n;
}

static int
validate_filesystems(cfg_t *cfg, cfg_opt_t *opt)
{
	unsigned i;

	for (i = 0; i < cfg_opt_size(opt); i++) {
		const char *v = cfg_opt_getnstr(opt, i);

		if (!fsname_ok(v)) {
			cfg_error(cfg,
			    "filesystems: '%s' is not a Lustre fsname "
			    "(1-8 of A-Z a-z 0-9 _ -)",
			    v);
			return -1;
		}
	}
	return 0;
}

/* route "name" { networks = {...} }: LNet network patterns. */
static int
validate_networks(cfg_t *cfg, cfg_opt_t *opt)
{
	struct lh_err e;
	unsigned i;

	if (cfg_opt_size(opt) == 0) {
		cfg_error(cfg, "networks: at least one LNet network");
		return -1;
	}
	for (i = 0; i < cfg_opt_size(opt); i++) {
		if (netroute_pattern_check(cfg_opt_getnstr(opt, i), &e) < 0) {
			cfg_error(cfg, "networks: %s", e.reason);
			return -1;
		}
	}
	return 0;
}

/* metadata_ops: operation names of mdops.h, or "all". */
static int
validate_metadata_ops(cfg_t *cfg, cfg_opt_t *opt)
{
	unsigned i;

	for (i = 0; i < cfg_opt_size(opt); i++) {
		const char *v = cfg_opt_getnstr(opt, i);

		if (strcmp(v, "all") != 0 && mdops_lookup(v) < 0) {
			cfg_error(cfg,
			    "metadata_ops: '%s' is not a metadata operation "
			    "(all, open, close, mknod, link, unlink, mkdir, "
			    "rmdir, rename, getattr, setattr, getxattr, "
			    "setxattr, statfs, sync, punch, migrate, "
			    "fallocate)",
			    v);
			return -1;
		}
	}
	return 0;
}

/* "host", "host:port", "[v6addr]:port"; port 0 (a port the kernel
 * picks, for tests) only where port0_ok. */
static int
split_host_port_x(const char *s, bool port0_ok, char **ret_host,
    unsigned *ret_port)
{
	const char *colon, *host = s, *hend;
	unsigned long port = CONFIG_DEFAULT_PORT;
	char *end;

	if (s[0] == '[') {
		hend = strchr(s, ']');
		if (hend == NULL)
			return -EINVAL;
		host = s + 1;
		colon = hend[1] == ':' ? hend + 1 : NULL;
		if (hend[1] != '\0' && colon == NULL)
			return -EINVAL;
	} else {
		colon = strrchr(s, ':');
		if (colon != NULL && strchr(s, ':') != colon)
			return -EINVAL; /* bare IPv6 needs brackets */
		hend = colon != NULL ? colon : s + strlen(s);
	}
	if (hend == host)
		return -EINVAL;
	if (colon != NULL) {
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
		if (colon[1] == '\0' || *end != '\0' || errno != 0 ||
		    (port == 0 && !port0_ok) || port > 65535)
			return -EINVAL;
	}
	if (ret_host != NULL) {
		*ret_host = strndup(host, (size_t)(hend - host));
		if (*ret_host == NULL)
			return -ENOMEM;
	}
	if (ret_port != NULL)
		*ret_port = (unsigned)port;
	return 0;
}

static int
split_host_port(const char *s, char **ret_host, unsigned *ret_port)
{
	return split_host_port_x(s, false, ret_host, ret_port);
}

static int
validate_server(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (v[0] != '\0' && split_host_port(v, NULL, NULL) < 0) {
		cfg_error(cfg, "server: '%s' is not host or host:port", v);
		return -1;
	}
	return 0;
}

/* An identity travels in HELLO: 1-63 bytes of printable ASCII without
 * blanks (docs/protocol.md section 6); empty means the host name. */
static bool
name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n > 63)
		return false;
	for (; *s != '\0'; s++) {
		if (*s <= ' ' || *s > '~')
			return false;
	}
	return true;
}

static int
validate_name(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (!name_ok(v)) {
		cfg_error(cfg,
		    "name: '%s' is not 1-63 printable characters without "
		    "blanks",
		    v);
		return -1;
	}
	return 0;
}

/* A user name as useradd(8) takes it, or "" for none. */
static int
validate_user(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);
	size_t i, n = strlen(v);
	bool ok = n < 32 && (n == 0 || v[0] != '-');

	for (i = 0; ok && i < n; i++)
		ok = (v[i] >= 'a' && v[i] <= 'z') ||
		    (v[i] >= 'A' && v[i] <= 'Z') ||
		    (v[i] >= '0' && v[i] <= '9') || v[i] == '_' ||
		    v[i] == '-' || v[i] == '.';
	if (!ok) {
		cfg_error(cfg, "user: '%s' is not a user name", v);
		return -1;
	}
	return 0;
}

/*
 * totals_host becomes the host of a Ganglia spoof, "ip:host", and is
 * copied into gmond's XML: the sink (gmetric/gcache.c) refuses ':',
 * quotes and XML's specials, so refuse them here, where -n sees them,
 * instead of at every send.
 */
static int
validate_totals_host(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (v[0] == '\0' || !name_ok(v) || strpbrk(v, "\"'<>&:") != NULL) {
		cfg_error(cfg,
		    "totals_host: '%s' is not 1-63 printable characters "
		    "without blanks, quotes, ':', '<', '>' or '&' (it is a "
		    "Ganglia host name)",
		    v);
		return -1;
	}
	return 0;
}

static int
validate_listen(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (split_host_port_x(v, true, NULL, NULL) < 0) {
		cfg_error(cfg, "listen: '%s' is not address or address:port",
		    v);
		return -1;
	}
	return 0;
}

static int
validate_dns_servers(cfg_t *cfg, cfg_opt_t *opt)
{
	unsigned i;

	for (i = 0; i < cfg_opt_size(opt); i++) {
		const char *v = cfg_opt_getnstr(opt, i);

		if (split_host_port(v, NULL, NULL) < 0) {
			cfg_error(cfg,
			    "dns_servers: '%s' is not address or "
			    "address:port",
			    v);
			return -1;
		}
	}
	return 0;
}

static int
validate_gatherers(cfg_t *cfg, cfg_opt_t *opt)
{
	unsigned i;

	for (i = 0; i < cfg_opt_size(opt); i++) {
		const char *v = cfg_opt_getnstr(opt, i);

		if (v[0] == '\0' || !name_ok(v)) {
			cfg_error(cfg,
			    "gatherers: '%s' is not 1-63 printable characters "
			    "without blanks",
			    v);
			return -1;
		}
	}
	return 0;
}

/* Ganglia metric names: the one rule of mprefix.h. */
static int
validate_prefix(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (!mprefix_ok(v)) {
		cfg_error(cfg, "metric_prefix: '%s' is not 1-%d of %s", v,
		    MPREFIX_MAX, MPREFIX_CHARS_TEXT);
		return -1;
	}
	return 0;
}

static int
validate_deadline(cfg_t *cfg, cfg_opt_t *opt)
{
	double v = cfg_opt_getnfloat(opt, cfg_opt_size(opt) - 1);

	/* Written so that nan (which compares false with everything, and
	 * libconfuse parses) fails too: it would reach a cast to unsigned. */
	if (!(v >= 0 && v <= 3600)) {
		cfg_error(cfg, "deadline: %g is not between 0 and 3600 seconds",
		    v);
		return -1;
	}
	return 0;
}

static int
validate_path(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (v[0] != '/') {
		cfg_error(cfg, "%s: '%s' is not an absolute path", opt->name,
		    v);
		return -1;
	}
	return 0;
}

/* Integer keys with a range: one validator per range. */
static int
validate_range(cfg_t *cfg, cfg_opt_t *opt, long lo, long hi, const char *unit)
{
	long v = cfg_opt_getnint(opt, cfg_opt_size(opt) - 1);

	if (v < lo || v > hi) {
		cfg_error(cfg, "%s: %ld is not between %ld and %ld%s",
		    opt->name, v, lo, hi, unit);
		return -1;
	}
	return 0;
}

static int
validate_seconds(cfg_t *cfg, cfg_opt_t *opt)
{
	return validate_range(cfg, opt, 0, 86400L * 7, " seconds");
}

/* A path, or "" for none. */
static int
validate_opt_path(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (v[0] != '\0' && v[0] != '/') {
		cfg_error(cfg, "%s: '%s' is not an absolute path", opt->name,
		    v);
		return -1;
	}
	return 0;
}

static int
validate_max_frame(cfg_t *cfg, cfg_opt_t *opt)
{
	return validate_range(cfg, opt, 4096, 256L * 1024 * 1024, " bytes");
}

static int
validate_timeout(cfg_t *cfg, cfg_opt_t *opt)
{
	return validate_range(cfg, opt,
	    strcmp(opt->name, "read_timeout") == 0 ? 0 : 1, 86400, " seconds");
}

static int
validate_max_connections(cfg_t *cfg, cfg_opt_t *opt)
{
	return validate_range(cfg, opt, 1, 65536, "");
}

/* Listener admission keys (findings 1 and 15 of issue 15). */
static int
validate_admission(cfg_t *cfg, cfg_opt_t *opt)
{
	return validate_range(cfg, opt, 1,
	    strcmp(opt->name, "frame_timeout") == 0 ? 86400 : 1000000, "");
}

static int
validate_allow(cfg_t *cfg, cfg_opt_t *opt)
{
	for (unsigned i = 0; i < cfg_opt_size(opt); i++) {
		struct lh_err e;

		if (cidr_parse(cfg_opt_getnstr(opt, i), &(struct cidr){0}, &e) <
		    0) {
			cfg_error(cfg, "allow: %s", e.reason);
			return -1;
		}
	}
	return 0;
}

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
			return -EINVAL; /* validate_allow saw it first */
	}
	c->nallow = n;
	return 0;
}

/* gatherer_networks (issue 15, item 2): "NAME NET [NET...]", the name
 * first, then the networks it may connect from. */
static void
bind_clear(struct lh_bind *b)
{
	free(b->name);
	free(b->nets);
	memset(b, 0, sizeof(*b));
}

static int
bind_token(struct lh_bind *b, const char *v, const char *p, size_t len,
    struct lh_err *err)
{
	char tok[CIDR_STR_MAX];
	struct cidr *n;
	struct lh_err e;

	if (b->name == NULL) {
		for (size_t i = 0; i < len; i++) {
			if (p[i] < '!' || p[i] > '~')
				len = 0;
		}
		if (len == 0 || len > 63)
			return lh_err_set(err, 0, -EINVAL,
			    "gatherer_networks: '%s': a name of 1-63 "
			    "printable characters first",
			    v);
		b->name = strndup(p, len);
		return b->name == NULL ? -ENOMEM : 0;
	}
	if (b->nnets == CONFIG_BIND_NETS_MAX)
		return lh_err_set(err, 0, -EINVAL,
		    "gatherer_networks: '%s': more than %d networks", v,
		    CONFIG_BIND_NETS_MAX);
	if (len >= sizeof(tok))
		return lh_err_set(err, 0, -EINVAL,
		    "gatherer_networks: '%s': '%.*s' is not a network", v,
		    (int)len, p);
	memcpy(tok, p, len);
	tok[len] = '\0';
	n = realloc(b->nets, (b->nnets + 1) * sizeof(*n));
	if (n == NULL)
		return -ENOMEM;
	b->nets = n;
	if (cidr_parse(tok, &b->nets[b->nnets], &e) < 0)
		return lh_err_set(err, 0, -EINVAL,
		    "gatherer_networks: '%s': %s", v, e.reason);
	b->nnets++;
	return 0;
}

static int
bind_parse(const char *v, struct lh_bind *ret, struct lh_err *err)
{
	struct lh_bind b;
	const char *p = v;
	int rc = 0;

	memset(&b, 0, sizeof(b));
	while (rc == 0) {
		size_t len;

		p += strspn(p, " \t");
		if (*p == '\0')
			break;
		len = strcspn(p, " \t");
		rc = bind_token(&b, v, p, len, err);
		p += len;
	}
	if (rc == 0 && b.nnets == 0)
		rc = lh_err_set(err, 0, -EINVAL,
		    "gatherer_networks: '%s': a name, then the networks it "
		    "may connect from",
		    v);
	if (rc < 0) {
		bind_clear(&b);
		return rc == -ENOMEM ? lh_err_set(err, 0, rc, "out of memory") :
		                       rc;
	}
	*ret = b;
	return 0;
}

static int
validate_binds(cfg_t *cfg, cfg_opt_t *opt)
{
	unsigned i, j;

	for (i = 0; i < cfg_opt_size(opt); i++) {
		struct lh_bind b, o;
		struct lh_err e;
		bool twice = false;

		if (bind_parse(cfg_opt_getnstr(opt, i), &b, &e) < 0) {
			cfg_error(cfg, "%s", e.reason);
			return -1;
		}
		for (j = 0; j < i && !twice; j++) {
			if (bind_parse(cfg_opt_getnstr(opt, j), &o, NULL) ==
			    0) {
				twice = strcmp(o.name, b.name) == 0;
				bind_clear(&o);
			}
		}
		if (twice)
			cfg_error(cfg, "gatherer_networks: '%s' named twice",
			    b.name);
		bind_clear(&b);
		if (twice)
			return -1;
	}
	return 0;
}

static int
fill_binds(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	unsigned i, n = cfg_size(cfg, "gatherer_networks");

	if (n == 0)
		return 0;
	c->binds = calloc(n, sizeof(*c->binds));
	if (c->binds == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		int rc = bind_parse(cfg_getnstr(cfg, "gatherer_networks", i),
		    &c->binds[i], err);

		if (rc < 0)
			return rc; /* validate_binds saw it first */
		c->nbinds++;
	}
	return 0;
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

/* A string list key into a fresh array. */
static int
fill_list(cfg_t *cfg, const char *key, char ***ret, size_t *ret_n)
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

static int
fill_aggregator(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	double deadline = cfg_getfloat(cfg, "deadline");
	const char *hosts = cfg_getstr(cfg, "hosts_file");
	unsigned n, i;

	if (split_host_port_x(cfg_getstr(cfg, "listen"), true, &c->listen_host,
	        &c->listen_port) < 0 ||
	    (c->gmond_conf = dup_or_null(cfg_getstr(cfg, "gmond_conf"))) ==
	        NULL ||
	    (c->totals_host = dup_or_null(cfg_getstr(cfg, "totals_host"))) ==
	        NULL ||
	    (hosts[0] != '\0' && (c->hosts_file = strdup(hosts)) == NULL) ||
	    fill_list(cfg, "dns_servers", &c->dns_servers, &c->ndns_servers) <
	        0 ||
	    fill_list(cfg, "rewrite", &c->rewrites, &c->nrewrites) < 0 ||
	    fill_list(cfg, "gatherers", &c->gatherers, &c->ngatherers) < 0)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	c->dns = cfg_getbool(cfg, "dns") != cfg_false;
	c->extra_metrics = cfg_getbool(cfg, "extra_metrics") != cfg_false;
	for (i = 0; i < cfg_size(cfg, "metadata_ops"); i++) {
		const char *op = cfg_getnstr(cfg, "metadata_ops", i);
		int k = mdops_lookup(op);

		c->metadata_ops |=
		    k >= 0 ? (uint32_t)1 << k : ((uint32_t)1 << MDOPS_N) - 1;
	}
	c->metadata_interval = (unsigned)cfg_getint(cfg, "metadata_interval");
	/* Defaults that follow the interval: a sweep closes a quarter of an
	 * interval after its boundary at the latest; gmond calls a metric
	 * stale after tmax and deletes it after dmax. */
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
	c->tmax = (unsigned)cfg_getint(cfg, "tmax");
	if (c->tmax == 0)
		c->tmax = c->interval * 3 > 60 ? c->interval * 3 : 60;
	c->dmax = (unsigned)cfg_getint(cfg, "dmax");
	if (c->dmax == 0)
		c->dmax = c->interval * 10 > 600 ? c->interval * 10 : 600;
	n = cfg_size(cfg, "filesystem");
	if (n == 0)
		return 0;
	c->prefixes = calloc(n, sizeof(*c->prefixes));
	if (c->prefixes == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		cfg_t *sec = cfg_getnsec(cfg, "filesystem", i);
		const char *fs = cfg_title(sec);
		const char *prefix = cfg_getstr(sec, "metric_prefix");

		if (fs == NULL || !fsname_ok(fs))
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

/* The relay's route sections: each names its networks and its
 * downstream; no network may go to two routes. */
static int
fill_routes(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	const char *dflt = cfg_getstr(cfg, "default_route");
	unsigned n = cfg_size(cfg, "route"), i, j;
	struct netroute *t;
	struct lh_err e;
	int rc = 0;

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
	c->routes = calloc(n, sizeof(*c->routes));
	t = netroute_new();
	if (c->routes == NULL || t == NULL) {
		netroute_free(t);
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n && rc == 0; i++) {
		cfg_t *sec = cfg_getnsec(cfg, "route", i);
		struct lh_route *r = &c->routes[i];
		const char *name = cfg_title(sec);
		const char *server = cfg_getstr(sec, "server");

		c->nroutes++;
		if (name == NULL || !name_ok(name) || name[0] == '\0') {
			rc = lh_err_set(err, 0, -EINVAL,
			    "%s: route '%s': not 1-63 printable characters "
			    "without blanks",
			    c->path, name != NULL ? name : "");
			break;
		}
		if (server[0] == '\0') {
			rc = lh_err_set(err, 0, -EINVAL,
			    "%s: route '%s': no server", c->path, name);
			break;
		}
		if ((r->name = strdup(name)) == NULL ||
		    split_host_port(server, &r->host, &r->port) < 0 ||
		    fill_list(sec, "networks", &r->networks, &r->nnetworks) <
		        0) {
			rc = lh_err_set(err, 0, -ENOMEM, "out of memory");
			break;
		}
		if (r->nnetworks == 0) {
			rc = lh_err_set(err, 0, -EINVAL,
			    "%s: route '%s': no networks", c->path, name);
			break;
		}
		for (j = 0; j < r->nnetworks; j++) {
			if (netroute_add(t, i, r->networks[j], &e) < 0) {
				rc = lh_err_set(err, 0, -EINVAL,
				    "%s: route '%s': %s", c->path, name,
				    e.reason);
				break;
			}
		}
		if (dflt[0] != '\0' && strcmp(dflt, name) == 0)
			c->default_route = (int)i;
	}
	netroute_free(t);
	if (rc == 0 && dflt[0] != '\0' && c->default_route < 0)
		rc = lh_err_set(err, 0, -EINVAL,
		    "%s: default_route: no route '%s'", c->path, dflt);
	return rc;
}

static int
config_fill(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	const char *role = cfg_getstr(cfg, "role");
	const char *server = cfg_getstr(cfg, "server");
	unsigned n;
	int rc;

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
	c->lustre_root = dup_or_null(cfg_getstr(cfg, "lustre_root"));
	c->secret_file = dup_or_null(cfg_getstr(cfg, "secret_file"));
	c->state_dir = dup_or_null(cfg_getstr(cfg, "state_dir"));
	c->name = dup_or_null(cfg_getstr(cfg, "name"));
	if (c->lustre_root == NULL || c->secret_file == NULL ||
	    c->state_dir == NULL || c->name == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	if (c->name[0] == '\0') {
		char host[256];

		free(c->name);
		if (gethostname(host, sizeof(host)) < 0)
			(void)snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		c->name = strdup(host);
		if (c->name == NULL)
			return lh_err_set(err, 0, -ENOMEM, "out of memory");
		if (c->name[0] == '\0' || !name_ok(c->name))
			return lh_err_set(err, 0, -EINVAL,
			    "%s: name: the host name cannot be used as this "
			    "instance's name: set one",
			    c->path);
	}
	if (server != NULL && server[0] != '\0' &&
	    split_host_port(server, &c->server_host, &c->server_port) < 0)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");

	n = cfg_size(cfg, "filesystems");
	if (n > 0) {
		unsigned i;

		c->filesystems = calloc(n, sizeof(*c->filesystems));
		if (c->filesystems == NULL)
			return lh_err_set(err, 0, -ENOMEM, "out of memory");
		for (i = 0; i < n; i++) {
			c->filesystems[i] =
			    strdup(cfg_getnstr(cfg, "filesystems", i));
			if (c->filesystems[i] == NULL)
				return lh_err_set(err, 0, -ENOMEM,
				    "out of memory");
			c->nfilesystems++;
		}
	}
	rc = fill_aggregator(c, cfg, err);
	if (rc < 0)
		return rc;
	rc = fill_admission(c, cfg, err);
	if (rc < 0)
		return rc;
	rc = fill_binds(c, cfg, err);
	if (rc < 0)
		return rc;
	rc = fill_routes(c, cfg, err);
	if (rc < 0)
		return rc;
	c->user = dup_or_null(cfg_getstr(cfg, "user"));
	if (c->user == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	return 0;
}

int
config_load(const char *path, struct lh_config **ret, struct lh_err *err)
{
	/* libconfuse takes a list's default as char *: give it one. */
	char no_filesystems[] = "{}";
	cfg_opt_t fs_opts[] = {
	    CFG_STR("metric_prefix", "", CFGF_NONE),
	    CFG_END(),
	};
	cfg_opt_t route_opts[] = {
	    CFG_STR_LIST("networks", no_filesystems, CFGF_NONE),
	    CFG_STR("server", "", CFGF_NONE),
	    CFG_END(),
	};
	cfg_opt_t opts[] = {
	    CFG_STR("role", "gatherer", CFGF_NONE),
	    CFG_INT("interval", CONFIG_DEFAULT_INTERVAL, CFGF_NONE),
	    CFG_STR("lustre_root", "/", CFGF_NONE),
	    CFG_STR_LIST("filesystems", no_filesystems, CFGF_NONE),
	    CFG_STR("server", "", CFGF_NONE),
	    CFG_STR("secret_file", CONFIG_DEFAULT_SECRET_FILE, CFGF_NONE),
	    CFG_STR("state_dir", CONFIG_DEFAULT_STATE_DIR, CFGF_NONE),
	    CFG_STR("name", "", CFGF_NONE),
	    CFG_INT("max_frame", CONFIG_DEFAULT_MAX_FRAME, CFGF_NONE),
	    CFG_INT("handshake_timeout", CONFIG_DEFAULT_HANDSHAKE, CFGF_NONE),
	    CFG_INT("read_timeout", 0, CFGF_NONE),
	    CFG_INT("max_connections", CONFIG_DEFAULT_MAX_CONN, CFGF_NONE),
	    CFG_STR("listen", CONFIG_DEFAULT_LISTEN, CFGF_NONE),
	    CFG_STR("gmond_conf", CONFIG_DEFAULT_GMOND_CONF, CFGF_NONE),
	    CFG_STR("hosts_file", "", CFGF_NONE),
	    CFG_BOOL("dns", cfg_true, CFGF_NONE),
	    CFG_STR_LIST("dns_servers", no_filesystems, CFGF_NONE),
	    CFG_STR_LIST("rewrite", no_filesystems, CFGF_NONE),
	    CFG_STR_LIST("gatherers", no_filesystems, CFGF_NONE),
	    CFG_FLOAT("deadline", 0, CFGF_NONE),
	    CFG_INT("tmax", 0, CFGF_NONE),
	    CFG_INT("dmax", 0, CFGF_NONE),
	    CFG_INT("metadata_interval", CONFIG_DEFAULT_META_IVL, CFGF_NONE),
	    CFG_BOOL("extra_metrics", cfg_false, CFGF_NONE),
	    CFG_STR_LIST("metadata_ops", no_filesystems, CFGF_NONE),
	    CFG_STR("totals_host", CONFIG_DEFAULT_TOTALS_HOST, CFGF_NONE),
	    CFG_SEC("filesystem", fs_opts, CFGF_MULTI | CFGF_TITLE),
	    CFG_SEC("route", route_opts,
	        CFGF_MULTI | CFGF_TITLE | CFGF_NO_TITLE_DUPES),
	    CFG_STR("default_route", "", CFGF_NONE),
	    CFG_BOOL("spoof", cfg_false, CFGF_NONE),
	    /* Listener admission. */
	    CFG_INT("frame_timeout", CONFIG_DEFAULT_FRAME_TIMEOUT, CFGF_NONE),
	    CFG_INT("max_unauthenticated", CONFIG_DEFAULT_MAX_UNAUTH,
	        CFGF_NONE),
	    CFG_INT("max_per_source", CONFIG_DEFAULT_MAX_PER_SOURCE, CFGF_NONE),
	    CFG_INT("accept_rate", CONFIG_DEFAULT_ACCEPT_RATE, CFGF_NONE),
	    CFG_INT("accept_burst", CONFIG_DEFAULT_ACCEPT_BURST, CFGF_NONE),
	    CFG_STR_LIST("allow", no_filesystems, CFGF_NONE),
	    CFG_STR("user", "", CFGF_NONE),
	    /* Names bound to networks (issue 15, item 2). */
	    CFG_STR_LIST("gatherer_networks", no_filesystems, CFGF_NONE),
	    CFG_END(),
	};
	struct lh_config *c = NULL;
	struct lh_err local;
	cfg_t *cfg;
	int rc;

	if (err == NULL)
		err = &local;
	lh_err_clear(err);
	cfg = cfg_init(opts, CFGF_NONE);
	if (cfg == NULL)
		return lh_err_set(err, 0, -ENOMEM, "%s: out of memory", path);
	(void)cfg_set_error_function(cfg, confuse_err_cb);
	(void)cfg_set_validate_func(cfg, "role", validate_role);
	(void)cfg_set_validate_func(cfg, "interval", validate_interval);
	(void)cfg_set_validate_func(cfg, "filesystems", validate_filesystems);
	(void)cfg_set_validate_func(cfg, "metadata_ops", validate_metadata_ops);
	(void)cfg_set_validate_func(cfg, "server", validate_server);
	(void)cfg_set_validate_func(cfg, "name", validate_name);
	(void)cfg_set_validate_func(cfg, "lustre_root", validate_path);
	(void)cfg_set_validate_func(cfg, "secret_file", validate_path);
	(void)cfg_set_validate_func(cfg, "state_dir", validate_path);
	(void)cfg_set_validate_func(cfg, "max_frame", validate_max_frame);
	(void)cfg_set_validate_func(cfg, "handshake_timeout", validate_timeout);
	(void)cfg_set_validate_func(cfg, "read_timeout", validate_timeout);
	(void)cfg_set_validate_func(cfg, "max_connections",
	    validate_max_connections);
	(void)cfg_set_validate_func(cfg, "listen", validate_listen);
	(void)cfg_set_validate_func(cfg, "gmond_conf", validate_path);
	(void)cfg_set_validate_func(cfg, "hosts_file", validate_opt_path);
	(void)cfg_set_validate_func(cfg, "dns_servers", validate_dns_servers);
	(void)cfg_set_validate_func(cfg, "gatherers", validate_gatherers);
	(void)cfg_set_validate_func(cfg, "deadline", validate_deadline);
	(void)cfg_set_validate_func(cfg, "tmax", validate_seconds);
	(void)cfg_set_validate_func(cfg, "dmax", validate_seconds);
	(void)cfg_set_validate_func(cfg, "metadata_interval", validate_seconds);
	(void)cfg_set_validate_func(cfg, "totals_host", validate_totals_host);
	(void)cfg_set_validate_func(cfg, "filesystem|metric_prefix",
	    validate_prefix);
	(void)cfg_set_validate_func(cfg, "route|networks", validate_networks);
	(void)cfg_set_validate_func(cfg, "frame_timeout", validate_admission);
	(void)cfg_set_validate_func(cfg, "max_unauthenticated",
	    validate_admission);
	(void)cfg_set_validate_func(cfg, "max_per_source", validate_admission);
	(void)cfg_set_validate_func(cfg, "accept_rate", validate_admission);
	(void)cfg_set_validate_func(cfg, "accept_burst", validate_admission);
	(void)cfg_set_validate_func(cfg, "allow", validate_allow);
	(void)cfg_set_validate_func(cfg, "gatherer_networks", validate_binds);
	(void)cfg_set_validate_func(cfg, "route|server", validate_server);
	(void)cfg_set_validate_func(cfg, "user", validate_user);

	parse_err = err;
	errno = 0;
	rc = cfg_parse(cfg, path);
	parse_err = NULL;
	switch (rc) {
	case CFG_SUCCESS:
		break;
	case CFG_FILE_ERROR: {
		int e = errno != 0 ? errno : ENOENT;

		rc = lh_err_set(err, 0, -e, "%s: %s", path, strerror(e));
		goto out;
	}
	default:
		if (err->reason[0] == '\0')
			(void)lh_err_set(err, 0, -EINVAL, "%s: parse error",
			    path);
		rc = -EINVAL;
		goto out;
	}

	c = calloc(1, sizeof(*c));
	if (c == NULL || (c->path = strdup(path)) == NULL) {
		rc = lh_err_set(err, 0, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	rc = config_fill(c, cfg, err);
	if (rc < 0)
		goto out;
	if (c->role == LH_ROLE_GATHERER && c->server_host == NULL) {
		/* Not fatal for --once, which never connects: the caller
		 * decides (see daemon/main.c). */
		c->server_port = CONFIG_DEFAULT_PORT;
	}
	*ret = c;
	c = NULL;
out:
	config_free(c);
	cfg_free(cfg);
	return rc;
}

static void
free_list(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
config_free(struct lh_config *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nfilesystems; i++)
		free(c->filesystems[i]);
	free(c->filesystems);
	free_list(c->dns_servers, c->ndns_servers);
	free_list(c->rewrites, c->nrewrites);
	free_list(c->gatherers, c->ngatherers);
	for (i = 0; i < c->nprefixes; i++) {
		free(c->prefixes[i].fs);
		free(c->prefixes[i].prefix);
	}
	free(c->prefixes);
	for (i = 0; i < c->nroutes; i++) {
		free(c->routes[i].name);
		free_list(c->routes[i].networks, c->routes[i].nnetworks);
		free(c->routes[i].host);
	}
	free(c->routes);
	free(c->allow);
	for (i = 0; i < c->nbinds; i++)
		bind_clear(&c->binds[i]);
	free(c->binds);
	free(c->listen_host);
	free(c->gmond_conf);
	free(c->hosts_file);
	free(c->totals_host);
	free(c->path);
	free(c->lustre_root);
	free(c->server_host);
	free(c->secret_file);
	free(c->state_dir);
	free(c->name);
	free(c->user);
	free(c);
}

unsigned
config_read_timeout(const struct lh_config *c)
{
	unsigned t = c->interval * 3;

	if (c->read_timeout != 0)
		return c->read_timeout;
	return t > 120 ? t : 120;
}

bool
config_wants_fs(const struct lh_config *c, const char *fs)
{
	size_t i;

	if (c->nfilesystems == 0)
		return true;
	for (i = 0; i < c->nfilesystems; i++) {
		if (strcmp(c->filesystems[i], fs) == 0)
			return true;
	}
	return false;
}

const char *
config_role_name(enum lh_role role)
{
	switch (role) {
	case LH_ROLE_GATHERER:
		return "gatherer";
	case LH_ROLE_AGGREGATOR:
		return "aggregator";
	case LH_ROLE_RELAY:
		return "relay";
	}
	return "?";
}

const char *
config_metric_prefix(const struct lh_config *cfg, const char *fs)
{
	size_t i;

	for (i = 0; i < cfg->nprefixes; i++) {
		if (strcmp(cfg->prefixes[i].fs, fs) == 0)
			return cfg->prefixes[i].prefix;
	}
	return fs;
}
