/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer role (see gatherer.h): start (privileges, state, key),
 * the sweep timer, the connection to the aggregator, and the stop.  The
 * sweep itself is gatherer_sweep.c, state_dir gatherer_state.c, SIGHUP
 * gatherer_reload.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "config.h"
#include "err.h"
#include "gatherer.h"
#include "gatherer_int.h"
#include "gstate.h"
#include "log.h"
#include "msg.h"
#include "outbox.h"
#include "statsparse.h"

/* Set the timer for the first boundary after both now and the sweep
 * just done (a timer may fire a little early). */
static void
schedule(struct gatherer *g, uint64_t done_ns)
{
	uint64_t now = clock_realtime_ns(), wait;
	struct timeval tv;

	g->next_ns = clock_next_boundary(now > done_ns ? now : done_ns,
	    g->cfg->interval);
	wait = g->next_ns - now;
	tv.tv_sec = (time_t)(wait / CLOCK_NS_PER_S);
	tv.tv_usec = (suseconds_t)(wait % CLOCK_NS_PER_S / 1000);
	if (evtimer_add(g->tick, &tv) < 0)
		fatalx("cannot set the sweep timer");
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gatherer *g = arg;
	uint64_t now = clock_realtime_ns();
	uint64_t interval_ns = (uint64_t)g->cfg->interval * CLOCK_NS_PER_S;
	uint64_t at = g->next_ns;

	(void)fd;
	(void)what;
	/* Timers run on the monotonic clock: if the wall clock jumped (or
	 * the machine slept), sweep at the boundary we are in instead. */
	if (now + interval_ns / 2 < at || now > at + interval_ns)
		at = clock_sweep_id(now, g->cfg->interval) * CLOCK_NS_PER_S;
	gatherer_sweep(g, at);
	schedule(g, at);
}

static void
fill_hello(void *arg, struct msg_hello *h)
{
	const struct gatherer *g = arg;
	const struct ltree *t = &g->tree;
	size_t i, f;

	/* The targets of the last discovery (done at start too, so that a
	 * first HELLO already says what this server holds). */
	h->role = MSG_ROLE_GATHERER;
	h->interval = g->cfg->interval;
	for (i = 0; i < t->ntargets && h->ntargets < MSG_HELLO_TGT_MAX; i++) {
		const struct ltree_target *tg = &t->targets[i];

		if (!config_wants_fs(g->cfg, tg->fs))
			continue;
		for (f = 0; f < h->nfs; f++) {
			if (strcmp(h->fs[f], tg->fs) == 0)
				break;
		}
		if (f == h->nfs) {
			if (h->nfs == MSG_HELLO_FS_MAX)
				continue;
			(void)snprintf(h->fs[h->nfs++], MSG_FS_MAX, "%s",
			    tg->fs);
		}
		(void)snprintf(h->targets[h->ntargets].name, MSG_TARGET_MAX,
		    "%s", tg->name);
		h->targets[h->ntargets++].fs = (uint16_t)f;
	}
}

/* A duplicate ACK: the aggregator had counted the batch before (an ACK
 * lost to a cut or a restart), at most one line a minute. */
static void
acked(void *arg, uint64_t batch, bool duplicate)
{
	struct gatherer *g = arg;
	uint64_t now = clock_monotonic_ns();

	if (!duplicate) {
		log_debug("batch %" PRIu64 " acknowledged", batch);
		return;
	}
	g->dups++;
	if (!ratelog_every(&g->dup_rl, now, 60 * CLOCK_NS_PER_S, NULL))
		return;
	log_info("batch %" PRIu64 " acknowledged (the aggregator had it "
	         "already): a duplicate, not counted twice (%" PRIu64
	         " in all)",
	    batch, g->dups);
}

/* The connection to the aggregator, as the configuration says. */
int
gatherer_connect(struct gatherer *g)
{
	const struct lh_config *cfg = g->cfg;
	const struct uplink_peer peer = {
	    .host = cfg->server_host,
	    .port = cfg->server_port,
	    .keys = &g->ring,
	    .fill_hello = fill_hello,
	    .on_acked = acked,
	    .arg = g,
	};

	return uplink_connect(&g->up, g->base, cfg, &peer);
}

