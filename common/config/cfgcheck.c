/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The value checks libconfuse calls as it parses each key (the table of
 * cfgkeys.c names one per key), so that a bad value is reported as
 * "file:line: key: reason" where it is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfgint.h"
#include "cidr.h"
#include "err.h"
#include "mdops.h"
#include "mprefix.h"
#include "netroute.h"

/* The value just set: the last of the option's values. */
static const char *
last_str(cfg_opt_t *opt)
{
	return cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);
}

int
cfgcheck_role(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = last_str(opt);

	if (strcmp(v, "gatherer") != 0 && strcmp(v, "aggregator") != 0 &&
	    strcmp(v, "relay") != 0) {
		cfg_error(cfg,
		    "role: '%s' is not one of gatherer, aggregator, relay", v);
		return -1;
	}
	return 0;
}

/* Integer keys with a range: the range is the key's, in the table. */
int
cfgcheck_range(cfg_t *cfg, cfg_opt_t *opt)
{
	const struct cfgkey *k = cfgkeys_find(opt->name);
	long v = cfg_opt_getnint(opt, cfg_opt_size(opt) - 1);

	if (k != NULL && (v < k->lo || v > k->hi)) {
		cfg_error(cfg, "%s: %ld is not between %ld and %ld%s",
		    opt->name, v, k->lo, k->hi, k->unit != NULL ? k->unit : "");
		return -1;
	}
	return 0;
}

bool
cfgcheck_fsname_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 8 &&
	    strspn(s,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789_-") == n;
}

int
cfgcheck_filesystems(cfg_t *cfg, cfg_opt_t *opt)
{
	unsigned i;

	for (i = 0; i < cfg_opt_size(opt); i++) {
		const char *v = cfg_opt_getnstr(opt, i);

		if (!cfgcheck_fsname_ok(v)) {
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
int
cfgcheck_networks(cfg_t *cfg, cfg_opt_t *opt)
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
int
cfgcheck_metadata_ops(cfg_t *cfg, cfg_opt_t *opt)
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

/* The host part of s: [v6addr] or up to the one ':'; *ret_colon the
 * port's ':' or NULL. */
static int
host_span(const char *s, const char **ret_host, const char **ret_end,
    const char **ret_colon)
{
	const char *colon, *host = s, *hend;

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
	*ret_host = host;
	*ret_end = hend;
	*ret_colon = colon;
	return 0;
}

int
cfgcheck_host_port(const char *s, bool port0_ok, char **ret_host,
    unsigned *ret_port)
{
	const char *colon, *host, *hend;
	unsigned long port = CONFIG_DEFAULT_PORT;
	char *end;

	if (host_span(s, &host, &hend, &colon) < 0)
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

int
cfgcheck_server(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = last_str(opt);

	if (v[0] != '\0' && cfgcheck_host_port(v, false, NULL, NULL) < 0) {
		cfg_error(cfg, "server: '%s' is not host or host:port", v);
		return -1;
	}
	return 0;
}

/* An identity travels in HELLO: 1-63 bytes of printable ASCII without
 * blanks (docs/protocol.md section 6); empty means the host name. */
bool
cfgcheck_name_ok(const char *s)
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

int
cfgcheck_name(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = last_str(opt);

	if (!cfgcheck_name_ok(v)) {
		cfg_error(cfg,
		    "name: '%s' is not 1-63 printable characters without "
		    "blanks",
		    v);
		return -1;
	}
	return 0;
}

/* A user name as useradd(8) takes it, or "" for none. */
int
cfgcheck_user(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = last_str(opt);
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
int
cfgcheck_totals_host(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = last_str(opt);

	if (v[0] == '\0' || !cfgcheck_name_ok(v) ||
	    strpbrk(v, "\"'<>&:") != NULL) {
		cfg_error(cfg,
		    "totals_host: '%s' is not 1-63 printable characters "
		    "without blanks, quotes, ':', '<', '>' or '&' (it is a "
		    "Ganglia host name)",
		    v);
		return -1;
	}
	return 0;
}

int
cfgcheck_listen(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = last_str(opt);

	if (cfgcheck_host_port(v, true, NULL, NULL) < 0) {
		cfg_error(cfg, "listen: '%s' is not address or address:port",
		    v);
		return -1;
	}
	return 0;
}

int
cfgcheck_dns_servers(cfg_t *cfg, cfg_opt_t *opt)
{
	unsigned i;

	for (i = 0; i < cfg_opt_size(opt); i++) {
		const char *v = cfg_opt_getnstr(opt, i);

		if (cfgcheck_host_port(v, false, NULL, NULL) < 0) {
			cfg_error(cfg,
			    "dns_servers: '%s' is not address or "
			    "address:port",
			    v);
			return -1;
		}
	}
	return 0;
}

int
cfgcheck_gatherers(cfg_t *cfg, cfg_opt_t *opt)
{
	unsigned i;

	for (i = 0; i < cfg_opt_size(opt); i++) {
		const char *v = cfg_opt_getnstr(opt, i);

		if (v[0] == '\0' || !cfgcheck_name_ok(v)) {
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
int
cfgcheck_prefix(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = last_str(opt);

	if (!mprefix_ok(v)) {
		cfg_error(cfg, "metric_prefix: '%s' is not 1-%d of %s", v,
		    MPREFIX_MAX, MPREFIX_CHARS_TEXT);
		return -1;
	}
	return 0;
}

int
cfgcheck_deadline(cfg_t *cfg, cfg_opt_t *opt)
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

int
cfgcheck_path(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = last_str(opt);

	if (v[0] != '/') {
		cfg_error(cfg, "%s: '%s' is not an absolute path", opt->name,
		    v);
		return -1;
	}
	return 0;
}

/* A path, or "" for none. */
int
cfgcheck_opt_path(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = last_str(opt);

	if (v[0] != '\0' && v[0] != '/') {
		cfg_error(cfg, "%s: '%s' is not an absolute path", opt->name,
		    v);
		return -1;
	}
	return 0;
}

int
cfgcheck_allow(cfg_t *cfg, cfg_opt_t *opt)
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
