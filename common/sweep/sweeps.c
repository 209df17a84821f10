/* SPDX-License-Identifier: BSD-2-Clause */
/* The aggregator's open sweeps, their sums and their closing (sweeps.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "err.h"
#include "hindex.h"
#include "sweeps.h"

#define NS_PER_S    1000000000ULL
#define NRING       (1 + SWEEPS_AHEAD)
#define ROSTER_DFLT 3
/* The dictionary of clients forgets the ones no batch named for
 * PRUNE_AFTER sweeps, looking every PRUNE_EVERY closes: over months of
 * clients coming and going its size stays that of the clients of the
 * last hour or so, not of all that ever were. */
#define PRUNE_EVERY 64
#define PRUNE_AFTER 64

/* Every (fs, NID) named lately, by a small id. */
struct sw_client {
	char fs[MSG_FS_MAX];
	char nid[NID_STR_MAX];
	uint64_t seen; /* the last sweep (id) a record of it went into */
};

/* A client's sums in one sweep. */
struct sw_acc {
	uint32_t client;
	uint32_t nsenders;
	uint32_t ops; /* 1 + index into sw_sweep.ops; 0: none */
	uint64_t d[SWEEPS_NCOUNTERS];
	double r[SWEEPS_NCOUNTERS];
};

/* A batch counted in an open sweep, kept as it came: a second batch of
 * its sender in the same sweep is combined with it (combine()). */
struct sw_batch {
	uint32_t sender; /* index into sweeps.senders */
	uint8_t *payload;
	size_t n;
};

struct sw_sweep {
	uint64_t id; /* seconds */
	struct sw_acc *acc;
	size_t n, cap;
	/* Metadata op sums, only for the clients that have some: most
	 * clients of a filesystem never reach an MDT's per-op counters in a
	 * sweep, and OST-only filesystems never do. */
	struct sweeps_ops *ops;
	size_t nops, opcap;
	struct hindex index; /* by client id */
	struct sweeps_ack *acks;
	size_t nacks, acap;
	struct sw_batch *batches; /* one per ack, in the same order */
	size_t nbatches, bcap;
	size_t nlate;
};

struct sw_sender {
	char name[MSG_NAME_MAX];
	uint64_t last_reported; /* sweep id, 0: never */
	uint64_t pending_batch; /* in an open sweep, not yet acknowledged */
	uint64_t pending_sweep; /* which */
};

struct sweeps {
	unsigned interval, roster;
	uint64_t deadline_ns;
	char (*expected)[MSG_NAME_MAX];
	size_t nexpected;
	struct sw_client *clients;
	size_t nclients, ccap;
	struct hindex cindex;
	uint64_t closes; /* sweeps closed, for the dictionary's pruning */
	struct sw_sweep ring[NRING]; /* ring[0]: the oldest open sweep */
	struct sw_sender *senders;
	size_t nsenders, scap;
	struct hindex sindex;
	/* The last report's storage. */
	char (*missing)[MSG_NAME_MAX];
	size_t mcap;
	struct sweeps_ack *acks;
	size_t akcap;
};

struct client_key {
	const char *fs;
	const char *nid;
};

static uint64_t
client_hash(const void *ctx, uint32_t idx)
{
	const struct sweeps *s = ctx;

	return hindex_hash_pair(s->clients[idx].fs, s->clients[idx].nid);
}

static bool
client_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct sweeps *s = ctx;
	const struct client_key *k = key;

	return strcmp(s->clients[idx].nid, k->nid) == 0 &&
	    strcmp(s->clients[idx].fs, k->fs) == 0;
}

static uint64_t
id_hash(uint32_t id)
{
	return (uint64_t)id * 0x9e3779b97f4a7c15ULL;
}

static uint64_t
acc_hash(const void *ctx, uint32_t idx)
{
	const struct sw_sweep *w = ctx;

	return id_hash(w->acc[idx].client);
}

static bool
acc_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct sw_sweep *w = ctx;

	return w->acc[idx].client == *(const uint32_t *)key;
}

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
	hindex_init(&s->sindex);
	first = now_ns / NS_PER_S / s->interval * s->interval;
	for (i = 0; i < NRING; i++) {
		hindex_init(&s->ring[i].index);
		s->ring[i].id = first + i * s->interval;
	}
	*ret = s;
	return 0;
}

