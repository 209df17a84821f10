/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every key of lharvestd.conf, declared once: its name, section, type,
 * default, check and the roles that read it.  The libconfuse options are
 * built from this table, and the keys that moved into a section are
 * still taken at their old place, with a line saying where they belong
 * now (lharvestd.conf(5) documents every key of the table).
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cfgint.h"
#include "err.h"

#define R_G CFGKEY_GATHERER
#define R_L CFGKEY_LISTENERS
#define R_R CFGKEY_RELAY
#define R_A CFGKEY_ALL

/* Integer keys checked against their range. */
#define RANGE(n, d, l, h, u, r)                                                \
	{                                                                      \
		.name = (n), .type = CFGKEY_INT, .def_int = (d), .lo = (l),    \
		.hi = (h), .unit = (u), .validate = cfgcheck_range,            \
		.roles = (r)                                                   \
	}

static const struct cfgkey keys[] = {
    {.name = "role",
        .type = CFGKEY_STR,
        .def_str = "gatherer",
        .validate = cfgcheck_role,
        .roles = R_A},
    RANGE("interval", CONFIG_DEFAULT_INTERVAL, 1, 3600, " seconds", R_A),
    {.name = "lustre_root",
        .type = CFGKEY_STR,
        .def_str = "/",
        .validate = cfgcheck_path,
        .roles = R_G},
    {.name = "filesystems",
        .type = CFGKEY_LIST,
        .validate = cfgcheck_filesystems,
        .roles = R_G},
    {.name = "server",
        .type = CFGKEY_STR,
        .def_str = "",
        .validate = cfgcheck_server,
        .roles = R_G},
    {.name = "secret_file",
        .type = CFGKEY_STR,
        .def_str = CONFIG_DEFAULT_SECRET_FILE,
        .validate = cfgcheck_path,
        .roles = R_A},
    {.name = "state_dir",
        .type = CFGKEY_STR,
        .def_str = CONFIG_DEFAULT_STATE_DIR,
        .validate = cfgcheck_path,
        .roles = R_A},
    {.name = "name",
        .type = CFGKEY_STR,
        .def_str = "",
        .validate = cfgcheck_name,
        .roles = R_A},
    {.name = "user",
        .type = CFGKEY_STR,
        .def_str = "",
        .validate = cfgcheck_user,
        .roles = R_G},
    /* Protocol limits (docs/protocol.md section 6). */
    RANGE("max_frame", CONFIG_DEFAULT_MAX_FRAME, 4096, 256L * 1024 * 1024,
        " bytes", R_A),
    RANGE("handshake_timeout", CONFIG_DEFAULT_HANDSHAKE, 1, 86400, " seconds",
        R_A),
    RANGE("read_timeout", 0, 0, 86400, " seconds", R_L),
    RANGE("max_connections", CONFIG_DEFAULT_MAX_CONN, 1, 65536, "", R_L),
    /* Listener admission (docs/reliability.md, findings 1 and 15). */
    RANGE("frame_timeout", CONFIG_DEFAULT_FRAME_TIMEOUT, 1, 86400, "", R_L),
    RANGE("max_unauthenticated", CONFIG_DEFAULT_MAX_UNAUTH, 1, 1000000, "",
        R_L),
    RANGE("max_per_source", CONFIG_DEFAULT_MAX_PER_SOURCE, 1, 1000000, "", R_L),
    RANGE("accept_rate", CONFIG_DEFAULT_ACCEPT_RATE, 1, 1000000, "", R_L),
    RANGE("accept_burst", CONFIG_DEFAULT_ACCEPT_BURST, 1, 1000000, "", R_L),
    {.name = "allow",
        .type = CFGKEY_LIST,
        .validate = cfgcheck_allow,
        .roles = R_L},
    {.name = "gatherer_networks",
        .type = CFGKEY_LIST,
        .validate = cfgcheck_binds,
        .roles = R_L},
    /* Receiving and closing sweeps. */
    {.name = "listen",
        .type = CFGKEY_STR,
        .def_str = CONFIG_DEFAULT_LISTEN,
        .validate = cfgcheck_listen,
        .roles = R_L},
    {.name = "gatherers",
        .type = CFGKEY_LIST,
        .validate = cfgcheck_gatherers,
        .roles = R_L},
    {.name = "deadline",
        .type = CFGKEY_FLOAT,
        .validate = cfgcheck_deadline,
        .roles = R_L},
    /* The NID-to-host view. */
    {.name = "hosts_file",
        .type = CFGKEY_STR,
        .def_str = "",
        .validate = cfgcheck_opt_path,
        .roles = R_L},
    {.name = "rewrite", .type = CFGKEY_LIST, .roles = R_L},
    {.name = "dns", .type = CFGKEY_BOOL, .def_int = 1, .roles = R_L},
    {.name = "dns_servers",
        .type = CFGKEY_LIST,
        .validate = cfgcheck_dns_servers,
        .roles = R_L},
    /* The metrics every output is given. */
    {.name = "extra_metrics", .type = CFGKEY_BOOL, .roles = R_L},
    {.name = "metadata_ops",
        .type = CFGKEY_LIST,
        .validate = cfgcheck_metadata_ops,
        .roles = R_L},
    {.name = "filesystem",
        .type = CFGKEY_SEC,
        .cflags = CFGF_MULTI | CFGF_TITLE,
        .roles = R_L},
    {.name = "metric_prefix",
        .section = "filesystem",
        .type = CFGKEY_STR,
        .def_str = "",
        .validate = cfgcheck_prefix,
        .roles = R_L},
    /* The Ganglia output; its keys were top-level keys before. */
    /* CFGF_MULTI only so that libconfuse gives its keys' messages a
     * file:line (it does for the sections it makes as it parses); a
     * second ganglia section is refused (notes_make). */
    {.name = "ganglia", .type = CFGKEY_SEC, .cflags = CFGF_MULTI, .roles = R_L},
    {.name = "gmond_conf",
        .section = "ganglia",
        .type = CFGKEY_STR,
        .def_str = CONFIG_DEFAULT_GMOND_CONF,
        .validate = cfgcheck_path,
        .roles = R_L,
        .alias = true},
    {.name = "totals_host",
        .section = "ganglia",
        .type = CFGKEY_STR,
        .def_str = CONFIG_DEFAULT_TOTALS_HOST,
        .validate = cfgcheck_totals_host,
        .roles = R_L,
        .alias = true},
    {.name = "tmax",
        .section = "ganglia",
        .type = CFGKEY_INT,
        .lo = 0,
        .hi = 86400L * 7,
        .unit = " seconds",
        .validate = cfgcheck_range,
        .roles = R_L,
        .alias = true},
    {.name = "dmax",
        .section = "ganglia",
        .type = CFGKEY_INT,
        .lo = 0,
        .hi = 86400L * 7,
        .unit = " seconds",
        .validate = cfgcheck_range,
        .roles = R_L,
        .alias = true},
    {.name = "metadata_interval",
        .section = "ganglia",
        .type = CFGKEY_INT,
        .def_int = CONFIG_DEFAULT_META_IVL,
        .lo = 0,
        .hi = 86400L * 7,
        .unit = " seconds",
        .validate = cfgcheck_range,
        .roles = R_L,
        .alias = true},
    /* Issue 19: the Ganglia send's pace, packets per second (0 =
     * unpaced); new in the section, so never at the top level. */
    {.name = "pace",
        .section = "ganglia",
        .type = CFGKEY_INT,
        .def_int = CONFIG_DEFAULT_GANGLIA_PACE,
        .lo = 0,
        .hi = CONFIG_GANGLIA_PACE_MAX,
        .unit = " packets/s",
        .validate = cfgcheck_range,
        .roles = R_L},
    /* The relay's routes. */
    {.name = "route",
        .type = CFGKEY_SEC,
        .cflags = CFGF_MULTI | CFGF_TITLE | CFGF_NO_TITLE_DUPES,
        .roles = R_R},
    {.name = "networks",
        .section = "route",
        .type = CFGKEY_LIST,
        .validate = cfgcheck_networks,
        .roles = R_R},
    {.name = "server",
        .section = "route",
        .type = CFGKEY_STR,
        .def_str = "",
        .validate = cfgcheck_server,
        .roles = R_R},
    {.name = "default_route", .type = CFGKEY_STR, .def_str = "", .roles = R_R},
    {.name = "spoof", .type = CFGKEY_BOOL, .roles = R_R},
    /* The Prometheus page, /metrics (docs/api.md section 2); the names
     * filesystems and metadata_ops are the top level's too, with the same
     * values, so they read the same in both places. */
    {.name = "prometheus",
        .type = CFGKEY_SEC,
        .cflags = CFGF_MULTI,
        .roles = R_L},
    {.name = "families",
        .section = "prometheus",
        .type = CFGKEY_LIST,
        .validate = cfgcheck_prom_families,
        .roles = R_L},
    {.name = "filesystems",
        .section = "prometheus",
        .type = CFGKEY_LIST,
        .validate = cfgcheck_filesystems,
        .roles = R_L},
    {.name = "max_series",
        .section = "prometheus",
        .type = CFGKEY_INT,
        .def_int = CONFIG_DEFAULT_PROM_MAX_SERIES,
        .lo = 0,
        .hi = 100000000,
        .unit = "",
        .validate = cfgcheck_range,
        .roles = R_L},
    {.name = "metadata_ops",
        .section = "prometheus",
        .type = CFGKEY_LIST,
        .validate = cfgcheck_metadata_ops,
        .roles = R_L},
    /* The HTTP listener (cfghttp.c, daemon/httpd.h).  CFGF_MULTI for
     * the messages' file:line, as ganglia's. */
    {.name = "http", .type = CFGKEY_SEC, .cflags = CFGF_MULTI, .roles = R_L},
    {.name = "listen",
        .section = "http",
        .type = CFGKEY_STR,
        .def_str = CONFIG_DEFAULT_HTTP_LISTEN,
        .validate = cfgcheck_http_listen,
        .roles = R_L},
    {.name = "socket",
        .section = "http",
        .type = CFGKEY_STR,
        .def_str = "",
        .validate = cfgcheck_http_socket,
        .roles = R_L},
    {.name = "allow",
        .section = "http",
        .type = CFGKEY_LIST,
        .validate = cfgcheck_allow,
        .roles = R_L},
    {.name = "max_connections",
        .section = "http",
        .type = CFGKEY_INT,
        .def_int = CONFIG_DEFAULT_HTTP_MAX_CONN,
        .lo = 1,
        .hi = 65536,
        .validate = cfgcheck_http_range,
        .roles = R_L},
    {.name = "max_header_size",
        .section = "http",
        .type = CFGKEY_INT,
        .def_int = CONFIG_DEFAULT_HTTP_MAX_HEADER,
        .lo = 1024,
        .hi = 65536,
        .unit = " bytes",
        .validate = cfgcheck_http_range,
        .roles = R_L},
    {.name = "timeout",
        .section = "http",
        .type = CFGKEY_INT,
        .def_int = CONFIG_DEFAULT_HTTP_TIMEOUT,
        .lo = 1,
        .hi = 3600,
        .unit = " seconds",
        .validate = cfgcheck_http_range,
        .roles = R_L},
};

