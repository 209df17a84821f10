/* SPDX-License-Identifier: BSD-2-Clause */
/* The Ganglia sink's (host, metric) table and send queue (see gcache.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "gcache.h"

#define GCACHE_MIN_CAP 64

struct gcache_key {
	const char *spoof;
	const char *metric;
};

void
gcache_init(struct gcache *c, const struct gcache_opts *o)
{
	memset(c, 0, sizeof(*c));
	hindex_init(&c->idx);
	c->o = *o;
}

void
gcache_free(struct gcache *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->e[i].key);
		free(c->e[i].pkt);
	}
	free(c->e);
	free(c->ring);
	hindex_free(&c->idx);
	c->e = NULL;
	c->ring = NULL;
	c->n = c->cap = c->ring_cap = c->head = c->count = 0;
}

/* Characters gmond copies into its XML without escaping must not break it;
 * ':' splits the spoof string. */
static bool
text_ok(const char *s, size_t min, size_t max, const char *bad)
{
	size_t n = strlen(s);
	const unsigned char *p;

	if (n < min || n > max)
		return false;
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p < 0x20 || *p >= 0x7f || strchr(bad, *p) != NULL)
			return false;
	}
	return true;
}

int
gcache_spoof(char *buf, size_t size, const char *ip, const char *host)
{
	int n;

	if (!text_ok(ip, 1, GCACHE_IP_MAX, "\"'<>&: ") ||
	    !text_ok(host, 1, GCACHE_HOST_MAX, "\"'<>&: "))
		return -EINVAL;
	n = snprintf(buf, size, "%s:%s", ip, host);
	if (n < 0 || (size_t)n >= size)
		return -EINVAL;
	return 0;
}

