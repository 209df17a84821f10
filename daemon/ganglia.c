/* SPDX-License-Identifier: BSD-2-Clause */
/* The Ganglia consumer: timer and log glue (ganglia.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "check.h"
#include "clock.h"
#include "config.h"
#include "consumer.h"
#include "ganglia.h"
#include "ganglia_out.h"
#include "log.h"
#include "sink.h"
#include "status.h"

struct ganglia {
	struct ganglia_out out;
	struct event *flush_timer;
	/* What the last sweep cost, for the -v lines the benchmark
	 * (tests/bench/agg_load.sh) reads: its values going out. */
	struct {
		uint64_t sweep;
		bool active;
		uint64_t mono0, cpu0; /* when the values began to go out */
		uint64_t values0, meta0;
	} sent;
};

/* Whether the role shows its sweeps in Ganglia: an aggregator always, a
 * relay with spoof. */
static bool
ganglia_on(const struct ganglia *g)
{
	return g->out.cfg->role != LH_ROLE_RELAY || g->out.cfg->spoof;
}

/* This process's CPU time (user and system), ns. */
static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * CLOCK_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* The sweep's values are all out: how long that took, at debug level. */
static void
log_sent(struct ganglia *g)
{
	struct gsink_stats st;

	if (!g->sent.active || g->out.sink == NULL)
		return;
	g->sent.active = false;
	gsink_stats(g->out.sink, &st);
	if (st.values == g->sent.values0 && st.metadata == g->sent.meta0)
		return; /* an empty sweep */
	log_debug("sweep %" PRIu64 ": Ganglia: %" PRIu64 " values and %" PRIu64
	          " metadata sent in %.3f s (%.3f s CPU)",
	    g->sent.sweep, st.values - g->sent.values0,
	    st.metadata - g->sent.meta0,
	    (double)(clock_monotonic_ns() - g->sent.mono0) / 1e9,
	    (double)(cpu_ns() - g->sent.cpu0) / 1e9);
}

static void
flush_sink(struct ganglia *g)
{
	struct timeval tick = {0, 0};

	if (g->out.sink == NULL)
		return;
	tick.tv_usec = (suseconds_t)gsink_tick_ms(g->out.sink) * 1000;
	if (gsink_flush(g->out.sink, clock_monotonic_ns()) > 0)
		(void)evtimer_add(g->flush_timer, &tick);
	else
		log_sent(g);
}

static void
flush_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	flush_sink(arg);
}

/* gmond_conf again if it changed.  A bad file is one log line per
 * change: the role keeps running, with the channels it had (or none
 * yet), and counts and acknowledges as usual. */
static void
refresh(struct ganglia *g)
{
	const struct lh_config *cfg = g->out.cfg;
	bool had = g->out.sink != NULL;
	struct lh_err err;
	int rc = ganglia_out_refresh(&g->out, &err);

	if (rc < 0)
		log_warnx("%s; %s", err.reason,
		    had ? "still sending through the channels it had" :
		          "no metrics go out until it is fixed");
	if (rc == GANGLIA_REOPENED)
		log_info("%s changed: now sending to %s", cfg->gmond_conf,
		    gsink_channels(g->out.sink));
	if (rc > 0)
		g->sent.active = false; /* its counts were the old sink's */
}

static bool
ganglia_wants_hosts(void *ctx)
{
	return ganglia_on(ctx);
}

static int
ganglia_start(void *ctx, struct event_base *base)
{
	struct ganglia *g = ctx;

	g->flush_timer = evtimer_new(base, flush_cb, g);
	if (g->flush_timer == NULL) {
		log_warnx("cannot set up events");
		return -1;
	}
	return 0;
}

/* Every host's metrics of the sweep just closed, and the totals. */
static void
ganglia_publish(void *ctx, const struct consumer_sweep *s)
{
	struct ganglia *g = ctx;
	uint64_t mono = clock_monotonic_ns();
	struct gsink_stats st;

	if (!ganglia_on(g))
		return;
	refresh(g);
	if (g->out.sink != NULL) {
		log_sent(g); /* the previous sweep's, if it was still going */
		gsink_stats(g->out.sink, &st);
		g->sent.sweep = s->sweep_id;
		g->sent.active = true;
		g->sent.mono0 = mono;
		g->sent.cpu0 = cpu_ns();
		g->sent.values0 = st.values;
		g->sent.meta0 = st.metadata;
	}
	ganglia_out_put(&g->out, s->hosts, s->nhosts, s->totals, s->ntotals,
	    mono);
	flush_sink(g);
}

