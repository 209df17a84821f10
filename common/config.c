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

#include "config.h"
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

/* "host", "host:port", "[v6addr]:port". */
static int
split_host_port(const char *s, char **ret_host, unsigned *ret_port)
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
		    port == 0 || port > 65535)
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

static char *
dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

static int
config_fill(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	const char *role = cfg_getstr(cfg, "role");
	const char *server = cfg_getstr(cfg, "server");
	unsigned n;

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
	return 0;
}

int
config_load(const char *path, struct lh_config **ret, struct lh_err *err)
{
	/* libconfuse takes a list's default as char *: give it one. */
	char no_filesystems[] = "{}";
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

void
config_free(struct lh_config *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nfilesystems; i++)
		free(c->filesystems[i]);
	free(c->filesystems);
	free(c->path);
	free(c->lustre_root);
	free(c->server_host);
	free(c->secret_file);
	free(c->state_dir);
	free(c->name);
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