#define NKEYS    (sizeof(keys) / sizeof(keys[0]))
#define NSECS    5 /* filesystem, ganglia, route, prometheus, http */
#define OPTS_MAX (NKEYS + 1)

_Static_assert(NKEYS <= 64, "a parse notes aliases in a 64-bit mask");

const struct cfgkey *
cfgkeys_table(size_t *ret_n)
{
	*ret_n = NKEYS;
	return keys;
}

const struct cfgkey *
cfgkeys_find_in(const char *section, const char *name)
{
	size_t i;

	for (i = 0; i < NKEYS; i++) {
		if (strcmp(keys[i].name, name) == 0 &&
		    (section == NULL ? keys[i].section == NULL :
		                       keys[i].section != NULL &&
		                strcmp(keys[i].section, section) == 0))
			return &keys[i];
	}
	return NULL;
}

const struct cfgkey *
cfgkeys_find(const char *name)
{
	size_t i;

	for (i = 0; i < NKEYS; i++) {
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	}
	return NULL;
}

/* The options cfg_init() is given (it copies them). */
struct opts {
	cfg_opt_t top[OPTS_MAX];
	cfg_opt_t sec[NSECS][OPTS_MAX];
	const char *secname[NSECS];
	size_t ntop, nsec[NSECS], nsecs;
	/* libconfuse takes a list's default as char *: give it one. */
	char empty_list[3];
};

