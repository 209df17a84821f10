/* SPDX-License-Identifier: BSD-2-Clause */
/* Packed metadata-op sums (opsarena.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "opsarena.h"

void
opsarena_init(struct opsarena *a)
{
	memset(a, 0, sizeof(*a));
}

void
opsarena_free(struct opsarena *a)
{
	free(a->b);
	opsarena_init(a);
}

void
opsarena_clear(struct opsarena *a)
{
	a->len = 0;
	a->live = 0;
}

int
opsarena_reserve_bytes(struct opsarena *a, size_t bytes)
{
	uint8_t *b;

	if (a->len > OPSARENA_MAX || bytes > OPSARENA_MAX - a->len)
		return -ENOMEM;
	b = array_reserve(a->b, &a->cap, a->len + bytes + OPSARENA_ENTRY_MAX,
	    1);
	if (b == NULL)
		return -ENOMEM;
	a->b = b;
	return 0;
}

int
opsarena_reserve(struct opsarena *a)
{
	return opsarena_reserve_bytes(a, 0);
}

static size_t
put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static size_t
get_varint(const uint8_t *p, uint64_t *ret)
{
	uint64_t v = 0;
	size_t n = 0;
	unsigned shift = 0;

	/* Only what put_varint() wrote is ever read here. */
	do {
		v |= (uint64_t)(p[n] & 0x7f) << shift;
		shift += 7;
	} while ((p[n++] & 0x80) != 0);
	*ret = v;
	return n;
}

/* v packed into out (OPSARENA_ENTRY_MAX bytes): its length. */
static size_t
pack(const struct mdops *v, uint8_t *out)
{
	uint64_t mask = 0;
	size_t n;
	unsigned i;

	for (i = 0; i < MDOPS_N; i++) {
		if (v->v[i] != 0)
			mask |= (uint64_t)1 << i;
	}
	n = put_varint(out, mask);
	for (i = 0; i < MDOPS_N; i++) {
		if (v->v[i] != 0)
			n += put_varint(out + n, v->v[i]);
	}
	return n;
}

/* The sum packed at p, into ret: its length. */
static size_t
unpack(const uint8_t *p, struct mdops *ret)
{
	uint64_t mask;
	size_t n;
	unsigned i;

	n = get_varint(p, &mask);
	for (i = 0; i < MDOPS_N; i++) {
		ret->v[i] = 0;
		if ((mask >> i & 1u) != 0)
			n += get_varint(p + n, &ret->v[i]);
	}
	return n;
}

uint32_t
opsarena_put(struct opsarena *a, const struct mdops *v)
{
	uint32_t ref = (uint32_t)a->len;
	size_t n = pack(v, a->b + a->len);

	a->len += n;
	a->live += n;
	return ref;
}

void
opsarena_add(struct opsarena *a, uint32_t *ref, const struct mdops *v)
{
	uint8_t packed[OPSARENA_ENTRY_MAX];
	struct mdops sum;
	size_t old, n;

	if (*ref == OPSARENA_NONE) {
		*ref = opsarena_put(a, v);
		return;
	}
	old = unpack(a->b + *ref, &sum);
	mdops_add(&sum, v);
	n = pack(&sum, packed);
	if (n <= old) {
		/* A shorter form leaves dead bytes behind it, never read:
		 * unpack() stops at its own end. */
		memcpy(a->b + *ref, packed, n);
		a->live -= old - n;
		return;
	}
	*ref = (uint32_t)a->len;
	memcpy(a->b + a->len, packed, n);
	a->len += n;
	a->live += n - old;
}

void
opsarena_get(const struct opsarena *a, uint32_t ref, struct mdops *ret)
{
	(void)unpack(a->b + ref, ret);
}
