/* SPDX-License-Identifier: BSD-2-Clause */
/* Export stats counters -> the six numbers lharvestd reports. */
#include <stdbool.h>
#include <string.h>

#include "iocount.h"
#include "statsparse.h"

static bool
name_in(const char *name, const char *const *set)
{
	for (; *set != NULL; set++) {
		if (strcmp(name, *set) == 0)
			return true;
	}
	return false;
}

/* Lines an OST prints for the same bulk RPCs as read_bytes/write_bytes
 * (read/write: latency since 2.14; preprw/commitrw: obd ops <= 2.11),
 * and ping, which is keep-alive traffic, not work. */
static const char *const ost_not_ops[] = {"ping", "read_bytes", "write_bytes",
    "read", "write", "preprw", "commitrw", NULL};

/* rename counts every rename; these lines only say which kind it was. */
static const char *const mdt_not_ops[] = {"ping", "read_bytes", "write_bytes",
    "read", "write", "samedir_rename", "crossdir_rename",
    "parallel_rename_file", "parallel_rename_dir", "rename_trylocks", NULL};

void
iocount_from_stats(struct iocount *ret, const struct lstats *st,
    enum lh_target_kind kind)
{
	const char *const *skip =
	    kind == LH_TARGET_OST ? ost_not_ops : mdt_not_ops;
	struct iocount c;
	uint64_t ops = 0;
	unsigned i;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < st->ncounters; i++) {
		const struct lstats_counter *k = &st->counters[i];
		uint64_t count, sum;

		if ((k->flags & LSTATS_F_DUP) != 0)
			continue;
		count = (k->neg & LSTATS_NEG_COUNT) != 0 ? 0 : k->count;
		sum = (k->flags & LSTATS_F_MINMAXSUM) == 0 ||
		        (k->neg & LSTATS_NEG_SUM) != 0 ?
		    0 :
		    k->sum;
		if (strcmp(k->name, "read_bytes") == 0) {
			c.read_bytes = sum;
			c.read_ops = count;
		} else if (strcmp(k->name, "write_bytes") == 0) {
			c.write_bytes = sum;
			c.write_ops = count;
		} else if (!name_in(k->name, skip)) {
			ops += count;
		}
	}
	if (kind == LH_TARGET_OST)
		c.oss_ops = ops + c.read_ops + c.write_ops;
	else
		c.mds_ops = ops;
	*ret = c;
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