static void
batches_clear(struct sw_sweep *w)
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
		batches_clear(&s->ring[i]);
		free(s->ring[i].batches);
		free(s->ring[i].acc);
		free(s->ring[i].ops);
		free(s->ring[i].acks);
		hindex_free(&s->ring[i].index);
	}
	free(s->clients);
	hindex_free(&s->cindex);
	free(s->senders);
	hindex_free(&s->sindex);
	free(s->expected);
	free(s->missing);
	free(s->acks);
	free(s);
}

static struct sw_sender *
sender_find(const struct sweeps *s, const char *name)
{
	uint32_t i = hindex_find(&s->sindex, hindex_hash_str(HINDEX_SEED, name),
	    sender_match, s, name);

	return i == HINDEX_NONE ? NULL : &s->senders[i];
}

static struct sw_sender *
sender_get(struct sweeps *s, const char *name)
{
	struct sw_sender *p = sender_find(s, name), *v;

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
	const struct sw_sender *p = sender_find(s, sender);

	return p == NULL ? 0 : p->pending_batch;
}

static int
client_get(struct sweeps *s, const char *fs, const char *nid, uint32_t *ret)
{
	struct client_key k = {fs, nid};
	uint64_t h = hindex_hash_pair(fs, nid);
	struct sw_client *c;
	uint32_t i;

	i = hindex_find(&s->cindex, h, client_match, s, &k);
	if (i != HINDEX_NONE) {
		*ret = i;
		return 0;
	}
	if (s->nclients >= HINDEX_NONE - 1)
		return -ENOMEM;
	c = array_grow(s->clients, &s->ccap, s->nclients, sizeof(*s->clients));
	if (c == NULL)
		return -ENOMEM;
	s->clients = c;
	c = &s->clients[s->nclients];
	(void)snprintf(c->fs, sizeof(c->fs), "%s", fs);
	(void)snprintf(c->nid, sizeof(c->nid), "%s", nid);
	c->seen = 0;
	if (hindex_add(&s->cindex, h, (uint32_t)s->nclients, client_hash, s) <
	    0)
		return -ENOMEM;
	*ret = (uint32_t)s->nclients++;
	return 0;
}

static struct sw_acc *
acc_get(struct sw_sweep *w, uint32_t client)
{
	struct sw_acc *a;
	uint32_t i;

	i = hindex_find(&w->index, id_hash(client), acc_match, w, &client);
	if (i != HINDEX_NONE)
		return &w->acc[i];
	a = array_grow(w->acc, &w->cap, w->n, sizeof(*w->acc));
	if (a == NULL)
		return NULL;
	w->acc = a;
	a = &w->acc[w->n];
	memset(a, 0, sizeof(*a));
	a->client = client;
	if (hindex_add(&w->index, id_hash(client), (uint32_t)w->n, acc_hash,
	        w) < 0)
		return NULL;
	w->n++;
	return a;
}

struct add_ctx {
	struct sweeps *s;
	struct sw_sweep *w;
};

/* The record's metadata op counts, at the rate of its mds_ops span. */
static int
add_ops(struct add_ctx *c, struct sw_acc *a, const struct msg_rec *r)
{
	struct sw_sweep *w = c->w;
	uint64_t span = r->cspan_us[SWEEPS_NCOUNTERS - 1];
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
		if (r->ops->v[i] == 0)
			continue;
		o->d.v[i] += r->ops->v[i];
		o->rate[i] += (double)r->ops->v[i] * 1e6 / (double)span;
	}
	return 0;
}

