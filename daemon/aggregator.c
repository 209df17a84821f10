/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sweep engine of the aggregator and relay roles (see aggregator.h):
 * the intake counts SWEEPs into open sweeps (intake.c); here each sweep is
 * closed when ready, streamed through the outputs main.c chose
 * (consumer.h), recorded in the ledger and acknowledged.
 */
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "aggregator.h"
#include "clock.h"
#include "config.h"
#include "consumer.h"
#include "err.h"
#include "hostview.h"
#include "htotals.h"
#include "httpd.h"
#include "intake.h"
#include "keyfile.h"
#include "ledger.h"
#include "log.h"
#include "loop.h"
#include "roster.h"
#include "msg.h"
#include "statedir.h"
#include "status.h"
#include "sweeps.h"
#include "sweepstat.h"
#include "wallclock.h"

#define LOCK_FILE  "aggregator.lock"
#define LEDGER_DIR "ledger"

struct aggregator {
	struct lh_config *cfg; /* owned: replaced by a reload */
	struct event_base *base;
	struct event *close_timer;
	struct loop loop;
	struct keyring ring;
	struct intake in; /* the listener and what it admits */
	struct ledger *ledger;
	struct sweeps *sweeps;
	struct hostview *view; /* NID -> host, shared by the outputs */
	struct consumers outs; /* main.c's choice for the role */
	/* Per-host counters, saved with the ledger (htotals.h). */
	struct htotals totals_file;
	struct status_board board; /* what the outputs ask of the role */
	struct sweepstat stat;     /* the role's part of it */
	struct httpd *http;        /* the outputs' listener; NULL: off */
	int lock_fd;
	/* The sweep being closed. */
	uint64_t closing;
	bool mapping; /* some output wants its hosts */
	struct sweeps_fs_total totals[MSG_SWEEP_FS_MAX];
	size_t ntotals;
	struct roster roster; /* the gatherers missing */
	struct wallclock clock;
	/* The ledger failing to write (a full or read-only state_dir): one
	 * line when it starts, one when it ends. */
	uint64_t ledger_failed;    /* writes failed since it started */
	uint64_t ledger_fail_mono; /* when it started, 0: writing */
};

/* One client of the sweep being closed: its host mapped once (when an
 * output wants it), then to every output. */
static int
on_client(void *arg, const struct sweeps_client *c)
{
	struct aggregator *a = arg;
	struct consumer_row r = {a->closing, a->cfg->interval, c, NULL};
	int err = 0;

	if (a->mapping)
		r.host = hostview_add(a->view, c, &err);
	consumers_row(&a->outs, &r);
	return err;
}

static int
on_fs(void *arg, const struct sweeps_fs_total *t)
{
	struct aggregator *a = arg;

	if (a->ntotals < MSG_SWEEP_FS_MAX)
		a->totals[a->ntotals++] = *t;
	return 0;
}

/* What each filesystem's clients did in the sweep just closed, at debug
 * level: the deltas an operator (or a test) can add up over sweeps. */
static void
log_totals(const struct aggregator *a, uint64_t sweep_id)
{
	size_t i;

	for (i = 0; i < a->ntotals; i++) {
		const struct sweeps_fs_total *t = &a->totals[i];

		log_debug("sweep %" PRIu64 ": fs %s: %zu clients, read_bytes "
		          "%" PRIu64 " write_bytes %" PRIu64
		          " read_ops %" PRIu64 " write_ops %" PRIu64
		          " oss_ops %" PRIu64 " mds_ops %" PRIu64,
		    sweep_id, t->fs, t->nclients, t->d.read_bytes,
		    t->d.write_bytes, t->d.read_ops, t->d.write_ops,
		    t->d.oss_ops, t->d.mds_ops);
	}
}

