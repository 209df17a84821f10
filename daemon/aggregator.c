/* SPDX-License-Identifier: BSD-2-Clause */
/* The aggregator role (see aggregator.h). */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "aggregator.h"
#include "cidr.h"
#include "clock.h"
#include "config.h"
#include "err.h"
#include "frame.h"
#include "hindex.h"
#include "hostmap.h"
#include "keyfile.h"
#include "ledger.h"
#include "log.h"
#include "loop.h"
#include "mdops.h"
#include "msg.h"
#include "nid.h"
#include "receiver.h"
#include "relay.h"
#include "resolver.h"
#include "session.h"
#include "sink.h"
#include "statedir.h"
#include "sweeps.h"

#define LOCK_FILE       "aggregator.lock"
#define LEDGER_DIR      "ledger"
#define RELAY_FILE      "relay.state"
#define HOST_MAX        (HOSTMAP_NAME_MAX + 1)
#define IP_MAX          64
#define MISSING_LOG_NS  (600 * CLOCK_NS_PER_S) /* a missing gatherer */
#define UNMAPPED_LOG_NS (600 * CLOCK_NS_PER_S) /* unmapped clients */
#define RATELIMIT_NS    (60 * CLOCK_NS_PER_S)  /* repeated conditions */
/* How far ahead of this aggregator's wall clock a SWEEP's sweep id, and
 * the batch number of a sender with a ledger entry (microseconds, as a
 * sender without state numbers them), may be: beyond, refused
 * (docs/protocol.md section 6).  A day covers any clock in service. */
#define AHEAD_MAX_S     86400
/* A wall clock that moved this much more or less than the monotonic
 * clock since the last look was stepped. */
#define STEP_NS         (CLOCK_NS_PER_S)
/* The test hook of docs/reliability.md section 7: a file holding an
 * offset in seconds added to the wall clock, read at each use. */
#define CLOCK_HOOK_ENV  "LH_TEST_CLOCK_OFFSET_FILE"

/* One host's rates in one filesystem, in the sweep being closed: the
 * NIDs of a multi-rail client that map to one host are summed here. */
struct host_acc {
	char host[HOST_MAX];
	char ip[IP_MAX]; /* "" until an IPv4 NID names one */
	uint32_t ipnum;  /* that address, the smallest of its NIDs */
	char fs[MSG_FS_MAX];
	double rate[SWEEPS_NCOUNTERS];
	double oprate[MDOPS_N]; /* metadata ops, per second */
};

/* A repeating condition: its first line, then at most one a minute
 * saying how many were not logged. */
struct ratelimit {
	uint64_t last;    /* monotonic ns of the last line, 0: none yet */
	uint64_t skipped; /* since then */
};

/* A gatherer that missed sweeps: named once, then every ten minutes. */
struct missing {
	char name[MSG_NAME_MAX];
	uint64_t since;  /* the first sweep it missed */
	uint64_t logged; /* realtime ns of the last line */
	uint64_t seen;   /* the last close that found it missing */
};

struct aggregator {
	struct lh_config *cfg; /* owned: replaced by a reload */
	struct event_base *base;
	struct event *close_timer, *flush_timer;
	struct loop loop;
	struct keyring ring;
	struct receiver *rcv;
	struct ledger *ledger;
	struct sweeps *sweeps;
	struct hostmap *hosts;
	struct resolver *dns;
	struct gsink *sink;    /* NULL until gmond_conf opens */
	struct stat sink_conf; /* gmond_conf as last tried */
	bool sink_tried;
	int lock_fd;
	/* A relay: where its sweeps go on, and the acknowledgements held
	 * back while its state cannot be saved. */
	struct relay *relay;
	struct sweeps_ack *held;
	size_t nheld, heldcap;
	/* The sweep being closed. */
	uint64_t closing;
	struct host_acc *hacc;
	size_t nh, hcap;
	struct hindex hindex;
	struct sweeps_fs_total totals[MSG_SWEEP_FS_MAX];
	size_t ntotals;
	size_t unmapped, awaiting_dns;
	char first_unmapped[NID_STR_MAX];
	uint64_t unmapped_logged;
	struct missing *missing;
	size_t nmissing, mcap;
	/* The wall clock: the test hook's file (NULL: none), and the wall
	 * clock's offset from the monotonic one at the last look. */
	const char *clock_hook;
	int64_t wall_mono;
	bool wall_seen;
	/* Batches counted already and sent again (acknowledged as
	 * duplicates), held for a ledger entry that cannot be read, and
	 * refused (batch number or sweep id out of bounds). */
	uint64_t duplicates, held_batches, refused;
	struct ratelimit dup_rl, held_rl, refused_rl;
	/* What the decoder left out of SWEEPs counted (docs/protocol.md
	 * 4.4): records, and records' metadata-op counts. */
	uint64_t dropped_recs, dropped_ops;
	struct ratelimit dropped_rl;
	/* The ledger failing to write (a full or read-only state_dir): one
	 * line when it starts, one when it ends. */
	uint64_t ledger_failed;    /* writes failed since it started */
	uint64_t ledger_fail_mono; /* when it started, 0: writing */
	/* What the last closed sweep cost, for the -v lines the benchmark
	 * (tests/bench/agg_load.sh) reads: its values going out. */
	struct {
		uint64_t sweep;
		bool active;
		uint64_t mono0, cpu0; /* when put_all() began */
		uint64_t values0, meta0;
	} out;
};

struct host_key {
	const char *host;
	const char *fs;
};

static uint64_t
host_hash(const void *ctx, uint32_t idx)
{
	const struct aggregator *a = ctx;

	return hindex_hash_pair(a->hacc[idx].host, a->hacc[idx].fs);
}

static bool
host_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct aggregator *a = ctx;
	const struct host_key *k = key;

	return strcmp(a->hacc[idx].host, k->host) == 0 &&
	    strcmp(a->hacc[idx].fs, k->fs) == 0;
}

static struct host_acc *
host_get(struct aggregator *a, const char *host, const char *fs)
{
	struct host_key k = {host, fs};
	uint64_t h = hindex_hash_pair(host, fs);
	struct host_acc *e;
	uint32_t i;

	i = hindex_find(&a->hindex, h, host_match, a, &k);
	if (i != HINDEX_NONE)
		return &a->hacc[i];
	if (a->nh == a->hcap) {
		size_t cap = a->hcap == 0 ? 256 : a->hcap * 2;

		e = realloc(a->hacc, cap * sizeof(*e));
		if (e == NULL)
			return NULL;
		a->hacc = e;
		a->hcap = cap;
	}
	e = &a->hacc[a->nh];
	memset(e, 0, sizeof(*e));
	(void)snprintf(e->host, sizeof(e->host), "%s", host);
	(void)snprintf(e->fs, sizeof(e->fs), "%s", fs);
	if (hindex_add(&a->hindex, h, (uint32_t)a->nh, host_hash, a) < 0)
		return NULL;
	a->nh++;
	return e;
}

/* Whether this occurrence gets its line; *ret_skipped: how many did
 * not since the last one. */
static bool
ratelimit_pass(struct ratelimit *r, uint64_t *ret_skipped)
{
	uint64_t now = clock_monotonic_ns();

	if (r->last != 0 && now - r->last < RATELIMIT_NS) {
		r->skipped++;
		return false;
	}
	*ret_skipped = r->skipped;
	r->skipped = 0;
	r->last = now;
	return true;
}

