/* SPDX-License-Identifier: BSD-2-Clause */
/* Counters since they began, per (host, filesystem) (hosttotals.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "hostsum.h"
#include "hosttotals_int.h"

/* (host, fs) refused by the cap that are told apart, to count each once:
 * 8 bytes each (a hash), so a flood of new hosts past the cap costs at
 * most about 1 MB; past it, hosttotals_refused() stops growing. */
#define REFUSED_KEEP ((size_t)65536)

struct row_key {
	const char *host; /* interned */
	const char *fs;
};

static uint64_t
row_hash(const void *ctx, uint32_t idx)
{
	const struct hosttotals *t = ctx;

	return hindex_hash_pair(t->rows[idx].host, t->rows[idx].fs);
}

/* Interned names: the same string is the same address. */
static bool
row_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct hosttotals *t = ctx;
	const struct row_key *k = key;

	return t->rows[idx].host == k->host && t->rows[idx].fs == k->fs;
}

static uint64_t
mark_hash(const void *ctx, uint32_t idx)
{
	const struct hosttotals *t = ctx;

	return hindex_hash_str(HINDEX_SEED, t->marks[idx].sender);
}

static bool
mark_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct hosttotals *t = ctx;

	return strcmp(t->marks[idx].sender, key) == 0;
}

static uint64_t
refused_hash(const void *ctx, uint32_t idx)
{
	const struct hosttotals *t = ctx;

	return t->refused[idx];
}

static bool
refused_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct hosttotals *t = ctx;

	return t->refused[idx] == *(const uint64_t *)key;
}

static void
ht_init(struct hosttotals *t, size_t max_rows)
{
	memset(t, 0, sizeof(*t));
	t->max_rows = max_rows;
	ht_strs_init(&t->strs);
	hindex_init(&t->index);
	hindex_init(&t->markindex);
	hindex_init(&t->refusedindex);
}

static void
ht_free_parts(struct hosttotals *t)
{
	ht_strs_free(&t->strs);
	hindex_free(&t->index);
	hindex_free(&t->markindex);
	hindex_free(&t->refusedindex);
	free(t->rows);
	free(t->fss);
	free(t->marks);
	free(t->refused);
}

int
hosttotals_new(size_t max_rows, struct hosttotals **ret)
{
	struct hosttotals *t = malloc(sizeof(*t));

	if (t == NULL)
		return -ENOMEM;
	ht_init(t, max_rows);
	*ret = t;
	return 0;
}

void
hosttotals_free(struct hosttotals *t)
{
	if (t == NULL)
		return;
	ht_free_parts(t);
	free(t);
}

void
ht_clear(struct hosttotals *t)
{
	size_t max_rows = t->max_rows;

	ht_free_parts(t);
	ht_init(t, max_rows);
}

void
hosttotals_set_max(struct hosttotals *t, size_t max_rows)
{
	t->max_rows = max_rows;
}

struct hosttotals_row *
ht_row_get(struct hosttotals *t, const char *host, const char *fs)
{
	struct row_key k = {host, fs};
	uint64_t h = hindex_hash_pair(host, fs);
	struct hosttotals_row *e, *v;
	uint32_t i;

	i = hindex_find(&t->index, h, row_match, t, &k);
	if (i != HINDEX_NONE)
		return &t->rows[i];
	if (t->n >= UINT32_MAX - 1)
		return NULL;
	if (t->n == t->cap) {
		v = array_grow(t->rows, &t->cap, t->n, sizeof(*v));
		if (v == NULL)
			return NULL;
		t->rows = v;
	}
	e = &t->rows[t->n];
	memset(e, 0, sizeof(*e));
	e->host = host;
	e->fs = fs;
	if (hindex_add(&t->index, h, (uint32_t)t->n, row_hash, t) < 0)
		return NULL;
	t->n++;
	return e;
}

struct hosttotals_fs *
ht_fs_get(struct hosttotals *t, const char *fs)
{
	struct hosttotals_fs *e, *v;
	size_t i;

	/* A handful of filesystems: a scan. */
	for (i = 0; i < t->nfs; i++)
		if (t->fss[i].fs == fs)
			return &t->fss[i];
	if (t->nfs == t->fscap) {
		v = array_grow(t->fss, &t->fscap, t->nfs, sizeof(*v));
		if (v == NULL)
			return NULL;
		t->fss = v;
	}
	e = &t->fss[t->nfs++];
	memset(e, 0, sizeof(*e));
	e->fs = fs;
	return e;
}

/* (host, fs) refused by the cap: remembered (up to REFUSED_KEEP) to be
 * counted once. */
static void
note_refused(struct hosttotals *t, const char *host, const char *fs)
{
	uint64_t h = hindex_hash_pair(host, fs), *v;

	if (t->nrefused >= REFUSED_KEEP ||
	    hindex_find(&t->refusedindex, h, refused_match, t, &h) !=
	        HINDEX_NONE)
		return;
	if (t->nrefused == t->refusedcap) {
		v = array_grow(t->refused, &t->refusedcap, t->nrefused,
		    sizeof(*v));
		if (v == NULL)
			return; /* counted again later: a count, no more */
		t->refused = v;
	}
	t->refused[t->nrefused] = h;
	if (hindex_add(&t->refusedindex, h, (uint32_t)t->nrefused, refused_hash,
	        t) == 0)
		t->nrefused++;
}