/*
 * Started as root with a user (privsep.h): before anything touches the
 * network, and before the key is in memory (the stats reader, if one is
 * forked, must never hold it), look at the tree and fork; read the key as
 * root (a root-owned key file, as a gatherer that ran as root had), then
 * become the user.  A key file of the user's own is read as the user.
 */
static int
start_privsep(struct gatherer *g)
{
	const struct lh_config *cfg = g->cfg;
	struct lh_err err;
	int rc;

	if (privsep_begin(&g->ps, cfg->user, cfg->lustre_root, cfg->state_dir) <
	    0)
		return -1;
	if (g->ps.reader_fd >= 0) {
		rc =
		    reader_conn_init(&g->rd, g->ps.reader_fd, g->ps.reader_pid);
		g->ps.reader_fd = -1; /* g->rd has it now */
		if (rc < 0) {
			log_warnx("out of memory");
			return -1;
		}
	}
	rc = keyfile_load(cfg->secret_file, &g->ring, &err);
	if (privsep_drop(&g->ps) < 0)
		return -1;
	if (rc < 0 && g->ps.dropped)
		rc = keyfile_load(cfg->secret_file, &g->ring, &err);
	if (rc < 0) {
		log_warnx("%s", err.reason);
		return -1;
	}
	return 0;
}

/* Everything that can be refused, before detaching. */
static int
preflight(struct gatherer *g)
{
	const struct lh_config *cfg = g->cfg;

	if (cfg->server_host == NULL || cfg->server_host[0] == '\0') {
		log_warnx("%s: the gatherer needs server = \"host[:port]\" "
		          "(the aggregator)",
		    cfg->path);
		return -1;
	}
	if (start_privsep(g) < 0)
		return -1;
	if (gatherer_lock_state_dir(g) < 0)
		return -1;
	g->buf = malloc(GATHER_FILE_MAX);
	g->ahead.buf = malloc(GATHER_AHEAD_BYTES);
	g->st = malloc(sizeof(*g->st));
	if (g->buf == NULL || g->ahead.buf == NULL || g->st == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	g->scope =
	    gstate_scope(cfg->lustre_root, cfg->filesystems, cfg->nfilesystems);
	if (gatherer_load_state(g) < 0)
		return -1;
	return gatherer_discover(g);
}

/* The event loop's parts: after detaching (libevent's descriptors would
 * not survive the fork cleanly). */
static int
setup(struct gatherer *g)
{
	if (loop_new(&g->loop) < 0)
		return -1;
	g->base = g->loop.base;
	g->tick = evtimer_new(g->base, tick_cb, g);
	if (g->tick == NULL) {
		log_warnx("cannot set up events");
		return -1;
	}
	if (gatherer_connect(g) < 0)
		return -1;
	loop_on_reload(&g->loop, gatherer_reload, g);
	schedule(g, 0);
	return 0;
}

static void
teardown(struct gatherer *g)
{
	uplink_disconnect(&g->up);
	if (g->tick != NULL)
		event_free(g->tick);
	loop_free(&g->loop);
	ltree_free(&g->tree);
	reader_conn_close(&g->rd);
	gtable_free(&g->table);
	uplink_free(&g->up);
	keyring_clear(&g->ring);
	config_free(g->cfg);
	free(g->buf);
	free(g->ahead.buf);
	free(g->st);
	gstate_journal_close(&g->journal);
	if (g->lock_fd >= 0)
		(void)close(g->lock_fd);
}

int
gatherer_run(struct lh_config *cfg, bool detach)
{
	struct gatherer g;
	int status = 1;

	memset(&g, 0, sizeof(g));
	g.cfg = cfg;
	g.lock_fd = -1;
	g.journal.fd = -1;
	g.rd.fd = -1;
	gtable_init(&g.table);
	uplink_init(&g.up, 0);
	if (preflight(&g) < 0 || loop_detach(detach) < 0)
		goto out;
	if (setup(&g) == 0) {
		log_info("gatherer %s: every %u s, reading %s, sending to "
		         "%s:%u",
		    cfg->name, cfg->interval, cfg->lustre_root,
		    cfg->server_host, cfg->server_port);
		loop_run(&g.loop);
		/* The counters are those of the last sweep; the outbox may
		 * have shrunk since (acknowledgements): save it too. */
		if (g.table.history && !g.failed)
			gatherer_stop_state(&g);
		status = g.failed ? 1 : 0;
	}
out:
	teardown(&g);
	return status;
}