/* The test hook's offset, ns: whole seconds, signed; 0 when the file is
 * missing or holds anything else. */
static int64_t
hook_offset_ns(const char *path)
{
	char text[32], *end;
	long long v;
	FILE *f = fopen(path, "re");
	size_t n;

	if (f == NULL)
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	(void)fclose(f);
	text[n] = '\0';
	errno = 0;
	v = strtoll(text, &end, 10);
	if (end == text || errno != 0 || (*end != '\0' && *end != '\n') ||
	    v > 100LL * 365 * 86400 || v < -100LL * 365 * 86400)
		return 0;
	return (int64_t)v * (int64_t)CLOCK_NS_PER_S;
}

/* The wall clock, ns (with the test hook's offset when it is set). */
static uint64_t
wall_ns(const struct aggregator *a)
{
	uint64_t now = clock_realtime_ns();

	if (a->clock_hook == NULL)
		return now;
	return (uint64_t)((int64_t)now + hook_offset_ns(a->clock_hook));
}

/*
 * The wall clock for the sweeps.  Sweeps are labelled by the wall clock
 * but scheduled by durations (libevent's timers run on the monotonic
 * clock); a step of the wall clock (it moved STEP_NS more or less than
 * the monotonic clock since the last look) is one line, and the open
 * sweeps are relabelled by the step rounded to whole intervals: each
 * closes when it was due, instead of every sweep of the step closing at
 * once (forward) or none until the clock catches up (back).
 */
static uint64_t
sweep_now(struct aggregator *a)
{
	uint64_t wall = wall_ns(a), mono = clock_monotonic_ns();
	int64_t off = (int64_t)(wall - mono), step = off - a->wall_mono;
	int64_t ivl = (int64_t)a->cfg->interval * (int64_t)CLOCK_NS_PER_S;

	if (a->wall_seen && a->sweeps != NULL &&
	    (step >= (int64_t)STEP_NS || step <= -(int64_t)STEP_NS)) {
		int64_t half = step > 0 ? ivl / 2 : -ivl / 2;
		int64_t shift = (step + half) / ivl * (int64_t)a->cfg->interval;

		log_warnx(
		    "wall clock stepped %s by %.3f s: the open sweeps are "
		    "relabelled by %+" PRId64 " s and close on schedule",
		    step > 0 ? "forward" : "back",
		    (double)(step > 0 ? step : -step) / 1e9, shift);
		sweeps_shift(a->sweeps, shift);
	}
	a->wall_mono = off;
	a->wall_seen = true;
	return wall;
}

/*
 * The Ganglia host of a client NID (parts: the NID split): the hosts map
 * first (any NID kind), then reverse DNS of an IP address.  Returns 0,
 * -EAGAIN (a DNS answer is on its way) or -ENOENT.
 */
static int
map_nid(struct aggregator *a, const char *nid, const struct nid_parts *p,
    char *host)
{
	char name[RESOLVER_NAME_MAX + 1];
	bool v6 = p->kind == NID_KIND_STRING && strchr(p->addr, ':') != NULL;
	int rc;

	if (hostmap_lookup(a->hosts, nid, host, HOST_MAX) == 0)
		return 0;
	if (p->kind != NID_KIND_IPV4 && !v6)
		return -ENOENT;
	rc = resolver_lookup(a->dns, p->addr, name, sizeof(name),
	    clock_monotonic_ns());
	if (rc < 0)
		return rc == -EAGAIN ? rc : -ENOENT;
	return hostmap_rewrite(a->hosts, name, host, HOST_MAX) == 0 ? 0 :
	                                                              -ENOENT;
}

static int
on_client(void *arg, const struct sweeps_client *c)
{
	struct aggregator *a = arg;
	struct nid_parts parts;
	char host[HOST_MAX];
	struct host_acc *e;
	unsigned i;
	int rc;

	if (a->relay != NULL) {
		relay_add(a->relay, a->closing, a->cfg->interval, c);
		if (!a->cfg->spoof)
			return 0;
	}
	rc = nid_split(c->nid, &parts) < 0 ? -ENOENT :
	                                     map_nid(a, c->nid, &parts, host);
	if (rc == -EAGAIN) {
		a->awaiting_dns++;
		return 0;
	}
	if (rc < 0) {
		if (a->unmapped++ == 0)
			(void)snprintf(a->first_unmapped,
			    sizeof(a->first_unmapped), "%s", c->nid);
		return 0;
	}
	e = host_get(a, host, c->fs);
	if (e == NULL)
		return -ENOMEM;
	/* gmond keys a spoofed host by the address in front of its name: it
	 * must be the same every sweep, and differ between hosts.  So: the
	 * smallest IPv4 address of the host's NIDs, else the host name
	 * itself (gmond cuts "ip:host" at the first ':', which rules out
	 * IPv6 addresses there). */
	if (parts.kind == NID_KIND_IPV4 && strlen(parts.addr) < IP_MAX &&
	    (e->ip[0] == '\0' || parts.num < e->ipnum)) {
		memcpy(e->ip, parts.addr, strlen(parts.addr) + 1);
		e->ipnum = parts.num;
	}
	for (i = 0; i < SWEEPS_NCOUNTERS; i++)
		e->rate[i] += c->rate[i];
	for (i = 0; i < MDOPS_N && c->ops != NULL; i++)
		e->oprate[i] += c->ops->rate[i];
	return 0;
}

static int
on_fs(void *arg, const struct sweeps_fs_total *t)
{
	struct aggregator *a = arg;

	if (a->ntotals < MSG_SWEEP_FS_MAX)
		a->totals[a->ntotals++] = *t;
	return 0;
}

/* The metadata_ops metrics of one filesystem of one host:
 * <prefix>_mds_<op>, 0 when idle like the others. */
static void
put_ops(struct aggregator *a, const char *ip, const char *host,
    const char *prefix, const double oprate[MDOPS_N], uint64_t now)
{
	char name[128];
	unsigned i;

	for (i = 0; i < MDOPS_N; i++) {
		if ((a->cfg->metadata_ops & ((uint32_t)1 << i)) == 0)
			continue;
		(void)snprintf(name, sizeof(name), "%s_mds_%s", prefix,
		    mdops_name(i));
		if (a->sink != NULL)
			(void)gsink_put(a->sink, ip, host, name, "ops/sec",
			    oprate[i], now);
	}
}

/* The metrics of one filesystem of one host. */
static void
put_host(struct aggregator *a, const char *ip, const char *host, const char *fs,
    const double rate[SWEEPS_NCOUNTERS], const double oprate[MDOPS_N],
    uint64_t now)
{
	static const struct {
		const char *suffix, *units;
		unsigned counter;
		bool extra;
	} m[] = {
	    {"read_bytes", "bytes/sec", 0, false},
	    {"write_bytes", "bytes/sec", 1, false},
	    {"oss_ops", "ops/sec", 4, false},
	    {"mds_ops", "ops/sec", 5, false},
	    {"read_ops", "ops/sec", 2, true},
	    {"write_ops", "ops/sec", 3, true},
	};
	const char *prefix = config_metric_prefix(a->cfg, fs);
	char name[128];
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		if (m[i].extra && !a->cfg->extra_metrics)
			continue;
		(void)snprintf(name, sizeof(name), "%s_%s", prefix,
		    m[i].suffix);
		if (a->sink != NULL)
			(void)gsink_put(a->sink, ip, host, name, m[i].units,
			    rate[m[i].counter], now);
	}
	put_ops(a, ip, host, prefix, oprate, now);
}

