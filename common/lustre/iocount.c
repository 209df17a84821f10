/* SPDX-License-Identifier: BSD-2-Clause */
/* Export stats counters -> the six numbers lharvestd reports. */
#include <stdbool.h>
#include <string.h>

#include "iocount.h"
#include "statsparse.h"

/* The bytes of a read_bytes/write_bytes line: its sum. */
static uint64_t
bytes_of(const struct lstats_counter *k)
{
	if ((k->flags & LSTATS_F_MINMAXSUM) == 0 ||
	    (k->neg & LSTATS_NEG_SUM) != 0)
		return 0;
	return k->sum;
}

void
iocount_acc_init(struct iocount_acc *a, enum lh_target_kind kind)
{
	memset(a, 0, sizeof(*a));
	a->not_here =
	    kind == LH_TARGET_OST ? IOCOUNT_NONE_OST : IOCOUNT_NONE_MDT;
}

void
iocount_acc_end(const struct iocount_acc *a, struct iocount *ret)
{
	*ret = a->c;
	/* An OST's lines not counted are IOCOUNT_NONE_OST (init). */
	if (a->not_here == IOCOUNT_NONE_OST)
		ret->oss_ops = a->ops + a->c.read_ops + a->c.write_ops;
	else
		ret->mds_ops = a->ops;
}

void
iocount_from_stats(struct iocount *ret, const struct lstats *st,
    enum lh_target_kind kind)
{
	struct iocount_acc a;
	unsigned i;

	iocount_acc_init(&a, kind);
	for (i = 0; i < st->ncounters; i++) {
		const struct lstats_counter *k = &st->counters[i];

		if ((k->flags & LSTATS_F_DUP) != 0)
			continue;
		iocount_acc_line(&a, iocount_role(k->name, k->name_len),
		    (k->neg & LSTATS_NEG_COUNT) != 0 ? 0 : k->count,
		    bytes_of(k));
	}
	iocount_acc_end(&a, ret);
}

void
iocount_add(struct iocount *acc, const struct iocount *v)
{
	acc->read_bytes += v->read_bytes;
	acc->write_bytes += v->write_bytes;
	acc->read_ops += v->read_ops;
	acc->write_ops += v->write_ops;
	acc->oss_ops += v->oss_ops;
	acc->mds_ops += v->mds_ops;
}

void
iocount_to_array(const struct iocount *c, uint64_t v[IOCOUNT_N])
{
	v[0] = c->read_bytes;
	v[1] = c->write_bytes;
	v[2] = c->read_ops;
	v[3] = c->write_ops;
	v[4] = c->oss_ops;
	v[5] = c->mds_ops;
}

void
iocount_from_array(struct iocount *c, const uint64_t v[IOCOUNT_N])
{
	c->read_bytes = v[0];
	c->write_bytes = v[1];
	c->read_ops = v[2];
	c->write_ops = v[3];
	c->oss_ops = v[4];
	c->mds_ops = v[5];
}

bool
iocount_is_zero(const struct iocount *c)
{
	return (c->read_bytes | c->write_bytes | c->read_ops | c->write_ops |
	           c->oss_ops | c->mds_ops) == 0;
}
