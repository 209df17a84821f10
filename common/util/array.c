/* SPDX-License-Identifier: BSD-2-Clause */
/* Arrays that grow by doubling (array.h). */
#include <stdint.h>
#include <stdlib.h>

#include "array.h"

void *
array_grow(void *p, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *v;

	if (n < *cap && p != NULL)
		return p;
	c = *cap == 0 ? 64 : *cap * 2;
	if (size == 0 || c > SIZE_MAX / size)
		return NULL;
	v = realloc(p, c * size);
	if (v != NULL)
		*cap = c;
	return v;
}
