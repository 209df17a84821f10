/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Asynchronous reverse DNS for the aggregator: the PTR name of a client's
 * IPv4/IPv6 address, looked up with libevent's evdns and kept in a bounded
 * cache, so that the event loop never waits for a name server.  A lookup
 * either answers from the cache at once or starts a query and says "ask
 * again later" (-EAGAIN); the aggregator asks again at its next sweep.
 *
 * Answers are cached for the record's TTL, capped by positive_ttl_s;
 * failures (NXDOMAIN, no PTR record, timeout, server failure) for
 * negative_ttl_s.  When a cached name expires the old name is still
 * returned while it is looked up again, and is kept if the name server
 * does not answer (a DNS outage must not rename hosts in Ganglia); only an
 * authoritative "no such name" takes it away.  docs/dns.md has the rest.
 */
#ifndef LH_RESOLVER_H
#define LH_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct lh_err;
struct resolver;

#define RESOLVER_SERVERS_MAX  8
#define RESOLVER_ENTRIES_MAX  ((size_t)1 << 22)
#define RESOLVER_INFLIGHT_MAX 4096
#define RESOLVER_TIMEOUT_MAX  60 /* seconds, per attempt */
#define RESOLVER_ATTEMPTS_MAX 5
#define RESOLVER_TTL_MAX      86400 /* seconds */
#define RESOLVER_NAME_MAX     253   /* characters of a DNS name */
/* Defaults, for the fields of struct resolver_conf left 0. */
#define RESOLVER_POSITIVE_TTL 3600
#define RESOLVER_NEGATIVE_TTL 60
#define RESOLVER_TIMEOUT      2
#define RESOLVER_ATTEMPTS     2
#define RESOLVER_INFLIGHT     64
#define RESOLVER_ENTRIES      65536
/* Failures are logged one line each, at most this many per window; the
 * rest are counted and summed up in one line. */
#define RESOLVER_LOG_BURST    5
#define RESOLVER_LOG_WINDOW   60 /* seconds */

/* Called when a lookup ends (arg, the address as text, whether a name was
 * found), so that a caller may ask again before its next sweep.  It may
 * call resolver_lookup() but not resolver_free(). */
typedef void (*resolver_done_cb)(void *arg, const char *addr, bool found);

struct resolver_conf {
	bool enabled; /* the "dns" key; false: every lookup is -ENOENT */
	/* Name servers, "addr" or "addr:port" ("[v6addr]:port"), no names;
	 * none: those of /etc/resolv.conf. */
	const char *const *servers;
	size_t nservers;
	/* 0 means the default (RESOLVER_*) in each of these. */
	unsigned positive_ttl_s;  /* cap on a record's TTL */
	unsigned negative_ttl_s;  /* how long a failure is remembered */
	unsigned timeout_s;       /* per attempt */
	unsigned attempts;        /* queries sent before giving up */
	size_t max_inflight;      /* queries outstanding at once */
	size_t max_entries;       /* cached addresses, least recently used go */
	resolver_done_cb on_done; /* optional */
	void *arg;
};

struct resolver_stats {
	uint64_t lookups;       /* resolver_lookup() calls */
	uint64_t hits;          /* a name returned from the cache */
	uint64_t stale_hits;    /* of those, an expired name being renewed */
	uint64_t negative_hits; /* -ENOENT from the cache */
	uint64_t queries;       /* lookups started (cache misses) */
	uint64_t merged;        /* -EAGAIN: that address already in flight */
	uint64_t deferred;      /* -EAGAIN: max_inflight reached */
	uint64_t answered;      /* queries that brought a name */
	uint64_t nxdomain;      /* ... no such name */
	uint64_t nodata;        /* ... name exists, no PTR record */
	uint64_t timeouts;      /* ... no answer */
	uint64_t errors;        /* ... server failure, refused, bad name */
	uint64_t kept_stale;    /* failed renewals that kept the old name */
	uint64_t evictions;     /* entries dropped for max_entries */
	uint64_t disabled;      /* lookups while dns = no */
	size_t inflight;        /* now */
	size_t inflight_peak;
	size_t entries; /* now, in flight included */
};

/*
 * A resolver on base.  c is copied (the server strings are used only
 * here).  With c->enabled false no evdns base is made and nothing is ever
 * sent.  Returns 0, -EINVAL (a bad limit or server; err says which) or
 * -ENOMEM.
 */
int resolver_new(struct event_base *base, const struct resolver_conf *c,
    struct resolver **ret, struct lh_err *err);

/*
 * Free r; NULL is fine.  Queries still in flight are cancelled: evdns
 * fails them with DNS_ERR_SHUTDOWN from the event loop's next turn, and
 * that is when their memory goes, so let the loop run once more
 * (event_base_loop(base, EVLOOP_NONBLOCK)) before event_base_free().
 * Logs the failures the rate limit held back.
 */
void resolver_free(struct resolver *r);

/*
 * The name of addr (IPv4 or IPv6 text), without the trailing dot, into
 * out.  Never blocks.  Returns 0 (a name, possibly an expired one being
 * renewed), -EAGAIN (a query is in flight, or could not start yet: ask
 * again later), -ENOENT (no name: a failure cached for negative_ttl_s, or
 * dns = no), -EINVAL (not an address) or -ENAMETOOLONG (out too small;
 * RESOLVER_NAME_MAX + 1 always fits).  out is untouched unless 0.  now_ns
 * is CLOCK_MONOTONIC (clock_monotonic_ns()).
 */
int resolver_lookup(struct resolver *r, const char *addr, char *out,
    size_t size, uint64_t now_ns);

void resolver_stats(const struct resolver *r, struct resolver_stats *ret);

#endif
