/* SPDX-License-Identifier: BSD-2-Clause */
/* The gatherer's targets, exports and clients (see gtable.h). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gtable.h"
#include "msg.h"

/* A target's exports are indexed by client position. */
static uint64_t
client_pos_hash(uint32_t client)
{
	return (uint64_t)client * 0x9e3779b97f4a7c15ULL;
}

static uint64_t
export_hash(const void *ctx, uint32_t idx)
{
	const struct gt_target *tg = ctx;

	return client_pos_hash(tg->exp[idx].client);
}

static bool
export_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct gt_target *tg = ctx;

	return tg->exp[idx].client == *(const uint32_t *)key;
}

/* Clients are indexed by (fs, nid). */
struct client_key {
	const char *fs;
	const char *nid;
};

static uint64_t
client_hash(const void *ctx, uint32_t idx)
{
	const struct gtable *t = ctx;

	return hindex_hash_pair(t->clients[idx].fs, t->clients[idx].nid);
}

static bool
client_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct gtable *t = ctx;
	const struct client_key *k = key;

	return strcmp(t->clients[idx].nid, k->nid) == 0 &&
	    strcmp(t->clients[idx].fs, k->fs) == 0;
}

void
gtable_init(struct gtable *t)
{
	memset(t, 0, sizeof(*t));
	hindex_init(&t->cindex);
}

static void
target_free(struct gt_target *tg)
{
	free(tg->exp);
	free(tg->ops);
	hindex_free(&tg->index);
	free(tg);
}

void
gtable_free(struct gtable *t)
{
	size_t i;

	for (i = 0; i < t->ntargets; i++)
		target_free(t->targets[i]);
	free(t->targets);
	free(t->clients);
	free(t->cops);
	hindex_free(&t->cindex);
	gtable_init(t);
}

static void
client_reset_sums(struct gt_client *c)
{
	c->observed = false;
	c->ops = false;
	memset(&c->d, 0, sizeof(c->d));
	memset(c->q, 0, sizeof(c->q));
	c->smin = UINT64_MAX;
	c->smax = 0;
	c->start_ns = 0;
}

void
gtable_sweep_begin(struct gtable *t, uint64_t sweep_ns, uint64_t interval_ns)
{
	size_t i;

	t->gen++;
	t->baseline = !t->history;
	t->sweep_ns = sweep_ns;
	t->gap_ns = t->last_sweep_ns != 0 && sweep_ns > t->last_sweep_ns ?
	    sweep_ns - t->last_sweep_ns :
	    interval_ns;
	for (i = 0; i < t->ntargets; i++)
		t->targets[i]->listed = false;
	for (i = 0; i < t->nclients; i++)
		client_reset_sums(&t->clients[i]);
	if (t->cops != NULL)
		memset(t->cops, 0, t->nclients * sizeof(*t->cops));
}

/* Forget every export of tg. */
static void
target_forget_exports(struct gtable *t, struct gt_target *tg)
{
	size_t i;

	for (i = 0; i < tg->nexp; i++)
		t->clients[tg->exp[i].client].nexports--;
	tg->nexp = 0;
	hindex_free(&tg->index);
}

static struct gt_target *
target_find(const struct gtable *t, const char *name)
{
	size_t i;

	/* A server holds a few dozen targets at most: a scan will do. */
	for (i = 0; i < t->ntargets; i++) {
		if (strcmp(t->targets[i]->name, name) == 0)
			return t->targets[i];
	}
	return NULL;
}

/* The first MDT: from now on every client has an op-sum slot. */
static int
enable_ops(struct gtable *t)
{
	if (t->mdt)
		return 0;
	if (t->ccap > 0) {
		t->cops = calloc(t->ccap, sizeof(*t->cops));
		if (t->cops == NULL)
			return -ENOMEM;
	}
	t->mdt = true;
	return 0;
}

static struct gt_target *
target_add(struct gtable *t, const char *name, const char *fs,
    enum lh_target_kind kind)
{
	struct gt_target *tg;

