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

#endif