/* This process's CPU time (user and system), ns. */
static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * CLOCK_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* The sweep's values are all out: how long that took, at debug level. */
static void
log_sent(struct aggregator *a)
{
	struct gsink_stats st;

	if (!a->out.active || a->sink == NULL)
		return;
	a->out.active = false;
	gsink_stats(a->sink, &st);
	if (st.values == a->out.values0 && st.metadata == a->out.meta0)
		return; /* an empty sweep */
	log_debug("sweep %" PRIu64 ": Ganglia: %" PRIu64 " values and %" PRIu64
	          " metadata sent in %.3f s (%.3f s CPU)",
	    a->out.sweep, st.values - a->out.values0,
	    st.metadata - a->out.meta0,
	    (double)(clock_monotonic_ns() - a->out.mono0) / 1e9,
	    (double)(cpu_ns() - a->out.cpu0) / 1e9);
}

static void
flush_sink(struct aggregator *a)
{
	struct timeval ms = {0, 1000};

	if (a->sink == NULL)
		return;
	if (gsink_flush(a->sink, clock_monotonic_ns()) > 0)
		(void)evtimer_add(a->flush_timer, &ms);
	else
		log_sent(a);
}

static void
flush_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	flush_sink(arg);
}

static void
log_missing(struct aggregator *a, const struct sweeps_report *rep, uint64_t now)
{
	size_t i, j, n = 0;

	for (i = 0; i < rep->nmissing; i++) {
		struct missing *m = NULL;

		for (j = 0; j < a->nmissing; j++) {
			if (strcmp(a->missing[j].name, rep->missing[i]) == 0)
				m = &a->missing[j];
		}
		if (m == NULL) {
			if (a->nmissing == a->mcap) {
				size_t cap = a->mcap == 0 ? 16 : a->mcap * 2;
				struct missing *v;

				v = realloc(a->missing, cap * sizeof(*v));
				if (v == NULL)
					continue;
				a->missing = v;
				a->mcap = cap;
			}
			m = &a->missing[a->nmissing++];
			memset(m, 0, sizeof(*m));
			(void)snprintf(m->name, sizeof(m->name), "%s",
			    rep->missing[i]);
			m->since = rep->sweep_id;
		}
		m->seen = rep->sweep_id;
		if (m->logged == 0 || now - m->logged >= MISSING_LOG_NS) {
			log_warnx(
			    "gatherer %s: no sweep since %" PRIu64
			    " (%.1f s late); its deltas go into the sweep "
			    "they arrive for",
			    m->name, m->since,
			    (double)(now - m->since * CLOCK_NS_PER_S) / 1e9);
			m->logged = now;
		}
	}
	/* Those no longer missing: say they are back, and forget them. */
	for (i = 0; i < a->nmissing; i++) {
		if (a->missing[i].seen == rep->sweep_id) {
			a->missing[n++] = a->missing[i];
			continue;
		}
		log_info("gatherer %s: reporting again", a->missing[i].name);
	}
	a->nmissing = n;
}

/*
 * Open gmond_conf's channels, at start and whenever the file changes
 * (checked before each sweep's values go out).  A bad file is one log
 * line per change: the aggregator keeps running, with the channels it had
 * (or none yet), and counts and acknowledges as usual.  Only a changed
 * file is opened again: libganglia keeps each parsed config for good.
 */
static void
sink_refresh(struct aggregator *a)
{
	const struct lh_config *cfg = a->cfg;
	struct gsink_opts go;
	struct gsink *next;
	struct lh_err err;
	struct stat sb;

	if (stat(cfg->gmond_conf, &sb) < 0)
		memset(&sb, 0, sizeof(sb));
	if (a->sink_tried && sb.st_ino == a->sink_conf.st_ino &&
	    sb.st_dev == a->sink_conf.st_dev &&
	    sb.st_size == a->sink_conf.st_size &&
	    sb.st_mtim.tv_sec == a->sink_conf.st_mtim.tv_sec &&
	    sb.st_mtim.tv_nsec == a->sink_conf.st_mtim.tv_nsec)
		return;
	a->sink_conf = sb;
	a->sink_tried = true;
	gsink_opts_default(&go);
	go.tmax = cfg->tmax;
	go.dmax = cfg->dmax;
	go.metadata_interval = cfg->metadata_interval;
	if (gsink_open(cfg->gmond_conf, &go, &next, &err) < 0) {
		log_warnx("%s; %s", err.reason,
		    a->sink != NULL ? "still sending through the channels "
		                      "it had" :
		                      "no metrics go out until it is fixed");
		return;
	}
	if (a->sink != NULL)
		log_info("%s changed: now sending to %s", cfg->gmond_conf,
		    gsink_channels(next));
	gsink_close(a->sink);
	a->sink = next;
	a->out.active = false; /* its counts were the old sink's */
}

static int
by_host(const void *x, const void *y)
{
	const struct host_acc *const *p = x, *const *q = y;

	return strcmp((*p)->host, (*q)->host);
}

/*
 * gmond keys a spoofed host by its address: a host must have one address
 * over all its filesystems, the smallest IPv4 of all its NIDs.
 */
static void
one_ip_per_host(struct aggregator *a)
{
	struct host_acc **v;
	size_t i, j, k;

	if (a->nh < 2)
		return;
	v = malloc(a->nh * sizeof(struct host_acc *));
	if (v == NULL)
		return;
	for (i = 0; i < a->nh; i++)
		v[i] = &a->hacc[i];
	qsort(v, a->nh, sizeof(struct host_acc *), by_host);
	for (i = 0; i < a->nh; i = j) {
		const struct host_acc *best = NULL;

		for (j = i; j < a->nh && strcmp(v[j]->host, v[i]->host) == 0;
		     j++) {
			if (v[j]->ip[0] != '\0' &&
			    (best == NULL || v[j]->ipnum < best->ipnum))
				best = v[j];
		}
		for (k = i; k < j && best != NULL; k++) {
			memcpy(v[k]->ip, best->ip, sizeof(best->ip));
			v[k]->ipnum = best->ipnum;
		}
	}
	free(v);
}

/* Every host's metrics of the sweep just closed, and the totals. */
static void
put_all(struct aggregator *a)
{
	uint64_t mono = clock_monotonic_ns();
	size_t i;

	sink_refresh(a);
	if (a->sink != NULL) {
		struct gsink_stats st;

		log_sent(a); /* the previous sweep's, if it was still going */
		gsink_stats(a->sink, &st);
		a->out.sweep = a->closing;
		a->out.active = true;
		a->out.mono0 = mono;
		a->out.cpu0 = cpu_ns();
		a->out.values0 = st.values;
		a->out.meta0 = st.metadata;
	}
	one_ip_per_host(a);
	for (i = 0; i < a->nh; i++) {
		const struct host_acc *e = &a->hacc[i];

		put_host(a, e->ip[0] != '\0' ? e->ip : e->host, e->host, e->fs,
		    e->rate, e->oprate, mono);
	}
	for (i = 0; i < a->ntotals; i++)
		put_host(a, a->cfg->totals_host, a->cfg->totals_host,
		    a->totals[i].fs, a->totals[i].rate, a->totals[i].ops.rate,
		    mono);
	flush_sink(a);
}

/* What each filesystem's clients did in the sweep just closed, at debug
 * level: the deltas an operator (or a test) can add up over sweeps. */