	if (strlen(name) >= sizeof(tg->name) || strlen(fs) >= sizeof(tg->fs))
		return NULL;
	if (kind == LH_TARGET_MDT && enable_ops(t) < 0)
		return NULL;
	if (t->ntargets == t->tcap) {
		size_t cap = t->tcap == 0 ? 16 : t->tcap * 2;
		struct gt_target **v;

		/* An array of pointers: targets keep their address. */
		v = realloc(t->targets, cap * sizeof(struct gt_target *));
		if (v == NULL)
			return NULL;
		t->targets = v;
		t->tcap = cap;
	}
	tg = calloc(1, sizeof(*tg));
	if (tg == NULL)
		return NULL;
	memcpy(tg->name, name, strlen(name) + 1);
	memcpy(tg->fs, fs, strlen(fs) + 1);
	tg->kind = kind;
	hindex_init(&tg->index);
	t->targets[t->ntargets++] = tg;
	return tg;
}

struct gt_target *
gtable_target(struct gtable *t, const char *name, const char *fs,
    enum lh_target_kind kind, uint64_t dev, uint64_t ino)
{
	struct gt_target *tg = target_find(t, name);

	if (tg != NULL && (tg->dev != dev || tg->ino != ino)) {
		/* Re-created since we last looked: failed over and back,
		 * or remounted.  Its exports start from zero. */
		target_forget_exports(t, tg);
	}
	if (tg == NULL) {
		tg = target_add(t, name, fs, kind);
		if (tg == NULL)
			return NULL;
		tg->base = t->new_targets_are_old;
	}
	tg->dev = dev;
	tg->ino = ino;
	tg->seen = t->gen;
	return tg;
}

void
gtable_target_listed(struct gt_target *tg)
{
	tg->listed = true;
}

static int
client_get(struct gtable *t, const char *fs, const char *nid, uint32_t *ret)
{
	struct client_key k = {fs, nid};
	struct gt_client *c;
	uint64_t h = hindex_hash_pair(fs, nid);
	uint32_t idx;
	int rc;

	idx = hindex_find(&t->cindex, h, client_match, t, &k);
	if (idx != HINDEX_NONE) {
		*ret = idx;
		return 0;
	}
	if (strlen(nid) >= sizeof(c->nid) || strlen(fs) >= sizeof(c->fs))
		return -EINVAL;
	/* A name the wire cannot carry is never queued (see msg.h). */
	rc = msg_rec_check(fs, nid);
	if (rc < 0)
		return rc;
	if (t->nclients >= HINDEX_NONE - 1)
		return -ENOMEM;
	if (t->nclients == t->ccap) {
		size_t cap = t->ccap == 0 ? 256 : t->ccap * 2;
		struct mdops *o;

		c = realloc(t->clients, cap * sizeof(*c));
		if (c == NULL)
			return -ENOMEM;
		t->clients = c;
		/* Until both have grown, ccap stays: the next call tries
		 * again. */
		if (t->mdt) {
			o = realloc(t->cops, cap * sizeof(*o));
			if (o == NULL)
				return -ENOMEM;
			t->cops = o;
		}
		t->ccap = cap;
	}
	if (t->cops != NULL)
		memset(&t->cops[t->nclients], 0, sizeof(*t->cops));
	c = &t->clients[t->nclients];
	memset(c, 0, sizeof(*c));
	memcpy(c->fs, fs, strlen(fs) + 1);
	memcpy(c->nid, nid, strlen(nid) + 1);
	client_reset_sums(c);
	idx = (uint32_t)t->nclients;
	rc = hindex_add(&t->cindex, h, idx, client_hash, t);
	if (rc < 0)
		return rc;
	t->nclients++;
	*ret = idx;
	return 0;
}

static struct gt_export *
export_add(struct gtable *t, struct gt_target *tg, uint32_t client, int *rc)
{
	struct gt_export *e;

	if (tg->nexp == tg->cap) {
		size_t cap = tg->cap == 0 ? 64 : tg->cap * 2;
		struct mdops *o;

		e = realloc(tg->exp, cap * sizeof(*e));
		if (e == NULL) {
			*rc = -ENOMEM;
			return NULL;
		}
		tg->exp = e;
		/* As for clients: cap moves once both have grown. */
		if (tg->kind == LH_TARGET_MDT) {
			o = realloc(tg->ops, cap * sizeof(*o));
			if (o == NULL) {
				*rc = -ENOMEM;
				return NULL;
			}
			tg->ops = o;
		}
		tg->cap = cap;
	}
	if (tg->ops != NULL)
		memset(&tg->ops[tg->nexp], 0, sizeof(*tg->ops));
	e = &tg->exp[tg->nexp];
	memset(e, 0, sizeof(*e));
	e->client = client;
	*rc = hindex_add(&tg->index, client_pos_hash(client),
	    (uint32_t)tg->nexp, export_hash, tg);
	if (*rc < 0)
		return NULL;
	tg->nexp++;
	t->clients[client].nexports++;
	return e;
}

