/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Strings kept end to end in one growing buffer, each named by its offset:
 * a table of many short names (client NIDs) then holds 4 bytes per entry
 * instead of a fixed NID_STR_MAX array, and one allocation instead of
 * one per name.  Offsets stay valid as the pool grows; pointers do not.
 */
#ifndef LH_STRPOOL_H
#define LH_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

struct strpool {
	char *v;
	size_t n, cap; /* bytes used, allocated */
};

void strpool_init(struct strpool *p);
void strpool_free(struct strpool *p);

/* Forget every string, keep the storage. */
void strpool_clear(struct strpool *p);

/* A copy of s: its offset into *ret.  Returns 0 or -ENOMEM (more than
 * 4 GiB, or no memory). */
int strpool_add(struct strpool *p, const char *s, uint32_t *ret);

/* Take back the strings from off on (the last adds). */
void strpool_truncate(struct strpool *p, uint32_t off);

static inline const char *
strpool_get(const struct strpool *p, uint32_t off)
{
	return p->v + off;
}

#endif