bool
gcache_metric_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= GCACHE_METRIC_MAX &&
	    strspn(s,
	        "abcdefghijklmnopqrstuvwxyz"
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

bool
gcache_units_ok(const char *s)
{
	return text_ok(s, 0, GCACHE_UNITS_MAX, "\"'<>&");
}

static uint64_t
hash_of(const void *ctx, uint32_t idx)
{
	const struct gcache *c = ctx;

	return c->e[idx].hash;
}

static bool
match(const void *ctx, uint32_t idx, const void *key)
{
	const struct gcache *c = ctx;
	const struct gcache_key *k = key;
	const struct gcache_entry *e = &c->e[idx];

	return strcmp(gcache_entry_spoof(e), k->spoof) == 0 &&
	    strcmp(gcache_entry_metric(e), k->metric) == 0;
}

/* One allocation holding the three strings; sets the offsets. */
static int
make_key(struct gcache_entry *e, const char *spoof, const char *metric,
    const char *units)
{
	size_t ls = strlen(spoof), lm = strlen(metric), lu = strlen(units);
	char *k;

	k = malloc(ls + lm + lu + 3);
	if (k == NULL)
		return -ENOMEM;
	memcpy(k, spoof, ls + 1);
	memcpy(k + ls + 1, metric, lm + 1);
	memcpy(k + ls + lm + 2, units, lu + 1);
	free(e->key);
	e->key = k;
	/* The packets carry the key (and the units): built again. */
	free(e->pkt);
	e->pkt = NULL;
	e->pkt_meta_len = e->pkt_prefix_len = 0;
	e->metric_off = (uint16_t)(ls + 1);
	e->units_off = (uint16_t)(ls + lm + 2);
	return 0;
}

/* Room for one more entry: doubling, as every table here grows.  The
 * entries stay within max_entries (gcache_put() refuses more); only the
 * last doubling may reserve room beyond it. */
static int
grow_entries(struct gcache *c)
{
	struct gcache_entry *ne;

	ne = array_grow(c->e, &c->cap, c->n, sizeof(*ne));
	if (ne == NULL)
		return -ENOMEM;
	c->e = ne;
	return 0;
}

/* Room for one more position in the FIFO (linearised into a new array). */
static int
grow_ring(struct gcache *c)
{
	uint32_t *r;
	size_t cap, i;

	if (c->count < c->ring_cap)
		return 0;
	cap = c->ring_cap == 0 ? GCACHE_MIN_CAP : c->ring_cap * 2;
	r = malloc(cap * sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	for (i = 0; i < c->count && c->ring_cap > 0; i++)
		r[i] = c->ring[(c->head + i) % c->ring_cap];
	free(c->ring);
	c->ring = r;
	c->ring_cap = cap;
	c->head = 0;
	return 0;
}

static struct gcache_entry *
add_entry(struct gcache *c, const char *spoof, const char *metric,
    const char *units, uint64_t hash, int *ret_rc)
{
	struct gcache_entry *e;
	int rc;

	if (c->n >= c->o.max_entries) {
		c->refused++;
		*ret_rc = -ENOSPC;
		return NULL;
	}
	if ((rc = grow_entries(c)) < 0) {
		*ret_rc = rc;
		return NULL;
	}
	e = &c->e[c->n];
	memset(e, 0, sizeof(*e));
	e->hash = hash;
	if ((rc = make_key(e, spoof, metric, units)) < 0) {
		*ret_rc = rc;
		return NULL;
	}
	if ((rc = hindex_add(&c->idx, hash, (uint32_t)c->n, hash_of, c)) < 0) {
		free(e->key);
		*ret_rc = rc;
		return NULL;
	}
	c->n++;
	return e;
}

int
gcache_put(struct gcache *c, const char *spoof, const char *metric,
    const char *units, double value, uint64_t now)
{
	struct gcache_key k = {spoof, metric};
	struct gcache_entry *e;
	uint64_t hash;
	uint32_t pos;
	int rc = 0;

	if (!isfinite(value) ||
	    !text_ok(spoof, 3, GCACHE_SPOOF_MAX, "\"'<>& ") ||
	    strchr(spoof, ':') == NULL || !gcache_metric_ok(metric) ||
	    !gcache_units_ok(units))
		return -EINVAL;
	/* Room in the FIFO first: nothing below can fail after the entry
	 * was changed. */
	if ((rc = grow_ring(c)) < 0)
		return rc;
	hash = hindex_hash_pair(spoof, metric);
	pos = hindex_find(&c->idx, hash, match, c, &k);
	if (pos == HINDEX_NONE) {
		e = add_entry(c, spoof, metric, units, hash, &rc);
		if (e == NULL)
			return rc;
	} else {
		e = &c->e[pos];
		if (strcmp(gcache_entry_units(e), units) != 0) {
			if ((rc = make_key(e, spoof, metric, units)) < 0)
				return rc;
			e->meta_next_ns = 0;
		}
		if (now > e->used_ns && now - e->used_ns > c->o.forget_ns) {
			/* gmond may have deleted it (dmax): new again. */
			e->meta_next_ns = 0;
			e->echoed = false;
			e->settled = false;
		}
	}
	e->value = value;
	e->used_ns = now;
	if (e->queued) {
		c->coalesced++;
		return 0;
	}
	c->ring[(c->head + c->count) % c->ring_cap] = (uint32_t)(e - c->e);
	c->count++;
	e->queued = true;
	return 0;
}

int
gcache_set_packets(struct gcache_entry *e, const void *meta, size_t mlen,
    const void *prefix, size_t plen)
{
	unsigned char *p;

	if (mlen > UINT16_MAX || plen > UINT16_MAX)
		return -EMSGSIZE;
	p = malloc(mlen + plen > 0 ? mlen + plen : 1);
	if (p == NULL)
		return -ENOMEM;
	if (mlen > 0)
		memcpy(p, meta, mlen);
	if (plen > 0)
		memcpy(p + mlen, prefix, plen);
	free(e->pkt);
	e->pkt = p;
	e->pkt_meta_len = (uint16_t)mlen;
	e->pkt_prefix_len = (uint16_t)plen;
	return 0;
}

struct gcache_entry *
gcache_head(struct gcache *c)
{
	if (c->count == 0)
		return NULL;
	return &c->e[c->ring[c->head]];
}

struct gcache_entry *
gcache_peek(struct gcache *c, size_t i)
{
	if (i >= c->count)
		return NULL;
	return &c->e[c->ring[(c->head + i) % c->ring_cap]];
}

bool
gcache_meta_due(const struct gcache *c, const struct gcache_entry *e,
    uint64_t now)
{
	return c->o.meta_interval_ns == 0 || e->meta_next_ns == 0 ||
	    now >= e->meta_next_ns;
}

/* When an entry whose metadata just went out needs it next. */
static uint64_t
next_meta(const struct gcache *c, const struct gcache_entry *e, uint64_t now)
{
	uint64_t iv = c->o.meta_interval_ns, half = iv / 2;

	if (iv == 0)
		return 0;
	if (!e->settled)
		/* First repeat somewhere in [1/2, 1) of the interval. */
		return now + half + (half > 0 ? (e->hash >> 20) % half : 0);
	return now + iv - iv / 8;
}

void
gcache_pop(struct gcache *c, enum gcache_meta meta, uint64_t now)
{
	struct gcache_entry *e = gcache_head(c);

	if (e == NULL)
		return;
	switch (meta) {
	case GCACHE_META_SENT:
		if (!e->echoed && c->o.meta_interval_ns != 0) {
			e->echoed = true; /* again with the next value */
			break;
		}
		e->meta_next_ns = next_meta(c, e, now);
		if (e->meta_next_ns == 0)
			e->meta_next_ns = 1; /* not "due now" (interval 0) */
		e->settled = true;
		break;
	case GCACHE_META_FAILED:
		e->meta_next_ns = 0;
		break;
	case GCACHE_META_NONE:
		break;
	}
	e->queued = false;
	c->head = (c->head + 1) % c->ring_cap;
	c->count--;
}

size_t
gcache_pending(const struct gcache *c)
{
	return c->count;
}

bool
gcache_force_meta(struct gcache *c, uint64_t now)
{
	size_t i;

	if (c->o.meta_interval_ns == 0)
		return false; /* every value carries metadata anyway */
	if (c->forced && now - c->last_force_ns < c->o.meta_interval_ns)
		return false;
	for (i = 0; i < c->n; i++) {
		c->e[i].meta_next_ns = 0;
		c->e[i].echoed = false;
		c->e[i].settled = false;
	}
	c->forced = true;
	c->last_force_ns = now;
	return true;
}

size_t
gcache_expire(struct gcache *c, uint64_t now)
{
	size_t i, kept = 0, gone;

	if (c->count > 0)
		return 0;
	for (i = 0; i < c->n; i++) {
		struct gcache_entry *e = &c->e[i];

		if (now > e->used_ns && now - e->used_ns > c->o.forget_ns) {
			free(e->key);
			free(e->pkt);
			continue;
		}
		if (kept != i)
			c->e[kept] = *e;
		kept++;
	}
	gone = c->n - kept;
	if (gone == 0)
		return 0;
	c->n = kept;
	if (hindex_rebuild(&c->idx, c->n, hash_of, c) < 0) {
		/* Without an index every entry would be added again: drop
		 * them all (their metadata is simply sent again). */
		for (i = 0; i < c->n; i++) {
			free(c->e[i].key);
			free(c->e[i].pkt);
		}
		gone += c->n;
		c->n = 0;
	}
	c->forgotten += gone;
	return gone;
}
