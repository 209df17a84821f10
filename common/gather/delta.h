/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-export counter deltas that survive resets.  Lustre zeroes an
 * export's counters when someone writes exports/clear or the stats file,
 * and when a target fails over; reconnects do not reset them.  A counter
 * that goes down is therefore a new epoch, never a wrap: the delta is what
 * was counted since the reset.  Deltas are never negative and never
 * larger than what Lustre counted.
 */
#ifndef LH_DELTA_H
#define LH_DELTA_H

#include <stdbool.h>
#include <stdint.h>

#include "iocount.h"

struct lstats;
struct lstats_time;

/* What one read of an export showed. */
struct delta_sample {
	struct iocount c;  /* cumulative, as counted by iocount.c */
	uint64_t samples;  /* all sample counts of the file, summed */
	uint64_t snap_ns;  /* the file's snapshot_time, 0 if absent */
	uint64_t start_ns; /* its start_time; 0 if absent or 0 (2.15.0) */
};

enum delta_kind {
	DELTA_BASELINE, /* first sight at the very first sweep: no delta */
	DELTA_NEW,      /* appeared later: started from zero, all counts */
	DELTA_NORMAL,   /* same epoch: cur - prev */
	DELTA_RESET,    /* new epoch (counter went down, start_time moved) */
};

/* Fill s from a parsed stats file and its counters. */
void delta_sample_from(struct delta_sample *s, const struct lstats *st,
    const struct iocount *c);

/* The same from a file's parts (an export digest, statsdigest.h): its
 * counters, its samples total, and its header times. */
void delta_sample_make(struct delta_sample *s, const struct iocount *c,
    uint64_t samples, const struct lstats_time *snapshot,
    const struct lstats_time *start);

/*
 * The delta from prev (NULL: never seen) to cur.  first_sweep: a missing
 * prev is a baseline (the gatherer's first sweep with no saved state).
 * *ret_span_ns is the time the delta covers: the time between the two
 * files' snapshot_time, a reset included (what was counted before the
 * reset and after the previous read is lost by Lustre, and spreading what
 * is left over the whole window is what keeps a rate series free of
 * spikes).  It is 0 when the files do not tell: a new export (it appeared
 * some time since the previous sweep), no snapshot_time, or a clock that
 * went back; the caller then uses the time since its previous sweep.
 */
enum delta_kind
delta_compute(const struct delta_sample *prev, const struct delta_sample *cur,
    bool first_sweep, struct iocount *ret, uint64_t *ret_span_ns);

#endif
