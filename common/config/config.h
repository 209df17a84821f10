/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lharvestd's configuration: the libconfuse file (the syntax gmond.conf
 * users know) turned into a plain struct.  common/config/ is the only
 * place that sees confuse.h; each key is declared once, with its section
 * and check, in cfgkeys.c.  An output's keys live in its own section
 * (ganglia { }); a section fills the same fields of struct lh_config as
 * the top-level keys it replaced, which still work, with a line in
 * lh_config.deprecations.  Every key, its default and its meaning are
 * documented in man/lharvestd.conf.5 and the annotated examples in conf/.
 */
#ifndef LH_CONFIG_H
#define LH_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct cidr;
struct lh_err;

/* A sender's name bound to the networks it may connect from. */
struct lh_bind {
	char *name;
	struct cidr *nets;
	size_t nnets;
};

#define CONFIG_BIND_NETS_MAX 16 /* networks of one name */

enum lh_role {
	LH_ROLE_GATHERER = 0,
	LH_ROLE_AGGREGATOR,
	LH_ROLE_RELAY,
};

#define CONFIG_DEFAULT_INTERVAL    20
#define CONFIG_DEFAULT_PORT        8022
#define CONFIG_DEFAULT_SECRET_FILE "/etc/lharvestd/secret"
#define CONFIG_DEFAULT_STATE_DIR   "/var/lib/lharvestd"
#define CONFIG_DEFAULT_MAX_FRAME   (16L << 20)
#define CONFIG_DEFAULT_HANDSHAKE   10
#define CONFIG_DEFAULT_MAX_CONN    1024
#define CONFIG_DEFAULT_LISTEN      "0.0.0.0:8022"
#define CONFIG_DEFAULT_GMOND_CONF  "/etc/ganglia/gmond.conf"
#define CONFIG_DEFAULT_META_IVL    60
#define CONFIG_DEFAULT_TOTALS_HOST "lustre-totals"

/* ganglia { pace }: the sink's own default and limit (gmetric/sink.h,
 * GSINK_PACE_MAX); docs/performance.md says why 15,000 packets/s. */
#define CONFIG_DEFAULT_GANGLIA_PACE 15000
#define CONFIG_GANGLIA_PACE_MAX     1000000

/* The Prometheus page's per-host families (prometheus { families }). */
#define CONFIG_PROM_BYTES              0x1u /* read and write bytes */
#define CONFIG_PROM_OPS                0x2u /* read and write RPCs */
#define CONFIG_PROM_OSS_OPS            0x4u
#define CONFIG_PROM_MDS_OPS            0x8u
#define CONFIG_PROM_ALL                0xfu
#define CONFIG_DEFAULT_PROM_MAX_SERIES 1000000

/* Listener admission (docs/reliability.md, findings 1 and 15). */
#define CONFIG_DEFAULT_FRAME_TIMEOUT  60
#define CONFIG_DEFAULT_MAX_UNAUTH     256
#define CONFIG_DEFAULT_MAX_PER_SOURCE 256
#define CONFIG_DEFAULT_ACCEPT_RATE    100
#define CONFIG_DEFAULT_ACCEPT_BURST   256

/* The HTTP listener (http { }, daemon/httpd.h). */
#define CONFIG_DEFAULT_HTTP_LISTEN     "127.0.0.1:8023"
#define CONFIG_DEFAULT_HTTP_PORT       8023
#define CONFIG_DEFAULT_HTTP_MAX_CONN   64
#define CONFIG_DEFAULT_HTTP_MAX_HEADER 8192
#define CONFIG_DEFAULT_HTTP_TIMEOUT    10

/* A relay's downstream: the aggregator (or relay) of one cluster, and
 * the LNet networks of its clients (route sections, netroute.h). */
struct lh_route {
	char *name;
	char **networks; /* patterns */
	size_t nnetworks;
	char *host;
	unsigned port;
};

/* A filesystem's name in metric names (filesystem sections). */
struct lh_fs_prefix {
	char *fs;
	char *prefix;
};

