/* SPDX-License-Identifier: BSD-2-Clause */
/* The gatherer's targets, exports and clients (see gtable.h): finding and
 * adding them, and restoring them from the state file. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "gtable.h"
#include "gtable_int.h"
#include "msg.h"
#include "nid.h"

/* Clients are indexed by (fs, nid). */
struct client_key {
	const char *fs;
	const char *nid;
};

uint64_t
gt_client_hash(const void *ctx, uint32_t idx)
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
		/* As many as the clients have room for: one growth per
		 * growth of theirs. */
		size_t need = t->ccap > client ? t->ccap : (size_t)client + 1;
		uint32_t *v =
		    array_reserve(tg->slot, &tg->slotcap, need, sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		tg->slot = v;
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
void
gt_slot_rebuild(struct gt_target *tg)
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
gtable_init(struct gtable *t)
{
	memset(t, 0, sizeof(*t));
	hindex_init(&t->cindex);
	strpool_init(&t->names);
}

void
gt_target_free(struct gt_target *tg)
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
		gt_target_free(t->targets[i]);
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
gtable_set_ops_sink(struct gtable *t, gtable_ops_fn fn, void *arg)
{
	t->ops_fn = fn;
	t->ops_arg = arg;
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
		tg->nidle = 0;
		for (j = 0; j < tg->nexp; j++)
			tg->exp[j].listed = 0;
	}
	for (i = 0; i < t->nclients; i++)
		client_reset_sums(&t->clients[i]);
	t->nsums = 0;
	t->ncops = 0;
}

/* Forget every export of tg. */
void
gt_target_forget_exports(struct gtable *t, struct gt_target *tg)
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
		struct gt_target **v;

		/* An array of pointers: targets keep their address. */
		v = array_grow(t->targets, &t->tcap, t->ntargets,
		    sizeof(struct gt_target *));
		if (v == NULL)
			return NULL;
		t->targets = v;
	}
	tg = calloc(1, sizeof(*tg));
	if (tg == NULL)
		return NULL;
	memcpy(tg->name, name, strlen(name) + 1);
	memcpy(tg->fs, fs, strlen(fs) + 1);
	tg->kind = kind;
	t->targets[t->ntargets++] = tg;
	t->jtargets++;
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
		gt_target_forget_exports(t, tg);
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
_Static_assert(sizeof(struct gt_export) == 56,
    "an export grew: it is most of an OSS's memory (docs/performance.md)");

/* What an export keeps of its directory's inode (struct gt_export). */
static uint32_t
ino_kept(uint64_t ino)
{
	return (uint32_t)ino & GT_INO_MASK;
}

static int
client_get(struct gtable *t, const char *fs, const char *nid, uint32_t *ret)
{
	struct client_key k = {fs, nid};
	struct gt_client *c;
	uint64_t h = hindex_hash_pair(fs, nid);
	char canon[NID_STR_MAX];
	uint32_t idx, name, out;
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
		c = array_grow(t->clients, &t->ccap, t->nclients, sizeof(*c));
		if (c == NULL)
			return -ENOMEM;
		t->clients = c;
	}
	/* msg_rec_check() took it, so it has a canonical form. */
	if (nid_canon(nid, canon, sizeof(canon)) < 0)
		return -EINVAL;
	rc = strpool_add(&t->names, nid, &name);
	if (rc < 0)
		return rc;
	out = name;
	if (strcmp(canon, nid) != 0 &&
	    (rc = strpool_add(&t->names, canon, &out)) < 0) {
		strpool_truncate(&t->names, name);
		return rc;
	}
	c = &t->clients[t->nclients];
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->out = out;
	c->fs = fsi;
	client_reset_sums(c);
	idx = (uint32_t)t->nclients;
	rc = hindex_add(&t->cindex, h, idx, gt_client_hash, t);
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
		size_t ecap = tg->cap, ocap = tg->cap;
		struct gt_ops32 *o;

		e = array_grow(tg->exp, &ecap, tg->nexp, sizeof(*e));
		if (e == NULL) {
			*rc = -ENOMEM;
			return NULL;
		}
		tg->exp = e;
		/* Two arrays, one cap: it moves once both have grown. */
		if (tg->kind == LH_TARGET_MDT) {
			o = array_grow(tg->ops, &ocap, tg->nexp, sizeof(*o));
			if (o == NULL) {
				*rc = -ENOMEM;
				return NULL;
			}
			tg->ops = o;
		}
		tg->cap = ecap;
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
	e->changed = 1;
	tg->nexp++;
	t->jexports++;
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
		if (ino_kept(ino) != 0 && e->ino != 0 &&
		    ino_kept(ino) != e->ino) {
			/* exports/clear removed the directory and the client
			 * came back: a new export, counting from zero. */
			e->have = 0;
			e->classified = 0;
			e->ops_unknown = 0;
		}
	}
	tg->cursor = (size_t)idx + 1;
	if (e->ino != ino_kept(ino))
		e->changed = 1;
	e->ino = ino_kept(ino);
	e->listed = 1;
	*rc = 0;
	return e;
}

