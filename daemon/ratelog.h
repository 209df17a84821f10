/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rate-limited complaints: the one way the daemon keeps a condition that
 * repeats (a stranger's refused connection, a failing DNS, an aggregator
 * that is down, a sweep too slow) from flooding the log.  This file only
 * decides and counts; the caller writes the lines (with what it knows)
 * and, for ratelog_take(), owns the timer that calls ratelog_flush().
 * One zeroed struct ratelog per condition, used in one of four ways:
 *
 *   ratelog_take()/ratelog_flush(): the first occurrence in full, the
 *     rest of the period counted, the count as one line when it ends
 *     (strangers: connections refused, broken handshakes);
 *   ratelog_burst(): at most N lines per window, then one line with the
 *     count held back (reverse DNS failures);
 *   ratelog_every(): at most one line per period, which says how many
 *     were not logged (duplicates, unmapped clients, a missing gatherer);
 *   ratelog_fail()/ratelog_recover(): one line per outage and one when it
 *     is over (an aggregator down, unreadable files, a slow sweep).
 *
 * Times are nanoseconds on a clock of the caller's choice, never 0.
 */
#ifndef LH_RATELOG_H
#define LH_RATELOG_H

#include <stdbool.h>
#include <stdint.h>

struct ratelog {
	uint64_t until_ns;   /* end of the period or window; 0: none yet */
	uint64_t suppressed; /* occurrences counted, not logged */
	unsigned lines;      /* logged in this window (ratelog_burst) */
	bool failing;        /* in an outage (ratelog_fail) */
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
uint64_t ratelog_flush(struct ratelog *rl, uint64_t now_ns, uint64_t period_ns);

/* When ratelog_flush() has something to say (0: never). */
uint64_t ratelog_due(const struct ratelog *rl);

/*
 * An occurrence at now_ns, at most burst lines per window of period_ns:
 * true when the caller logs it.  *ret_held: what the window that just
 * ended held back (the caller logs that count first when not 0).
 */
bool ratelog_burst(struct ratelog *rl, uint64_t now_ns, uint64_t period_ns,
    unsigned burst, uint64_t *ret_held);

/* What is counted and not yet said, now forgotten: for a last line when
 * the caller stops (ratelog_burst). */
uint64_t ratelog_drain(struct ratelog *rl);

/*
 * An occurrence at now_ns, at most one line per period_ns: true when the
 * caller logs it; *ret_skipped (may be NULL): how many did not since the
 * last line.
 */
bool ratelog_every(struct ratelog *rl, uint64_t now_ns, uint64_t period_ns,
    uint64_t *ret_skipped);

/* A failure: true when it starts an outage (the caller logs it in full;
 * the others of the outage at debug level at most). */
bool ratelog_fail(struct ratelog *rl);

/* A success: true when it ends an outage (the caller says so, once). */
bool ratelog_recover(struct ratelog *rl);

#endif
