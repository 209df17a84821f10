/* SPDX-License-Identifier: BSD-2-Clause */
/* One export's read in the gatherer's table (gtable.h): the delta since
 * its previous values, kept compactly, added to its client's sums. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "gtable.h"
#include "gtable_int.h"
#include "msg.h"

void
gtable_export_prev(const struct gt_target *tg, const struct gt_export *e,
    struct delta_sample *ret)
{
	ret->c.read_bytes = e->prev_bytes[0];
	ret->c.write_bytes = e->prev_bytes[1];
	ret->c.read_ops = e->prev_n[0];
	ret->c.write_ops = e->prev_n[1];
	ret->c.oss_ops = tg->kind == LH_TARGET_OST ? e->prev_ops : 0;
	ret->c.mds_ops = tg->kind == LH_TARGET_MDT ? e->prev_ops : 0;
	ret->samples = e->prev_samples;
	ret->snap_ns = e->prev_snap_ns;
	ret->start_ns = e->prev_start_tag;
}

uint32_t
gtable_start_tag(uint64_t start_ns)
{
	if (start_ns == 0)
		return 0;
	/* Fibonacci hashing: every bit of the time moves the tag. */
	return (uint32_t)((start_ns * 0x9e3779b97f4a7c15ULL) >> 32) | 1u;
}

/*
 * Serial-number arithmetic (RFC 1982) on a count kept as its low 32 bits:
 * whether cur is that count gone up, by *ret_up.  It answers as the whole
 * values would as long as a sweep moves a count by less than 2^31, by far
 * more than any does; false: it went down.
 */
static bool
went_up32(uint32_t prev32, uint64_t cur, uint64_t *ret_up)
{
	uint32_t moved = (uint32_t)cur - prev32;

	*ret_up = moved;
	return moved < (uint32_t)1 << 31 && moved <= cur;
}

/* A count kept as its low 32 bits, whole again against cur, its value
 * now: cur less what it went up by, or UINT64_MAX when it went down, which
 * delta_compute() takes for the reset it is. */
static uint64_t
whole32(uint32_t prev32, uint64_t cur)
{
	uint64_t up;

	return went_up32(prev32, cur, &up) ? cur - up : UINT64_MAX;
}

/*
 * What e's file said last time, whole again for delta_compute() and cur,
 * the read just made: the counts, samples total and start_time that
 * compare with cur's as the whole values did (see struct gt_export).
 */
static void
export_prev_for(const struct gt_target *tg, const struct gt_export *e,
    const struct delta_sample *cur, struct delta_sample *ret)
{
	gtable_export_prev(tg, e, ret);
	ret->c.read_ops = whole32(e->prev_n[0], cur->c.read_ops);
	ret->c.write_ops = whole32(e->prev_n[1], cur->c.write_ops);
	ret->samples = whole32(e->prev_samples, cur->samples);
	if (e->prev_start_tag == 0 || cur->start_ns == 0)
		ret->start_ns = 0; /* unknown: says nothing */
	else if (gtable_start_tag(cur->start_ns) == e->prev_start_tag)
		ret->start_ns = cur->start_ns;
	else
		ret->start_ns =
		    cur->start_ns != UINT64_MAX ? cur->start_ns + 1 : 1;
}

static void
export_set_prev(const struct gt_target *tg, struct gt_export *e,
    const struct delta_sample *s)
{
	e->prev_bytes[0] = s->c.read_bytes;
	e->prev_bytes[1] = s->c.write_bytes;
	e->prev_n[0] = (uint32_t)s->c.read_ops;
	e->prev_n[1] = (uint32_t)s->c.write_ops;
	e->prev_ops = tg->kind == LH_TARGET_OST ? s->c.oss_ops : s->c.mds_ops;
	e->prev_samples = (uint32_t)s->samples;
	e->prev_snap_ns = s->snap_ns;
	e->prev_start_tag = gtable_start_tag(s->start_ns);
}

/* The same from gtable_export_prev()'s form (a state file's). */
void
gt_export_restore_prev(const struct gt_target *tg, struct gt_export *e,
    const struct delta_sample *s)
{
	export_set_prev(tg, e, s);
	e->prev_start_tag = (uint32_t)s->start_ns;
}

/* The op deltas of e for a delta of kind: into ret (prev not changed:
 * export_ops_store() does, once the read is counted). */
static void
export_ops_delta(const struct gt_target *tg, const struct gt_export *e,
    enum delta_kind kind, const struct mdops *cur, struct mdops *ret)
{
	const struct gt_ops32 *prev = &tg->ops[e - tg->exp];
	unsigned i;

	memset(ret, 0, sizeof(*ret));
	if (kind == DELTA_NEW || kind == DELTA_RESET) {
		*ret = *cur;
	} else if (kind == DELTA_NORMAL && !e->ops_unknown) {
		for (i = 0; i < MDOPS_N; i++) {
			uint64_t up;

			ret->v[i] = went_up32(prev->v[i], cur->v[i], &up) ?
			    up :
			    cur->v[i];
		}
	}
}

static void
export_ops_store(struct gt_target *tg, struct gt_export *e,
    const struct mdops *cur)
{
	struct gt_ops32 *prev = &tg->ops[e - tg->exp];
	unsigned i;

	for (i = 0; i < MDOPS_N; i++)
		prev->v[i] = (uint32_t)cur->v[i];
	e->ops_unknown = 0;
}

void
gtable_export_ops(const struct gt_target *tg, const struct gt_export *e,
    struct mdops *ret)
{
	unsigned i;

	for (i = 0; i < MDOPS_N; i++)
		ret->v[i] = tg->ops[e - tg->exp].v[i];
}

/* c's sums of this sweep, created (zero) if it has none: room was
 * reserved. */