static int
add_rec(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	struct add_ctx *c = arg;
	uint64_t v[IOCOUNT_N];
	struct sw_acc *a;
	uint32_t id;
	unsigned i;

	if (client_get(c->s, h->fs[r->fs], r->nid, &id) < 0 ||
	    (a = acc_get(c->w, id)) == NULL)
		return -ENOMEM;
	if (c->w->id > c->s->clients[id].seen)
		c->s->clients[id].seen = c->w->id;
	a->nsenders++;
	iocount_to_array(&r->d, v);
	for (i = 0; i < SWEEPS_NCOUNTERS; i++) {
		uint64_t span = r->cspan_us[i];

		if (v[i] == 0)
			continue;
		a->d[i] += v[i];
		/* A span of 0 cannot be a rate: take the interval (the
		 * gatherer never sends one). */
		if (span == 0)
			span = (uint64_t)c->s->interval * 1000000u;
		a->r[i] += (double)v[i] * 1e6 / (double)span;
	}
	if (r->ops != NULL)
		return add_ops(c, a, r);
	return 0;
}

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

	if (client_get(p->s, h->fs[r->fs], r->nid, &id) < 0)
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
	struct sw_acc *a = acc_get(w, e->client);
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
	struct sw_acc *a = acc_get(c->w, e->client); /* reserved */
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
static int
combine(struct add_ctx *c, uint32_t sender, const uint8_t *payload, size_t n,
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

	if (hdr != NULL)
		h = *hdr;
	else if ((rc = msg_sweep_decode(&h, payload, n, NULL, NULL, err)) < 0)
		return rc;
	if (h.batch <= safe_batch)
		return SWEEPS_DUPLICATE;
	p = sender_get(s, sender);
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
		rc = combine(&ctx, sidx, payload, n, &h);
	else
		rc = msg_sweep_decode(&h, payload, n, add_rec, &ctx, err);
	if (rc < 0) {
		free(copy);
		return lh_err_set(err, 0, rc, "out of memory");
	}
	b = &w->batches[w->nbatches++];
	b->sender = sidx;
	b->payload = copy;
	b->n = n;
	ack = &w->acks[w->nacks++];
	memcpy(ack->sender, p->name, sizeof(ack->sender));
	ack->batch = h.batch;
	ack->peer = peer;
	ack->seq = seq;
	if (verdict == SWEEPS_LATE)
		w->nlate++;
	p->pending_batch = h.batch;
	p->pending_sweep = w->id;
	if (w->id > p->last_reported)
		p->last_reported = w->id;
	if (hdr != NULL)
		hdr->nops_dropped = h.nops_dropped;
	return verdict;
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

static bool
in_sweep(const struct sw_sweep *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->nacks; i++) {
		if (strcmp(w->acks[i].sender, name) == 0)
			return true;
	}
	return false;
}

/* Expected in sweep w: configured, or reported one of the last
 * roster sweeps. */
static bool
recent(const struct sweeps *s, const struct sw_sender *p, uint64_t id)
{
	uint64_t horizon = (uint64_t)s->roster * s->interval;

	return p->last_reported != 0 && p->last_reported + horizon >= id;
}

/* Every expected sender reported the oldest open sweep (and someone
 * was expected). */
static bool
complete(const struct sweeps *s)
{
	const struct sw_sweep *w = &s->ring[0];
	size_t i, expected = 0;

	for (i = 0; i < s->nexpected; i++) {
		expected++;
		if (!in_sweep(w, s->expected[i]))
			return false;
	}
	for (i = 0; i < s->nsenders; i++) {
		if (!recent(s, &s->senders[i], w->id))
			continue;
		expected++;
		if (!in_sweep(w, s->senders[i].name))
			return false;
	}
	return expected > 0;
}

bool
sweeps_ready(const struct sweeps *s, uint64_t now_ns)
{
	if (now_ns >= sweeps_deadline_ns(s))
		return true;
	return now_ns >= s->ring[0].id * NS_PER_S && complete(s);
}

uint64_t
sweeps_next_ns(const struct sweeps *s)
{
	return complete(s) ? s->ring[0].id * NS_PER_S : sweeps_deadline_ns(s);
}

static int
add_missing(struct sweeps *s, size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if (strcmp(s->missing[i], name) == 0)
			return 0;
	}
	char(*v)[MSG_NAME_MAX];

	v = array_grow(s->missing, &s->mcap, *n, sizeof(*s->missing));
	if (v == NULL)
		return -ENOMEM;
	s->missing = v;
	(void)snprintf(s->missing[*n], MSG_NAME_MAX, "%s", name);
	(*n)++;
	return 0;
}

/* Per-filesystem totals of a sweep: a handful of filesystems. */
struct fs_sum {
	struct sweeps_fs_total t;
};

