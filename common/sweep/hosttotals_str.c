/* SPDX-License-Identifier: BSD-2-Clause */
/* Host and filesystem names kept once, never moved (hosttotals_int.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "hosttotals_int.h"

/* Bytes per block: about 4,000 host names of 16 bytes. */
#define BLOCK_SIZE ((size_t)64 * 1024)

void
ht_strs_init(struct ht_strs *s)
{
	memset(s, 0, sizeof(*s));
	hindex_init(&s->index);
}

void
ht_strs_free(struct ht_strs *s)
{
	size_t i;

	for (i = 0; i < s->nblocks; i++)
		free(s->blocks[i]);
	free(s->blocks);
	free(s->v);
	hindex_free(&s->index);
	ht_strs_init(s);
}

static uint64_t
str_hash(const void *ctx, uint32_t idx)
{
	const struct ht_strs *s = ctx;

	return hindex_hash_str(HINDEX_SEED, s->v[idx]);
}

static bool
str_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct ht_strs *s = ctx;

	return strcmp(s->v[idx], key) == 0;
}

const char *
ht_strs_find(const struct ht_strs *s, const char *str, uint32_t *ret_idx)
{
	uint32_t i = hindex_find(&s->index, hindex_hash_str(HINDEX_SEED, str),
	    str_match, s, str);

	if (i == HINDEX_NONE)
		return NULL;
	if (ret_idx != NULL)
		*ret_idx = i;
	return s->v[i];
}

/* Room for len bytes at a stable address, or NULL. */
static char *
strs_room(struct ht_strs *s, size_t len)
{
	size_t size = len > BLOCK_SIZE ? len : BLOCK_SIZE;
	char **v, *b;

	if (s->nblocks > 0 && s->used + len <= BLOCK_SIZE) {
		b = s->blocks[s->nblocks - 1] + s->used;
		s->used += len;
		return b;
	}
	if (s->nblocks == s->blockcap) {
		v = array_grow(s->blocks, &s->blockcap, s->nblocks, sizeof(*v));
		if (v == NULL)
			return NULL;
		s->blocks = v;
	}
	b = malloc(size);
	if (b == NULL)
		return NULL;
	s->blocks[s->nblocks++] = b;
	s->used = len;
	return b;
}

const char *
ht_strs_add(struct ht_strs *s, const char *str)
{
	const char *found = ht_strs_find(s, str, NULL);
	size_t len = strlen(str) + 1;
	const char **v;
	char *p;

	if (found != NULL)
		return found;
	if (s->n >= UINT32_MAX - 1)
		return NULL;
	if (s->n == s->cap) {
		v = array_grow(s->v, &s->cap, s->n, sizeof(*v));
		if (v == NULL)
			return NULL;
		s->v = v;
	}
	p = strs_room(s, len);
	if (p == NULL)
		return NULL;
	memcpy(p, str, len);
	s->v[s->n] = p;
	if (hindex_add(&s->index, hindex_hash_str(HINDEX_SEED, p),
	        (uint32_t)s->n, str_hash, s) < 0)
		return NULL; /* the bytes stay in the block, unused */
	s->n++;
	return p;
}
