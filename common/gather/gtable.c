/* SPDX-License-Identifier: BSD-2-Clause */
/* The gatherer's targets, exports and clients (see gtable.h). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "gtable.h"
#include "msg.h"

/* Clients are indexed by (fs, nid). */
struct client_key {
	const char *fs;
	const char *nid;
};

static uint64_t
client_hash(const void *ctx, uint32_t idx)
{
	const struct gtable *t = ctx;

	return hindex_hash_pair(gtable_client_fs(t, idx),
	    gtable_client_nid(t, idx));
}

static bool
client_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct gtable *t = ctx;
	const struct client_key *k = key;

	return strcmp(gtable_client_nid(t, idx), k->nid) == 0 &&
	    strcmp(gtable_client_fs(t, idx), k->fs) == 0;
}

/* The position of client's export in tg->exp, or HINDEX_NONE. */
static uint32_t
slot_get(const struct gt_target *tg, uint32_t client)
{
	return client < tg->nslot ? tg->slot[client] : HINDEX_NONE;
}

/* Say that client's export is at idx.  Returns 0 or -ENOMEM. */
static int
slot_set(const struct gtable *t, struct gt_target *tg, uint32_t client,
    uint32_t idx)
{
	if (client >= tg->slotcap) {
		size_t cap = t->ccap > client ? t->ccap : (size_t)client + 1;
		uint32_t *v = realloc(tg->slot, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		tg->slot = v;
		tg->slotcap = cap;
	}
	/* Only the entries in use are written: the rest of the array is
	 * never touched, so never resident. */
	while (tg->nslot <= client)
		tg->slot[tg->nslot++] = HINDEX_NONE;
	tg->slot[client] = idx;
	return 0;
}

/* The slots of every export of tg afresh (after exp[] or the clients
 * were renumbered).  Cannot fail: every client listed had a slot. */
static void
slot_rebuild(struct gt_target *tg)
{
	size_t i;

	tg->nslot = 0;
	for (i = 0; i < tg->nexp; i++) {
		uint32_t c = tg->exp[i].client;

		while (tg->nslot <= c)
			tg->slot[tg->nslot++] = HINDEX_NONE;
		tg->slot[c] = (uint32_t)i;
	}
}

void
gtable_export_prev(const struct gt_target *tg, const struct gt_export *e,
    struct delta_sample *ret)
{
	ret->c.read_bytes = e->prev_c[0];
	ret->c.write_bytes = e->prev_c[1];
	ret->c.read_ops = e->prev_c[2];
	ret->c.write_ops = e->prev_c[3];
	ret->c.oss_ops = tg->kind == LH_TARGET_OST ? e->prev_c[4] : 0;
	ret->c.mds_ops = tg->kind == LH_TARGET_MDT ? e->prev_c[4] : 0;
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

/*
 * What e's file said last time, whole again for delta_compute() and cur,
 * the read just made: the samples total and start_time that compare with
 * cur's as the whole values did (see struct gt_export).
 */
static void
export_prev_for(const struct gt_target *tg, const struct gt_export *e,
    const struct delta_sample *cur, struct delta_sample *ret)
{
	uint64_t up;

	gtable_export_prev(tg, e, ret);
	/* delta_compute() only asks whether the total went down. */
	ret->samples = went_up32(e->prev_samples, cur->samples, &up) ?
	    cur->samples - up :
	    UINT64_MAX;
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
	e->prev_c[0] = s->c.read_bytes;
	e->prev_c[1] = s->c.write_bytes;
	e->prev_c[2] = s->c.read_ops;
	e->prev_c[3] = s->c.write_ops;
	e->prev_c[4] = tg->kind == LH_TARGET_OST ? s->c.oss_ops : s->c.mds_ops;
	e->prev_samples = (uint32_t)s->samples;
	e->prev_snap_ns = s->snap_ns;
	e->prev_start_tag = gtable_start_tag(s->start_ns);
}

/* The same from gtable_export_prev()'s form (a state file's). */
static void
export_restore_prev(const struct gt_target *tg, struct gt_export *e,
    const struct delta_sample *s)
{
	export_set_prev(tg, e, s);
	e->prev_start_tag = (uint32_t)s->start_ns;
}

void
gtable_init(struct gtable *t)
{
	memset(t, 0, sizeof(*t));
	hindex_init(&t->cindex);
	strpool_init(&t->names);
}

static void
target_free(struct gt_target *tg)
{
	free(tg->exp);
	free(tg->ops);
	free(tg->slot);
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
	free(t->sums);
	free(t->cops);
	strpool_free(&t->names);
	hindex_free(&t->cindex);
	gtable_init(t);
}

static void
client_reset_sums(struct gt_client *c)
{
	c->observed = false;
	c->sums = HINDEX_NONE;
	c->ops = HINDEX_NONE;
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
	for (i = 0; i < t->ntargets; i++) {
		struct gt_target *tg = t->targets[i];
		size_t j;

		tg->listed = false;
		tg->cursor = 0;
		for (j = 0; j < tg->nexp; j++)
			tg->exp[j].listed = 0;
	}
	for (i = 0; i < t->nclients; i++)
		client_reset_sums(&t->clients[i]);
	t->nsums = 0;
	t->ncops = 0;
}

/* Forget every export of tg. */
static void
target_forget_exports(struct gtable *t, struct gt_target *tg)
{
	size_t i;

	for (i = 0; i < tg->nexp; i++)
		t->clients[tg->exp[i].client].nexports--;
	tg->nexp = 0;
	tg->nslot = 0;
	tg->cursor = 0;
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

static struct gt_target *
target_add(struct gtable *t, const char *name, const char *fs,
    enum lh_target_kind kind)
{
	struct gt_target *tg;

	if (strlen(name) >= sizeof(tg->name) || strlen(fs) >= sizeof(tg->fs))
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

/* A filesystem name is kept in the SWEEP's own layout. */
_Static_assert(LTREE_FS_MAX <= MSG_FS_MAX, "fsnames cannot hold a filesystem");

static int
client_get(struct gtable *t, const char *fs, const char *nid, uint32_t *ret)
{
	struct client_key k = {fs, nid};
	struct gt_client *c;
	uint64_t h = hindex_hash_pair(fs, nid);
	uint32_t idx, name;
	uint16_t fsi;
	int rc;

	idx = hindex_find(&t->cindex, h, client_match, t, &k);
	if (idx != HINDEX_NONE) {
		*ret = idx;
		return 0;
	}
	if (strlen(nid) >= NID_STR_MAX || strlen(fs) >= LTREE_FS_MAX)
		return -EINVAL;
	/* A name the wire cannot carry is never queued (see msg.h). */
	rc = msg_rec_check(fs, nid);
	if (rc < 0)
		return rc;
	if (t->nclients >= GT_INDEX_MAX - 1)
		return -ENOMEM;
	/* More filesystems than a SWEEP carries: as a name the wire cannot
	 * carry, never queued. */
	if (fsnames_index(&t->fsn, fs, &fsi) < 0)
		return -EINVAL;
	if (t->nclients == t->ccap) {
		size_t cap = t->ccap == 0 ? 256 : t->ccap * 2;

		c = realloc(t->clients, cap * sizeof(*c));
		if (c == NULL)
			return -ENOMEM;
		t->clients = c;
		t->ccap = cap;
	}
	rc = strpool_add(&t->names, nid, &name);
	if (rc < 0)
		return rc;
	c = &t->clients[t->nclients];
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->fs = fsi;
	client_reset_sums(c);
	idx = (uint32_t)t->nclients;
	rc = hindex_add(&t->cindex, h, idx, client_hash, t);
	if (rc < 0) {
		/* The name goes with the client. */
		strpool_truncate(&t->names, name);
		return rc;
	}
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
		struct gt_ops32 *o;

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
	if (tg->nexp >= GT_INDEX_MAX - 1) {
		*rc = -ENOMEM;
		return NULL;
	}
	*rc = slot_set(t, tg, client, (uint32_t)tg->nexp);
	if (*rc < 0)
		return NULL;
	if (tg->ops != NULL)
		memset(&tg->ops[tg->nexp], 0, sizeof(*tg->ops));
	e = &tg->exp[tg->nexp];
	memset(e, 0, sizeof(*e));
	e->client = client;
	tg->nexp++;
	t->clients[client].nexports++;
	return e;
}

struct gt_export *
gtable_export(struct gtable *t, struct gt_target *tg, const char *nid,
    uint64_t ino, int *rc)
{
	struct gt_export *e;
	uint32_t client = 0, idx = HINDEX_NONE;

	if (tg->cursor < tg->nexp &&
	    strcmp(gtable_client_nid(t, tg->exp[tg->cursor].client), nid) ==
	        0) {
		idx = (uint32_t)tg->cursor;
	} else {
		*rc = client_get(t, tg->fs, nid, &client);
		if (*rc < 0)
			return NULL;
		idx = slot_get(tg, client);
	}
	if (idx == HINDEX_NONE) {
		e = export_add(t, tg, client, rc);
		if (e == NULL)
			return NULL;
		e->base = tg->base;
		idx = (uint32_t)(e - tg->exp);
	} else {
		e = &tg->exp[idx];
		if ((uint32_t)ino != 0 && e->ino != 0 &&
		    (uint32_t)ino != e->ino) {
			/* exports/clear removed the directory and the client
			 * came back: a new export, counting from zero. */
			e->have = 0;
			e->classified = 0;
			e->ops_unknown = 0;
		}
	}
	tg->cursor = (size_t)idx + 1;
	e->ino = (uint32_t)ino;
	e->listed = 1;
	*rc = 0;
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
	    (uint32_t)cur->samples != e->prev_samples;
}

void
gtable_classify(struct gtable *t, struct gt_export *e, enum ltree_peer cls)
{
	e->cls = (unsigned)cls & 3u;
	e->classified = 1;
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
	struct gt_ops32 *prev = &tg->ops[e - tg->exp];
	unsigned i;

	if (cur == NULL)
		cur = &zero;
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

int
gtable_observe(struct gtable *t, struct gt_target *tg, struct gt_export *e,
    const struct delta_sample *cur, const struct mdops *ops)
{
	struct gt_client *c = &t->clients[e->client];
	struct delta_sample prev;
	struct gt_sums *sums;
	struct mdops *cops;
	struct iocount d;
	struct mdops dops;
	enum delta_kind kind;
	uint64_t span_ns, span_us, start;
	bool base = t->baseline || e->base, unmoved;

	assert(e >= tg->exp && e < tg->exp + tg->nexp);
	unmoved =
	    e->have && cur->snap_ns != 0 && cur->snap_ns == e->prev_snap_ns;
	if (e->have)
		export_prev_for(tg, e, cur, &prev);
	kind = delta_compute(e->have ? &prev : NULL, cur, base, &d, &span_ns);
	/* Room for the sums first: failing, nothing has changed, and the
	 * next sweep counts the same delta again. */
	sums = array_grow(t->sums, &t->sumscap, t->nsums, sizeof(*t->sums));
	if (sums == NULL)
		return -ENOMEM;
	t->sums = sums;
	if (tg->ops != NULL) {
		cops = array_grow(t->cops, &t->copscap, t->ncops,
		    sizeof(*t->cops));
		if (cops == NULL)
			return -ENOMEM;
		t->cops = cops;
	}
	memset(&dops, 0, sizeof(dops));
	if (tg->ops != NULL)
		export_ops_delta(tg, e, kind, ops, &dops);
	export_set_prev(tg, e, cur);
	e->have = 1;
	e->base = 0;
	/* A file whose snapshot_time did not move was not updated since the
	 * last read: no time passed for it, and it says nothing about the
	 * rate (its next delta will cover the whole window). */
	if (c->peer || base ||
	    (unmoved && span_ns == 0 && iocount_is_zero(&d) &&
	        mdops_is_zero(&dops)))
		return 0;
	if (!mdops_is_zero(&dops))
		mdops_add(client_ops(t, c), &dops);
	/* The files do not time a new export's first delta (nor a file
	 * whose snapshot_time did not move): it happened since the
	 * previous sweep. */
	if (span_ns == 0)
		span_ns = t->gap_ns;
	span_us = (span_ns + 500) / 1000;
	if (span_us == 0)
		span_us = 1;
	if (!iocount_is_zero(&d)) {
		struct gt_sums *sm = client_sums(t, c);
		uint64_t dv[IOCOUNT_N];
		unsigned i;

		iocount_add(&sm->d, &d);
		iocount_to_array(&d, dv);
		for (i = 0; i < GT_NCOUNTERS; i++)
			sm->q[i] += (double)dv[i] / (double)span_us;
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
	return 0;
}

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
	slot_rebuild(tg);
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

/* The names of the clients kept, packed afresh (the NIDs of clients
 * dropped are garbage in t->names until then). */
static int
names_repack(struct gtable *t)
{
	struct fsnames fsn;
	struct strpool v;
	uint32_t *off;
	size_t i;

	/* The new offsets aside first: without memory nothing changes. */
	off = malloc((t->nclients > 0 ? t->nclients : 1) * sizeof(*off));
	if (off == NULL)
		return -ENOMEM;
	strpool_init(&v);
	for (i = 0; i < t->nclients; i++) {
		if (strpool_add(&v, gtable_client_nid(t, (uint32_t)i),
		        &off[i]) < 0) {
			strpool_free(&v);
			free(off);
			return -ENOMEM;
		}
	}
	/* Only the filesystems of the clients kept: at most as many as
	 * before, so an index never fails. */
	memset(&fsn, 0, sizeof(fsn));
	for (i = 0; i < t->nclients; i++) {
		struct gt_client *c = &t->clients[i];

		c->name = off[i];
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
	rc = hindex_rebuild(&t->cindex, n, client_hash, t);
	for (i = 0; i < t->ntargets; i++) {
		struct gt_target *tg = t->targets[i];

		for (j = 0; j < tg->nexp; j++)
			tg->exp[j].client = map[tg->exp[j].client] & 0xffffffu;
		slot_rebuild(tg);
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
		r.nid = gtable_client_nid(t, (uint32_t)i);
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
	if (slot_get(tg, client) != HINDEX_NONE)
		return -EEXIST;
	e = export_add(t, tg, client, &rc);
	if (e == NULL)
		return rc;
	e->ino = (uint32_t)ino;
	if (prev != NULL) {
		export_restore_prev(tg, e, prev);
		e->have = 1;
		if (tg->ops != NULL && prev_ops != NULL) {
			unsigned i;

			for (i = 0; i < MDOPS_N; i++)
				tg->ops[e - tg->exp].v[i] =
				    (uint32_t)prev_ops->v[i];
		}
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
