/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sweep clock of the aggregator and relay roles: sweeps are labelled
 * by the wall clock but scheduled by durations (libevent's timers run on
 * the monotonic clock).  A step of the wall clock is one line, and the
 * open sweeps are relabelled by the step rounded to whole intervals
 * (issue 15, item 7).  The test hook of docs/reliability.md section 7
 * (LH_TEST_CLOCK_OFFSET_FILE: a file holding an offset in seconds added to
 * the wall clock, read at each use) is honoured here and only here.
 */
#ifndef LH_WALLCLOCK_H
#define LH_WALLCLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct sweeps;

struct wallclock {
	const char *hook;  /* the test hook's file, NULL: none */
	int64_t wall_mono; /* wall minus monotonic at the last look */
	bool seen;
};

/* From the environment (the test hook). */
void wallclock_init(struct wallclock *w);

/* The wall clock, ns (with the test hook's offset when it is set). */
uint64_t wallclock_ns(const struct wallclock *w);

/* The wall clock for the sweeps s (NULL: none yet) of interval_s: a step
 * since the last look relabels them, with one log line. */
uint64_t
wallclock_sweep_now(struct wallclock *w, struct sweeps *s, unsigned interval_s);

#endif
