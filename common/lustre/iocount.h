/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What lharvestd counts, from one parsed export stats file.  The meaning is
 * the same on every Lustre version (docs/counters.md):
 *
 *  read_bytes/write_bytes  sum field of the read_bytes/write_bytes lines,
 *                          on OSTs and MDTs (Data-on-MDT);
 *  read_ops/write_ops      sample counts of those lines (bulk RPCs);
 *  oss_ops (OST)           samples of every counter but ping, read_bytes,
 *                          write_bytes and their duplicates read, write,
 *                          preprw, commitrw; plus read_ops + write_ops;
 *  mds_ops (MDT)           samples of every counter but ping, read_bytes,
 *                          write_bytes, read, write and the lines that only
 *                          break rename down (samedir_rename,
 *                          crossdir_rename, parallel_rename_file,
 *                          parallel_rename_dir, rename_trylocks).
 *
 * A name printed twice (2.5-2.11 OSTs) counts once, at its first line.
 */
#ifndef LH_IOCOUNT_H
#define LH_IOCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct lstats;

enum lh_target_kind {
	LH_TARGET_OST = 0,
	LH_TARGET_MDT,
};

struct iocount {
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t read_ops;
	uint64_t write_ops;
	uint64_t oss_ops;
	uint64_t mds_ops;
};

/* The counters of st, read from a target of the given kind.  Counters
 * printed negative (impossible, but s64 is printed with %lld) count 0. */
void iocount_from_stats(struct iocount *ret, const struct lstats *st,
    enum lh_target_kind kind);

/* How a counter line counts, by its name. */
enum iocount_role {
	IOCOUNT_OPS = 0,  /* in oss_ops or mds_ops */
	IOCOUNT_READ,     /* read_bytes */
	IOCOUNT_WRITE,    /* write_bytes */
	IOCOUNT_NONE,     /* in neither */
	IOCOUNT_NONE_OST, /* in mds_ops only */
	IOCOUNT_NONE_MDT, /* in oss_ops only */
};

#define IOCOUNT_IS(lit) (memcmp(name, (lit), sizeof(lit) - 1) == 0)

/*
 * The lines that are not ops.  On both kinds: ping, which is keep-alive
 * traffic, not work, and read/write (latency since 2.14), printed for the
 * same bulk RPCs as read_bytes/write_bytes.  On OSTs preprw/commitrw (obd
 * ops <= 2.11), the same RPCs again.  On MDTs the lines that only say
 * which kind of rename it was: rename counts every rename.  Names are
 * told apart by length first, which needs no strlen.
 */
static inline enum iocount_role
iocount_role(const char *name, size_t len)
{
	switch (len) {
	case 4:
		return IOCOUNT_IS("ping") || IOCOUNT_IS("read") ? IOCOUNT_NONE :
		                                                  IOCOUNT_OPS;
	case 5:
		return IOCOUNT_IS("write") ? IOCOUNT_NONE : IOCOUNT_OPS;
	case 6:
		return IOCOUNT_IS("preprw") ? IOCOUNT_NONE_OST : IOCOUNT_OPS;
	case 8:
		return IOCOUNT_IS("commitrw") ? IOCOUNT_NONE_OST : IOCOUNT_OPS;
	case 10:
		return IOCOUNT_IS("read_bytes") ? IOCOUNT_READ : IOCOUNT_OPS;
	case 11:
		return IOCOUNT_IS("write_bytes") ? IOCOUNT_WRITE : IOCOUNT_OPS;
	case 14:
		return IOCOUNT_IS("samedir_rename") ? IOCOUNT_NONE_MDT :
		                                      IOCOUNT_OPS;
	case 15:
		return IOCOUNT_IS("crossdir_rename") ||
		        IOCOUNT_IS("rename_trylocks") ?
		    IOCOUNT_NONE_MDT :
		    IOCOUNT_OPS;
	case 19:
		return IOCOUNT_IS("parallel_rename_dir") ? IOCOUNT_NONE_MDT :
		                                           IOCOUNT_OPS;
	case 20:
		return IOCOUNT_IS("parallel_rename_file") ? IOCOUNT_NONE_MDT :
		                                            IOCOUNT_OPS;
	default:
		return IOCOUNT_OPS;
	}
}

#undef IOCOUNT_IS

/*
 * iocount_from_stats() a line at a time, for a reader that does not keep
 * the lines (the export digest, statsdigest.h): iocount_acc_init(), then
 * iocount_acc_line() for each counter line but a repeated name's, then
 * iocount_acc_end().
 */
struct iocount_acc {
	struct iocount c;
	uint64_t ops;
	enum iocount_role not_here; /* the role of lines not counted here */
};

void iocount_acc_init(struct iocount_acc *a, enum lh_target_kind kind);

/* A line of this role: its count (0 if printed negative) and its bytes
 * (the sum of a read_bytes/write_bytes line; 0 without one, or negative). */
static inline void
iocount_acc_line(struct iocount_acc *a, enum iocount_role role, uint64_t count,
    uint64_t bytes)
{
	if (role == IOCOUNT_READ) {
		a->c.read_bytes = bytes;
		a->c.read_ops = count;
	} else if (role == IOCOUNT_WRITE) {
		a->c.write_bytes = bytes;
		a->c.write_ops = count;
	} else if (role != IOCOUNT_NONE && role != a->not_here) {
		a->ops += count;
	}
}

/* The counters of the lines added, for the kind given to init. */
void iocount_acc_end(const struct iocount_acc *a, struct iocount *ret);

#define IOCOUNT_N 6 /* the fields below, in this order everywhere */

/* The fields as an array (read_bytes first), and back. */
void iocount_to_array(const struct iocount *c, uint64_t v[IOCOUNT_N]);
void iocount_from_array(struct iocount *c, const uint64_t v[IOCOUNT_N]);

/* True when every field is 0. */
bool iocount_is_zero(const struct iocount *c);

/* acc += v, each field wrapping modulo 2^64 like the counters do. */
void iocount_add(struct iocount *acc, const struct iocount *v);

#endif