static int
emit(struct sweeps *s, const struct sw_sweep *w, sweeps_client_fn client_fn,
    sweeps_fs_fn fs_fn, void *arg)
{
	struct fs_sum sums[MSG_SWEEP_FS_MAX];
	size_t nsums = 0, i, f;
	unsigned c;
	int rc = 0;

	memset(sums, 0, sizeof(sums));
	for (i = 0; i < w->n; i++) {
		const struct sw_acc *a = &w->acc[i];
		const struct sw_client *cl = &s->clients[a->client];
		struct sweeps_client out;

		out.fs = cl->fs;
		out.nid = cl->nid;
		iocount_from_array(&out.d, a->d);
		for (c = 0; c < SWEEPS_NCOUNTERS; c++)
			out.rate[c] = a->r[c];
		out.nsenders = a->nsenders;
		out.ops = a->ops != 0 ? &w->ops[a->ops - 1] : NULL;
		if (client_fn != NULL && rc == 0)
			rc = client_fn(arg, &out);
		for (f = 0; f < nsums; f++) {
			if (strcmp(sums[f].t.fs, cl->fs) == 0)
				break;
		}
		if (f == nsums) {
			if (nsums == MSG_SWEEP_FS_MAX)
				continue;
			sums[nsums++].t.fs = cl->fs;
		}
		iocount_add(&sums[f].t.d, &out.d);
		for (c = 0; c < SWEEPS_NCOUNTERS; c++)
			sums[f].t.rate[c] += a->r[c];
		if (out.ops != NULL) {
			mdops_add(&sums[f].t.ops.d, &out.ops->d);
			for (c = 0; c < MDOPS_N; c++)
				sums[f].t.ops.rate[c] += out.ops->rate[c];
		}
		sums[f].t.nclients++;
	}
	for (f = 0; f < nsums && fs_fn != NULL && rc == 0; f++)
		rc = fs_fn(arg, &sums[f].t);
	return rc;
}

/* An open sweep's sums, indexed by the clients' ids after pruning. */
struct remap_ctx {
	const struct sw_sweep *w;
	const uint32_t *map; /* old id -> new id */
};

static uint64_t
remap_hash(const void *ctx, uint32_t idx)
{
	const struct remap_ctx *r = ctx;

	return id_hash(r->map[r->w->acc[idx].client]);
}

static uint64_t
new_client_hash(const void *ctx, uint32_t idx)
{
	const struct sw_client *v = ctx;

	return hindex_hash_pair(v[idx].fs, v[idx].nid);
}

/*
 * Forget the clients no record named since sweep id `before`, and those
 * only: every client an open sweep holds sums for was named by it, so
 * is kept.  The new indexes are built aside first: without the memory
 * for them nothing changes (and the next try is PRUNE_EVERY closes on).
 */
static void
prune_clients(struct sweeps *s, uint64_t before)
{
	struct hindex ring_index[NRING], cindex;
	struct sw_client *v;
	uint32_t *map;
	size_t i, j, n = 0;

	for (i = 0; i < s->nclients; i++) {
		if (s->clients[i].seen >= before)
			n++;
	}
	if (n == s->nclients)
		return;
	map = malloc(s->nclients * sizeof(*map));
	v = malloc((n > 0 ? n : 1) * sizeof(*v));
	if (map == NULL || v == NULL)
		goto out;
	for (i = 0, j = 0; i < s->nclients; i++) {
		map[i] = HINDEX_NONE;
		if (s->clients[i].seen >= before) {
			v[j] = s->clients[i];
			map[i] = (uint32_t)j++;
		}
	}
	hindex_init(&cindex);
	if (hindex_rebuild(&cindex, n, new_client_hash, v) < 0)
		goto out;
	for (i = 0; i < NRING; i++) {
		struct remap_ctx rc = {&s->ring[i], map};

		hindex_init(&ring_index[i]);
		if (hindex_rebuild(&ring_index[i], s->ring[i].n, remap_hash,
		        &rc) < 0) {
			while (i-- > 0)
				hindex_free(&ring_index[i]);
			hindex_free(&cindex);
			goto out;
		}
	}
	/* Everything is there: switch over. */
	for (i = 0; i < NRING; i++) {
		struct sw_sweep *w = &s->ring[i];

		for (j = 0; j < w->n; j++)
			w->acc[j].client = map[w->acc[j].client];
		hindex_free(&w->index);
		w->index = ring_index[i];
	}
	hindex_free(&s->cindex);
	s->cindex = cindex;
	free(s->clients);
	s->clients = v;
	s->nclients = n;
	s->ccap = n > 0 ? n : 1;
	v = NULL;
out:
	free(v);
	free(map);
}

