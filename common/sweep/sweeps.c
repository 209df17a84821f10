/* SPDX-License-Identifier: BSD-2-Clause */
/* The aggregator's open sweeps (sweeps.h): the table, its dictionary of
 * clients, and adding a batch's records to the sweep it belongs to. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "err.h"
#include "hindex.h"
#include "sweeps.h"
#include "sweeps_int.h"

static uint64_t
sender_hash(const void *ctx, uint32_t idx)
{
	const struct sweeps *s = ctx;

	return hindex_hash_str(HINDEX_SEED, s->senders[idx].name);
}

static bool
sender_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct sweeps *s = ctx;

	return strcmp(s->senders[idx].name, key) == 0;
}

int
sweeps_new(const struct sweeps_conf *c, uint64_t now_ns, struct sweeps **ret)
{
	struct sweeps *s;
	uint64_t first;
	size_t i;

	if (c->interval_s == 0 ||
	    (uint64_t)c->deadline_ms >= (uint64_t)c->interval_s * 1000u)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->interval = c->interval_s;
	s->deadline_ns = (uint64_t)c->deadline_ms * 1000000u;
	s->roster = c->roster_sweeps != 0 ? c->roster_sweeps : ROSTER_DFLT;
	if (c->nexpected > 0) {
		s->expected = calloc(c->nexpected, sizeof(*s->expected));
		if (s->expected == NULL) {
			free(s);
			return -ENOMEM;
		}
		for (i = 0; i < c->nexpected; i++) {
			if (strlen(c->expected[i]) >= MSG_NAME_MAX) {
				sweeps_free(s);
				return -EINVAL;
			}
			memcpy(s->expected[i], c->expected[i],
			    strlen(c->expected[i]) + 1);
		}
		s->nexpected = c->nexpected;
	}
	hindex_init(&s->cindex);
	hindex_init(&s->groups.index);
	hindex_init(&s->sindex);
	first = now_ns / NS_PER_S / s->interval * s->interval;
	for (i = 0; i < NRING; i++) {
		hindex_init(&s->ring[i].index);
		s->ring[i].id = first + i * s->interval;
	}
	*ret = s;
	return 0;
}

void
sw_batches_clear(struct sw_sweep *w)
{
	size_t i;

	for (i = 0; i < w->nbatches; i++)
		free(w->batches[i].payload);
	w->nbatches = 0;
}

void
sweeps_free(struct sweeps *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < NRING; i++) {
		sw_batches_clear(&s->ring[i]);
		free(s->ring[i].batches);
		free(s->ring[i].acc);
		free(s->ring[i].ops);
		free(s->ring[i].acks);
		hindex_free(&s->ring[i].index);
	}
	free(s->clients);
	hindex_free(&s->cindex);
	sw_groups_free(&s->groups);
	msg_stage_free(&s->stage);
	free(s->senders);
	hindex_free(&s->sindex);
	free(s->expected);
	free(s->missing);
	free(s->acks);
	free(s);
}

struct sw_sender *
sw_sender_find(const struct sweeps *s, const char *name)
{
	uint32_t i = hindex_find(&s->sindex, hindex_hash_str(HINDEX_SEED, name),
	    sender_match, s, name);

	return i == HINDEX_NONE ? NULL : &s->senders[i];
}

struct sw_sender *
sw_sender_get(struct sweeps *s, const char *name)
{
	struct sw_sender *p = sw_sender_find(s, name), *v;

	if (p != NULL)
		return p;
	if (strlen(name) >= MSG_NAME_MAX)
		return NULL;
	v = array_grow(s->senders, &s->scap, s->nsenders, sizeof(*s->senders));
	if (v == NULL)
		return NULL;
	s->senders = v;
	p = &s->senders[s->nsenders];
	memset(p, 0, sizeof(*p));
	memcpy(p->name, name, strlen(name) + 1);
	if (hindex_add(&s->sindex, hindex_hash_str(HINDEX_SEED, name),
	        (uint32_t)s->nsenders, sender_hash, s) < 0)
		return NULL;
	s->nsenders++;
	return p;
}

/* id moved by shift seconds (0 stays 0: "never"). */
static uint64_t
shifted(uint64_t id, int64_t shift)
{
	if (id == 0)
		return 0;
	if (shift < 0 && (uint64_t)-shift >= id)
		return 1;
	return shift < 0 ? id - (uint64_t)-shift : id + (uint64_t)shift;
}

void
sweeps_shift(struct sweeps *s, int64_t shift_s)
{
	size_t i;

	shift_s = shift_s / (int64_t)s->interval * (int64_t)s->interval;
	if (shift_s < 0 && (uint64_t)-shift_s > s->ring[0].id)
		shift_s = -(int64_t)s->ring[0].id;
	if (shift_s == 0)
		return;
	for (i = 0; i < NRING; i++)
		s->ring[i].id = (uint64_t)((int64_t)s->ring[i].id + shift_s);
	for (i = 0; i < s->nsenders; i++) {
		struct sw_sender *p = &s->senders[i];

		p->last_reported = shifted(p->last_reported, shift_s);
		if (p->pending_batch != 0)
			p->pending_sweep = shifted(p->pending_sweep, shift_s);
	}
	/* The dictionary's ages too, or a step forward would make every
	 * client look unused and a prune forget those still summed. */
	for (i = 0; i < s->nclients; i++)
		s->clients[i].seen = shifted(s->clients[i].seen, shift_s);
}

