/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sweeps are aligned to the wall clock: they start at multiples of the
 * interval since the Unix epoch (for 20 s: :00, :20, :40 of each minute),
 * so the gatherers of a whole site read at the same moment, and the sweep
 * id is that boundary in seconds.
 */
#ifndef LH_CLOCK_H
#define LH_CLOCK_H

#include <stdint.h>

#define CLOCK_NS_PER_S 1000000000ULL

/* The first boundary strictly after now_ns, in ns. */
uint64_t clock_next_boundary(uint64_t now_ns, unsigned interval_s);

/* The boundary at or before now_ns, in seconds: the current sweep id. */
uint64_t clock_sweep_id(uint64_t now_ns, unsigned interval_s);

/* CLOCK_REALTIME in ns, and CLOCK_MONOTONIC in ns. */
uint64_t clock_realtime_ns(void);
uint64_t clock_monotonic_ns(void);

#endif