/* The batches of acks are safe: their senders' ledger entries. */
static void
ledger_record(struct aggregator *a, const struct sweeps_ack *acks, size_t n)
{
	struct lh_err err;
	size_t i, failed = 0, written = 0;

	for (i = 0; i < n; i++) {
		if (ledger_set(a->ledger, acks[i].sender, acks[i].batch, &err) <
		    0) {
			/* A full or read-only state_dir fails every entry,
			 * every sweep: say it once, with the first reason. */
			if (a->ledger_fail_mono == 0 && failed == 0)
				log_warnx(
				    "ledger: %s; the batches are counted "
				    "and acknowledged, their numbers kept in "
				    "memory until they can be written",
				    err.reason);
			failed++;
		} else {
			written++;
		}
	}
	if (failed > 0) {
		if (a->ledger_fail_mono == 0)
			a->ledger_fail_mono = clock_monotonic_ns();
		a->ledger_failed += failed;
	} else if (written > 0 && a->ledger_fail_mono != 0) {
		log_warnx("ledger: written again after %" PRIu64
		          " failed writes in %.0f s",
		    a->ledger_failed,
		    (double)(clock_monotonic_ns() - a->ledger_fail_mono) / 1e9);
		a->ledger_fail_mono = 0;
		a->ledger_failed = 0;
	}
}

/*
 * The batches of a closed sweep: every output saves it (with the acks
 * held so far); when all did, the ledger learns their numbers first, then
 * the outputs show the sweep, then the senders are told.  A crash in
 * between loses a sweep's display, never counts one twice.  While some
 * output cannot save, the acknowledgements wait (their senders' resends
 * are recognised) and go out with the first sweep all outputs save.
 */
static void
commit_sweep(struct aggregator *a, const struct sweeps_report *rep,
    uint64_t now)
{
	struct consumer_sweep cs = {rep->sweep_id, NULL, 0, a->totals,
	    a->ntotals};
	const struct sweeps_ack *acks;
	size_t n;
	int rc;

	rc = consumers_save(&a->outs, rep->sweep_id, rep->acks, rep->nacks);
	if (rc < 0)
		return; /* the acks are lost: the resends bring the deltas */
	acks = consumers_held(&a->outs, &n);
	if (a->mapping)
		cs.hosts = hostview_rows(a->view, &cs.nhosts);
	/* The counters before the ledger (hosttotals.h): marked with the
	 * batches the ledger is about to learn, when it does. */
	htotals_add(&a->totals_file, rep->sweep_id, cs.hosts, cs.nhosts,
	    a->totals, a->ntotals);
	htotals_save(&a->totals_file, rc == 1 ? acks : NULL, rc == 1 ? n : 0);
	if (rc == 1)
		ledger_record(a, acks, n);
	consumers_publish(&a->outs, &cs);
	if (rc == 0)
		return;
	intake_ack(&a->in, acks, n, now);
	consumers_release(&a->outs);
}

/* Every output saves what it holds, with the acknowledgements held
 * back, and the ledger records those batches.  Returns 0, or -1 (not
 * saved). */
static int
save_held(struct aggregator *a)
{
	const struct sweeps_ack *acks;
	size_t n;

	if (consumers_save(&a->outs, a->closing, NULL, 0) != 1)
		return -1;
	acks = consumers_held(&a->outs, &n);
	if (n > 0)
		htotals_save(&a->totals_file, acks, n);
	ledger_record(a, acks, n);
	return 0;
}

/* Stopping: each output's statistics (-v), and what the outputs have not
 * delivered yet is saved (acknowledgements held back included), to go
 * out after the restart. */
static void
save_on_stop(struct aggregator *a)
{
	consumers_log_stats(&a->outs);
	if (save_held(a) == 0)
		consumers_release(&a->outs);
}