static void
log_totals(const struct aggregator *a, uint64_t sweep_id)
{
	size_t i;

	for (i = 0; i < a->ntotals; i++) {
		const struct sweeps_fs_total *t = &a->totals[i];

		log_debug("sweep %" PRIu64 ": fs %s: %zu clients, read_bytes "
		          "%" PRIu64 " write_bytes %" PRIu64
		          " read_ops %" PRIu64 " write_ops %" PRIu64
		          " oss_ops %" PRIu64 " mds_ops %" PRIu64,
		    sweep_id, t->fs, t->nclients, t->d.read_bytes,
		    t->d.write_bytes, t->d.read_ops, t->d.write_ops,
		    t->d.oss_ops, t->d.mds_ops);
	}
}

/* The batches of acks are safe: their senders' ledger entries. */
static void
ledger_record(struct aggregator *a, const struct sweeps_ack *acks, size_t n)
{
	struct lh_err err;
	size_t i, failed = 0, written = 0;

	for (i = 0; i < n; i++) {
		if (ledger_set(a->ledger, acks[i].sender, acks[i].batch, &err) <
		    0) {
			/* A full or read-only state_dir fails every entry,
			 * every sweep: say it once, with the first reason. */
			if (a->ledger_fail_mono == 0 && failed == 0)
				log_warnx(
				    "ledger: %s; the batches are counted "
				    "and acknowledged, their numbers kept in "
				    "memory until they can be written",
				    err.reason);
			failed++;
		} else {
			written++;
		}
	}
	if (failed > 0) {
		if (a->ledger_fail_mono == 0)
			a->ledger_fail_mono = clock_monotonic_ns();
		a->ledger_failed += failed;
	} else if (written > 0 && a->ledger_fail_mono != 0) {
		log_warnx("ledger: written again after %" PRIu64
		          " failed writes in %.0f s",
		    a->ledger_failed,
		    (double)(clock_monotonic_ns() - a->ledger_fail_mono) / 1e9);
		a->ledger_fail_mono = 0;
		a->ledger_failed = 0;
	}
}

/*
 * The batches of a closed sweep are safe: the ledger learns their numbers
 * first, then the values go to Ganglia, then the senders are told.  A
 * crash in between loses a sweep's display, never counts one twice.
 */
static void
ack_sweep(struct aggregator *a, const struct sweeps_ack *acks, size_t n,
    uint64_t now)
{
	size_t i;

	ledger_record(a, acks, n);
	if (a->relay == NULL)
		log_totals(a, a->closing);
	if (a->relay == NULL || a->cfg->spoof)
		put_all(a);
	for (i = 0; i < n; i++) {
		struct receiver_peer *p =
		    receiver_peer_find(a->rcv, acks[i].peer);
		struct msg_ack ack = {MSG_ACK_SWEEP, acks[i].seq, acks[i].batch,
		    now};

		if (p != NULL)
			(void)receiver_peer_ack(p, &ack);
	}
}

/* Room for n held acknowledgements.  Returns 0 or -ENOMEM. */
static int
held_reserve(struct aggregator *a, size_t n)
{
	struct sweeps_ack *v;

	if (n <= a->heldcap)
		return 0;
	v = realloc(a->held, n * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	a->held = v;
	a->heldcap = n;
	return 0;
}

/*
 * A relay's closed sweep: its deltas are in the routes' outboxes; they
 * and the batches they came from are saved together before any sender is
 * told (docs/relay.md).  While the state cannot be saved, the
 * acknowledgements wait (their senders' resends are recognised), and go
 * out with the first sweep that is saved.
 */
static void
relay_sweep(struct aggregator *a, const struct sweeps_report *rep, uint64_t now)
{
	size_t need = a->nheld + rep->nacks;

	if (held_reserve(a, need) < 0) {
		log_warnx("sweep %" PRIu64 ": out of memory; its "
		          "acknowledgements are lost (the senders will resend)",
		    rep->sweep_id);
		return;
	}
	if (rep->nacks > 0)
		memcpy(a->held + a->nheld, rep->acks,
		    rep->nacks * sizeof(*rep->acks));
	a->nheld = need;
	if (relay_commit(a->relay, rep->sweep_id, a->held, a->nheld) < 0) {
		if (a->cfg->spoof)
			put_all(a);
		return;
	}
	/* a->held stays with a (freed by teardown()); the analyzer loses
	 * track of it through the calls below. */
	ack_sweep(a, a->held, a->nheld, now);
	a->nheld = 0; // NOLINT(clang-analyzer-unix.Malloc)
}

/* A batch whose acknowledgement is held back, sent again: acknowledge it
 * on this connection when it can be.  True if it was one. */
static bool
held_resend(struct aggregator *a, const char *sender, const struct msg_sweep *h,
    const struct session_frame *f, uint64_t peer)
{
	bool found = false;
	size_t i;

	for (i = 0; i < a->nheld; i++) {
		if (strcmp(a->held[i].sender, sender) == 0 &&
		    h->batch <= a->held[i].batch) {
			a->held[i].peer = peer;
			a->held[i].seq = f->hdr.seq;
			found = true;
		}
	}
	return found;
}

/* Save the relay's routes with the acknowledgements held back, and
 * record those batches in the ledger.  Returns 0, or -1 (not saved). */
static int
save_held(struct aggregator *a)
{
	if (relay_commit(a->relay, a->closing, a->held, a->nheld) < 0)
		return -1;
	ledger_record(a, a->held, a->nheld);
	/* a->held stays with a, as in relay_sweep(). */
	return 0; // NOLINT(clang-analyzer-unix.Malloc)
}

/* A relay stopping: what its downstreams have not acknowledged yet is
 * saved (acknowledgements held back included), to go out after the
 * restart. */
static void
relay_shutdown(struct aggregator *a)
{
	if (a->relay != NULL && save_held(a) == 0)
		a->nheld = 0;
}

/* Close the oldest open sweep: hand it on (Ganglia, or the relay's
 * routes), then acknowledge its batches.  stopping: early, because the
 * process stops (what arrived is not left unacknowledged). */
static void
close_one(struct aggregator *a, uint64_t now, bool stopping)
{
	struct sweeps_report rep;
	uint64_t cpu0 = cpu_ns(), mono0 = clock_monotonic_ns(), cpu1;

	a->nh = 0;
	hindex_clear(&a->hindex);
	a->ntotals = 0;
	a->unmapped = 0;
	a->awaiting_dns = 0;
	a->closing = sweeps_open_id(a->sweeps);
	if (sweeps_close(a->sweeps, now, on_client, on_fs, a, &rep) < 0)
		log_warnx("sweep %" PRIu64 ": out of memory; some "
		          "clients not sent",
		    rep.sweep_id);
	if (a->relay == NULL) {
		ack_sweep(a, rep.acks, rep.nacks, now);
	} else {
		log_totals(a, rep.sweep_id);
		relay_sweep(a, &rep, now);
	}
	if (!stopping)
		log_missing(a, &rep, now);
	if (a->unmapped > 0 &&
	    (a->unmapped_logged == 0 ||
	        now - a->unmapped_logged >= UNMAPPED_LOG_NS)) {
		log_warnx("sweep %" PRIu64 ": %zu clients without a "
		          "host name (%s, ...): add them to hosts_file, "
		          "or check DNS",
		    rep.sweep_id, a->unmapped, a->first_unmapped);
		a->unmapped_logged = now;
	}
	log_debug("sweep %" PRIu64 ": %zu gatherers (%zu late), %zu "
	          "clients, %zu hosts, %zu unmapped, %zu awaiting DNS%s",
	    rep.sweep_id, rep.nreported, rep.nlate, rep.nclients, a->nh,
	    a->unmapped, a->awaiting_dns,
	    stopping            ? ", closed early: stopping" :
	        rep.by_deadline ? ", closed at the deadline" :
	                          "");
	cpu1 = cpu_ns();
	log_debug("sweep %" PRIu64 ": closing took %.3f s CPU (%.3f s wall), "
	          "process CPU %.3f s",
	    rep.sweep_id, (double)(cpu1 - cpu0) / 1e9,
	    (double)(clock_monotonic_ns() - mono0) / 1e9, (double)cpu1 / 1e9);
}

/* Close every sweep that is ready, and set the timer for the next. */
static void
close_ready(struct aggregator *a)
{
	uint64_t now = sweep_now(a), deadline;
	struct timeval tv;

	while (sweeps_ready(a->sweeps, now)) {
		close_one(a, now, false);
		now = sweep_now(a);
	}
	deadline = sweeps_next_ns(a->sweeps);
	deadline = deadline > now ? deadline - now : 0;
	tv.tv_sec = (time_t)(deadline / CLOCK_NS_PER_S);
	tv.tv_usec = (suseconds_t)(deadline % CLOCK_NS_PER_S / 1000);
	(void)evtimer_add(a->close_timer, &tv);
}

/*
 * Stopping: the open sweep is closed with what has arrived (shown, or
 * sent on by a relay, and acknowledged), and the acknowledgements get a
 * moment to leave.  What a gatherer sends after that goes to the next
 * run, as a late batch.
 */
static void
stop_sweep(struct aggregator *a)
{
	struct timeval flush = {0, 300000};

	if (a->sweeps == NULL || sweeps_open_batches(a->sweeps) == 0)
		return;
	close_one(a, sweep_now(a), true);
	flush_sink(a);
	(void)event_base_loopexit(a->base, &flush);
	(void)event_base_dispatch(a->base);
}

static void
close_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	close_ready(arg);
}