static struct gt_sums *
client_sums(struct gtable *t, struct gt_client *c)
{
	if (c->sums == HINDEX_NONE) {
		memset(&t->sums[t->nsums], 0, sizeof(*t->sums));
		c->sums = (uint32_t)t->nsums++;
	}
	return &t->sums[c->sums];
}

static struct mdops *
client_ops(struct gtable *t, struct gt_client *c)
{
	if (c->ops == HINDEX_NONE) {
		memset(&t->cops[t->ncops], 0, sizeof(*t->cops));
		c->ops = (uint32_t)t->ncops++;
	}
	return &t->cops[c->ops];
}

/* Room for one more client's sums (and op sums, for an MDT). */
static int
sums_reserve(struct gtable *t, const struct gt_target *tg)
{
	struct gt_sums *sums;
	struct mdops *cops;

	sums = array_grow(t->sums, &t->sumscap, t->nsums, sizeof(*t->sums));
	if (sums == NULL)
		return -ENOMEM;
	t->sums = sums;
	if (tg->ops != NULL && t->ops_fn == NULL) {
		cops = array_grow(t->cops, &t->copscap, t->ncops,
		    sizeof(*t->cops));
		if (cops == NULL)
			return -ENOMEM;
		t->cops = cops;
	}
	return 0;
}

/* d, the delta of an export of c over span_ns (0: not timed by the
 * file), into c's sums and spans. */
static void
client_account(struct gtable *t, struct gt_client *c,
    const struct delta_sample *cur, const struct iocount *d, uint64_t span_ns)
{
	uint64_t span_us, start;

	/* The files do not time a new export's first delta (nor a file
	 * whose snapshot_time did not move): it happened since the
	 * previous sweep. */
	if (span_ns == 0)
		span_ns = t->gap_ns;
	span_us = (span_ns + 500) / 1000;
	if (span_us == 0)
		span_us = 1;
	if (!iocount_is_zero(d)) {
		struct gt_sums *sm = client_sums(t, c);
		/* One division, not one a counter: the six took a fifth of
		 * this function's time in a moving sweep.  q only weighs
		 * spans that differ (span_of()), rounded to microseconds,
		 * where the last bit of a product is never seen. */
		double per_us = 1.0 / (double)span_us;
		uint64_t dv[IOCOUNT_N];
		unsigned i;

		iocount_add(&sm->d, d);
		iocount_to_array(d, dv);
		for (i = 0; i < GT_NCOUNTERS; i++)
			sm->q[i] += (double)dv[i] * per_us;
	}
	if (span_us < c->smin)
		c->smin = span_us;
	if (span_us > c->smax)
		c->smax = span_us;
	start = cur->snap_ns > span_ns ? cur->snap_ns - span_ns :
	    t->sweep_ns > span_ns      ? t->sweep_ns - span_ns :
	                                 0;
	if (!c->observed || start < c->start_ns)
		c->start_ns = start;
	c->observed = true;
}

/* Whether a read counts nothing: a peer's, a baseline, or a file whose
 * snapshot_time did not move, which was not updated since the last read:
 * no time passed for it, and it says nothing about the rate (its next
 * delta will cover the whole window). */
static bool
observe_skips(const struct gt_client *c, bool base, bool unmoved,
    uint64_t span_ns, const struct iocount *d, const struct mdops *dops)
{
	return c->peer || base ||
	    (unmoved && span_ns == 0 && iocount_is_zero(d) &&
	        mdops_is_zero(dops));
}

/* The op deltas dops of client c counted: to the sink, or into c's op
 * sums.  Returns 0 or -ENOMEM (nothing counted). */
static int
observe_ops(struct gtable *t, struct gt_client *c, const struct mdops *dops)
{
	if (mdops_is_zero(dops))
		return 0;
	if (t->ops_fn != NULL)
		return t->ops_fn(t->ops_arg, fsnames_get(&t->fsn, c->fs),
		    strpool_get(&t->names, c->out), dops);
	mdops_add(client_ops(t, c), dops);
	return 0;
}

int
gtable_observe(struct gtable *t, struct gt_target *tg, struct gt_export *e,
    const struct delta_sample *cur, const struct mdops *ops)
{
	static const struct mdops zero;
	struct gt_client *c = &t->clients[e->client];
	struct delta_sample prev;
	struct iocount d;
	struct mdops dops;
	const struct mdops *dp = &zero;
	enum delta_kind kind;
	uint64_t span_ns;
	bool base = t->baseline || e->base, unmoved, skip;

	assert(e >= tg->exp && e < tg->exp + tg->nexp);
	unmoved =
	    e->have && cur->snap_ns != 0 && cur->snap_ns == e->prev_snap_ns;
	gt_export_note_read(tg, e, cur, ops);
	if (e->have)
		export_prev_for(tg, e, cur, &prev);
	kind = delta_compute(e->have ? &prev : NULL, cur, base, &d, &span_ns);
	if (ops == NULL)
		ops = &zero;
	/* An OST has no op counts: its op deltas are the zero ones, not
	 * 136 bytes cleared for each of its exports. */
	if (tg->ops != NULL) {
		export_ops_delta(tg, e, kind, ops, &dops);
		dp = &dops;
	}
	skip = observe_skips(c, base, unmoved, span_ns, &d, dp);
	/* Room for the sums, and the op deltas out, first: failing, nothing
	 * has changed, and the next sweep counts the same delta again. */
	if (sums_reserve(t, tg) < 0 || (!skip && observe_ops(t, c, dp) < 0))
		return -ENOMEM;
	if (tg->ops != NULL)
		export_ops_store(tg, e, ops);
	export_set_prev(tg, e, cur);
	e->have = 1;
	e->base = 0;
	if (!skip)
		client_account(t, c, cur, &d, span_ns);
	return 0;
}
