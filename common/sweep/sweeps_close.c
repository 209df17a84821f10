/* SPDX-License-Identifier: BSD-2-Clause */
/* Closing the oldest open sweep (sweeps.h): its sums handed to the
 * caller, its acknowledgements released, the ring turned, and now and
 * then the dictionary of clients pruned. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "err.h"
#include "hindex.h"
#include "sweeps.h"
#include "sweeps_int.h"

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

	return sw_client_hash(&v[idx]);
}

/* The open sweeps' indexes by the clients' new ids (map) into ring_index.
 * Returns 0 or -ENOMEM (none built). */
static int
ring_indexes(const struct sweeps *s, const uint32_t *map,
    struct hindex ring_index[NRING])
{
	size_t i;

	for (i = 0; i < NRING; i++) {
		struct remap_ctx rc = {&s->ring[i], map};

		hindex_init(&ring_index[i]);
		if (hindex_rebuild(&ring_index[i], s->ring[i].n, remap_hash,
		        &rc) < 0) {
			while (i-- > 0)
				hindex_free(&ring_index[i]);
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Forget the clients no record named since sweep id `before`, and those
 * only: every client an open sweep holds sums for was named by it, so
 * is kept; and the groups no client kept names.  The new tables are
 * built aside first: without the memory for them nothing changes (and
 * the next try is PRUNE_EVERY closes on).
 */
static void
prune_clients(struct sweeps *s, uint64_t before)
{
	struct hindex ring_index[NRING], cindex;
	struct sw_groups groups;
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
	if (sw_groups_compact(s, v, n, &groups) < 0)
		goto out;
	hindex_init(&cindex);
	if (hindex_rebuild(&cindex, n, new_client_hash, v) < 0) {
		sw_groups_free(&groups);
		goto out;
	}
	if (ring_indexes(s, map, ring_index) < 0) {
		hindex_free(&cindex);
		sw_groups_free(&groups);
		goto out;
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
	sw_groups_free(&s->groups);
	s->groups = groups;
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
	size_t i;
	int rc;

	memset(rep, 0, sizeof(*rep));
	rep->sweep_id = w->id;
	rep->by_deadline = now_ns >= sweeps_deadline_ns(s);
	rep->nclients = w->n;
	rep->nreported = w->nacks;
	rep->nlate = w->nlate;
	rc = emit(s, w, client_fn, fs_fn, arg);
	sw_report_missing(s, w, rep);

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
		struct sw_sender *p = sw_sender_find(s, rep->acks[i].sender);

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
	sw_batches_clear(&done);
	done.nlate = 0;
	hindex_clear(&done.index);
	s->ring[SWEEPS_AHEAD] = done;
	if (++s->closes % PRUNE_EVERY == 0 &&
	    rep->sweep_id > (uint64_t)PRUNE_AFTER * s->interval)
		prune_clients(s,
		    rep->sweep_id - (uint64_t)PRUNE_AFTER * s->interval);
	return rc;
}