/* gatherer_networks: a name bound to networks is taken from them only
 * (issue 15, item 2); other names from wherever the listener admits. */
static int
check_bound(const struct aggregator *a, struct receiver_peer *p,
    const char *name, struct lh_err *err)
{
	const struct lh_bind *b = NULL;
	struct sockaddr_storage ss;
	size_t i;

	for (i = 0; i < a->cfg->nbinds && b == NULL; i++) {
		if (strcmp(a->cfg->binds[i].name, name) == 0)
			b = &a->cfg->binds[i];
	}
	if (b == NULL)
		return 0;
	if (receiver_peer_sockaddr(p, &ss) == 0) {
		for (i = 0; i < b->nnets; i++) {
			if (cidr_match(&b->nets[i],
			        (const struct sockaddr *)&ss))
				return 0;
		}
	}
	return lh_err_set(err, 0, -EACCES,
	    "not from the networks gatherer_networks binds this name to");
}

static int
on_hello(void *arg, struct receiver_peer *p, const struct msg_hello *h,
    struct lh_err *err)
{
	struct aggregator *a = arg;
	char name[MSG_NAME_MAX];
	int64_t skew = (int64_t)(h->time_ns - wall_ns(a));

	log_safe(name, sizeof(name), h->name);
	if (check_bound(a, p, h->name, err) < 0)
		return -EACCES;
	const char *role = h->role == MSG_ROLE_RELAY ? "relay" : "gatherer";

	if (h->interval != a->cfg->interval)
		log_warnx("%s %s (%s): sweeps every %u s, this %s every %u s: "
		          "set the same interval",
		    role, name, receiver_peer_addr(p), h->interval,
		    a->relay != NULL ? "relay" : "aggregator",
		    a->cfg->interval);
	if (skew > 1000000000LL || skew < -1000000000LL)
		log_warnx("%s %s (%s): clock differs from ours by %.1f s", role,
		    name, receiver_peer_addr(p), (double)skew / 1e9);
	if (h->role == MSG_ROLE_RELAY)
		log_info("relay %s (%s): connected", name,
		    receiver_peer_addr(p));
	else
		log_info("gatherer %s (%s): connected, %u filesystems, %u "
		         "targets",
		    name, receiver_peer_addr(p), h->nfs, h->ntargets);
	return 0;
}

/*
 * A SWEEP's header, the whole payload checked.  The one place that says
 * what of a SWEEP is refused: only one that cannot be decoded (the peer
 * is dropped with the reason).  What the decoder leaves out of one that
 * decodes (records of a filesystem whose name cannot be a metric name,
 * op counts above mds_ops) is noted by note_dropped() once it is counted.
 */
static int
sweep_header(const struct session_frame *f, struct msg_sweep *h,
    struct lh_err *err)
{
	return msg_sweep_decode(h, f->payload, f->hdr.len, NULL, NULL, err);
}

/* The first filesystem of h the decoder dropped, for the log. */
static void
first_dropped_fs(const struct msg_sweep *h, char *out, size_t size)
{
	unsigned i;

	(void)snprintf(out, size, "-");
	for (i = 0; i < h->nfs && i < 64; i++) {
		if ((h->fs_dropped & ((uint64_t)1 << i)) != 0) {
			log_safe(out, size, h->fs[i]);
			return;
		}
	}
}

/* A SWEEP counted without the parts the decoder could not use: counted,
 * and a line at most once a minute (issue 15, item 9). */
static void
note_dropped(struct aggregator *a, struct receiver_peer *p,
    const struct msg_sweep *h)
{
	char fs[MSG_FS_MAX];
	uint64_t skipped;

	if (h->ndropped == 0 && h->nops_dropped == 0)
		return;
	a->dropped_recs += h->ndropped;
	a->dropped_ops += h->nops_dropped;
	if (!ratelimit_pass(&a->dropped_rl, &skipped))
		return;
	first_dropped_fs(h, fs, sizeof(fs));
	log_warnx("gatherer %s (%s): batch %" PRIu64 ": %" PRIu32
	          " records of filesystems whose names cannot be metric "
	          "names (%s) and the op counts of %" PRIu32
	          " records above their mds_ops dropped, the rest counted "
	          "(%" PRIu64 " records and %" PRIu64
	          " op counts in all, %" PRIu64 " lines not logged)",
	    receiver_peer_name(p), receiver_peer_addr(p), h->batch, h->ndropped,
	    fs, h->nops_dropped, a->dropped_recs, a->dropped_ops, skipped);
}

/* A batch counted already, sent again (its ACK was lost): acknowledged
 * as a duplicate, counted, and logged at most once a minute. */
static void
ack_duplicate(struct aggregator *a, struct receiver_peer *p,
    const struct session_frame *f, uint64_t batch, uint64_t safe)
{
	struct msg_ack ack = {MSG_ACK_DUPLICATE, f->hdr.seq, batch, wall_ns(a)};
	uint64_t skipped;

	a->duplicates++;
	if (ratelimit_pass(&a->dup_rl, &skipped))
		log_info("gatherer %s (%s): batch %" PRIu64 " was counted "
		         "already (ledger: %" PRIu64 "), acknowledged as a "
		         "duplicate, not counted again; %" PRIu64
		         " duplicates in all, %" PRIu64 " not logged",
		    receiver_peer_name(p), receiver_peer_addr(p), batch, safe,
		    a->duplicates, skipped);
	(void)receiver_peer_ack(p, &ack);
}