bool
gtable_needs_uuid(struct gt_export *e, const struct delta_sample *cur)
{
	if (!e->classified)
		return true;
	/* An idle client's directory costs nothing while it stays still.
	 * When a stale one starts moving, it has connected again: make sure
	 * it is still not a server peer.  While it keeps moving it is the
	 * same peer, looked at already.  A server's connection to its peers
	 * never goes idle, so one that moved and still read stale is a
	 * client: the spells after that are looked at less and less. */
	if (e->cls != LTREE_PEER_STALE || !e->have)
		return false;
	if ((uint32_t)cur->samples == e->prev_samples) {
		e->uuid_spell = 0;
		return false;
	}
	if (e->uuid_spell)
		return false;
	if (e->uuid_skip > 0) {
		e->uuid_skip--;
		e->uuid_spell = 1;
		return false;
	}
	return true;
}

void
gtable_classify(struct gtable *t, struct gt_export *e, enum ltree_peer cls)
{
	/* Read again while stale and moving: wait 1, 2, 4, then 7 spells
	 * of moving reads before the next look. */
	if (e->classified && e->cls == LTREE_PEER_STALE &&
	    cls == LTREE_PEER_STALE) {
		e->uuid_skip = e->uuid_level < 3 ? 1u << e->uuid_level : 7u;
		if (e->uuid_level < 3)
			e->uuid_level++;
	} else if (cls != LTREE_PEER_STALE) {
		e->uuid_skip = 0;
		e->uuid_level = 0;
	}
	/* A first look is not one made while moving: the next read that
	 * moves still looks. */
	e->uuid_spell = e->classified;
	if (!e->classified || e->cls != ((unsigned)cls & 3u))
		e->changed = 1;
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
/* e's previous values and op counts as a state file keeps them. */
static void
export_restore(struct gt_target *tg, struct gt_export *e,
    const struct delta_sample *prev, const struct mdops *prev_ops)
{
	e->have = 0;
	e->ops_unknown = 0;
	if (prev == NULL)
		return;
	gt_export_restore_prev(tg, e, prev);
	e->have = 1;
	if (tg->ops != NULL && prev_ops != NULL) {
		unsigned i;

		for (i = 0; i < MDOPS_N; i++)
			tg->ops[e - tg->exp].v[i] = (uint32_t)prev_ops->v[i];
	}
	e->ops_unknown = tg->ops != NULL && prev_ops == NULL;
}

struct gt_target *
gtable_find_target(const struct gtable *t, const char *name)
{
	return target_find(t, name);
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
	e->ino = ino_kept(ino);
	export_restore(tg, e, prev, prev_ops);
	if (classified)
		gtable_classify(t, e, cls);
	return 0;
}

int
gtable_update_export(struct gtable *t, struct gt_target *tg, const char *nid,
    uint64_t ino, enum ltree_peer cls, bool classified,
    const struct delta_sample *prev, const struct mdops *prev_ops)
{
	struct gt_export *e;
	uint32_t client, idx;
	int rc;

	rc = client_get(t, tg->fs, nid, &client);
	if (rc < 0)
		return rc;
	idx = slot_get(tg, client);
	if (idx == HINDEX_NONE)
		return gtable_restore_export(t, tg, nid, ino, cls, classified,
		    prev, prev_ops);
	e = &tg->exp[idx];
	e->ino = ino_kept(ino);
	export_restore(tg, e, prev, prev_ops);
	e->classified = 0;
	e->cls = 0;
	if (classified)
		gtable_classify(t, e, cls);
	e->changed = 1;
	return 0;
}

/* Whether only e's snapshot time would move with cur and ops: its
 * counters, samples, start and op counts as kept. */
static bool
export_idle(const struct gt_target *tg, const struct gt_export *e,
    const struct delta_sample *cur, const struct mdops *ops)
{
	const struct iocount *c = &cur->c;
	unsigned i;

	if (!e->have || e->ops_unknown)
		return false;
	/* As export_set_prev() would keep them (gtable_observe.c). */
	if (e->prev_bytes[0] != c->read_bytes ||
	    e->prev_bytes[1] != c->write_bytes ||
	    e->prev_n[0] != (uint32_t)c->read_ops ||
	    e->prev_n[1] != (uint32_t)c->write_ops ||
	    e->prev_ops !=
	        (tg->kind == LH_TARGET_OST ? c->oss_ops : c->mds_ops) ||
	    e->prev_samples != (uint32_t)cur->samples ||
	    e->prev_start_tag != gtable_start_tag(cur->start_ns))
		return false;
	for (i = 0; tg->ops != NULL && i < MDOPS_N; i++) {
		if (tg->ops[e - tg->exp].v[i] !=
		    (ops != NULL ? (uint32_t)ops->v[i] : 0u))
			return false;
	}
	return true;
}

void
gt_export_note_read(struct gt_target *tg, struct gt_export *e,
    const struct delta_sample *cur, const struct mdops *ops)
{
	if (!export_idle(tg, e, cur, ops))
		e->changed = 1;
	else if (!e->changed)
		tg->nidle++;
}

bool
gtable_forgot(const struct gtable *t)
{
	return t->ntargets != t->jtargets || gtable_nexports(t) != t->jexports;
}

void
gtable_journaled(struct gtable *t)
{
	size_t i, j;

	for (i = 0; i < t->ntargets; i++) {
		struct gt_target *tg = t->targets[i];

		for (j = 0; j < tg->nexp; j++)
			tg->exp[j].changed = 0;
	}
	t->jtargets = t->ntargets;
	t->jexports = gtable_nexports(t);
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
