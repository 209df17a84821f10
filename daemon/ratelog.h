/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One log line per period for a condition that strangers can repeat at
 * will (refused connections, broken handshakes): the first occurrence is
 * logged in full, the rest of the period only counted, and the count is
 * logged as one line when the period ends.  The caller owns the timer
 * that calls ratelog_flush(), so this file holds no event state.
 */
#ifndef LH_RATELOG_H
#define LH_RATELOG_H

#include <stdbool.h>
#include <stdint.h>

struct ratelog {
	uint64_t until_ns;   /* end of the period (monotonic) */
	unsigned suppressed; /* occurrences counted, not logged */
};

/*
 * An occurrence at now_ns: true when it is the first of a period and the
 * caller logs it in full; false when it was counted instead.
 */
bool ratelog_take(struct ratelog *rl, uint64_t now_ns, uint64_t period_ns);

/*
 * At or after the end of a period with occurrences counted: returns their
 * number (the caller logs it as one line) and starts a new period, so
 * that a steady flood costs one line a period.  Returns 0 otherwise.
 */
unsigned ratelog_flush(struct ratelog *rl, uint64_t now_ns, uint64_t period_ns);

/* When ratelog_flush() has something to say (0: never). */
uint64_t ratelog_due(const struct ratelog *rl);

#endif