struct gt_export *
gtable_export(struct gtable *t, struct gt_target *tg, const char *nid,
    uint64_t ino, int *rc)
{
	struct gt_export *e;
	uint32_t client, idx;

	*rc = client_get(t, tg->fs, nid, &client);
	if (*rc < 0)
		return NULL;
	idx = hindex_find(&tg->index, client_pos_hash(client), export_match, tg,
	    &client);
	if (idx == HINDEX_NONE) {
		e = export_add(t, tg, client, rc);
		if (e == NULL)
			return NULL;
		e->base = tg->base;
	} else {
		e = &tg->exp[idx];
		if (ino != 0 && e->ino != 0 && ino != e->ino) {
			/* exports/clear removed the directory and the client
			 * came back: a new export, counting from zero. */
			e->have = false;
			e->classified = false;
			e->ops_unknown = false;
		}
	}
	e->ino = ino;
	e->seen = t->gen;
	return e;
}

bool
gtable_needs_uuid(const struct gt_export *e, const struct delta_sample *cur)
{
	if (!e->classified)
		return true;
	/* An idle client's directory costs nothing while it stays still;
	 * when it moves, make sure it is still not a server peer. */
	return e->cls == LTREE_PEER_STALE && e->have &&
	    cur->samples != e->prev.samples;
}

void
gtable_classify(struct gtable *t, struct gt_export *e, enum ltree_peer cls)
{
	e->cls = (uint8_t)cls;
	e->classified = true;
	if (cls == LTREE_PEER_SERVER)
		t->clients[e->client].peer = true;
}

/*
 * The op deltas of an MDT export whose counters' delta is of this kind,
 * and cur (NULL: zeros) remembered for the next.  An op that went down
 * without the counters seeing a reset still counts from zero, never
 * wraps.
 */
static void
export_ops_delta(struct gt_target *tg, struct gt_export *e,
    enum delta_kind kind, const struct mdops *cur, struct mdops *ret)
{
	static const struct mdops zero;
	struct mdops *prev = &tg->ops[e - tg->exp];
	unsigned i;

	if (cur == NULL)
		cur = &zero;
	memset(ret, 0, sizeof(*ret));
	if (kind == DELTA_NEW || kind == DELTA_RESET) {
		*ret = *cur;
	} else if (kind == DELTA_NORMAL && !e->ops_unknown) {
		for (i = 0; i < MDOPS_N; i++)
			ret->v[i] = cur->v[i] >= prev->v[i] ?
			    cur->v[i] - prev->v[i] :
			    cur->v[i];
	}
	*prev = *cur;
	e->ops_unknown = false;
}