/* The sender's ledger entry cannot be read: its batch is neither counted
 * nor acknowledged (the sender keeps it and sends it again), and the
 * file is left for the operator (docs/reliability.md section 3). */
static void
hold_batch(struct aggregator *a, struct receiver_peer *p, uint64_t batch,
    const struct lh_err *lerr)
{
	uint64_t skipped;

	a->held_batches++;
	if (ratelimit_pass(&a->held_rl, &skipped))
		log_warnx("ledger %s; gatherer %s: batch %" PRIu64
		          " held unacknowledged, not counted (%" PRIu64
		          " held, %" PRIu64 " not logged): write that "
		          "number minus one into the file, or remove it "
		          "(lharvestd.conf(5), FILES)",
		    lerr->reason, receiver_peer_name(p), batch, a->held_batches,
		    skipped);
}

/*
 * A batch number or sweep id no clock in service can give: refused with
 * a reason (the peer is dropped, one line) and not recorded, so that one
 * holder of the key cannot make every later batch of a gatherer a
 * "duplicate" (issue 15, items 2 and 14).  A sender with no ledger entry
 * is never refused for its batch number: it may number from a clock of
 * its own (docs/protocol.md section 5).
 */
static int
check_bounds(struct aggregator *a, const struct session_frame *f,
    const struct msg_sweep *h, uint64_t safe, struct lh_err *err)
{
	uint64_t now_s = wall_ns(a) / CLOCK_NS_PER_S, skipped;
	uint64_t max_s = now_s + AHEAD_MAX_S;
	uint64_t max_us = max_s * 1000000u;
	int rc = 0;

	if (f->hdr.sweep_id > max_s)
		rc = lh_err_set(err, 0, -ERANGE,
		    "sweep id %" PRIu64 " more than %d s ahead of our "
		    "clock (%" PRIu64 "), refused",
		    f->hdr.sweep_id, AHEAD_MAX_S, now_s);
	else if (safe != 0 && h->batch > max_us)
		rc = lh_err_set(err, 0, -ERANGE,
		    "batch %" PRIu64 " above our clock in microseconds "
		    "plus %d s (%" PRIu64 "), refused, not recorded",
		    h->batch, AHEAD_MAX_S, max_us);
	if (rc < 0) {
		a->refused++;
		/* The receiver logs the drop; this says how often. */
		if (ratelimit_pass(&a->refused_rl, &skipped) && skipped > 0)
			log_warnx("%" PRIu64 " SWEEPs refused for their batch "
			          "number or sweep id in all",
			    a->refused);
	}
	return rc;
}

static int
on_frame(void *arg, struct receiver_peer *p, const struct session_frame *f,
    struct lh_err *err)
{
	struct aggregator *a = arg;
	const char *sender = receiver_peer_name(p);
	struct msg_sweep h;
	struct lh_err lerr;
	uint64_t safe;
	int v;

	if (f->hdr.type != FRAME_SWEEP)
		return 0; /* a later message type this version ignores */
	v = sweep_header(f, &h, err);
	if (v < 0)
		return v;
	if (held_resend(a, sender, &h, f, receiver_peer_id(p)))
		return 0;
	lh_err_clear(&lerr);
	if (ledger_lookup(a->ledger, sender, &safe, &lerr) < 0) {
		hold_batch(a, p, h.batch, &lerr);
		return 0;
	}
	if (h.batch <= safe) {
		ack_duplicate(a, p, f, h.batch, safe);
		return 0;
	}
	if (check_bounds(a, f, &h, safe, err) < 0)
		return -ERANGE;
	v = sweeps_add(a->sweeps, sender, f->hdr.sweep_id, &h, f->payload,
	    f->hdr.len, safe, receiver_peer_id(p), f->hdr.seq, err);
	if (v < 0)
		return v;
	if (v != SWEEPS_RESEND)
		note_dropped(a, p, &h);
	close_ready(a);
	return 0;
}

static void
on_close(void *arg, struct receiver_peer *p, const char *reason)
{
	(void)arg;
	log_debug("gatherer %s (%s): %s", receiver_peer_name(p),
	    receiver_peer_addr(p), reason);
}

struct seed_ctx {
	struct aggregator *a;
	int64_t since; /* ledger files changed since then: active */
	size_t n;
};

static void
seed_one(void *arg, const char *sender, int64_t mtime)
{
	struct seed_ctx *c = arg;

	if (mtime >= c->since && sweeps_expect(c->a->sweeps, sender) == 0)
		c->n++;
}

/*
 * After a restart, expect the gatherers whose batches were counted
 * recently (their ledger files changed within the roster's reach): the
 * first sweeps then wait for all of them, instead of closing on the first
 * to reconnect and showing the others' clients at zero.
 */
static void
seed_roster(struct aggregator *a)
{
	struct seed_ctx c = {a,
	    (int64_t)(wall_ns(a) / CLOCK_NS_PER_S) -
	        (int64_t)a->cfg->interval * 3,
	    0};

	if (ledger_each(a->ledger, seed_one, &c) > 0 && c.n > 0)
		log_info("expecting the %zu gatherers counted in the last "
		         "three sweeps",
		    c.n);
}

/* The hosts map and rewrite rules of cfg.  Returns 0, or -1 after one
 * log line naming the file (and line) or the rule. */
static int
make_hostmap(const struct lh_config *cfg, struct hostmap **ret)
{
	struct hostmap *m;
	struct lh_err err;
	size_t i;

	if (hostmap_new(&m) < 0) {
		log_warnx("out of memory");
		return -1;
	}
	for (i = 0; i < cfg->nrewrites; i++) {
		if (hostmap_add_rewrite(m, cfg->rewrites[i], &err) < 0) {
			log_warnx("%s: rewrite '%s': %s", cfg->path,
			    cfg->rewrites[i], err.reason);
			hostmap_free(m);
			return -1;
		}
	}
	if (cfg->hosts_file != NULL &&
	    hostmap_load_file(m, cfg->hosts_file, &err) < 0) {
		log_warnx("%s", err.reason);
		hostmap_free(m);
		return -1;
	}
	*ret = m;
	return 0;
}

/* Everything that can be refused, before detaching. */
static int
preflight(struct aggregator *a)
{
	const struct lh_config *cfg = a->cfg;
	struct sweeps_conf sc;
	struct lh_err err;
	char dir[PATH_MAX];

	if (keyfile_load(cfg->secret_file, &a->ring, &err) < 0) {
		log_warnx("%s", err.reason);
		return -1;
	}
	a->lock_fd = statedir_lock(cfg->state_dir, LOCK_FILE);
	if (a->lock_fd < 0)
		return -1;
	if (snprintf(dir, sizeof(dir), "%s/%s", cfg->state_dir, LEDGER_DIR) >=
	        (int)sizeof(dir) ||
	    (mkdir(dir, 0750) < 0 && errno != EEXIST) ||
	    ledger_new(&a->ledger, dir) < 0) {
		log_warn("%s", dir);
		return -1;
	}
	if (make_hostmap(cfg, &a->hosts) < 0)
		return -1;
	if (cfg->role == LH_ROLE_RELAY &&
	    (snprintf(dir, sizeof(dir), "%s/%s", cfg->state_dir, RELAY_FILE) >=
	            (int)sizeof(dir) ||
	        relay_new(cfg, &a->ring, dir, &a->relay) < 0 ||
	        relay_restore(a->relay, a->ledger) < 0))
		return -1;
	if (a->relay == NULL || cfg->spoof)
		sink_refresh(a);
	memset(&sc, 0, sizeof(sc));
	sc.interval_s = cfg->interval;
	sc.deadline_ms = cfg->deadline_ms;
	sc.expected = cfg->gatherers;
	sc.nexpected = cfg->ngatherers;
	if (sweeps_new(&sc, sweep_now(a), &a->sweeps) < 0) {
		log_warnx("%s: cannot set up sweeps (interval %u s, deadline "
		          "%u ms)",
		    cfg->path, cfg->interval, cfg->deadline_ms);
		return -1;
	}
	seed_roster(a);
	return 0;
}