static void
ganglia_stop(void *ctx)
{
	flush_sink(ctx);
}

/* Its own section: the channels and their options are opened again at
 * the next sweep when they changed; a relay that stops spoofing closes
 * them now. */
static void
ganglia_reload_apply(void *ctx, const struct lh_config *cfg,
    struct event_base *base)
{
	struct ganglia *g = ctx;

	(void)base;
	if (!config_section_equal(g->out.cfg, cfg, "ganglia_channels"))
		ganglia_out_reset(&g->out, false);
	g->out.cfg = cfg;
	if (!ganglia_on(g))
		ganglia_out_reset(&g->out, true);
}

static void
ganglia_stats(void *ctx, char *buf, size_t size)
{
	struct ganglia *g = ctx;
	struct gsink_stats st;

	if (g->out.sink == NULL)
		return;
	gsink_stats(g->out.sink, &st);
	(void)snprintf(buf, size,
	    "%" PRIu64 " values and %" PRIu64 " metadata sent (%" PRIu64
	    " not taken by a channel, %" PRIu64
	    " over max_entries), %zu (host, metric) pairs",
	    st.values, st.metadata, st.send_errors, st.refused, st.entries);
}

/* Its part of a status snapshot: what the sink sent and holds. */
static void
ganglia_status(void *ctx, struct lh_status *st)
{
	struct ganglia *g = ctx;
	struct gsink_stats gs;

	if (!ganglia_on(g))
		return;
	st->ganglia.on = true;
	if (g->out.sink == NULL)
		return; /* gmond_conf not opened yet: nothing sent */
	gsink_stats(g->out.sink, &gs);
	st->ganglia.values = gs.values;
	st->ganglia.metadata = gs.metadata;
	st->ganglia.send_errors = gs.send_errors;
	st->ganglia.coalesced = gs.coalesced;
	st->ganglia.refused = gs.refused;
	st->ganglia.entries = gs.entries;
	st->ganglia.pending = gs.pending;
}

static void
ganglia_free(void *ctx)
{
	struct ganglia *g = ctx;

	if (g->flush_timer != NULL)
		event_free(g->flush_timer);
	ganglia_out_free(&g->out);
	free(g);
}

static const struct consumer_ops ganglia_ops = {
    .name = "ganglia",
    .wants_hosts = ganglia_wants_hosts,
    .start = ganglia_start,
    .publish = ganglia_publish,
    .stop = ganglia_stop,
    .reload_apply = ganglia_reload_apply,
    .status = ganglia_status,
    .stats = ganglia_stats,
    .free = ganglia_free,
};

/* gmond's configuration, checked as the role will (a child process
 * parses it; its channels are opened and closed again), and the hosts map
 * the rows are named by. */
int
ganglia_check(const struct lh_config *cfg, FILE *out)
{
	struct gsink *s = NULL;
	struct lh_err err;
	int rc, bad = 0;

	if (cfg->role == LH_ROLE_RELAY && !cfg->spoof)
		return 0;
	bad |= check_hosts(cfg, out) < 0;
	rc = check_path(cfg, out, "gmond_conf", cfg->gmond_conf, false);
	if (rc < 0)
		return -1;
	if (rc > 0 && gsink_open(cfg->gmond_conf, NULL, &s, &err) < 0) {
		(void)fprintf(out, "%s: %s\n", cfg->path, err.reason);
		return -1;
	}
	gsink_close(s);
	return bad ? -1 : 0;
}

int
ganglia_open(const struct consumer_env *env, struct consumer *ret)
{
	struct ganglia *g = calloc(1, sizeof(*g));

	if (g == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	ganglia_out_init(&g->out, env->cfg);
	if (ganglia_on(g))
		refresh(g);
	ret->ops = &ganglia_ops;
	ret->ctx = g;
	return 0;
}