/* The role's part of a status snapshot (status.h). */
static void
fill_status(void *arg, struct lh_status *st)
{
	const struct aggregator *a = arg;

	sweepstat_fill(&a->stat, a->cfg, st);
	roster_status(&a->roster, a->cfg, st);
	st->duplicates = a->in.duplicates;
	st->refused = a->in.refused;
	hostview_dns_status(a->view, a->cfg, &st->dns);
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

/* Close the oldest open sweep: stream it through the outputs, then
 * acknowledge its batches.  stopping: early, because the process stops
 * (what arrived is not left unacknowledged). */
static void
close_one(struct aggregator *a, uint64_t now, bool stopping)
{
	struct sweeps_report rep;
	struct hostview_stats hs;
	uint64_t cpu0 = cpu_ns(), mono0 = clock_monotonic_ns(), cpu1;

	hostview_begin(a->view);
	a->mapping = consumers_want_hosts(&a->outs);
	a->ntotals = 0;
	a->closing = sweeps_open_id(a->sweeps);
	if (sweeps_close(a->sweeps, now, on_client, on_fs, a, &rep) < 0)
		log_warnx("sweep %" PRIu64 ": out of memory; some "
		          "clients not sent",
		    rep.sweep_id);
	log_totals(a, rep.sweep_id);
	commit_sweep(a, &rep, now);
	if (!stopping)
		roster_note(&a->roster, &rep, now);
	hostview_log_unmapped(a->view, rep.sweep_id, mono0);
	hostview_stats(a->view, &hs);
	sweepstat_closed(&a->stat, &rep, &hs, mono0);
	log_debug("sweep %" PRIu64 ": %zu gatherers (%zu late), %zu "
	          "clients, %zu hosts, %zu unmapped, %zu awaiting DNS%s",
	    rep.sweep_id, rep.nreported, rep.nlate, rep.nclients, hs.hosts,
	    hs.unmapped, hs.awaiting_dns,
	    stopping            ? ", closed early: stopping" :
	        rep.by_deadline ? ", closed at the deadline" :
	                          "");
	cpu1 = cpu_ns();
	log_debug("sweep %" PRIu64 ": closing took %.3f s CPU (%.3f s wall), "
	          "process CPU %.3f s",
	    rep.sweep_id, (double)(cpu1 - cpu0) / 1e9,
	    (double)(clock_monotonic_ns() - mono0) / 1e9, (double)cpu1 / 1e9);
}

/* Close every sweep that is ready, and set the timer for the next. */
static void
close_ready(struct aggregator *a)
{
	uint64_t now = wallclock_sweep_now(&a->clock, a->sweeps,
	             a->cfg->interval),
	         deadline;
	struct timeval tv;

	while (sweeps_ready(a->sweeps, now)) {
		close_one(a, now, false);
		now =
		    wallclock_sweep_now(&a->clock, a->sweeps, a->cfg->interval);
	}
	deadline = sweeps_next_ns(a->sweeps);
	deadline = deadline > now ? deadline - now : 0;
	tv.tv_sec = (time_t)(deadline / CLOCK_NS_PER_S);
	tv.tv_usec = (suseconds_t)(deadline % CLOCK_NS_PER_S / 1000);
	(void)evtimer_add(a->close_timer, &tv);
}

/*
 * Stopping: the open sweep is closed with what has arrived (shown, or
 * sent on by a relay, and acknowledged), and the acknowledgements get a
 * moment to leave.  What a gatherer sends after that goes to the next
 * run, as a late batch.
 */
static void
stop_sweep(struct aggregator *a)
{
	struct timeval flush = {0, 300000};

	if (a->sweeps == NULL || sweeps_open_batches(a->sweeps) == 0)
		return;
	close_one(a,
	    wallclock_sweep_now(&a->clock, a->sweeps, a->cfg->interval), true);
	consumers_stop(&a->outs);
	(void)event_base_loopexit(a->base, &flush);
	(void)event_base_dispatch(a->base);
}

static void
close_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	close_ready(arg);
}

/* The intake counted a SWEEP: a sweep may be complete. */
static void
counted(void *arg)
{
	close_ready(arg);
}

/* The sweeps' part of cfg. */
static void
sweeps_conf_of(const struct lh_config *cfg, struct sweeps_conf *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->interval_s = cfg->interval;
	sc->deadline_ms = cfg->deadline_ms;
	sc->expected = cfg->gatherers;
	sc->nexpected = cfg->ngatherers;
}

/* Everything that can be refused, before detaching: the key, the lock,
 * the ledger, the hosts map, then the outputs main.c chose (in order). */
