/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A hash index over an array the caller owns: open addressing with linear
 * probing, slots holding array positions.  The index stores no keys; the
 * caller says how to hash an element and whether one matches a key, so one
 * index serves tables of any shape (the gatherer's exports and clients,
 * the outbox's records).  Elements are never removed one by one: a table
 * that drops elements compacts its array and rebuilds the index.
 */
#ifndef LH_HINDEX_H
#define LH_HINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HINDEX_NONE UINT32_MAX

/* The hash of element idx of the caller's array. */
typedef uint64_t (*hindex_hash_fn)(const void *ctx, uint32_t idx);
/* True when element idx has the given key. */
typedef bool (*hindex_match_fn)(const void *ctx, uint32_t idx, const void *key);

struct hindex {
	uint32_t *slots; /* HINDEX_NONE or an array position */
	size_t cap;      /* a power of two, or 0 */
	size_t n;        /* positions indexed */
};

void hindex_init(struct hindex *h);
void hindex_free(struct hindex *h);

/* Forget every position, keep the storage. */
void hindex_clear(struct hindex *h);

/* The position of the element with key, or HINDEX_NONE. */
uint32_t hindex_find(const struct hindex *h, uint64_t hash,
    hindex_match_fn match, const void *ctx, const void *key);

/*
 * Index position idx, the element just appended (idx is the number of
 * positions indexed so far), whose hash is hash.
 * Grows the index when it is half full, rehashing with hash_of.  Returns
 * 0 or -ENOMEM (the index is then unchanged).
 */
int hindex_add(struct hindex *h, uint64_t hash, uint32_t idx,
    hindex_hash_fn hash_of, const void *ctx);

/* Index positions 0..n-1 afresh (after the array was compacted).
 * Returns 0 or -ENOMEM (the index is then empty). */
int hindex_rebuild(struct hindex *h, size_t n, hindex_hash_fn hash_of,
    const void *ctx);

/* FNV-1a of a string, continuing from h (start with HINDEX_SEED). */
#define HINDEX_SEED 1469598103934665603ULL
uint64_t hindex_hash_str(uint64_t h, const char *s);

/* The hash of a key of two strings (filesystem and NID, host and
 * metric, ...): the tables of several modules use this one. */
uint64_t hindex_hash_pair(const char *a, const char *b);

#endif
