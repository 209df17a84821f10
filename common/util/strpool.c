/* SPDX-License-Identifier: BSD-2-Clause */
/* Strings end to end, named by offset (strpool.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "strpool.h"

void
strpool_init(struct strpool *p)
{
	memset(p, 0, sizeof(*p));
}

void
strpool_free(struct strpool *p)
{
	free(p->v);
	strpool_init(p);
}

void
strpool_clear(struct strpool *p)
{
	p->n = 0;
}

int
strpool_add(struct strpool *p, const char *s, uint32_t *ret)
{
	size_t len = strlen(s) + 1;

	if (p->n + len > p->cap) {
		/* A page at first; a 64-byte array doubles to it. */
		size_t need = p->n + len < 4096 ? 4096 : p->n + len;
		char *v;

		/* Offsets are 32 bits: no pool of 4 GiB, which is where
		 * doubling goes past 2 GiB. */
		if (array_capacity(p->cap, need) > UINT32_MAX)
			return -ENOMEM;
		v = array_reserve(p->v, &p->cap, need, 1);
		if (v == NULL)
			return -ENOMEM;
		p->v = v;
	}
	memcpy(p->v + p->n, s, len);
	*ret = (uint32_t)p->n;
	p->n += len;
	return 0;
}

void
strpool_truncate(struct strpool *p, uint32_t off)
{
	if (off < p->n)
		p->n = off;
}