static int
make_resolver(struct aggregator *a, const struct lh_config *cfg,
    struct resolver **ret)
{
	struct resolver_conf dc;
	struct lh_err err;

	memset(&dc, 0, sizeof(dc));
	dc.enabled = cfg->dns;
	dc.servers = (const char *const *)cfg->dns_servers;
	dc.nservers = cfg->ndns_servers;
	if (resolver_new(a->base, &dc, ret, &err) < 0) {
		log_warnx("%s: dns_servers: %s", cfg->path, err.reason);
		return -1;
	}
	return 0;
}

static int
make_receiver(struct aggregator *a, const struct lh_config *cfg,
    struct receiver **ret)
{
	struct receiver_conf rc;
	char bind[300];

	(void)snprintf(bind, sizeof(bind),
	    strchr(cfg->listen_host, ':') != NULL ? "[%s]:%u" : "%s:%u",
	    cfg->listen_host, cfg->listen_port);
	memset(&rc, 0, sizeof(rc));
	rc.bind = bind;
	rc.keys = &a->ring;
	rc.name = cfg->name;
	rc.role =
	    cfg->role == LH_ROLE_RELAY ? MSG_ROLE_RELAY : MSG_ROLE_AGGREGATOR;
	rc.max_frame = cfg->max_frame;
	rc.handshake_timeout = cfg->handshake_timeout;
	rc.read_timeout = config_read_timeout(cfg);
	rc.max_conns = cfg->max_connections;
	rc.interval = cfg->interval;
	rc.frame_timeout = cfg->frame_timeout;
	rc.max_unauth = cfg->max_unauthenticated;
	rc.max_per_source = cfg->max_per_source;
	rc.accept_rate = cfg->accept_rate;
	rc.accept_burst = cfg->accept_burst;
	rc.allow = cfg->allow;
	rc.nallow = cfg->nallow;
	rc.on_hello = on_hello;
	rc.on_frame = on_frame;
	rc.on_close = on_close;
	rc.arg = a;
	return receiver_new(a->base, &rc, ret);
}

static bool
same_list(char *const *a, size_t na, char *const *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++) {
		if (strcmp(a[i], b[i]) != 0)
			return false;
	}
	return true;
}

