/* SPDX-License-Identifier: BSD-2-Clause */
/* The end of a gatherer's sweep (gtable.h): targets, exports and clients
 * no longer listed pruned, and each client's sums handed out as a record
 * with its spans. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "gtable.h"
#include "gtable_int.h"
#include "msg.h"

/* Drop the exports of tg that this sweep did not list. */
static int
target_prune(struct gtable *t, struct gt_target *tg)
{
	size_t i, n = 0;

	for (i = 0; i < tg->nexp; i++) {
		if (!tg->exp[i].listed) {
			t->clients[tg->exp[i].client].nexports--;
			continue;
		}
		if (tg->ops != NULL)
			tg->ops[n] = tg->ops[i];
		tg->exp[n++] = tg->exp[i];
	}
	if (n == tg->nexp)
		return 0;
	tg->nexp = n;
	gt_slot_rebuild(tg);
	return 0;
}

/* Drop targets not found and the exports not listed. */
static int
prune_targets(struct gtable *t)
{
	size_t i, n = 0;
	int rc = 0;

	for (i = 0; i < t->ntargets; i++) {
		struct gt_target *tg = t->targets[i];

		if (tg->seen != t->gen) {
			gt_target_forget_exports(t, tg);
			gt_target_free(tg);
			continue;
		}
		if (tg->listed && rc == 0)
			rc = target_prune(t, tg);
		t->targets[n++] = tg;
	}
	t->ntargets = n;
	return rc;
}

/* The names of the clients kept, packed afresh (the NIDs of clients
 * dropped are garbage in t->names until then). */
static int
names_repack(struct gtable *t)
{
	struct fsnames fsn;
	struct strpool v;
	uint32_t *off;
	size_t i;

	/* The new offsets aside first (a client's name, then its
	 * canonical form): without memory nothing changes. */
	off = malloc((t->nclients > 0 ? t->nclients : 1) * 2 * sizeof(*off));
	if (off == NULL)
		return -ENOMEM;
	strpool_init(&v);
	for (i = 0; i < t->nclients; i++) {
		const struct gt_client *c = &t->clients[i];

		if (strpool_add(&v, gtable_client_nid(t, (uint32_t)i),
		        &off[2 * i]) < 0 ||
		    (c->out != c->name &&
		        strpool_add(&v, gtable_client_out(t, (uint32_t)i),
		            &off[2 * i + 1]) < 0)) {
			strpool_free(&v);
			free(off);
			return -ENOMEM;
		}
		if (c->out == c->name)
			off[2 * i + 1] = off[2 * i];
	}
	/* Only the filesystems of the clients kept: at most as many as
	 * before, so an index never fails. */
	memset(&fsn, 0, sizeof(fsn));
	for (i = 0; i < t->nclients; i++) {
		struct gt_client *c = &t->clients[i];

		c->name = off[2 * i];
		c->out = off[2 * i + 1];
		(void)fsnames_index(&fsn, gtable_client_fs(t, (uint32_t)i),
		    &c->fs);
	}
	free(off);
	strpool_free(&t->names);
	t->names = v;
	t->fsn = fsn;
	return 0;
}

/* Drop the clients no export refers to any more, and renumber. */
static int
prune_clients(struct gtable *t)
{
	uint32_t *map;
	size_t i, j, n = 0;
	int rc;

	for (i = 0; i < t->nclients; i++) {
		if (t->clients[i].nexports == 0)
			break;
	}
	if (i == t->nclients)
		return 0;
	map = malloc(t->nclients * sizeof(*map));
	if (map == NULL)
		return -ENOMEM;
	for (i = 0; i < t->nclients; i++) {
		if (t->clients[i].nexports == 0) {
			map[i] = HINDEX_NONE;
			continue;
		}
		map[i] = (uint32_t)n;
		t->clients[n++] = t->clients[i];
	}
	t->nclients = n;
	/* Without memory to repack, the old names stay valid: only the
	 * garbage stays too. */
	(void)names_repack(t);
	rc = hindex_rebuild(&t->cindex, n, gt_client_hash, t);
	for (i = 0; i < t->ntargets; i++) {
		struct gt_target *tg = t->targets[i];

		for (j = 0; j < tg->nexp; j++)
			tg->exp[j].client = map[tg->exp[j].client] & 0xffffffu;
		gt_slot_rebuild(tg);
	}
	free(map);
	return rc;
}