static cfg_opt_t
opt_make(const struct cfgkey *k, char *empty_list, cfg_opt_t *sub)
{
	switch (k->type) {
	case CFGKEY_STR:
		return (cfg_opt_t)CFG_STR(k->name, k->def_str, CFGF_NONE);
	case CFGKEY_INT:
		return (cfg_opt_t)CFG_INT(k->name, k->def_int, CFGF_NONE);
	case CFGKEY_FLOAT:
		return (
		    cfg_opt_t)CFG_FLOAT(k->name, (double)k->def_int, CFGF_NONE);
	case CFGKEY_BOOL:
		return (cfg_opt_t)CFG_BOOL(k->name,
		    k->def_int != 0 ? cfg_true : cfg_false, CFGF_NONE);
	case CFGKEY_LIST:
		return (cfg_opt_t)CFG_STR_LIST(k->name, empty_list, CFGF_NONE);
	case CFGKEY_SEC:
		break;
	}
	return (cfg_opt_t)CFG_SEC(k->name, sub, k->cflags);
}

static size_t
sec_index(struct opts *o, const char *name)
{
	size_t s;

	for (s = 0; s < o->nsecs; s++) {
		if (strcmp(o->secname[s], name) == 0)
			return s;
	}
	return s;
}

/* The keys into top and section arrays, then the sections at the top. */
static void
opts_build(struct opts *o)
{
	static const cfg_opt_t end = CFG_END();
	size_t i, s;

	memcpy(o->empty_list, "{}", 3);
	for (i = 0; i < NKEYS; i++) {
		if (keys[i].type != CFGKEY_SEC)
			continue;
		assert(o->nsecs < NSECS); /* a new section: raise NSECS */
		o->secname[o->nsecs++] = keys[i].name;
	}
	for (i = 0; i < NKEYS; i++) {
		const struct cfgkey *k = &keys[i];

		if (k->type == CFGKEY_SEC)
			continue;
		if (k->section == NULL || k->alias)
			o->top[o->ntop++] = opt_make(k, o->empty_list, NULL);
		if (k->section == NULL)
			continue;
		s = sec_index(o, k->section);
		assert(s < o->nsecs); /* the table declares the section */
		o->sec[s][o->nsec[s]++] = opt_make(k, o->empty_list, NULL);
	}
	for (s = 0; s < o->nsecs; s++) {
		o->sec[s][o->nsec[s]] = end;
		o->top[o->ntop++] =
		    opt_make(cfgkeys_find(o->secname[s]), NULL, o->sec[s]);
	}
	o->top[o->ntop] = end;
}

