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
#include <stdint.h>

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

#define IOCOUNT_N 6 /* the fields below, in this order everywhere */

/* The fields as an array (read_bytes first), and back. */
void iocount_to_array(const struct iocount *c, uint64_t v[IOCOUNT_N]);
void iocount_from_array(struct iocount *c, const uint64_t v[IOCOUNT_N]);

/* True when every field is 0. */
bool iocount_is_zero(const struct iocount *c);

/* acc += v, each field wrapping modulo 2^64 like the counters do. */
void iocount_add(struct iocount *acc, const struct iocount *v);

#endif
