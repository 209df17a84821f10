/* SPDX-License-Identifier: BSD-2-Clause */
/* The sweep engine's part of a status snapshot (sweepstat.h). */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "status.h"
#include "sweeps.h"
#include "sweepstat.h"

void
sweepstat_init(struct sweepstat *s)
{
	memset(s, 0, sizeof(*s));
	s->started = (int64_t)(clock_realtime_ns() / CLOCK_NS_PER_S);
}

void
sweepstat_closed(struct sweepstat *s, const struct sweeps_report *rep,
    const struct hostview_stats *hs, uint64_t mono0)
{
	s->id = rep->sweep_id;
	s->closed++;
	s->close_time = (double)clock_realtime_ns() / 1e9;
	s->close_duration = (double)(clock_monotonic_ns() - mono0) / 1e9;
	s->by_deadline = rep->by_deadline;
	s->clients = rep->nclients;
	s->hs = *hs;
}

void
sweepstat_fill(const struct sweepstat *s, const struct lh_config *cfg,
    struct lh_status *st)
{
	st->role = cfg->role == LH_ROLE_RELAY ? "relay" : "aggregator";
	st->version = LH_VERSION;
	(void)snprintf(st->name, sizeof(st->name), "%s", cfg->name);
	st->started = s->started;
	st->interval_s = cfg->interval;
	st->sweep_id = s->id;
	st->close_time = s->close_time;
	st->close_duration = s->close_duration;
	st->by_deadline = s->by_deadline;
	st->sweeps_closed = s->closed;
	st->clients = s->clients;
	st->hosts = s->hs.hosts;
	st->unmapped = s->hs.unmapped;
	st->awaiting_dns = s->hs.awaiting_dns;
}