static int
preflight(struct aggregator *a, const struct consumer_kind *outs, size_t nouts)
{
	const struct lh_config *cfg = a->cfg;
	struct consumer_env env = {.cfg = cfg, .keys = &a->ring};
	struct sweeps_conf sc;
	struct lh_err err;
	char dir[PATH_MAX];

	if (keyfile_load(cfg->secret_file, &a->ring, &err) < 0) {
		log_warnx("%s", err.reason);
		return -1;
	}
	a->lock_fd = statedir_lock(cfg->state_dir, LOCK_FILE);
	if (a->lock_fd < 0)
		return -1;
	if (snprintf(dir, sizeof(dir), "%s/%s", cfg->state_dir, LEDGER_DIR) >=
	        (int)sizeof(dir) ||
	    (mkdir(dir, 0750) < 0 && errno != EEXIST) ||
	    ledger_new(&a->ledger, dir) < 0) {
		log_warn("%s", dir);
		return -1;
	}
	env.ledger = a->ledger;
	if (htotals_open(&a->totals_file, cfg->state_dir, a->ledger) < 0)
		return -1;
	env.totals = a->totals_file.t;
	a->board = (struct status_board){fill_status, a, &a->outs};
	env.board = &a->board;
	sweepstat_init(&a->stat);
	/* The HTTP listener first: the outputs register their paths on it
	 * when they start (httpd.h). */
	if (httpd_new(cfg, &a->http) < 0)
		return -1;
	env.http = a->http;
	if (hostview_new(cfg, &a->view) < 0 ||
	    consumers_open(&a->outs, outs, nouts, &env) < 0)
		return -1;
	sweeps_conf_of(cfg, &sc);
	if (sweeps_new(&sc,
	        wallclock_sweep_now(&a->clock, a->sweeps, a->cfg->interval),
	        &a->sweeps) < 0) {
		log_warnx("%s: cannot set up sweeps (interval %u s, deadline "
		          "%u ms)",
		    cfg->path, cfg->interval, cfg->deadline_ms);
		return -1;
	}
	roster_seed(a->sweeps, a->ledger,
	    wallclock_ns(&a->clock) / CLOCK_NS_PER_S, cfg->interval);
	return 0;
}

/* The parts a reload makes before it takes the new configuration. */
struct reload_parts {
	struct keyring ring;
	bool save; /* an output replaces what it runs: save first */
};

/* The role's own keys that need a restart, or NULL.  interval: the
 * sweeps are numbered by it (lharvestd(8)). */
static const char *
fixed_key(const struct lh_config *old, const struct lh_config *cfg)
{
	if (cfg->role != old->role)
		return "role";
	if (strcmp(cfg->state_dir, old->state_dir) != 0)
		return "state_dir";
	if (cfg->interval != old->interval)
		return "interval";
	return NULL;
}

/* Everything a reload can fail at, before anything changes: the role's
 * own parts, then each module's (the host view, every output), each
 * comparing its own section.  Returns 0, or -1 after one log line. */
static int
reload_prepare(struct aggregator *a, const struct lh_config *cfg,
    struct reload_parts *p)
{
	struct lh_err err;
	int rc;

	if (keyfile_load(cfg->secret_file, &p->ring, &err) < 0) {
		log_warnx("%s", err.reason);
		return -1;
	}
	if (hostview_reload_prepare(a->view, a->cfg, cfg) < 0)
		return -1;
	if (intake_reload_prepare(&a->in, a->base, cfg) < 0)
		return -1;
	if (a->http == NULL &&
	    (cfg->http_listen_host != NULL || cfg->http_socket != NULL)) {
		log_warnx("%s: http: turning the listener on needs a restart",
		    cfg->path);
		return -1;
	}
	if (httpd_reload_prepare(a->http, cfg) < 0)
		return -1;
	rc = consumers_reload_prepare(&a->outs, a->cfg, cfg);
	if (rc < 0)
		return -1;
	p->save = rc > 0;
	return 0;
}

static void
reload_abort(struct aggregator *a, struct reload_parts *p)
{
	keyring_clear(&p->ring);
	hostview_reload_abort(a->view);
	intake_reload_abort(&a->in);
	httpd_reload_abort(a->http);
	consumers_reload_abort(&a->outs);
}

/* Take cfg: nothing here can fail (a receiver that cannot be made again
 * on the same address is one line). */
static void
reload_apply(struct aggregator *a, struct lh_config *cfg,
    struct reload_parts *p)
{
	struct sweeps_conf sc;

	keyring_clear(&a->ring);
	a->ring = p->ring; /* the receiver's and senders' pointer stays */
	hostview_reload_apply(a->view);
	a->cfg = cfg;
	intake_reload_apply(&a->in, a->base, cfg);
	httpd_reload_apply(a->http, cfg);
	consumers_reload_apply(&a->outs, cfg, a->base);
	sweeps_conf_of(cfg, &sc);
	if (sweeps_reconfigure(a->sweeps, &sc) < 0)
		log_warnx("%s: gatherers, deadline: out of memory; the old "
		          "ones stay",
		    cfg->path);
}