static bool
same_str(const char *a, const char *b)
{
	return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

/* Whether cfg listens where the running receiver does (port 0 in the
 * running configuration: the port the kernel gave it). */
static bool
same_listen(const struct aggregator *a, const struct lh_config *cfg)
{
	const struct lh_config *old = a->cfg;
	char want[300];

	if (!same_str(old->listen_host, cfg->listen_host))
		return false;
	if (old->listen_port != 0 || cfg->listen_port == 0)
		return old->listen_port == cfg->listen_port;
	(void)snprintf(want, sizeof(want),
	    strchr(cfg->listen_host, ':') != NULL ? "[%s]:%u" : "%s:%u",
	    cfg->listen_host, cfg->listen_port);
	return a->rcv != NULL && strcmp(receiver_addr(a->rcv), want) == 0;
}

/* The listener's admission keys (receiver.h) and the interval it reads
 * a name takeover by. */
static bool
admission_changed(const struct lh_config *a, const struct lh_config *b)
{
	return a->interval != b->interval ||
	    a->frame_timeout != b->frame_timeout ||
	    a->max_unauthenticated != b->max_unauthenticated ||
	    a->max_per_source != b->max_per_source ||
	    a->accept_rate != b->accept_rate ||
	    a->accept_burst != b->accept_burst || a->nallow != b->nallow ||
	    (a->nallow > 0 &&
	        memcmp(a->allow, b->allow, a->nallow * sizeof(*a->allow)) != 0);
}

/* What the listening socket and its peers were made with. */
static bool
receiver_changed(const struct aggregator *ag, const struct lh_config *b)
{
	const struct lh_config *a = ag->cfg;

	return !same_listen(ag, b) || !same_str(a->name, b->name) ||
	    a->max_frame != b->max_frame ||
	    a->handshake_timeout != b->handshake_timeout ||
	    config_read_timeout(a) != config_read_timeout(b) ||
	    a->max_connections != b->max_connections || admission_changed(a, b);
}

/* What a relay's routes and their connections were made with. */
static bool
relay_changed(const struct lh_config *a, const struct lh_config *b)
{
	size_t i;

	if (a->nroutes != b->nroutes || a->default_route != b->default_route ||
	    !same_str(a->name, b->name) || a->max_frame != b->max_frame ||
	    a->handshake_timeout != b->handshake_timeout)
		return true;
	for (i = 0; i < a->nroutes; i++) {
		const struct lh_route *x = &a->routes[i], *y = &b->routes[i];

		if (strcmp(x->name, y->name) != 0 ||
		    strcmp(x->host, y->host) != 0 || x->port != y->port ||
		    !same_list(x->networks, x->nnetworks, y->networks,
		        y->nnetworks))
			return true;
	}
	return false;
}

/* The parts a reload makes before it takes the new configuration; what
 * is NULL stays as it is. */
struct reload_parts {
	struct keyring ring;
	struct hostmap *hosts;
	struct resolver *dns;
	struct receiver *rcv;
	struct relay *relay;
	bool rcv_later; /* same address, other options: replaced after */
};

static void
reload_parts_free(struct reload_parts *p)
{
	keyring_clear(&p->ring);
	hostmap_free(p->hosts);
	if (p->dns != NULL)
		resolver_free(p->dns);
	if (p->rcv != NULL)
		receiver_free(p->rcv);
	relay_free(p->relay);
}

/* A key that needs a restart, or NULL. */
static const char *
fixed_key(const struct lh_config *old, const struct lh_config *cfg)
{
	if (cfg->role != old->role)
		return "role";
	if (strcmp(cfg->state_dir, old->state_dir) != 0)
		return "state_dir";
	if (cfg->interval != old->interval)
		return "interval";
	return NULL;
}

/* Everything a reload can fail at, before anything changes.  Returns 0,
 * or -1 after one log line. */
static int
reload_prepare(struct aggregator *a, const struct lh_config *cfg,
    struct reload_parts *p)
{
	const struct lh_config *old = a->cfg;
	struct lh_err err;
	char path[PATH_MAX];

	if (keyfile_load(cfg->secret_file, &p->ring, &err) < 0) {
		log_warnx("%s", err.reason);
		return -1;
	}
	if (make_hostmap(cfg, &p->hosts) < 0)
		return -1;
	if ((cfg->dns != old->dns ||
	        !same_list(cfg->dns_servers, cfg->ndns_servers,
	            old->dns_servers, old->ndns_servers)) &&
	    make_resolver(a, cfg, &p->dns) < 0)
		return -1;
	if (receiver_changed(a, cfg)) {
		/* A new address is bound before the old one is let go; the
		 * same one only after. */
		if (same_listen(a, cfg))
			p->rcv_later = true;
		else if (make_receiver(a, cfg, &p->rcv) < 0)
			return -1;
	}
	if (a->relay != NULL && relay_changed(old, cfg) &&
	    (snprintf(path, sizeof(path), "%s/%s", cfg->state_dir,
	         RELAY_FILE) >= (int)sizeof(path) ||
	        relay_new(cfg, &a->ring, path, &p->relay) < 0))
		return -1;
	return 0;
}

/* The relay's routes changed: what the old routes hold is saved, and the
 * new ones start from that file (a route that is gone has its clients
 * routed again).  Returns 0, or -1 (the old relay keeps running). */
static int
relay_replace(struct aggregator *a, struct relay *next)
{
	if (save_held(a) < 0)
		return -1;
	relay_free(a->relay);
	a->relay = next;
	if (relay_restore(a->relay, a->ledger) < 0 ||
	    relay_start(a->relay, a->base) < 0)
		log_warnx("relay: the new routes could not all start");
	return 0;
}

/*
 * SIGHUP: the configuration file again.  Anything wrong (syntax, values,
 * the key file, the hosts map, a rewrite rule, an address that cannot be
 * bound, a key that needs a restart) is one line, and the running
 * configuration stays.  Otherwise everything applies at once; the
 * gatherers' connections survive unless the listening side changed, and
 * a relay's downstream connections unless its routes did.
 */
static void
reload(void *arg)
{
	struct aggregator *a = arg;
	struct lh_config *cfg, *old = a->cfg;
	struct reload_parts p;
	struct sweeps_conf sc;
	struct lh_err err;
	const char *fixed;

	if (config_load(old->path, &cfg, &err) < 0) {
		log_warnx("%s; keeping the running configuration", err.reason);
		return;
	}
	fixed = fixed_key(old, cfg);
	if (fixed != NULL) {
		log_warnx("%s: %s: a change needs a restart; keeping the "
		          "running configuration",
		    cfg->path, fixed);
		config_free(cfg);
		return;
	}
	memset(&p, 0, sizeof(p));
	if (reload_prepare(a, cfg, &p) < 0) {
		log_warnx("%s: not reloaded; keeping the running configuration",
		    cfg->path);
		reload_parts_free(&p);
		config_free(cfg);
		return;
	}
	if (p.relay != NULL && relay_replace(a, p.relay) < 0) {
		log_warnx("%s: not reloaded (the relay's state could not be "
		          "saved); keeping the running configuration",
		    cfg->path);
		reload_parts_free(&p);
		config_free(cfg);
		return;
	}
	p.relay = NULL;
	/* From here on the new configuration is taken. */
	keyring_clear(&a->ring);
	a->ring = p.ring; /* the receiver's and senders' pointer stays */
	memset(&p.ring, 0, sizeof(p.ring));
	hostmap_free(a->hosts);
	a->hosts = p.hosts;
	p.hosts = NULL;
	if (p.dns != NULL) {
		resolver_free(a->dns);
		a->dns = p.dns;
		p.dns = NULL;
	}
	if (p.rcv != NULL || p.rcv_later) {
		receiver_free(a->rcv);
		a->rcv = p.rcv;
		p.rcv = NULL;
	}
	a->cfg = cfg;
	if (a->rcv == NULL && make_receiver(a, cfg, &a->rcv) < 0)
		log_warnx("%s: no gatherer can connect until the next "
		          "reload",
		    cfg->path);
	if (a->relay != NULL)
		relay_rebind(a->relay, cfg);
	if (!same_str(cfg->gmond_conf, old->gmond_conf) ||
	    cfg->tmax != old->tmax || cfg->dmax != old->dmax ||
	    cfg->metadata_interval != old->metadata_interval)
		a->sink_tried = false; /* opened again at the next sweep */
	if (a->relay != NULL && !cfg->spoof) {
		gsink_close(a->sink);
		a->sink = NULL;
		a->sink_tried = false;
	}
	memset(&sc, 0, sizeof(sc));
	sc.interval_s = cfg->interval;
	sc.deadline_ms = cfg->deadline_ms;
	sc.expected = cfg->gatherers;
	sc.nexpected = cfg->ngatherers;
	if (sweeps_reconfigure(a->sweeps, &sc) < 0)
		log_warnx("%s: gatherers, deadline: out of memory; the old "
		          "ones stay",
		    cfg->path);
	reload_parts_free(&p);
	config_free(old);
	log_info("configuration reloaded from %s", cfg->path);
	close_ready(a);
}

static int
setup(struct aggregator *a)
{
	if (loop_new(&a->loop) < 0)
		return -1;
	a->base = a->loop.base;
	if (make_resolver(a, a->cfg, &a->dns) < 0)
		return -1;
	a->close_timer = evtimer_new(a->base, close_cb, a);
	a->flush_timer = evtimer_new(a->base, flush_cb, a);
	if (a->close_timer == NULL || a->flush_timer == NULL) {
		log_warnx("cannot set up events");
		return -1;
	}
	if (make_receiver(a, a->cfg, &a->rcv) < 0)
		return -1;
	if (a->relay != NULL && relay_start(a->relay, a->base) < 0)
		return -1;
	loop_on_reload(&a->loop, reload, a);
	close_ready(a);
	return 0;
}

static void
teardown(struct aggregator *a)
{
	if (a->rcv != NULL)
		receiver_free(a->rcv);
	relay_free(a->relay);
	if (a->dns != NULL) {
		resolver_free(a->dns);
		/* Let evdns fail its cancelled queries (resolver.h). */
		(void)event_base_loop(a->base, EVLOOP_NONBLOCK);
	}
	if (a->close_timer != NULL)
		event_free(a->close_timer);
	if (a->flush_timer != NULL)
		event_free(a->flush_timer);
	loop_free(&a->loop);
	gsink_close(a->sink);
	sweeps_free(a->sweeps);
	hostmap_free(a->hosts);
	ledger_free(a->ledger);
	keyring_clear(&a->ring);
	hindex_free(&a->hindex);
	free(a->hacc);
	free(a->missing);
	free(a->held);
	config_free(a->cfg);
	if (a->lock_fd >= 0)
		(void)close(a->lock_fd);
}

int
aggregator_run(struct lh_config *cfg, bool detach)
{
	struct aggregator a;
	int status = 1;

	memset(&a, 0, sizeof(a));
	a.cfg = cfg;
	a.lock_fd = -1;
	a.clock_hook = getenv(CLOCK_HOOK_ENV);
	hindex_init(&a.hindex);
	if (preflight(&a) < 0 || loop_detach(detach) < 0)
		goto out;
	if (setup(&a) == 0) {
		if (a.relay != NULL)
			log_info("relay %s: every %u s, listening on %s, %zu "
			         "routes%s%s",
			    cfg->name, cfg->interval, receiver_addr(a.rcv),
			    cfg->nroutes,
			    cfg->spoof ? ", Ganglia through " : "",
			    cfg->spoof ? cfg->gmond_conf : "");
		else
			log_info("aggregator %s: every %u s, listening on %s, "
			         "Ganglia through %s",
			    cfg->name, cfg->interval, receiver_addr(a.rcv),
			    cfg->gmond_conf);
		loop_run(&a.loop);
		stop_sweep(&a);
		relay_shutdown(&a);
		status = 0;
	}
out:
	teardown(&a);
	return status;
}
