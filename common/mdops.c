/* SPDX-License-Identifier: BSD-2-Clause */
/* MDT export stats -> per-operation metadata counts. */
#include <stddef.h>
#include <string.h>

#include "mdops.h"
#include "statsparse.h"

/* Lustre's own counter names, in enum mdops_op order. */
static const char *const names[MDOPS_N] = {"open", "close", "mknod", "link",
    "unlink", "mkdir", "rmdir", "rename", "getattr", "setattr", "getxattr",
    "setxattr", "statfs", "sync", "punch", "migrate", "fallocate"};

const char *
mdops_name(unsigned op)
{
	return op < MDOPS_N ? names[op] : NULL;
}

int
mdops_lookup(const char *name)
{
	unsigned i;

	for (i = 0; i < MDOPS_N; i++) {
		if (strcmp(name, names[i]) == 0)
			return (int)i;
	}
	return -1;
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
		op = mdops_lookup(k->name);
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