/*
 * libconfuse's callbacks get no user pointer, so the one parse in
 * progress is reached through this variable: set and cleared inside
 * cfgkeys_parse() only, and thread-local, so nothing outlives the call.
 */
struct parse_ctx {
	struct lh_err *err;
	char **notes;
	size_t nnotes, cap;
	uint64_t noted;          /* keys[i] given at its old place */
	int line[NKEYS];         /* where */
	const char *file[NKEYS]; /* libconfuse's, alive while it parses */
};

static _Thread_local struct parse_ctx *parse_ctx;

static void confuse_err_cb(cfg_t *cfg, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void
confuse_err_cb(cfg_t *cfg, const char *fmt, va_list ap)
{
	struct lh_err *err = parse_ctx != NULL ? parse_ctx->err : NULL;
	char msg[LH_ERR_REASON_MAX];

	if (err == NULL || err->reason[0] != '\0')
		return; /* keep the first error: it is the cause */
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	if (cfg != NULL && cfg->filename != NULL && cfg->line > 0)
		(void)lh_err_set(err, (unsigned)cfg->line, -EINVAL, "%s:%d: %s",
		    cfg->filename, cfg->line, msg);
	else if (cfg != NULL && cfg->filename != NULL)
		(void)lh_err_set(err, 0, -EINVAL, "%s: %s", cfg->filename, msg);
	else
		(void)lh_err_set(err, 0, -EINVAL, "%s", msg);
}

/* A key given at its old place: noted (its first line), then checked as
 * in its section. */
static int
alias_cb(cfg_t *cfg, cfg_opt_t *opt)
{
	const struct cfgkey *k = cfgkeys_find(opt->name);
	size_t i;

	if (k == NULL)
		return 0;
	i = (size_t)(k - keys);
	if (parse_ctx != NULL && (parse_ctx->noted & (1ULL << i)) == 0) {
		parse_ctx->noted |= 1ULL << i;
		parse_ctx->line[i] = cfg->line;
		parse_ctx->file[i] = cfg->filename;
	}
	return k->validate != NULL ? k->validate(cfg, opt) : 0;
}

cfg_t *
cfgkeys_init(void)
{
	struct opts *o = calloc(1, sizeof(*o));
	char path[64];
	cfg_t *cfg;
	size_t i;

	if (o == NULL)
		return NULL;
	opts_build(o);
	cfg = cfg_init(o->top, CFGF_NONE);
	free(o);
	if (cfg == NULL)
		return NULL;
	(void)cfg_set_error_function(cfg, confuse_err_cb);
	for (i = 0; i < NKEYS; i++) {
		const struct cfgkey *k = &keys[i];

		if (k->alias)
			(void)cfg_set_validate_func(cfg, k->name, alias_cb);
		if (k->validate == NULL)
			continue;
		(void)snprintf(path, sizeof(path), "%s%s%s",
		    k->section != NULL ? k->section : "",
		    k->section != NULL ? "|" : "", k->name);
		(void)cfg_set_validate_func(cfg, path, k->validate);
	}
	return cfg;
}

static bool
modified(cfg_t *cfg, const char *name)
{
	cfg_opt_t *o = cfg != NULL ? cfg_getopt(cfg, name) : NULL;

	return o != NULL && (o->flags & CFGF_MODIFIED) != 0;
}

cfg_t *
cfgkeys_where(cfg_t *cfg, const struct cfgkey *k)
{
	cfg_t *sec;

	if (k == NULL || k->section == NULL)
		return cfg;
	sec = cfg_getsec(cfg, k->section);
	if (sec == NULL ||
	    (k->alias && modified(cfg, k->name) && !modified(sec, k->name)))
		return cfg;
	return sec;
}

/* One line for keys[i], given at its old place. */
static int
note_add(struct parse_ctx *ctx, size_t i)
{
	const struct cfgkey *k = &keys[i];
	char line[LH_ERR_REASON_MAX + 64];
	char **n;

	(void)snprintf(line, sizeof(line),
	    "%s:%d: %s: deprecated at the top level; write it in %s { %s = "
	    "... }",
	    ctx->file[i] != NULL ? ctx->file[i] : "?", ctx->line[i], k->name,
	    k->section, k->name);
	n = array_grow(ctx->notes, &ctx->cap, ctx->nnotes, sizeof(*n));
	if (n == NULL)
		return -ENOMEM;
	ctx->notes = n;
	if ((n[ctx->nnotes] = strdup(line)) == NULL)
		return -ENOMEM;
	ctx->nnotes++;
	return 0;
}

/* Keys noted, in the order of their lines. */
static size_t
noted_sorted(const struct parse_ctx *ctx, size_t order[NKEYS])
{
	size_t i, j, n = 0;

	for (i = 0; i < NKEYS; i++) {
		if ((ctx->noted & (1ULL << i)) == 0)
			continue;
		for (j = n; j > 0 && ctx->line[order[j - 1]] > ctx->line[i];
		     j--)
			order[j] = order[j - 1];
		order[j] = i;
		n++;
	}
	return n;
}

/* After a parse: a line per key at its old place, and an error for one
 * given at both places (which would win is not obvious). */
static int
notes_make(struct parse_ctx *ctx, cfg_t *cfg)
{
	size_t order[NKEYS], n = noted_sorted(ctx, order), j;

	for (j = 0; j < NKEYS; j++) {
		if (keys[j].type == CFGKEY_SEC &&
		    (keys[j].cflags & CFGF_TITLE) == 0 &&
		    cfg_size(cfg, keys[j].name) > 1)
			return lh_err_set(ctx->err, 0, -EINVAL,
			    "%s: %s: one section, not %u", cfg->filename,
			    keys[j].name, cfg_size(cfg, keys[j].name));
	}
	for (j = 0; j < n; j++) {
		size_t i = order[j];
		const struct cfgkey *k = &keys[i];

		if (modified(cfg_getsec(cfg, k->section), k->name))
			return lh_err_set(ctx->err, (unsigned)ctx->line[i],
			    -EINVAL, "%s:%d: %s: also set in %s { }; keep one",
			    ctx->file[i] != NULL ? ctx->file[i] : "?",
			    ctx->line[i], k->name, k->section);
		if (note_add(ctx, i) < 0)
			return lh_err_set(ctx->err, 0, -ENOMEM,
			    "out of memory");
	}
	return 0;
}

int
cfgkeys_parse(cfg_t *cfg, const char *path, struct lh_err *err,
    char ***ret_notes, size_t *ret_nnotes)
{
	struct parse_ctx ctx;
	int rc;

	memset(&ctx, 0, sizeof(ctx));
	ctx.err = err;
	parse_ctx = &ctx;
	errno = 0;
	rc = cfg_parse(cfg, path);
	parse_ctx = NULL;
	if (rc == CFG_SUCCESS && notes_make(&ctx, cfg) < 0)
		rc = CFG_PARSE_ERROR;
	*ret_notes = ctx.notes;
	*ret_nnotes = ctx.nnotes;
	return rc;
}