/* The existing row of r, a new one, or NULL with *ret_rc: 1 (the cap) or
 * -ENOMEM. */
static struct hosttotals_row *
row_for(struct hosttotals *t, const struct hostsum_row *r, int *ret_rc)
{
	const struct hosttotals_row *found;
	const char *host, *fs;

	found = hosttotals_find(t, r->host, r->fs);
	if (found != NULL)
		return &t->rows[found - t->rows];
	if (t->max_rows != 0 && t->n >= t->max_rows) {
		note_refused(t, r->host, r->fs);
		*ret_rc = 1;
		return NULL;
	}
	*ret_rc = -ENOMEM;
	host = ht_strs_add(&t->strs, r->host);
	fs = ht_strs_add(&t->strs, r->fs);
	if (host == NULL || fs == NULL)
		return NULL;
	return ht_row_get(t, host, fs);
}

static void
ops_add(uint64_t acc[MDOPS_N], const struct mdops *d)
{
	unsigned i;

	for (i = 0; i < MDOPS_N; i++)
		acc[i] += d->v[i];
}

int
hosttotals_add(struct hosttotals *t, uint64_t sweep_id,
    const struct hostsum_row *r)
{
	struct hosttotals_row *e;
	int rc = 0;

	if (sweep_id > t->last_sweep)
		t->last_sweep = sweep_id;
	/* What the file could not hold back is never made (hostview gives
	 * no such row; its deltas are in the filesystem's totals). */
	if (r->host[0] == '\0' || r->fs[0] == '\0')
		return 0;
	e = row_for(t, r, &rc);
	if (e == NULL)
		return rc;
	iocount_add(&e->total, &r->d);
	ops_add(e->op_total, &r->dops);
	memcpy(e->rate, r->rate, sizeof(e->rate));
	memcpy(e->oprate, r->oprate, sizeof(e->oprate));
	e->last_sweep = sweep_id;
	return 0;
}

int
hosttotals_add_fs(struct hosttotals *t, uint64_t sweep_id,
    const struct sweeps_fs_total *ft)
{
	struct hosttotals_fs *e;
	const char *fs;

	if (sweep_id > t->last_sweep)
		t->last_sweep = sweep_id;
	if (ft->fs[0] == '\0' || strlen(ft->fs) >= MSG_FS_MAX)
		return 0; /* no filesystem is named so: see hosttotals_add() */
	fs = ht_strs_add(&t->strs, ft->fs);
	e = fs == NULL ? NULL : ht_fs_get(t, fs);
	if (e == NULL)
		return -ENOMEM;
	iocount_add(&e->total, &ft->d);
	ops_add(e->op_total, &ft->ops.d);
	memcpy(e->rate, ft->rate, sizeof(e->rate));
	memcpy(e->oprate, ft->ops.rate, sizeof(e->oprate));
	e->clients = ft->nclients;
	e->last_sweep = sweep_id;
	return 0;
}

int
hosttotals_mark(struct hosttotals *t, const char *sender, uint64_t batch)
{
	uint64_t h = hindex_hash_str(HINDEX_SEED, sender);
	struct ht_mark *v, *m;
	uint32_t i;

	i = hindex_find(&t->markindex, h, mark_match, t, sender);
	if (i != HINDEX_NONE) {
		if (batch > t->marks[i].batch)
			t->marks[i].batch = batch;
		return 0;
	}
	if (t->nmarks == t->markcap) {
		v = array_grow(t->marks, &t->markcap, t->nmarks, sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		t->marks = v;
	}
	m = &t->marks[t->nmarks];
	(void)snprintf(m->sender, sizeof(m->sender), "%s", sender);
	m->batch = batch;
	if (hindex_add(&t->markindex, h, (uint32_t)t->nmarks, mark_hash, t) < 0)
		return -ENOMEM;
	t->nmarks++;
	return 0;
}

uint64_t
hosttotals_last_sweep(const struct hosttotals *t)
{
	return t->last_sweep;
}

void
hosttotals_closed(struct hosttotals *t, uint64_t sweep_id)
{
	if (sweep_id > t->last_sweep)
		t->last_sweep = sweep_id;
}

const struct hosttotals_row *
hosttotals_rows(const struct hosttotals *t, size_t *ret_n)
{
	*ret_n = t->n;
	return t->rows;
}

const struct hosttotals_fs *
hosttotals_fss(const struct hosttotals *t, size_t *ret_n)
{
	*ret_n = t->nfs;
	return t->fss;
}

const struct hosttotals_row *
hosttotals_find(const struct hosttotals *t, const char *host, const char *fs)
{
	struct row_key k;
	uint32_t i;

	k.host = ht_strs_find(&t->strs, host, NULL);
	k.fs = ht_strs_find(&t->strs, fs, NULL);
	if (k.host == NULL || k.fs == NULL)
		return NULL;
	i = hindex_find(&t->index, hindex_hash_pair(k.host, k.fs), row_match, t,
	    &k);
	return i == HINDEX_NONE ? NULL : &t->rows[i];
}

size_t
hosttotals_refused(const struct hosttotals *t)
{
	return t->nrefused;
}

void
hosttotals_each_mark(const struct hosttotals *t, hosttotals_mark_fn fn,
    void *arg)
{
	size_t i;

	for (i = 0; i < t->nmarks; i++)
		fn(arg, t->marks[i].sender, t->marks[i].batch);
}
