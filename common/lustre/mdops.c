/* SPDX-License-Identifier: BSD-2-Clause */
/* MDT export stats -> per-operation metadata counts. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mdops.h"
#include "statsparse.h"

/* Lustre's own counter names, in enum mdops_op order, with their lengths
 * (tests/unit/test_mdops.c checks them). */
static const struct {
	const char *s;
	size_t len;
} names[MDOPS_N] = {{"open", 4}, {"close", 5}, {"mknod", 5}, {"link", 4},
    {"unlink", 6}, {"mkdir", 5}, {"rmdir", 5}, {"rename", 6}, {"getattr", 7},
    {"setattr", 7}, {"getxattr", 8}, {"setxattr", 8}, {"statfs", 6},
    {"sync", 4}, {"punch", 5}, {"migrate", 7}, {"fallocate", 9}};

#define BIT(op) (1u << (op))

/* The ops whose name starts with a letter, by the letter's low 5 bits: a
 * name is compared with those only (at most four), length first. */
static const uint32_t by_initial[32] = {
    ['c' & 31] = BIT(MDOPS_CLOSE),
    ['f' & 31] = BIT(MDOPS_FALLOCATE),
    ['g' & 31] = BIT(MDOPS_GETATTR) | BIT(MDOPS_GETXATTR),
    ['l' & 31] = BIT(MDOPS_LINK),
    ['m' & 31] = BIT(MDOPS_MKNOD) | BIT(MDOPS_MKDIR) | BIT(MDOPS_MIGRATE),
    ['o' & 31] = BIT(MDOPS_OPEN),
    ['p' & 31] = BIT(MDOPS_PUNCH),
    ['r' & 31] = BIT(MDOPS_RMDIR) | BIT(MDOPS_RENAME),
    ['s' & 31] = BIT(MDOPS_SETATTR) | BIT(MDOPS_SETXATTR) | BIT(MDOPS_STATFS) |
        BIT(MDOPS_SYNC),
    ['u' & 31] = BIT(MDOPS_UNLINK),
};

const char *
mdops_name(unsigned op)
{
	return op < MDOPS_N ? names[op].s : NULL;
}

int
mdops_lookup_n(const char *name, size_t len)
{
	uint32_t m = len > 0 ? by_initial[(unsigned char)name[0] & 31] : 0;

	while (m != 0) {
		unsigned op = (unsigned)__builtin_ctz(m);

		if (names[op].len == len && memcmp(name, names[op].s, len) == 0)
			return (int)op;
		m &= m - 1;
	}
	return -1;
}

int
mdops_lookup(const char *name)
{
	return mdops_lookup_n(name, strlen(name));
}

void
mdops_from_stats(struct mdops *ret, const struct lstats *st)
{
	unsigned i;

	memset(ret, 0, sizeof(*ret));
	for (i = 0; i < st->ncounters; i++) {
		const struct lstats_counter *k = &st->counters[i];
		int op;

		if ((k->flags & LSTATS_F_DUP) != 0 ||
		    (k->neg & LSTATS_NEG_COUNT) != 0)
			continue;
		op = mdops_lookup_n(k->name, k->name_len);
		if (op >= 0)
			ret->v[op] = k->count;
	}
}

void
mdops_add(struct mdops *acc, const struct mdops *v)
{
	unsigned i;

	for (i = 0; i < MDOPS_N; i++)
		acc->v[i] += v->v[i];
}

bool
mdops_is_zero(const struct mdops *m)
{
	uint64_t any = 0;
	unsigned i;

	for (i = 0; i < MDOPS_N; i++)
		any |= m->v[i];
	return any == 0;
}
