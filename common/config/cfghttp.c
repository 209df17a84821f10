/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The http { } section (daemon/httpd.h, lharvestd.conf(5)): its checks,
 * as libconfuse calls them, and its values into struct lh_config.  The
 * section is optional: without it every key has its default, and the
 * listener runs on 127.0.0.1:8023.
 */
#include <arpa/inet.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfgint.h"
#include "cidr.h"
#include "err.h"

/* The http section's own entry for name: the table has keys of the same
 * name at the top level ("listen", "allow", "max_connections"), which
 * cfgkeys_find() would give. */
static const struct cfgkey *
http_key(const char *name)
{
	size_t n, i;
	const struct cfgkey *k = cfgkeys_table(&n);

	for (i = 0; i < n; i++) {
		if (k[i].section != NULL && strcmp(k[i].section, "http") == 0 &&
		    strcmp(k[i].name, name) == 0)
			return &k[i];
	}
	return NULL;
}

int
cfghttp_parse_listen(const char *s, char **ret_host, unsigned *ret_port)
{
	const char *colon = strrchr(s, ':');
	unsigned char addr[16];
	char *host = NULL;
	unsigned port;
	int rc;

	/* A port must be written, and an IPv6 address in brackets: the
	 * default port of the other listen keys is not this one's. */
	if (colon == NULL || colon == s || colon[1] == '\0' ||
	    (s[0] == '[' && colon[-1] != ']') ||
	    (s[0] != '[' && memchr(s, ':', (size_t)(colon - s)) != NULL))
		return -EINVAL;
	rc = cfgcheck_host_port(s, true, &host, &port);
	if (rc < 0)
		return rc;
	/* Numeric only: a name would need a lookup at every reload. */
	if (inet_pton(AF_INET, host, addr) != 1 &&
	    inet_pton(AF_INET6, host, addr) != 1) {
		free(host);
		return -EINVAL;
	}
	if (ret_host != NULL)
		*ret_host = host;
	else
		free(host);
	if (ret_port != NULL)
		*ret_port = port;
	return 0;
}

int
cfgcheck_http_listen(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	if (v[0] != '\0' && cfghttp_parse_listen(v, NULL, NULL) < 0) {
		cfg_error(cfg,
		    "listen: '%s' is not address:port (numeric, IPv6 in "
		    "brackets), nor \"\"",
		    v);
		return -1;
	}
	return 0;
}

int
cfgcheck_http_socket(cfg_t *cfg, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, cfg_opt_size(opt) - 1);

	/* sun_path holds 108 bytes with the NUL. */
	if (v[0] != '\0' && (v[0] != '/' || strlen(v) > 107)) {
		cfg_error(cfg,
		    "socket: '%s' is not an absolute path of at most 107 "
		    "bytes",
		    v);
		return -1;
	}
	return 0;
}

int
cfgcheck_http_range(cfg_t *cfg, cfg_opt_t *opt)
{
	const struct cfgkey *k = http_key(opt->name);
	long v = cfg_opt_getnint(opt, cfg_opt_size(opt) - 1);

	if (k != NULL && (v < k->lo || v > k->hi)) {
		cfg_error(cfg, "%s: %ld is not between %ld and %ld%s",
		    opt->name, v, k->lo, k->hi, k->unit != NULL ? k->unit : "");
		return -1;
	}
	return 0;
}

/* A key of the section: its value, or its default when there is no
 * section. */
static long
sec_int(cfg_t *sec, const char *name)
{
	const struct cfgkey *k = http_key(name);

	if (sec != NULL)
		return cfg_getint(sec, name);
	return k != NULL ? k->def_int : 0;
}

static int
fill_allow(struct lh_config *c, cfg_t *sec, struct lh_err *err)
{
	unsigned i, n = sec != NULL ? cfg_size(sec, "allow") : 0;

	if (n == 0)
		return 0;
	c->http_allow = calloc(n, sizeof(*c->http_allow));
	if (c->http_allow == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		if (cidr_parse(cfg_getnstr(sec, "allow", i), &c->http_allow[i],
		        err) < 0)
			return -EINVAL; /* cfgcheck_allow saw it first */
	}
	c->nhttp_allow = n;
	return 0;
}

int
cfgfill_http(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	cfg_t *sec = cfg_size(cfg, "http") > 0 ? cfg_getsec(cfg, "http") : NULL;
	cfg_opt_t *o = sec != NULL ? cfg_getopt(sec, "listen") : NULL;
	const char *listen = sec != NULL ? cfg_getstr(sec, "listen") :
	                                   CONFIG_DEFAULT_HTTP_LISTEN;
	const char *sock = sec != NULL ? cfg_getstr(sec, "socket") : "";

	c->http_listen_set = o != NULL && (o->flags & CFGF_MODIFIED) != 0;
	c->http_max_connections = (unsigned)sec_int(sec, "max_connections");
	c->http_max_header_size = (unsigned)sec_int(sec, "max_header_size");
	c->http_timeout = (unsigned)sec_int(sec, "timeout");
	if (listen[0] != '\0' &&
	    cfghttp_parse_listen(listen, &c->http_listen_host,
	        &c->http_listen_port) < 0)
		return lh_err_set(err, 0, -EINVAL, "%s: http: listen: '%s'",
		    c->path, listen);
	if (sock[0] != '\0' && (c->http_socket = strdup(sock)) == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	return fill_allow(c, sec, err);
}

void
cfghttp_free(struct lh_config *c)
{
	free(c->http_listen_host);
	free(c->http_socket);
	free(c->http_allow);
}
