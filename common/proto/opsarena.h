/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A batch's metadata-op sums, packed (outbox.h).  An MDS sends 17 op
 * counts per client; held as a struct mdops they take 136 bytes each, and
 * with 10,000 busy clients that was the largest part of a gatherer's peak
 * memory (docs/performance.md).  Here each sum is a few bytes: a varint
 * mask of the ops that are not zero, then a varint of each of those.
 *
 * A sum is named by its offset (a ref).  Adding to a sum whose packed
 * form grows writes it again at the end: the old bytes are dead, counted
 * in opsarena_dead(), until the owner packs the live sums afresh (the
 * owner knows its refs; opsarena_put() into a new arena).  Pure.
 */
#ifndef LH_OPSARENA_H
#define LH_OPSARENA_H

#include <stddef.h>
#include <stdint.h>

#include "mdops.h"

#define OPSARENA_NONE      UINT32_MAX /* a ref: no sum */
/* The largest packed sum: a 3-byte mask, then 17 10-byte varints. */
#define OPSARENA_ENTRY_MAX (3 + MDOPS_N * 10)
/* Refs are 32-bit offsets. */
#define OPSARENA_MAX       ((size_t)UINT32_MAX - OPSARENA_ENTRY_MAX)

struct opsarena {
	uint8_t *b;
	size_t len, cap;
	size_t live; /* bytes of the sums in use */
};

void opsarena_init(struct opsarena *a);
void opsarena_free(struct opsarena *a);
/* Forget every sum, keep the storage. */
void opsarena_clear(struct opsarena *a);

/* Room for one more sum, so that the next opsarena_add() or
 * opsarena_put() cannot fail.  Returns 0 or -ENOMEM. */
int opsarena_reserve(struct opsarena *a);

/* Room for sums of bytes in all, and one more: for copying the live sums
 * of another arena (its live bytes) into this one.  Returns 0 or
 * -ENOMEM. */
int opsarena_reserve_bytes(struct opsarena *a, size_t bytes);

/* A new sum of v (room reserved): its ref. */
uint32_t opsarena_put(struct opsarena *a, const struct mdops *v);

/* *ref (OPSARENA_NONE: none yet) += v, in place when it fits, else
 * written again at the end with *ref moved there (room reserved). */
void opsarena_add(struct opsarena *a, uint32_t *ref, const struct mdops *v);

/* The sum at ref, into ret. */
void opsarena_get(const struct opsarena *a, uint32_t ref, struct mdops *ret);

/* Bytes no sum uses any more. */
static inline size_t
opsarena_dead(const struct opsarena *a)
{
	return a->len - a->live;
}

#endif