struct lh_config {
	char *path; /* the file it came from */
	enum lh_role role;
	unsigned interval;  /* seconds between sweeps */
	char *lustre_root;  /* prefix of proc/, sys/ */
	char **filesystems; /* empty: every filesystem found */
	size_t nfilesystems;
	char *server_host; /* aggregator, gatherer role */
	unsigned server_port;
	char *secret_file;
	char *state_dir;
	char *name; /* identity in HELLO; default the host name */
	/* Protocol limits (docs/protocol.md section 6). */
	unsigned max_frame;         /* bytes */
	unsigned handshake_timeout; /* seconds */
	unsigned read_timeout;      /* seconds; 0 = max(120, 3 x interval) */
	unsigned max_connections;
	/* Listener admission (docs/reliability.md, findings 1 and 15). */
	unsigned frame_timeout;       /* seconds from a frame's first byte */
	unsigned max_unauthenticated; /* connections before their HELLO */
	unsigned max_per_source;      /* per IPv4 address or IPv6 /64 */
	unsigned accept_rate;         /* accepts a second after the burst */
	unsigned accept_burst;
	struct cidr *allow; /* empty: every address */
	size_t nallow;
	/* Aggregator. */
	char *listen_host; /* "0.0.0.0" */
	unsigned listen_port;
	char *gmond_conf;
	char *hosts_file; /* NULL: none */
	bool dns;
	char **dns_servers; /* empty: the system resolver */
	size_t ndns_servers;
	char **rewrites; /* "s/-ib$//" rules, in order */
	size_t nrewrites;
	char **gatherers; /* always expected each sweep */
	size_t ngatherers;
	/* gatherer_networks: names bound to where they may connect from
	 * (issue 15, item 2). */
	struct lh_bind *binds;
	size_t nbinds;
	unsigned deadline_ms;       /* after the boundary */
	unsigned tmax, dmax;        /* seconds, gmond's */
	unsigned metadata_interval; /* seconds */
	unsigned ganglia_pace;      /* packets per second; 0 = unpaced */
	bool extra_metrics;
	/* Metadata operations emitted as <prefix>_mds_<op>: bit i is
	 * enum mdops_op i (metadata_ops key; "all" sets every bit). */
	uint32_t metadata_ops;
	char *totals_host;
	struct lh_fs_prefix *prefixes;
	size_t nprefixes;
	/* Relay. */
	struct lh_route *routes;
	size_t nroutes;
	int default_route; /* index into routes, -1: none */
	bool spoof;        /* also spoof the site-wide view into gmond */
	/* The HTTP listener (http { }, daemon/httpd.h); aggregator, relay.
	 * No TCP when http_listen_host is NULL (listen = "").  The bool
	 * first: it fills what spoof leaves. */
	bool http_listen_set;    /* listen written in the file */
	char *http_listen_host;  /* numeric, no brackets */
	char *http_socket;       /* unix socket path, NULL: none */
	struct cidr *http_allow; /* empty: every address */
	size_t nhttp_allow;
	unsigned http_listen_port;
	unsigned http_max_connections;
	unsigned http_max_header_size; /* bytes */
	unsigned http_timeout;         /* seconds */
	/* The Prometheus page (prometheus { }, docs/api.md section 2);
	 * here, after the http block, the struct has the least padding. */
	char **prom_filesystems; /* empty: every filesystem */
	size_t nprom_filesystems;
	unsigned long prom_max_series; /* per-host series; 0: no cap */
	unsigned prom_families;        /* per-host families, CONFIG_PROM_* */
	uint32_t prom_metadata_ops;    /* bit i: enum mdops_op i */
	/* Gatherer started as root: the user it runs as (daemon/privsep.h);
	 * "" stays root. */
	char *user;
	/* One line for each key the file gives at a deprecated place,
	 * "file:line: key: deprecated at the top level; write it in
	 * section { key = ... }", for the caller to log (at start-up and
	 * with -n): config_load() never logs. */
	char **deprecations;
	size_t ndeprecations;
};

/*
 * Parse and check path.  On success *ret owns a new config; on failure
 * returns a negative errno and err->reason reads "path:line: reason" (line
 * omitted when the problem is not on one line).
 */
int config_load(const char *path, struct lh_config **ret, struct lh_err *err);

void config_free(struct lh_config *cfg);

/* The read timeout in force: read_timeout, or max(120, 3 x interval). */
unsigned config_read_timeout(const struct lh_config *cfg);

/* True when fs is one the configuration asks for. */
bool config_wants_fs(const struct lh_config *cfg, const char *fs);

const char *config_role_name(enum lh_role role);

/* True when the Prometheus page shows filesystem fs (prometheus {
 * filesystems }). */
bool config_prom_wants_fs(const struct lh_config *cfg, const char *fs);

/* The metric name prefix of filesystem fs: its filesystem section's
 * metric_prefix, else fs itself. */
const char *config_metric_prefix(const struct lh_config *cfg, const char *fs);

/*
 * Reload support: true when a and b agree on every field of one part of
 * the configuration, the part one module is built from, so that a reload
 * rebuilds only what changed.  section is one of:
 *
 *   "ganglia"   gmond_conf, tmax, dmax, metadata_interval, pace,
 *               totals_host (the ganglia { } section)
 *   "ganglia_channels"  gmond_conf, tmax, dmax, metadata_interval, pace:
 *               what the Ganglia channels are opened with
 *   "listen"    listen_host, listen_port, as written (a port 0 the
 *               kernel picked is the caller's to compare)
 *   "listener"  what a receiver and its peers are made with: name,
 *               max_frame, handshake_timeout, config_read_timeout(),
 *               max_connections, interval, frame_timeout,
 *               max_unauthenticated, max_per_source, accept_rate,
 *               accept_burst, allow (not listen, not gatherer_networks,
 *               which are read at each HELLO)
 *   "relay"     name, max_frame, handshake_timeout, the route sections
 *               (name, host, port, networks, in order), default_route
 *   "sender"    a gatherer's connection: server_host, server_port, name,
 *               max_frame, handshake_timeout (not interval, a restart
 *               key)
 *   "resolver"  dns, dns_servers
 *   "hosts"     hosts_file, rewrites (not the hosts file's contents)
 *   "sweeps"    interval, deadline_ms, gatherers
 *   "prometheus"  prom_families, prom_filesystems, prom_max_series,
 *               prom_metadata_ops (the prometheus { } section)
 *   "http"      every http_* field (the http { } section)
 *   "http_listen"  http_listen_host, http_listen_port, http_listen_set,
 *               http_socket: where the HTTP listener's sockets are
 *
 * An unknown section compares unequal, so a typo rebuilds rather than
 * misses a change.
 */
bool config_section_equal(const struct lh_config *a, const struct lh_config *b,
    const char *section);

/* The first key whose change needs a restart (role, state_dir, interval),
 * or NULL when a reload from old to cfg may go ahead. */
const char *
config_restart_key(const struct lh_config *old, const struct lh_config *cfg);

#endif