void
gtable_observe(struct gtable *t, struct gt_target *tg, struct gt_export *e,
    const struct delta_sample *cur, const struct mdops *ops)
{
	struct gt_client *c = &t->clients[e->client];
	struct iocount d;
	struct mdops dops;
	enum delta_kind kind;
	uint64_t span_ns, span_us, start, dv[IOCOUNT_N];
	bool base = t->baseline || e->base, unmoved;
	unsigned i;

	assert(e >= tg->exp && e < tg->exp + tg->nexp);
	unmoved =
	    e->have && cur->snap_ns != 0 && cur->snap_ns == e->prev.snap_ns;
	kind =
	    delta_compute(e->have ? &e->prev : NULL, cur, base, &d, &span_ns);
	memset(&dops, 0, sizeof(dops));
	if (tg->ops != NULL)
		export_ops_delta(tg, e, kind, ops, &dops);
	e->prev = *cur;
	e->have = true;
	e->base = false;
	/* A file whose snapshot_time did not move was not updated since the
	 * last read: no time passed for it, and it says nothing about the
	 * rate (its next delta will cover the whole window). */
	if (c->peer || base ||
	    (unmoved && span_ns == 0 && iocount_is_zero(&d) &&
	        mdops_is_zero(&dops)))
		return;
	if (tg->ops != NULL) {
		/* enable_ops() gave every client a slot. */
		mdops_add(&t->cops[e->client], &dops);
		c->ops = true;
	}
	/* The files do not time a new export's first delta (nor a file
	 * whose snapshot_time did not move): it happened since the
	 * previous sweep. */
	if (span_ns == 0)
		span_ns = t->gap_ns;
	span_us = (span_ns + 500) / 1000;
	if (span_us == 0)
		span_us = 1;
	iocount_add(&c->d, &d);
	iocount_to_array(&d, dv);
	for (i = 0; i < GT_NCOUNTERS; i++)
		c->q[i] += (double)dv[i] / (double)span_us;
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

/* Drop the exports of tg that this sweep did not list. */
static int
target_prune(struct gtable *t, struct gt_target *tg)
{
	size_t i, n = 0;

	for (i = 0; i < tg->nexp; i++) {
		if (tg->exp[i].seen != t->gen) {
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
	return hindex_rebuild(&tg->index, n, export_hash, tg);
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
			target_forget_exports(t, tg);
			target_free(tg);
			continue;
		}
		if (tg->listed && rc == 0)
			rc = target_prune(t, tg);
		t->targets[n++] = tg;
	}
	t->ntargets = n;
	return rc;
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
		if (t->cops != NULL)
			t->cops[n] = t->cops[i];
		t->clients[n++] = t->clients[i];
	}
	t->nclients = n;
	rc = hindex_rebuild(&t->cindex, n, client_hash, t);
	for (i = 0; i < t->ntargets; i++) {
		struct gt_target *tg = t->targets[i];
		int trc;

		for (j = 0; j < tg->nexp; j++)
			tg->exp[j].client = map[tg->exp[j].client];
		trc = hindex_rebuild(&tg->index, tg->nexp, export_hash, tg);
		if (rc == 0)
			rc = trc;
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
    struct gt_record *r)
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
	iocount_to_array(&c->d, dv);
	for (i = 0; i < GT_NCOUNTERS; i++) {
		uint64_t v = dv[i];

		if (v == 0)
			continue;
		r->cspan_us[i] = span_of(v, c->q[i]);
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

		if (c->peer)
			continue;
		r.fs = c->fs;
		r.nid = c->nid;
		r.d = c->d;
		record_spans(t, c, &r);
		r.start_ns = c->observed    ? c->start_ns :
		    t->sweep_ns > t->gap_ns ? t->sweep_ns - t->gap_ns :
		                              0;
		r.ops = c->ops ? &t->cops[i] : NULL;
		if (erc == 0)
			erc = emit(arg, &r);
	}
	t->history = true;
	t->baseline = false;
	t->new_targets_are_old = false;
	for (i = 0; i < t->ntargets; i++)
		t->targets[i]->base = false;
	t->last_sweep_ns = t->sweep_ns;
	return rc != 0 ? rc : erc;
}

struct gt_target *
gtable_restore_target(struct gtable *t, const char *name, const char *fs,
    enum lh_target_kind kind, uint64_t dev, uint64_t ino)
{
	struct gt_target *tg;

	if (target_find(t, name) != NULL)
		return NULL;
	tg = target_add(t, name, fs, kind);
	if (tg != NULL) {
		tg->dev = dev;
		tg->ino = ino;
	}
	return tg;
}

int
gtable_restore_export(struct gtable *t, struct gt_target *tg, const char *nid,
    uint64_t ino, enum ltree_peer cls, bool classified,
    const struct delta_sample *prev, const struct mdops *prev_ops)
{
	struct gt_export *e;
	uint32_t client;
	int rc;

	rc = client_get(t, tg->fs, nid, &client);
	if (rc < 0)
		return rc;
	if (hindex_find(&tg->index, client_pos_hash(client), export_match, tg,
	        &client) != HINDEX_NONE)
		return -EEXIST;
	e = export_add(t, tg, client, &rc);
	if (e == NULL)
		return rc;
	e->ino = ino;
	if (prev != NULL) {
		e->prev = *prev;
		e->have = true;
		if (tg->ops != NULL && prev_ops != NULL)
			tg->ops[e - tg->exp] = *prev_ops;
		e->ops_unknown = tg->ops != NULL && prev_ops == NULL;
	}
	if (classified)
		gtable_classify(t, e, cls);
	return 0;
}

void
gtable_restored(struct gtable *t, uint64_t last_sweep_ns)
{
	t->history = true;
	t->last_sweep_ns = last_sweep_ns;
}

size_t
gtable_nexports(const struct gtable *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->ntargets; i++)
		n += t->targets[i]->nexp;
	return n;
}
