/* SPDX-License-Identifier: BSD-2-Clause */
/* Export stats counters -> the six numbers lharvestd reports. */
#include <stdbool.h>
#include <string.h>

#include "iocount.h"
#include "statsparse.h"

/* How a counter line counts. */
enum io_role {
	IO_OPS = 0,  /* in oss_ops or mds_ops */
	IO_READ,     /* read_bytes */
	IO_WRITE,    /* write_bytes */
	IO_NONE,     /* in neither */
	IO_NONE_OST, /* in mds_ops only */
	IO_NONE_MDT, /* in oss_ops only */
};

#define NAME_IS(k, lit)                                                        \
	((k)->name_len == sizeof(lit) - 1 &&                                   \
	    memcmp((k)->name, (lit), sizeof(lit) - 1) == 0)

/*
 * The lines that are not ops.  On both kinds: ping, which is keep-alive
 * traffic, not work, and read/write (latency since 2.14), printed for the
 * same bulk RPCs as read_bytes/write_bytes.  On OSTs preprw/commitrw (obd
 * ops <= 2.11), the same RPCs again.  On MDTs the lines that only say
 * which kind of rename it was: rename counts every rename.  Names are
 * told apart by length first, which needs no strlen.
 */
static enum io_role
io_role(const struct lstats_counter *k)
{
	switch (k->name_len) {
	case 4:
		return NAME_IS(k, "ping") || NAME_IS(k, "read") ? IO_NONE :
		                                                  IO_OPS;
	case 5:
		return NAME_IS(k, "write") ? IO_NONE : IO_OPS;
	case 6:
		return NAME_IS(k, "preprw") ? IO_NONE_OST : IO_OPS;
	case 8:
		return NAME_IS(k, "commitrw") ? IO_NONE_OST : IO_OPS;
	case 10:
		return NAME_IS(k, "read_bytes") ? IO_READ : IO_OPS;
	case 11:
		return NAME_IS(k, "write_bytes") ? IO_WRITE : IO_OPS;
	case 14:
		return NAME_IS(k, "samedir_rename") ? IO_NONE_MDT : IO_OPS;
	case 15:
		return NAME_IS(k, "crossdir_rename") ||
		        NAME_IS(k, "rename_trylocks") ?
		    IO_NONE_MDT :
		    IO_OPS;
	case 19:
		return NAME_IS(k, "parallel_rename_dir") ? IO_NONE_MDT : IO_OPS;
	case 20:
		return NAME_IS(k, "parallel_rename_file") ? IO_NONE_MDT :
		                                            IO_OPS;
	default:
		return IO_OPS;
	}
}

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
iocount_from_stats(struct iocount *ret, const struct lstats *st,
    enum lh_target_kind kind)
{
	enum io_role not_here =
	    kind == LH_TARGET_OST ? IO_NONE_OST : IO_NONE_MDT;
	struct iocount c;
	uint64_t ops = 0;
	unsigned i;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < st->ncounters; i++) {
		const struct lstats_counter *k = &st->counters[i];
		enum io_role role;
		uint64_t count;

		if ((k->flags & LSTATS_F_DUP) != 0)
			continue;
		count = (k->neg & LSTATS_NEG_COUNT) != 0 ? 0 : k->count;
		role = io_role(k);
		if (role == IO_READ) {
			c.read_bytes = bytes_of(k);
			c.read_ops = count;
		} else if (role == IO_WRITE) {
			c.write_bytes = bytes_of(k);
			c.write_ops = count;
		} else if (role != IO_NONE && role != not_here) {
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