/*
 * SIGHUP: the configuration file again.  Anything wrong (syntax, values,
 * the key file, the hosts map, a rewrite rule, an address that cannot be
 * bound, a key that needs a restart) is one line, and the running
 * configuration stays.  Otherwise everything applies at once; the
 * gatherers' connections survive unless the listening side changed, and
 * a relay's downstream connections unless its routes did.
 */
static void
reload(void *arg)
{
	struct aggregator *a = arg;
	struct lh_config *cfg, *old = a->cfg;
	struct reload_parts p;
	struct lh_err err;
	const char *fixed;

	if (config_load(old->path, &cfg, &err) < 0) {
		log_warnx("%s; keeping the running configuration", err.reason);
		return;
	}
	fixed = fixed_key(old, cfg);
	if (fixed != NULL) {
		log_warnx("%s: %s: a change needs a restart; keeping the "
		          "running configuration",
		    cfg->path, fixed);
		config_free(cfg);
		return;
	}
	memset(&p, 0, sizeof(p));
	if (reload_prepare(a, cfg, &p) < 0 || (p.save && save_held(a) < 0)) {
		log_warnx("%s: not reloaded%s; keeping the running "
		          "configuration",
		    cfg->path,
		    p.save ? " (an output's state could not be saved)" : "");
		reload_abort(a, &p);
		config_free(cfg);
		return;
	}
	reload_apply(a, cfg, &p);
	config_free(old);
	log_info("configuration reloaded from %s", cfg->path);
	close_ready(a);
}

static int
setup(struct aggregator *a)
{
	if (loop_new(&a->loop) < 0)
		return -1;
	a->base = a->loop.base;
	if (hostview_start(a->view, a->base, a->cfg) < 0)
		return -1;
	a->close_timer = evtimer_new(a->base, close_cb, a);
	if (a->close_timer == NULL) {
		log_warnx("cannot set up events");
		return -1;
	}
	a->in = (struct intake){.cfg = a->cfg,
	    .ring = &a->ring,
	    .ledger = a->ledger,
	    .sweeps = a->sweeps,
	    .outs = &a->outs,
	    .clock = &a->clock,
	    .counted = counted,
	    .arg = a,
	    .roster = &a->roster};
	if (intake_start(&a->in, a->base) < 0 ||
	    consumers_start(&a->outs, a->base) < 0)
		return -1;
	/* After the outputs registered their paths. */
	if (a->http != NULL && httpd_start(a->http, a->base) < 0)
		return -1;
	loop_on_reload(&a->loop, reload, a);
	close_ready(a);
	return 0;
}

static void
teardown(struct aggregator *a)
{
	intake_free(&a->in);
	consumers_free(&a->outs);
	httpd_free(a->http);
	hostview_free(a->view);
	if (a->close_timer != NULL)
		event_free(a->close_timer);
	loop_free(&a->loop);
	sweeps_free(a->sweeps);
	ledger_free(a->ledger);
	htotals_free(&a->totals_file);
	keyring_clear(&a->ring);
	roster_free(&a->roster);
	config_free(a->cfg);
	if (a->lock_fd >= 0)
		(void)close(a->lock_fd);
}

static void
log_started(const struct aggregator *a)
{
	const struct lh_config *cfg = a->cfg;

	if (cfg->role == LH_ROLE_RELAY)
		log_info("relay %s: every %u s, listening on %s, %zu "
		         "routes%s%s",
		    cfg->name, cfg->interval, intake_addr(&a->in), cfg->nroutes,
		    cfg->spoof ? ", Ganglia through " : "",
		    cfg->spoof ? cfg->gmond_conf : "");
	else
		log_info("aggregator %s: every %u s, listening on %s, "
		         "Ganglia through %s",
		    cfg->name, cfg->interval, intake_addr(&a->in),
		    cfg->gmond_conf);
}

int
aggregator_run(struct lh_config *cfg, bool detach,
    const struct consumer_kind *outs, size_t nouts)
{
	struct aggregator a;
	int status = 1;

	memset(&a, 0, sizeof(a));
	a.cfg = cfg;
	a.lock_fd = -1;
	wallclock_init(&a.clock);
	if (preflight(&a, outs, nouts) < 0 || loop_detach(detach) < 0)
		goto out;
	if (setup(&a) == 0) {
		log_started(&a);
		httpd_log_started(a.http);
		loop_run(&a.loop);
		stop_sweep(&a);
		save_on_stop(&a);
		status = 0;
	}
out:
	teardown(&a);
	return status;
}
