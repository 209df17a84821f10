/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Ganglia sink's memory, without libganglia: one entry per spoofed
 * (host, metric) with its latest value, when its metadata is next due, and
 * when it was last put; and the FIFO of entries whose value waits to be
 * sent.  An entry is queued at most once (a newer value replaces the one
 * waiting), so the queue is never longer than the table, and the table is
 * bounded (max_entries) and forgets entries nobody puts any more.
 *
 * Metadata rules: sent with the first two values of an entry (gmond shows no
 * value of a metric whose metadata it has not had, and one UDP packet lost
 * on a busy gmond would otherwise hide the metric until the next repeat),
 * then again about every meta_interval (7/8 of it, so that a sweep's pacing
 * jitter does not push it a whole sweep later; the first repeat lands at a
 * point of [1/2, 1) of the interval picked by the entry's hash, so 80,000
 * entries first seen in one sweep do not all repeat in the same later sweep). A
 * metadata packet that failed to go out stays due.  An entry idle for more
 * than forget_ns (what gmond's dmax deletes) is new again, and
 * gcache_force_meta() makes every entry's next value carry metadata (after
 * gmond was seen down).  Times are caller-supplied monotonic nanoseconds.
 */
#ifndef LH_GCACHE_H
#define LH_GCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindex.h"

/* Longest texts accepted; with them a metadata packet stays well under
 * gmond's 1472-byte max_udp_msg_len. */
#define GCACHE_IP_MAX     46
#define GCACHE_HOST_MAX   255
#define GCACHE_SPOOF_MAX  (GCACHE_IP_MAX + 1 + GCACHE_HOST_MAX)
#define GCACHE_METRIC_MAX 64
#define GCACHE_UNITS_MAX  32

struct gcache_entry {
	char *key;             /* "ip:host" NUL metric NUL units NUL */
	uint64_t hash;         /* of (spoof, metric) */
	uint64_t used_ns;      /* last put */
	uint64_t meta_next_ns; /* metadata due from then on; 0 = due now */
	double value;          /* the latest value put */
	uint16_t metric_off;   /* offsets into key */
	uint16_t units_off;
	bool queued;  /* in the FIFO */
	bool echoed;  /* metadata went out once since the entry was (re)born */
	bool settled; /* ... and a second time, with the next value */
	/* The entry's packets as the sink built them once (opaque here):
	 * the metadata packet, then the value packet up to its value
	 * string; NULL until built, dropped when the key changes. */
	unsigned char *pkt;
	uint16_t pkt_meta_len, pkt_prefix_len;
};

struct gcache_opts {
	uint64_t meta_interval_ns; /* 0: metadata with every value */
	uint64_t forget_ns;        /* > 0 */
	size_t max_entries;        /* > 0 */
};

struct gcache {
	struct gcache_entry *e;
	size_t n, cap;
	struct hindex idx;
	uint32_t *ring; /* FIFO of entry positions */
	size_t ring_cap, head, count;
	struct gcache_opts o;
	uint64_t last_force_ns;
	bool forced;
	uint64_t coalesced; /* values replaced before they were sent */
	uint64_t refused;   /* puts of new entries refused: table full */
	uint64_t forgotten; /* entries expired */
};

/* Keep a copy of e's packets (gcache_entry.pkt): meta (mlen bytes), then
 * the value packet's prefix (plen bytes).  Returns 0, -EMSGSIZE (either
 * over 65,535 bytes) or -ENOMEM (e keeps none). */
int gcache_set_packets(struct gcache_entry *e, const void *meta, size_t mlen,
    const void *prefix, size_t plen);

/* What gcache_pop() is told about the head's metadata. */
enum gcache_meta {
	GCACHE_META_NONE = 0, /* not due, not sent */
	GCACHE_META_SENT,
	GCACHE_META_FAILED, /* tried, a channel refused it: stays due */
};

void gcache_init(struct gcache *c, const struct gcache_opts *o);
void gcache_free(struct gcache *c);

/* "ip:host" into buf (GCACHE_SPOOF_MAX + 1 bytes suffice), the spoof
 * string gmond splits at its first ':'.  Returns 0, or -EINVAL for an
 * empty, too long or unsafe part (gmond writes them into XML attributes
 * unescaped; an IPv6 address would be split at its first ':'). */
int gcache_spoof(char *buf, size_t size, const char *ip, const char *host);

/* True if s is a usable metric name (1-64 of [A-Za-z0-9_.-]) or units
 * text (0-32 printable characters, none of "<>&' and no control). */
bool gcache_metric_ok(const char *s);
bool gcache_units_ok(const char *s);

/*
 * Record value for (spoof, metric) at now and queue the entry (once).
 * A new entry, an entry whose units changed, or one idle for longer than
 * forget_ns has its metadata due.  Returns 0, -EINVAL (bad text or a value
 * that is not finite), -ENOSPC (a new entry but the table is full) or
 * -ENOMEM.
 */
int gcache_put(struct gcache *c, const char *spoof, const char *metric,
    const char *units, double value, uint64_t now);

/* The entry whose value is next to go, or NULL when none waits.  Valid
 * until the next gcache_* call. */
struct gcache_entry *gcache_head(struct gcache *c);

/* The i-th entry waiting (0: the head), or NULL past the last: the sink
 * encodes a batch of them before it pops them one by one.  Valid until
 * the next gcache_* call other than gcache_peek() and gcache_meta_due(). */
struct gcache_entry *gcache_peek(struct gcache *c, size_t i);

/* True if e's next packet must carry metadata. */
bool gcache_meta_due(const struct gcache *c, const struct gcache_entry *e,
    uint64_t now);

/* The head's value went out (or was given up on); meta says what happened
 * to its metadata. */
void gcache_pop(struct gcache *c, enum gcache_meta meta, uint64_t now);

/* Values waiting. */
size_t gcache_pending(const struct gcache *c);

/* Make every entry's next value carry metadata, unless that was done less
 * than meta_interval ago.  Returns true if it was done now. */
bool gcache_force_meta(struct gcache *c, uint64_t now);

/* Forget entries not put for longer than forget_ns.  Only while nothing is
 * queued (positions move); returns how many were forgotten. */
size_t gcache_expire(struct gcache *c, uint64_t now);

static inline const char *
gcache_entry_spoof(const struct gcache_entry *e)
{
	return e->key;
}

static inline const char *
gcache_entry_metric(const struct gcache_entry *e)
{
	return e->key + e->metric_off;
}

static inline const char *
gcache_entry_units(const struct gcache_entry *e)
{
	return e->key + e->units_off;
}

#endif
