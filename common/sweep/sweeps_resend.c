/* SPDX-License-Identifier: BSD-2-Clause */
/* A sender's second batch in one open sweep (sweeps.h): combined with the
 * first record by record, so a resend never counts twice. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "err.h"
#include "hindex.h"
#include "sweeps.h"
#include "sweeps_int.h"

/* One client's records of one sender in one sweep, combined: deltas
 * summed and spans summed, counter by counter (docs/protocol.md 4.4). */
struct sw_part {
	uint32_t client;
	bool has_ops;
	uint64_t d[SWEEPS_NCOUNTERS];
	uint64_t span[SWEEPS_NCOUNTERS];
	struct mdops ops;
};

struct parts {
	struct sweeps *s;
	struct sw_part *v;
	size_t n, cap;
	struct hindex index;
};

static uint64_t
part_hash(const void *ctx, uint32_t idx)
{
	const struct parts *p = ctx;

	return id_hash(p->v[idx].client);
}

static bool
part_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct parts *p = ctx;

	return p->v[idx].client == *(const uint32_t *)key;
}

static int
part_rec(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	struct parts *p = arg;
	uint64_t v[IOCOUNT_N];
	struct sw_part *e;
	uint32_t id, i;
	unsigned c;

	if (sw_client_get(p->s, h->fs[r->fs], r->nid, &id) < 0)
		return -ENOMEM;
	i = hindex_find(&p->index, id_hash(id), part_match, p, &id);
	if (i == HINDEX_NONE) {
		e = array_grow(p->v, &p->cap, p->n, sizeof(*p->v));
		if (e == NULL)
			return -ENOMEM;
		p->v = e;
		memset(&p->v[p->n], 0, sizeof(p->v[0]));
		p->v[p->n].client = id;
		if (hindex_add(&p->index, id_hash(id), (uint32_t)p->n,
		        part_hash, p) < 0)
			return -ENOMEM;
		i = (uint32_t)p->n++;
	}
	e = &p->v[i];
	iocount_to_array(&r->d, v);
	for (c = 0; c < SWEEPS_NCOUNTERS; c++) {
		e->d[c] += v[c];
		e->span[c] += r->cspan_us[c];
	}
	if (r->ops != NULL) {
		e->has_ops = true;
		mdops_add(&e->ops, r->ops);
	}
	return 0;
}

/* The sender's batches already in w, and (when not NULL) one more,
 * whose header is then left in *ret_h. */
static int
parts_load(struct parts *p, const struct sw_sweep *w, uint32_t sender,
    const uint8_t *payload, size_t n, struct msg_sweep *ret_h)
{
	struct msg_sweep h;
	size_t i;
	int rc;

	for (i = 0; i < w->nbatches; i++) {
		const struct sw_batch *b = &w->batches[i];

		if (b->sender != sender)
			continue;
		rc = msg_sweep_decode(&h, b->payload, b->n, part_rec, p, NULL);
		if (rc < 0)
			return rc;
	}
	if (payload == NULL)
		return 0;
	return msg_sweep_decode(ret_h, payload, n, part_rec, p, NULL);
}

/* Room for a combined record's sums: its client's, and its ops'. */
static int
part_reserve(struct add_ctx *c, const struct sw_part *e)
{
	struct sw_sweep *w = c->w;
	struct sw_acc *a = sw_acc_get(w, e->client);
	struct sweeps_ops *o;

	if (a == NULL)
		return -ENOMEM;
	if (!e->has_ops || a->ops != 0)
		return 0;
	o = array_grow(w->ops, &w->opcap, w->nops, sizeof(*w->ops));
	if (o == NULL)
		return -ENOMEM;
	w->ops = o;
	memset(&w->ops[w->nops], 0, sizeof(w->ops[0]));
	a->ops = (uint32_t)++w->nops;
	return 0;
}

/* v += d, r += rate (add), or their removal: floating-point sums need
 * not give back exactly what went in, and a rate never goes below 0. */
static void
sum_apply(uint64_t *v, double *r, uint64_t d, double rate, bool add)
{
	if (add) {
		*v += d;
		*r += rate;
	} else {
		*v -= d;
		*r = *r > rate ? *r - rate : 0;
	}
}

/* Add a combined record to its client's sums, or take it out. */
static void
part_apply(struct add_ctx *c, const struct sw_part *e, bool add)
{
	uint64_t dflt = (uint64_t)c->s->interval * 1000000u, span;
	struct sw_acc *a = sw_acc_get(c->w, e->client); /* reserved */
	unsigned i;

	if (a == NULL)
		return;
	if (add) {
		a->nsenders++;
		if (c->w->id > c->s->clients[e->client].seen)
			c->s->clients[e->client].seen = c->w->id;
	} else if (a->nsenders > 0) {
		a->nsenders--;
	}
	for (i = 0; i < SWEEPS_NCOUNTERS; i++) {
		span = e->span[i] != 0 ? e->span[i] : dflt;
		if (e->d[i] != 0)
			sum_apply(&a->d[i], &a->r[i], e->d[i],
			    (double)e->d[i] * 1e6 / (double)span, add);
	}
	if (!e->has_ops || a->ops == 0)
		return;
	span = e->span[SWEEPS_NCOUNTERS - 1];
	if (span == 0)
		span = dflt;
	for (i = 0; i < MDOPS_N; i++) {
		struct sweeps_ops *o = &c->w->ops[a->ops - 1];

		if (e->ops.v[i] != 0)
			sum_apply(&o->d.v[i], &o->rate[i], e->ops.v[i],
			    (double)e->ops.v[i] * 1e6 / (double)span, add);
	}
}

/*
 * A second batch of a sender for a sweep that holds one already (a late
 * batch folded in, then the next on time): for each client, its deltas
 * add up over the sum of their spans, so that a steady rate stays that
 * rate (issue 15, item 13: the rates of the two batches added up to a
 * spike before).  The sender's share of the sums is taken out and put
 * back combined; everything that needs memory is had first.
 */
int
sw_combine(struct add_ctx *c, uint32_t sender, const uint8_t *payload, size_t n,
    struct msg_sweep *ret_h)
{
	struct parts old, all;
	size_t i;
	int rc;

	memset(&old, 0, sizeof(old));
	memset(&all, 0, sizeof(all));
	old.s = all.s = c->s;
	hindex_init(&old.index);
	hindex_init(&all.index);
	rc = parts_load(&old, c->w, sender, NULL, 0, NULL);
	if (rc == 0)
		rc = parts_load(&all, c->w, sender, payload, n, ret_h);
	for (i = 0; i < all.n && rc == 0; i++)
		rc = part_reserve(c, &all.v[i]);
	if (rc == 0) {
		for (i = 0; i < old.n; i++)
			part_apply(c, &old.v[i], false);
		for (i = 0; i < all.n; i++)
			part_apply(c, &all.v[i], true);
	}
	free(old.v);
	free(all.v);
	hindex_free(&old.index);
	hindex_free(&all.index);
	return rc < 0 ? -ENOMEM : 0;
}
