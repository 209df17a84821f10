/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reverse DNS through evdns with a bounded cache: a chained hash table of
 * entries keyed by address, an LRU list of the entries not in flight (the
 * ones that may be evicted), and one evdns request per entry in flight.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/dns.h>
#include <event2/event.h>

#include "clock.h"
#include "err.h"
#include "hmac.h"
#include "log.h"
#include "ratelog.h"
#include "resolver.h"

#define RESOLVER_BUCKETS_MIN 64

struct resolver_key {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
};

struct resolver_entry {
	struct resolver *r; /* NULL once resolver_free() orphaned it */
	struct resolver_entry *hnext;
	TAILQ_ENTRY(resolver_entry) lru; /* only while !pending */
	struct resolver_key key;
	bool pending;     /* an evdns request holds this entry */
	char *name;       /* NULL: negative (or first lookup in flight) */
	uint64_t expires; /* CLOCK_MONOTONIC ns */
};

TAILQ_HEAD(resolver_lru, resolver_entry);

struct resolver {
	struct event_base *base;
	struct evdns_base *dns; /* NULL when disabled */
	bool enabled;
	unsigned positive_ttl, negative_ttl;
	size_t max_inflight, max_entries;
	resolver_done_cb on_done;
	void *arg;
	uint64_t seed;
	struct resolver_entry **buckets;
	size_t nbuckets;         /* a power of two */
	struct resolver_lru lru; /* most recently used first */
	struct resolver_stats st;
	struct ratelog complain; /* rate limit of the failure lines */
};

static uint64_t
key_hash(const struct resolver *r, const struct resolver_key *k)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ r->seed; /* FNV-1a, seeded */
	size_t i;

	h ^= k->family;
	h *= 0x100000001b3ULL;
	for (i = 0; i < sizeof(k->addr); i++) {
		h ^= k->addr[i];
		h *= 0x100000001b3ULL;
	}
	return h ^ (h >> 29);
}