static uint64_t
span_of(uint64_t total, double q)
{
	double s;

	if (q <= 0)
		return 0;
	s = (double)total / q + 0.5; /* rounded by the cast below */
	if (s < 1)
		return 1;
	if (s >= 9.2e18)
		return (uint64_t)INT64_MAX;
	return (uint64_t)s;
}

/*
 * The spans of a client's record.  When every export it summed had the
 * same span (the common case) that is the span.  Otherwise each counter
 * gets the span that keeps its rate exact, and the record span is the one
 * of its largest byte counter (else of its largest op counter), so that
 * the others usually need no span of their own.
 */
static void
record_spans(const struct gtable *t, const struct gt_client *c,
    const struct gt_sums *sm, struct gt_record *r)
{
	uint64_t gap_us = (t->gap_ns + 500) / 1000, dv[IOCOUNT_N];
	unsigned i, best = GT_NCOUNTERS;

	memset(r->cspan_us, 0, sizeof(r->cspan_us));
	if (!c->observed) {
		r->span_us = gap_us > 0 ? gap_us : 1;
		return;
	}
	if (c->smin == c->smax) {
		r->span_us = c->smin;
		return;
	}
	if (sm == NULL) {
		r->span_us = c->smax; /* nothing moved: any span will do */
		return;
	}
	iocount_to_array(&sm->d, dv);
	for (i = 0; i < GT_NCOUNTERS; i++) {
		uint64_t v = dv[i];

		if (v == 0)
			continue;
		r->cspan_us[i] = span_of(v, sm->q[i]);
		if (best == GT_NCOUNTERS || (i < 2 && v > dv[best]) ||
		    (best >= 2 && v > dv[best]))
			best = i;
	}
	r->span_us = best < GT_NCOUNTERS ? r->cspan_us[best] : c->smax;
	for (i = 0; i < GT_NCOUNTERS; i++) {
		if (r->cspan_us[i] == r->span_us)
			r->cspan_us[i] = 0;
	}
}

/* This sweep's sums, handed out: given back rather than kept for the
 * next sweep, so that they are not alive while the batch is sealed,
 * saved and sent, which is when a busy gatherer peaks (a megabyte for
 * 10,000 clients that moved; docs/performance.md). */
static void
sums_release(struct gtable *t)
{
	size_t i;

	for (i = 0; i < t->nclients; i++) {
		t->clients[i].sums = HINDEX_NONE;
		t->clients[i].ops = HINDEX_NONE;
	}
	free(t->sums);
	t->sums = NULL;
	t->nsums = t->sumscap = 0;
	free(t->cops);
	t->cops = NULL;
	t->ncops = t->copscap = 0;
}

int
gtable_sweep_end(struct gtable *t, gtable_emit_fn emit, void *arg)
{
	struct gt_record r;
	size_t i;
	int rc, erc = 0;

	rc = prune_targets(t);
	if (rc == 0)
		rc = prune_clients(t);
	for (i = 0; i < t->nclients; i++) {
		const struct gt_client *c = &t->clients[i];
		const struct gt_sums *sm =
		    c->sums != HINDEX_NONE ? &t->sums[c->sums] : NULL;

		if (c->peer)
			continue;
		r.fs = gtable_client_fs(t, (uint32_t)i);
		r.nid = gtable_client_out(t, (uint32_t)i);
		if (sm != NULL)
			r.d = sm->d;
		else
			memset(&r.d, 0, sizeof(r.d));
		record_spans(t, c, sm, &r);
		r.start_ns = c->observed    ? c->start_ns :
		    t->sweep_ns > t->gap_ns ? t->sweep_ns - t->gap_ns :
		                              0;
		r.ops = c->ops != HINDEX_NONE ? &t->cops[c->ops] : NULL;
		if (erc == 0)
			erc = emit(arg, &r);
	}
	sums_release(t);
	t->history = true;
	t->baseline = false;
	t->new_targets_are_old = false;
	for (i = 0; i < t->ntargets; i++)
		t->targets[i]->base = false;
	t->last_sweep_ns = t->sweep_ns;
	return rc != 0 ? rc : erc;
}
