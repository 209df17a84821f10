/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the sweep engine says of itself in a status snapshot (status.h):
 * its name, role and start, and the last sweep it closed, kept as each
 * sweep closes (the gatherers' part is roster.c's).
 */
#ifndef LH_SWEEPSTAT_H
#define LH_SWEEPSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hostview.h"

struct lh_config;
struct lh_status;
struct sweeps_report;

struct sweepstat {
	int64_t started; /* seconds since the epoch */
	uint64_t id, closed;
	double close_time, close_duration;
	bool by_deadline;
	size_t clients;
	struct hostview_stats hs;
};

/* The role starts now. */
void sweepstat_init(struct sweepstat *s);

/* rep closed; its close began at mono0 (the monotonic clock, ns). */
void sweepstat_closed(struct sweepstat *s, const struct sweeps_report *rep,
    const struct hostview_stats *hs, uint64_t mono0);

/* The role's own fields of st. */
void sweepstat_fill(const struct sweepstat *s, const struct lh_config *cfg,
    struct lh_status *st);

#endif
