/* SPDX-License-Identifier: BSD-2-Clause */
/* Arrays that grow by doubling, the one way every table here grows. */
#ifndef LH_ARRAY_H
#define LH_ARRAY_H

#include <stddef.h>

/*
 * p, an array of *cap elements of size bytes with n in use, grown when
 * full to hold one more (64 elements at first, then twice as many).
 * Returns the array to use from now on, or NULL (p and *cap unchanged)
 * when out of memory.
 */
void *array_grow(void *p, size_t *cap, size_t n, size_t size);

/*
 * As array_grow(), for a site that needs room for need elements at once
 * (a byte buffer taking a string, a table indexed by a number): grown,
 * when smaller, to array_capacity(*cap, need).  Returns the array to use
 * from now on, or NULL (p and *cap unchanged) when out of memory.
 */
void *array_reserve(void *p, size_t *cap, size_t need, size_t size);

/*
 * The capacity an array of cap elements grows to so that it holds need:
 * cap (64 when 0) doubled until it is enough, or need itself where
 * doubling would overflow.  For a site that bounds the result before
 * array_resize().
 */
size_t array_capacity(size_t cap, size_t need);

/*
 * Resize p to exactly newcap elements of size bytes, refusing a size
 * that overflows.  Returns the array to use from now on (*cap = newcap),
 * or NULL (p and *cap unchanged).
 */
void *array_resize(void *p, size_t *cap, size_t newcap, size_t size);

#endif