static bool
key_eq(const struct resolver_key *a, const struct resolver_key *b)
{
	return a->family == b->family &&
	    memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static int
key_parse(struct resolver_key *k, const char *text)
{
	memset(k, 0, sizeof(*k));
	if (inet_pton(AF_INET, text, k->addr) == 1) {
		k->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, text, k->addr) == 1) {
		k->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

static void
key_format(const struct resolver_key *k, char *out, size_t size)
{
	if (inet_ntop(k->family, k->addr, out, (socklen_t)size) == NULL)
		(void)snprintf(out, size, "?");
}

static struct resolver_entry **
bucket_of(const struct resolver *r, const struct resolver_key *k)
{
	return &r->buckets[key_hash(r, k) & (r->nbuckets - 1)];
}

static struct resolver_entry *
find(const struct resolver *r, const struct resolver_key *k)
{
	struct resolver_entry *e;

	for (e = *bucket_of(r, k); e != NULL; e = e->hnext)
		if (key_eq(&e->key, k))
			return e;
	return NULL;
}

/* Double the table while it holds more entries than buckets; failing to
 * grow only makes the chains longer. */
static void
maybe_grow(struct resolver *r)
{
	struct resolver_entry **old = r->buckets, **nb, *e, *next;
	size_t n = r->nbuckets * 2, i;

	if (r->st.entries <= r->nbuckets || r->nbuckets >= RESOLVER_ENTRIES_MAX)
		return;
	nb = calloc(n, sizeof(struct resolver_entry *));
	if (nb == NULL)
		return;
	r->buckets = nb;
	r->nbuckets = n;
	for (i = 0; i < n / 2; i++)
		for (e = old[i]; e != NULL; e = next) {
			struct resolver_entry **b = bucket_of(r, &e->key);

			next = e->hnext;
			e->hnext = *b;
			*b = e;
		}
	free(old);
}

static void
unlink_entry(struct resolver *r, struct resolver_entry *e)
{
	struct resolver_entry **p = bucket_of(r, &e->key);

	while (*p != e)
		p = &(*p)->hnext;
	*p = e->hnext;
	if (!e->pending)
		TAILQ_REMOVE(&r->lru, e, lru);
	r->st.entries--;
}

static void
entry_free(struct resolver_entry *e)
{
	free(e->name);
	free(e);
}

/* One line per failure, at most RESOLVER_LOG_BURST per window, so that a
 * subnet without PTR records is visible without flooding the log. */
static void
complain_held(uint64_t held)
{
	if (held > 0)
		log_warnx("reverse DNS: %llu more failures not logged",
		    (unsigned long long)held);
}

static void
complain(struct resolver *r, uint64_t now, const char *addr, const char *why,
    const char *kept)
{
	uint64_t held;
	bool say = ratelog_burst(&r->complain, now,
	    RESOLVER_LOG_WINDOW * CLOCK_NS_PER_S, RESOLVER_LOG_BURST, &held);

	complain_held(held);
	if (!say)
		return;
	if (kept != NULL)
		log_warnx("reverse DNS for %s: %s, keeping the name %s for "
		          "%u s",
		    addr, why, kept, r->negative_ttl);
	else
		log_warnx("reverse DNS for %s: %s, trying again in %u s", addr,
		    why, r->negative_ttl);
}

/* The PTR name as a C string we are willing to hand on: no trailing dot,
 * printable ASCII without blanks, at most RESOLVER_NAME_MAX characters. */
static char *
name_dup(const char *name)
{
	size_t len = strnlen(name, RESOLVER_NAME_MAX + 2), i;
	char *out;

	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0 || len > RESOLVER_NAME_MAX)
		return NULL;
	for (i = 0; i < len; i++)
		if (name[i] <= ' ' || name[i] > '~')
			return NULL;
	out = malloc(len + 1);
	if (out != NULL) {
		memcpy(out, name, len);
		out[len] = '\0';
	}
	return out;
}

static uint64_t
expiry(uint64_t now, unsigned seconds)
{
	return now + (uint64_t)seconds * CLOCK_NS_PER_S;
}

/* How a failed query ends: authoritative "no name" forgets the name;
 * anything else keeps a name we had (serve stale) until it is retried. */
static void
query_failed(struct resolver *r, struct resolver_entry *e, uint64_t now,
    int result, const char *why)
{
	char addr[INET6_ADDRSTRLEN];

	key_format(&e->key, addr, sizeof(addr));
	e->expires = expiry(now, r->negative_ttl);
	if (result == DNS_ERR_NOTEXIST)
		r->st.nxdomain++;
	else if (result == DNS_ERR_NODATA)
		r->st.nodata++;
	else if (result == DNS_ERR_TIMEOUT)
		r->st.timeouts++;
	else
		r->st.errors++;
	if (e->name != NULL && result != DNS_ERR_NOTEXIST &&
	    result != DNS_ERR_NODATA) {
		r->st.kept_stale++;
		complain(r, now, addr, why, e->name);
		return;
	}
	free(e->name);
	e->name = NULL;
	complain(r, now, addr, why, NULL);
}

static void
dns_cb(int result, char type, int count, int ttl, void *addresses, void *arg)
{
	struct resolver_entry *e = arg;
	struct resolver *r = e->r;
	uint64_t now;
	char *name = NULL;

	if (r == NULL) { /* resolver_free() came first */
		entry_free(e);
		return;
	}
	now = clock_monotonic_ns();
	e->pending = false;
	r->st.inflight--;
	TAILQ_INSERT_HEAD(&r->lru, e, lru);
	if (result == DNS_ERR_NONE && type == DNS_PTR && count > 0 &&
	    addresses != NULL) {
		name = name_dup(*(char **)addresses);
		if (name == NULL)
			query_failed(r, e, now, DNS_ERR_FORMAT,
			    "unusable name in the PTR record");
	} else if (result == DNS_ERR_NONE) {
		query_failed(r, e, now, DNS_ERR_NODATA, "no PTR record");
	} else {
		query_failed(r, e, now, result, evdns_err_to_string(result));
	}
	if (name != NULL) {
		unsigned s = ttl < 1 ? 1U : (unsigned)ttl;

		free(e->name);
		e->name = name;
		e->expires =
		    expiry(now, s < r->positive_ttl ? s : r->positive_ttl);
		r->st.answered++;
	}
	if (r->on_done != NULL) {
		char addr[INET6_ADDRSTRLEN];

		key_format(&e->key, addr, sizeof(addr));
		r->on_done(r->arg, addr, e->name != NULL);
	}
}

/* Send the query for e (not pending).  Returns 0 or -EAGAIN. */
static int
query_start(struct resolver *r, struct resolver_entry *e)
{
	struct evdns_request *req;
	struct in6_addr a6;
	struct in_addr a4;

	if (r->st.inflight >= r->max_inflight) {
		r->st.deferred++;
		return -EAGAIN;
	}
	if (e->key.family == AF_INET) {
		memcpy(&a4, e->key.addr, sizeof(a4));
		req = evdns_base_resolve_reverse(r->dns, &a4,
		    DNS_QUERY_NO_SEARCH, dns_cb, e);
	} else {
		memcpy(&a6, e->key.addr, sizeof(a6));
		req = evdns_base_resolve_reverse_ipv6(r->dns, &a6,
		    DNS_QUERY_NO_SEARCH, dns_cb, e);
	}
	if (req == NULL) { /* out of memory; no callback will come */
		r->st.errors++;
		return -EAGAIN;
	}
	TAILQ_REMOVE(&r->lru, e, lru);
	e->pending = true;
	r->st.queries++;
	if (++r->st.inflight > r->st.inflight_peak)
		r->st.inflight_peak = r->st.inflight;
	return 0;
}

/* A new entry for k, evicting the least recently used one at the limit.
 * Returns NULL when every entry is in flight, or out of memory. */
static struct resolver_entry *
entry_new(struct resolver *r, const struct resolver_key *k)
{
	struct resolver_entry *e, **b;

	if (r->st.entries >= r->max_entries) {
		e = TAILQ_LAST(&r->lru, resolver_lru);
		if (e == NULL)
			return NULL;
		unlink_entry(r, e);
		entry_free(e);
		r->st.evictions++;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->r = r;
	e->key = *k;
	b = bucket_of(r, k);
	e->hnext = *b;
	*b = e;
	TAILQ_INSERT_HEAD(&r->lru, e, lru);
	r->st.entries++;
	maybe_grow(r);
	return e;
}

static int
copy_name(const struct resolver_entry *e, char *out, size_t size)
{
	size_t len = strlen(e->name);

	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(out, e->name, len + 1);
	return 0;
}

int
resolver_lookup(struct resolver *r, const char *addr, char *out, size_t size,
    uint64_t now_ns)
{
	struct resolver_entry *e;
	struct resolver_key k;

	if (key_parse(&k, addr) < 0)
		return -EINVAL;
	r->st.lookups++;
	if (!r->enabled) {
		r->st.disabled++;
		return -ENOENT;
	}
	e = find(r, &k);
	if (e == NULL) {
		if (r->st.inflight >= r->max_inflight) {
			r->st.deferred++;
			return -EAGAIN;
		}
		e = entry_new(r, &k);
		if (e == NULL) {
			r->st.deferred++;
			return -EAGAIN;
		}
		if (query_start(r, e) < 0) {
			unlink_entry(r, e);
			entry_free(e);
		}
		return -EAGAIN;
	}
	if (e->pending) {
		if (e->name == NULL) {
			r->st.merged++;
			return -EAGAIN;
		}
		r->st.hits++;
		r->st.stale_hits++;
		return copy_name(e, out, size);
	}
	TAILQ_REMOVE(&r->lru, e, lru);
	TAILQ_INSERT_HEAD(&r->lru, e, lru);
	if (now_ns < e->expires) {
		if (e->name == NULL) {
			r->st.negative_hits++;
			return -ENOENT;
		}
		r->st.hits++;
		return copy_name(e, out, size);
	}
	/* Expired: ask again, and meanwhile answer with what we had. */
	(void)query_start(r, e);
	if (e->name == NULL)
		return -EAGAIN;
	r->st.hits++;
	r->st.stale_hits++;
	return copy_name(e, out, size);
}

static int
set_option(struct resolver *r, const char *opt, unsigned long val,
    struct lh_err *err)
{
	char text[32];

	(void)snprintf(text, sizeof(text), "%lu", val);
	if (evdns_base_set_option(r->dns, opt, text) != 0)
		return lh_err_set(err, 0, -EINVAL, "evdns refused %s%s", opt,
		    text);
	return 0;
}

static int
setup_dns(struct resolver *r, const struct resolver_conf *c, unsigned timeout,
    unsigned attempts, struct lh_err *err)
{
	size_t i;
	int rc;

	/* Not EVDNS_BASE_INITIALIZE_NAMESERVERS: the servers are ours to
	 * choose.  DISABLE_WHEN_INACTIVE: the sockets are watched only while
	 * a query is in flight, so an idle resolver keeps no loop alive. */
	r->dns = evdns_base_new(r->base, EVDNS_BASE_DISABLE_WHEN_INACTIVE);
	if (r->dns == NULL)
		return lh_err_set(err, 0, -ENOMEM, "cannot start evdns");
	for (i = 0; i < c->nservers; i++)
		if (evdns_base_nameserver_ip_add(r->dns, c->servers[i]) != 0)
			return lh_err_set(err, 0, -EINVAL,
			    "dns_servers: \"%s\" is not an address or "
			    "address:port",
			    c->servers[i]);
	if (c->nservers == 0) {
		/* Name servers and options (timeout, attempts) only: no
		 * search list (PTR names are absolute), no hosts file. */
		rc = evdns_base_resolv_conf_parse(r->dns,
		    DNS_OPTION_NAMESERVERS | DNS_OPTION_MISC,
		    "/etc/resolv.conf");
		if (rc != 0 && evdns_base_count_nameservers(r->dns) > 0)
			log_warnx("/etc/resolv.conf: %s, asking the name "
			          "server on 127.0.0.1",
			    rc == 6 ? "no nameserver line" : "cannot read it");
	}
	if (evdns_base_count_nameservers(r->dns) == 0)
		return lh_err_set(err, 0, -EINVAL, "no name server to ask");
	if ((rc = set_option(r, "timeout:", timeout, err)) < 0 ||
	    (rc = set_option(r, "attempts:", attempts, err)) < 0 ||
	    (rc = set_option(r, "max-inflight:", r->max_inflight, err)) < 0)
		return rc;
	return 0;
}

static unsigned
or_default(unsigned v, unsigned def)
{
	return v != 0 ? v : def;
}

int
resolver_new(struct event_base *base, const struct resolver_conf *c,
    struct resolver **ret, struct lh_err *err)
{
	unsigned timeout = or_default(c->timeout_s, RESOLVER_TIMEOUT);
	unsigned attempts = or_default(c->attempts, RESOLVER_ATTEMPTS);
	struct resolver *r;
	int rc;

	lh_err_clear(err);
	if (c->nservers > RESOLVER_SERVERS_MAX)
		return lh_err_set(err, 0, -EINVAL,
		    "dns_servers: more than %d servers", RESOLVER_SERVERS_MAX);
	if (c->positive_ttl_s > RESOLVER_TTL_MAX ||
	    c->negative_ttl_s > RESOLVER_TTL_MAX)
		return lh_err_set(err, 0, -EINVAL, "DNS cache TTL above %d s",
		    RESOLVER_TTL_MAX);
	if (timeout > RESOLVER_TIMEOUT_MAX || attempts > RESOLVER_ATTEMPTS_MAX)
		return lh_err_set(err, 0, -EINVAL,
		    "DNS timeout above %d s or more than %d attempts",
		    RESOLVER_TIMEOUT_MAX, RESOLVER_ATTEMPTS_MAX);
	if (c->max_inflight > RESOLVER_INFLIGHT_MAX ||
	    c->max_entries > RESOLVER_ENTRIES_MAX)
		return lh_err_set(err, 0, -EINVAL,
		    "DNS limits above %d queries in flight or %zu entries",
		    RESOLVER_INFLIGHT_MAX, RESOLVER_ENTRIES_MAX);
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	r->base = base;
	r->enabled = c->enabled;
	r->positive_ttl = or_default(c->positive_ttl_s, RESOLVER_POSITIVE_TTL);
	r->negative_ttl = or_default(c->negative_ttl_s, RESOLVER_NEGATIVE_TTL);
	r->max_inflight =
	    c->max_inflight != 0 ? c->max_inflight : RESOLVER_INFLIGHT;
	r->max_entries =
	    c->max_entries != 0 ? c->max_entries : RESOLVER_ENTRIES;
	r->on_done = c->on_done;
	r->arg = c->arg;
	TAILQ_INIT(&r->lru);
	(void)lh_random(&r->seed, sizeof(r->seed));
	r->nbuckets = RESOLVER_BUCKETS_MIN;
	r->buckets = calloc(r->nbuckets, sizeof(struct resolver_entry *));
	if (r->buckets == NULL) {
		resolver_free(r);
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	}
	if (r->enabled && (rc = setup_dns(r, c, timeout, attempts, err)) < 0) {
		resolver_free(r);
		return rc;
	}
	*ret = r;
	return 0;
}

void
resolver_free(struct resolver *r)
{
	struct resolver_entry *e, *next;
	size_t i;

	if (r == NULL)
		return;
	complain_held(ratelog_drain(&r->complain));
	for (i = 0; r->buckets != NULL && i < r->nbuckets; i++)
		for (e = r->buckets[i]; e != NULL; e = next) {
			next = e->hnext;
			if (e->pending)
				e->r = NULL; /* freed by its callback */
			else
				entry_free(e);
		}
	free(r->buckets);
	/* 1: every request still in evdns gets its callback, with
	 * DNS_ERR_SHUTDOWN, and so frees its orphaned entry. */
	if (r->dns != NULL)
		evdns_base_free(r->dns, 1);
	free(r);
}

void
resolver_stats(const struct resolver *r, struct resolver_stats *ret)
{
	*ret = r->st;
}
