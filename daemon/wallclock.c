/* SPDX-License-Identifier: BSD-2-Clause */
/* The sweep clock (wallclock.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "log.h"
#include "sweeps.h"
#include "wallclock.h"

/* A wall clock that moved this much more or less than the monotonic
 * clock since the last look was stepped. */
#define STEP_NS        (CLOCK_NS_PER_S)
#define CLOCK_HOOK_ENV "LH_TEST_CLOCK_OFFSET_FILE"

void
wallclock_init(struct wallclock *w)
{
	w->hook = getenv(CLOCK_HOOK_ENV);
	w->wall_mono = 0;
	w->seen = false;
}

/* The test hook's offset, ns: whole seconds, signed; 0 when the file is
 * missing or holds anything else. */
static int64_t
hook_offset_ns(const char *path)
{
	char text[32], *end;
	long long v;
	FILE *f = fopen(path, "re");
	size_t n;

	if (f == NULL)
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	(void)fclose(f);
	text[n] = '\0';
	errno = 0;
	v = strtoll(text, &end, 10);
	if (end == text || errno != 0 || (*end != '\0' && *end != '\n') ||
	    v > 100LL * 365 * 86400 || v < -100LL * 365 * 86400)
		return 0;
	return (int64_t)v * (int64_t)CLOCK_NS_PER_S;
}

/* The wall clock, ns (with the test hook's offset when it is set). */
uint64_t
wallclock_ns(const struct wallclock *w)
{
	uint64_t now = clock_realtime_ns();

	if (w->hook == NULL)
		return now;
	return (uint64_t)((int64_t)now + hook_offset_ns(w->hook));
}

/*
 * The wall clock for the sweeps.  Sweeps are labelled by the wall clock
 * but scheduled by durations (libevent's timers run on the monotonic
 * clock); a step of the wall clock (it moved STEP_NS more or less than
 * the monotonic clock since the last look) is one line, and the open
 * sweeps are relabelled by the step rounded to whole intervals: each
 * closes when it was due, instead of every sweep of the step closing at
 * once (forward) or none until the clock catches up (back).
 */
uint64_t
wallclock_sweep_now(struct wallclock *w, struct sweeps *s, unsigned interval_s)
{
	uint64_t wall = wallclock_ns(w), mono = clock_monotonic_ns();
	int64_t off = (int64_t)(wall - mono), step = off - w->wall_mono;
	int64_t ivl = (int64_t)interval_s * (int64_t)CLOCK_NS_PER_S;

	if (w->seen && s != NULL &&
	    (step >= (int64_t)STEP_NS || step <= -(int64_t)STEP_NS)) {
		int64_t half = step > 0 ? ivl / 2 : -ivl / 2;
		int64_t shift = (step + half) / ivl * (int64_t)interval_s;

		log_warnx(
		    "wall clock stepped %s by %.3f s: the open sweeps are "
		    "relabelled by %+" PRId64 " s and close on schedule",
		    step > 0 ? "forward" : "back",
		    (double)(step > 0 ? step : -step) / 1e9, shift);
		sweeps_shift(s, shift);
	}
	w->wall_mono = off;
	w->seen = true;
	return wall;
}
