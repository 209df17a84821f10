/* SPDX-License-Identifier: BSD-2-Clause */
/* Open-addressing index over a caller-owned array (see hindex.h). */
#include <errno.h>
#include <stdlib.h>

#include "hindex.h"

#define HINDEX_MIN_CAP 64

void
hindex_init(struct hindex *h)
{
	h->slots = NULL;
	h->cap = 0;
	h->n = 0;
}

void
hindex_free(struct hindex *h)
{
	free(h->slots);
	hindex_init(h);
}

void
hindex_clear(struct hindex *h)
{
	size_t i;

	for (i = 0; i < h->cap; i++)
		h->slots[i] = HINDEX_NONE;
	h->n = 0;
}

uint64_t
hindex_hash_str(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	/* A separator, so that ("ab", "c") and ("a", "bc") differ. */
	return (h ^ 0xffu) * 1099511628211ULL;
}

uint64_t
hindex_hash_pair(const char *a, const char *b)
{
	return hindex_hash_str(hindex_hash_str(HINDEX_SEED, a), b);
}

/* Spread the hash's high bits into the low ones used as the slot. */
static size_t
slot_of(uint64_t hash, size_t cap)
{
	hash ^= hash >> 29;
	return (size_t)(hash & (cap - 1));
}

uint32_t
hindex_find(const struct hindex *h, uint64_t hash, hindex_match_fn match,
    const void *ctx, const void *key)
{
	size_t s;

	if (h->cap == 0)
		return HINDEX_NONE;
	for (s = slot_of(hash, h->cap); h->slots[s] != HINDEX_NONE;
	     s = (s + 1) & (h->cap - 1)) {
		if (match(ctx, h->slots[s], key))
			return h->slots[s];
	}
	return HINDEX_NONE;
}

static void
place(uint32_t *slots, size_t cap, uint64_t hash, uint32_t idx)
{
	size_t s = slot_of(hash, cap);

	while (slots[s] != HINDEX_NONE)
		s = (s + 1) & (cap - 1);
	slots[s] = idx;
}

static int
resize(struct hindex *h, size_t cap, size_t n, hindex_hash_fn hash_of,
    const void *ctx)
{
	uint32_t *slots;
	size_t i;

	slots = malloc(cap * sizeof(*slots));
	if (slots == NULL)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		slots[i] = HINDEX_NONE;
	for (i = 0; i < n; i++)
		place(slots, cap, hash_of(ctx, (uint32_t)i), (uint32_t)i);
	free(h->slots);
	h->slots = slots;
	h->cap = cap;
	h->n = n;
	return 0;
}

int
hindex_add(struct hindex *h, uint64_t hash, uint32_t idx,
    hindex_hash_fn hash_of, const void *ctx)
{
	if ((h->n + 1) * 2 > h->cap) {
		size_t cap = h->cap == 0 ? HINDEX_MIN_CAP : h->cap * 2;
		int rc;

		/* The positions indexed so far are 0..n-1: the tables using
		 * this index append and compact, never leave holes. */
		rc = resize(h, cap, h->n, hash_of, ctx);
		if (rc < 0)
			return rc;
	}
	place(h->slots, h->cap, hash, idx);
	h->n++;
	return 0;
}

int
hindex_rebuild(struct hindex *h, size_t n, hindex_hash_fn hash_of,
    const void *ctx)
{
	size_t cap = HINDEX_MIN_CAP;
	int rc;

	while (cap < n * 2 + 2)
		cap *= 2;
	rc = resize(h, cap, n, hash_of, ctx);
	if (rc < 0)
		hindex_free(h);
	return rc;
}