int
sweeps_close(struct sweeps *s, uint64_t now_ns, sweeps_client_fn client_fn,
    sweeps_fs_fn fs_fn, void *arg, struct sweeps_report *rep)
{
	struct sw_sweep *w = &s->ring[0], done;
	size_t i, nmissing = 0;
	int rc, mrc = 0;

	memset(rep, 0, sizeof(*rep));
	rep->sweep_id = w->id;
	rep->by_deadline = now_ns >= sweeps_deadline_ns(s);
	rep->nclients = w->n;
	rep->nreported = w->nacks;
	rep->nlate = w->nlate;
	rc = emit(s, w, client_fn, fs_fn, arg);

	for (i = 0; i < s->nexpected && mrc == 0; i++) {
		if (!in_sweep(w, s->expected[i]))
			mrc = add_missing(s, &nmissing, s->expected[i]);
	}
	for (i = 0; i < s->nsenders && mrc == 0; i++) {
		if (recent(s, &s->senders[i], w->id) &&
		    !in_sweep(w, s->senders[i].name))
			mrc = add_missing(s, &nmissing, s->senders[i].name);
	}
	rep->missing = s->missing;
	rep->nmissing = mrc == 0 ? nmissing : 0;

	/* Hand the acknowledgements over (the report keeps their storage,
	 * the sweep takes the report's old one): the batches are safe now. */
	{
		struct sweeps_ack *v = s->acks;
		size_t cap = s->akcap;

		s->acks = w->acks;
		s->akcap = w->acap;
		w->acks = v;
		w->acap = cap;
		rep->acks = s->acks;
		rep->nacks = w->nacks;
	}
	for (i = 0; i < rep->nacks; i++) {
		struct sw_sender *p = sender_find(s, rep->acks[i].sender);

		if (p != NULL && p->pending_sweep == w->id)
			p->pending_batch = 0;
	}

	/* The ring turns: the closed sweep's storage becomes the newest. */
	done = *w;
	memmove(&s->ring[0], &s->ring[1], SWEEPS_AHEAD * sizeof(s->ring[0]));
	done.id = s->ring[SWEEPS_AHEAD - 1].id + s->interval;
	done.n = 0;
	done.nops = 0;
	done.nacks = 0;
	batches_clear(&done);
	done.nlate = 0;
	hindex_clear(&done.index);
	s->ring[SWEEPS_AHEAD] = done;
	if (++s->closes % PRUNE_EVERY == 0 &&
	    rep->sweep_id > (uint64_t)PRUNE_AFTER * s->interval)
		prune_clients(s,
		    rep->sweep_id - (uint64_t)PRUNE_AFTER * s->interval);
	return rc;
}

int
sweeps_reconfigure(struct sweeps *s, const struct sweeps_conf *c)
{
	char(*expected)[MSG_NAME_MAX] = NULL;
	size_t i;

	if (c->interval_s != s->interval ||
	    (uint64_t)c->deadline_ms >= (uint64_t)c->interval_s * 1000u)
		return -EINVAL;
	if (c->nexpected > 0) {
		expected = calloc(c->nexpected, sizeof(*expected));
		if (expected == NULL)
			return -ENOMEM;
	}
	for (i = 0; i < c->nexpected; i++) {
		if (strlen(c->expected[i]) >= MSG_NAME_MAX) {
			free(expected);
			return -EINVAL;
		}
		memcpy(expected[i], c->expected[i], strlen(c->expected[i]) + 1);
	}
	free(s->expected);
	s->expected = expected;
	s->nexpected = c->nexpected;
	s->deadline_ns = (uint64_t)c->deadline_ms * 1000000u;
	if (c->roster_sweeps != 0)
		s->roster = c->roster_sweeps;
	return 0;
}

int
sweeps_expect(struct sweeps *s, const char *sender)
{
	struct sw_sender *p = sender_get(s, sender);

	if (p == NULL)
		return -ENOMEM;
	if (p->last_reported == 0 && s->ring[0].id >= s->interval)
		p->last_reported = s->ring[0].id - s->interval;
	return 0;
}
