/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-operation metadata counts of one MDT export: how many open, close,
 * getattr, ... requests a client made (docs/counters.md).  Each is the
 * samples field of the counter line of that name, on MDTs only; all of
 * them are part of mds_ops, so their sum never exceeds it.  A counter a
 * future Lustre adds still counts in mds_ops, just not here.
 *
 * These travel in an optional section of a SWEEP (docs/protocol.md 4.4)
 * and become the aggregator's optional <prefix>_mds_<op> metrics.
 */
#ifndef LH_MDOPS_H
#define LH_MDOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lstats;

enum mdops_op {
	MDOPS_OPEN = 0,
	MDOPS_CLOSE,
	MDOPS_MKNOD,
	MDOPS_LINK,
	MDOPS_UNLINK,
	MDOPS_MKDIR,
	MDOPS_RMDIR,
	MDOPS_RENAME,
	MDOPS_GETATTR,
	MDOPS_SETATTR,
	MDOPS_GETXATTR,
	MDOPS_SETXATTR,
	MDOPS_STATFS,
	MDOPS_SYNC,
	MDOPS_PUNCH,
	MDOPS_MIGRATE,
	MDOPS_FALLOCATE,
	MDOPS_N
};

struct mdops {
	uint64_t v[MDOPS_N];
};

/* The counter name of op ("open"), or NULL out of range. */
const char *mdops_name(unsigned op);

/* The op counted by a counter line of this name, or -1. */
int mdops_lookup(const char *name);

/* The same for the len bytes at name (no NUL needed). */
int mdops_lookup_n(const char *name, size_t len);

/* The counts of an MDT's parsed export stats file.  Lines printed twice
 * count at their first line; a count printed negative counts 0. */
void mdops_from_stats(struct mdops *ret, const struct lstats *st);

/* acc += v, wrapping modulo 2^64 like the counters. */
void mdops_add(struct mdops *acc, const struct mdops *v);

bool mdops_is_zero(const struct mdops *m);

#endif
