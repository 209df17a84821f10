/* SPDX-License-Identifier: BSD-2-Clause */
/* Wall-clock sweep boundaries. */
#include <time.h>

#include "clock.h"

uint64_t
clock_next_boundary(uint64_t now_ns, unsigned interval_s)
{
	uint64_t step =
	    (uint64_t)(interval_s > 0 ? interval_s : 1) * CLOCK_NS_PER_S;

	return (now_ns / step + 1) * step;
}

uint64_t
clock_sweep_id(uint64_t now_ns, unsigned interval_s)
{
	uint64_t step = interval_s > 0 ? interval_s : 1;

	return now_ns / CLOCK_NS_PER_S / step * step;
}

static uint64_t
read_clock(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * CLOCK_NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t
clock_realtime_ns(void)
{
	return read_clock(CLOCK_REALTIME);
}

uint64_t
clock_monotonic_ns(void)
{
	return read_clock(CLOCK_MONOTONIC);
}
