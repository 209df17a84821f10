/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the files of common/config/ share, and nothing outside them sees:
 * the key table (cfgkeys.c), the value checks libconfuse calls while it
 * parses (cfgcheck.c), and the steps that fill struct lh_config from a
 * parsed file (cfgfill.c, cfgbind.c, cfgroute.c).
 */
#ifndef LH_CFGINT_H
#define LH_CFGINT_H

#include <stdbool.h>
#include <stddef.h>

#include <confuse.h>

#include "config.h"

struct lh_err;

enum cfgkey_type {
	CFGKEY_STR = 0,
	CFGKEY_INT,
	CFGKEY_FLOAT,
	CFGKEY_BOOL,
	CFGKEY_LIST, /* of strings */
	CFGKEY_SEC,  /* a section; its keys name it in .section */
};

/* Roles a key is read by (bit 1 << enum lh_role). */
#define CFGKEY_GATHERER   (1u << LH_ROLE_GATHERER)
#define CFGKEY_AGGREGATOR (1u << LH_ROLE_AGGREGATOR)
#define CFGKEY_RELAY      (1u << LH_ROLE_RELAY)
#define CFGKEY_LISTENERS  (CFGKEY_AGGREGATOR | CFGKEY_RELAY)
#define CFGKEY_ALL        (CFGKEY_GATHERER | CFGKEY_LISTENERS)

/* One key of the file, declared once: the libconfuse options and their
 * checks are built from the table of these (cfgkeys.c). */
struct cfgkey {
	const char *name;
	const char *section;              /* NULL: the top level */
	const char *def_str;              /* CFGKEY_STR */
	const char *unit;                 /* for cfgcheck_range's message */
	cfg_validate_callback_t validate; /* NULL: any value of the type */
	long def_int; /* CFGKEY_INT, CFGKEY_FLOAT, CFGKEY_BOOL (0/1) */
	long lo, hi;  /* CFGKEY_INT with cfgcheck_range */
	enum cfgkey_type type;
	unsigned roles; /* CFGKEY_* */
	int cflags;     /* CFGKEY_SEC: CFGF_MULTI ... */
	bool alias;     /* also at the top level, deprecated */
};

/* The table, and the first key called name (in any section), or NULL:
 * names are unique but for the route's server, checked as the top
 * level's, and the http section's listen, allow and max_connections,
 * which cfghttp.c looks up itself. */
const struct cfgkey *cfgkeys_table(size_t *ret_n);
const struct cfgkey *cfgkeys_find(const char *name);
/* The key called name in section (NULL: the top level), or NULL: for
 * the names two sections share (prometheus { filesystems }). */
const struct cfgkey *cfgkeys_find_in(const char *section, const char *name);

/* A libconfuse handle for every key of the table, its checks set. */
cfg_t *cfgkeys_init(void);

/*
 * cfg_parse() with libconfuse's messages and the checks' going to err
 * (the first one, "file:line: reason"), and a line for each key used at
 * its deprecated place into *ret_notes (*ret_nnotes of them, the caller
 * frees them on success and failure).  Returns libconfuse's code.
 */
int cfgkeys_parse(cfg_t *cfg, const char *path, struct lh_err *err,
    char ***ret_notes, size_t *ret_nnotes);

/* Where the value of a key with an alias is read: its section when it is
 * set there or not at the top level, else the top level. */
cfg_t *cfgkeys_where(cfg_t *cfg, const struct cfgkey *k);

/* Value checks, as libconfuse calls them while it parses. */
int cfgcheck_role(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_range(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_filesystems(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_networks(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_metadata_ops(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_server(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_name(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_user(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_totals_host(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_listen(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_dns_servers(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_gatherers(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_prefix(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_deadline(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_path(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_opt_path(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_allow(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_binds(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_prom_families(cfg_t *cfg, cfg_opt_t *opt);

/* Lustre fsnames: 1-8 of [A-Za-z0-9_-]. */
bool cfgcheck_fsname_ok(const char *s);
/* An identity in HELLO: at most 63 printable ASCII, no blanks. */
bool cfgcheck_name_ok(const char *s);
/* "host", "host:port", "[v6addr]:port" (port 8022 if left out; 0 only
 * where port0_ok).  ret_host and ret_port may be NULL. */
int cfgcheck_host_port(const char *s, bool port0_ok, char **ret_host,
    unsigned *ret_port);

/* Filling struct lh_config from a parsed file; each returns 0, or a
 * negative errno with err set. */
int cfgfill_config(struct lh_config *c, cfg_t *cfg, struct lh_err *err);
int cfgfill_binds(struct lh_config *c, cfg_t *cfg, struct lh_err *err);
int cfgfill_routes(struct lh_config *c, cfg_t *cfg, struct lh_err *err);
int cfgfill_prom(struct lh_config *c, cfg_t *cfg, struct lh_err *err);
/* A string list key into a fresh array. */
int cfgfill_list(cfg_t *cfg, const char *key, char ***ret, size_t *ret_n);
void cfgbind_clear(struct lh_bind *b);

/* The http { } section (cfghttp.c). */
int cfgcheck_http_listen(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_http_socket(cfg_t *cfg, cfg_opt_t *opt);
int cfgcheck_http_range(cfg_t *cfg, cfg_opt_t *opt);
/* "addr:port", numeric, IPv6 in brackets, the port written. */
int cfghttp_parse_listen(const char *s, char **ret_host, unsigned *ret_port);
int cfgfill_http(struct lh_config *c, cfg_t *cfg, struct lh_err *err);
void cfghttp_free(struct lh_config *c);

#endif
