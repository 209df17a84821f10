/* SPDX-License-Identifier: BSD-2-Clause */
/* Arrays that grow by doubling (array.h). */
#include <stdint.h>
#include <stdlib.h>

#include "array.h"

size_t
array_capacity(size_t cap, size_t need)
{
	size_t c = cap == 0 ? 64 : cap;

	while (c < need) {
		if (c > SIZE_MAX / 2)
			return need;
		c *= 2;
	}
	return c;
}

void *
array_resize(void *p, size_t *cap, size_t newcap, size_t size)
{
	void *v;

	if (size == 0 || newcap == 0 || newcap > SIZE_MAX / size)
		return NULL;
	v = realloc(p, newcap * size);
	if (v != NULL)
		*cap = newcap;
	return v;
}

void *
array_reserve(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap && p != NULL)
		return p;
	return array_resize(p, cap, array_capacity(*cap, need), size);
}

void *
array_grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap && p != NULL)
		return p;
	/* One step every time: a full array (or a lost one) doubles. */
	if (*cap > SIZE_MAX / 2)
		return NULL;
	return array_resize(p, cap, *cap == 0 ? 64 : *cap * 2, size);
}