uint64_t
sweeps_pending_batch(const struct sweeps *s, const char *sender)
{
	const struct sw_sender *p = sw_sender_find(s, sender);

	return p == NULL ? 0 : p->pending_batch;
}

/* A record's metadata op counts, at the rate of its mds_ops span. */
static int
add_ops(struct add_ctx *c, struct sw_acc *a, const struct mdops *ops,
    uint64_t span)
{
	struct sw_sweep *w = c->w;
	struct sweeps_ops *o;
	unsigned i;

	if (a->ops == 0) {
		o = array_grow(w->ops, &w->opcap, w->nops, sizeof(*w->ops));
		if (o == NULL)
			return -ENOMEM;
		w->ops = o;
		memset(&w->ops[w->nops], 0, sizeof(w->ops[0]));
		a->ops = (uint32_t)++w->nops;
	}
	o = &w->ops[a->ops - 1];
	if (span == 0)
		span = (uint64_t)c->s->interval * 1000000u;
	for (i = 0; i < MDOPS_N; i++) {
		if (ops->v[i] == 0)
			continue;
		o->d.v[i] += ops->v[i];
		o->rate[i] += (double)ops->v[i] * 1e6 / (double)span;
	}
	return 0;
}

/* The records of group g of the stage (whose id is group) into c->w. */
static int
add_group(struct add_ctx *c, const struct msg_stage *st,
    const struct msg_sgroup *g, uint32_t group)
{
	uint64_t dflt = (uint64_t)c->s->interval * 1000000u;
	bool text = g->kind == NID_KIND_STRING;
	uint32_t id = HINDEX_NONE;
	size_t k;

	for (k = g->first; k < (size_t)g->first + g->n; k++) {
		const struct msg_srec *r = &st->recs[k];
		const uint64_t *cspan =
		    r->cspan != 0 ? st->cspans[r->cspan - 1] : NULL;
		struct sw_acc *a;
		unsigned i;

		/* Servers list their clients in the same order (the wire's),
		 * so the client after the last one is tried first. */
		id = text ? HINDEX_NONE : id + 1;
		if ((id >= c->s->nclients ||
		        c->s->clients[id].addr != r->addr ||
		        c->s->clients[id].group != group) &&
		    sw_client_key_get(c->s, group, r->addr,
		        text ? st->text + r->addr : NULL, &id) < 0)
			return -ENOMEM;
		a = sw_acc_hinted(c->s, c->w, id);
		if (a == NULL)
			return -ENOMEM;
		if (c->w->id > c->s->clients[id].seen)
			c->s->clients[id].seen = c->w->id;
		a->nsenders++;
		for (i = 0; i < SWEEPS_NCOUNTERS; i++) {
			uint64_t span = cspan != NULL ? cspan[i] : r->span_us;

			if (r->d[i] == 0)
				continue;
			a->d[i] += r->d[i];
			/* A span of 0 cannot be a rate: take the interval
			 * (the gatherer never sends one). */
			a->r[i] += (double)r->d[i] * 1e6 /
			    (double)(span != 0 ? span : dflt);
		}
		if (r->ops != 0 &&
		    add_ops(c, a, &st->ops[r->ops - 1],
		        cspan != NULL ? cspan[SWEEPS_NCOUNTERS - 1] :
		                        r->span_us) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A decoded SWEEP's records, in order, into c->w: those of filesystems
 * the decoder dropped left out. */
static int
add_stage(struct add_ctx *c, const struct msg_sweep *h,
    const struct msg_stage *st)
{
	size_t i;

	for (i = 0; i < st->ngroups; i++) {
		const struct msg_sgroup *g = &st->groups[i];
		uint32_t group;

		if (g->dropped)
			continue;
		if (sw_group_get(c->s, h->fs[g->fs], g->net, g->kind, &group) <
		        0 ||
		    add_group(c, st, g, group) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* One client's records of one sender in one sweep, combined: deltas
 * summed and spans summed, counter by counter (docs/protocol.md 4.4). */
static bool
holds_batch_of(const struct sw_sweep *w, uint32_t sender)
{
	size_t i;

	for (i = 0; i < w->nbatches; i++) {
		if (w->batches[i].sender == sender)
			return true;
	}
	return false;
}

/* Where a batch of p for sweep_id goes: the ring slot, and the verdict.
 * Never before the slot of p's batch still waiting there: batches of a
 * sender are acknowledged in their order (issue 15, item 14). */
static size_t
slot_of(const struct sweeps *s, const struct sw_sender *p, uint64_t sweep_id,
    int *verdict)
{
	uint64_t target = sweep_id / s->interval * s->interval;
	size_t k = 0;

	if (target < s->ring[0].id) {
		*verdict = SWEEPS_LATE;
	} else {
		k = (size_t)((target - s->ring[0].id) / s->interval);
		if (k > SWEEPS_AHEAD)
			k = SWEEPS_AHEAD;
		*verdict = k == 0 ? SWEEPS_ON_TIME : SWEEPS_AHEAD_OF_US;
	}
	if (p->pending_batch != 0 && p->pending_sweep >= s->ring[0].id) {
		size_t k0 =
		    (size_t)((p->pending_sweep - s->ring[0].id) / s->interval);

		if (k0 > k) {
			k = k0 <= SWEEPS_AHEAD ? k0 : SWEEPS_AHEAD;
			if (*verdict == SWEEPS_ON_TIME)
				*verdict = SWEEPS_AHEAD_OF_US;
		}
	}
	return k;
}

/* A resend of p's waiting batch on a new connection: acknowledge it
 * there. */
static void
repoint_acks(struct sweeps *s, const char *sender, uint64_t peer, uint64_t seq)
{
	size_t k, i;

	for (k = 0; k < NRING; k++) {
		struct sw_sweep *w = &s->ring[k];

		for (i = 0; i < w->nacks; i++) {
			if (strcmp(w->acks[i].sender, sender) == 0) {
				w->acks[i].peer = peer;
				w->acks[i].seq = seq;
			}
		}
	}
}

/* The batch of p just added to w: its acknowledgement (room made before)
 * and p's state. */
static void
batch_counted(struct sw_sweep *w, struct sw_sender *p, uint64_t batch,
    uint64_t peer, uint64_t seq, int verdict)
{
	struct sweeps_ack *ack = &w->acks[w->nacks++];

	memcpy(ack->sender, p->name, sizeof(ack->sender));
	ack->batch = batch;
	ack->peer = peer;
	ack->seq = seq;
	if (verdict == SWEEPS_LATE)
		w->nlate++;
	p->pending_batch = batch;
	p->pending_sweep = w->id;
	if (w->id > p->last_reported)
		p->last_reported = w->id;
}

int
sweeps_add(struct sweeps *s, const char *sender, uint64_t sweep_id,
    struct msg_sweep *hdr, const uint8_t *payload, size_t n,
    uint64_t safe_batch, uint64_t peer, uint64_t seq, struct lh_err *err)
{
	struct msg_sweep h;
	struct sw_sender *p;
	struct sw_sweep *w;
	struct add_ctx ctx;
	struct sweeps_ack *ack;
	struct sw_batch *b;
	uint8_t *copy;
	uint32_t sidx;
	int verdict, rc;

	/* Decoded by sweeps_decode() just before, or now. */
	if (hdr != NULL && s->staged == payload && s->staged_n == n)
		h = *hdr;
	else if ((rc = sweeps_decode(s, payload, n, &h, err)) < 0)
		return rc;
	s->staged = NULL;
	if (h.batch <= safe_batch)
		return SWEEPS_DUPLICATE;
	p = sw_sender_get(s, sender);
	if (p == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	if (p->pending_batch != 0 && h.batch <= p->pending_batch) {
		repoint_acks(s, sender, peer, seq);
		return SWEEPS_RESEND;
	}
	sidx = (uint32_t)(p - s->senders);
	w = &s->ring[slot_of(s, p, sweep_id, &verdict)];
	ack = array_grow(w->acks, &w->acap, w->nacks, sizeof(*w->acks));
	if (ack == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	w->acks = ack;
	b = array_grow(w->batches, &w->bcap, w->nbatches, sizeof(*w->batches));
	if (b == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	w->batches = b;
	copy = malloc(n > 0 ? n : 1);
	if (copy == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	memcpy(copy, payload, n);
	ctx.s = s;
	ctx.w = w;
	if (holds_batch_of(w, sidx))
		rc = sw_combine(&ctx, sidx, payload, n, &h);
	else
		rc = add_stage(&ctx, &h, &s->stage);
	if (rc < 0) {
		free(copy);
		return lh_err_set(err, 0, rc, "out of memory");
	}
	b = &w->batches[w->nbatches++];
	b->sender = sidx;
	b->payload = copy;
	b->n = n;
	b->late = verdict == SWEEPS_LATE;
	batch_counted(w, p, h.batch, peer, seq, verdict);
	if (hdr != NULL)
		hdr->nops_dropped = h.nops_dropped;
	return verdict;
}

int
sweeps_decode(struct sweeps *s, const uint8_t *payload, size_t n,
    struct msg_sweep *ret, struct lh_err *err)
{
	int rc = msg_sweep_stage(ret, payload, n, &s->stage, err);

	s->staged = rc == 0 ? payload : NULL;
	s->staged_n = n;
	return rc;
}

size_t
sweeps_nclients(const struct sweeps *s)
{
	return s->nclients;
}

size_t
sweeps_open_batches(const struct sweeps *s)
{
	return s->ring[0].nacks;
}

uint64_t
sweeps_open_id(const struct sweeps *s)
{
	return s->ring[0].id;
}

uint64_t
sweeps_deadline_ns(const struct sweeps *s)
{
	return s->ring[0].id * NS_PER_S + s->deadline_ns;
}
