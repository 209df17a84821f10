/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer's state in state_dir (common/gather/gstate.c, a base, and
 * gstate_journal.c, the journal after it): the lock, loading at start (or
 * a baseline), saving after every sweep, and the numbering of batches
 * that must happen before each save.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "err.h"
#include "gatherer_int.h"
#include "gstate.h"
#include "gstate_journal.h"
#include "log.h"
#include "outbox.h"
#include "statedir.h"

#define STATE_FILE   "gatherer.state"
#define JOURNAL_FILE "gatherer.journal"
#define LOCK_FILE    "gatherer.lock"

/* Hold state_dir for this process, and know where the state file is. */
int
gatherer_lock_state_dir(struct gatherer *g)
{
	const char *dir = g->cfg->state_dir;
	char journal[PATH_MAX];

	if (snprintf(g->state_path, sizeof(g->state_path), "%s/%s", dir,
	        STATE_FILE) >= (int)sizeof(g->state_path) ||
	    snprintf(journal, sizeof(journal), "%s/%s", dir, JOURNAL_FILE) >=
	        (int)sizeof(journal) ||
	    gstate_journal_init(&g->journal, g->state_path, journal) < 0) {
		log_warnx("state_dir %s: path too long", dir);
		return -1;
	}
	g->lock_fd = statedir_lock(dir, LOCK_FILE);
	return g->lock_fd < 0 ? -1 : 0;
}

/* No state to resume from: number batches from the wall clock in
 * microseconds, above anything numbered before a state was lost
 * (docs/protocol.md section 5). */
static void
start_afresh(struct gatherer *g)
{
	gtable_free(&g->table);
	gtable_init(&g->table);
	outbox_free(&g->up.ob);
	outbox_init(&g->up.ob, clock_realtime_ns() / 1000);
}

/* A refused state: the base and its journal both moved aside (neither
 * is whole without the other).  Returns 0 or -1 (logged). */
static int
set_aside(struct gatherer *g, const char *reason)
{
	static const char lost[] = "starting afresh: the first sweep is a "
	                           "baseline; what it held (counts since its "
	                           "last save, deltas not yet acknowledged) "
	                           "is lost";

	start_afresh(g);
	if (access(g->state_path, F_OK) == 0 &&
	    statedir_set_aside(g->state_path, reason, lost) < 0)
		return -1;
	if (access(g->journal.path, F_OK) == 0 &&
	    statedir_set_aside(g->journal.path, reason, lost) < 0)
		return -1;
	return 0;
}

/* What the journal said, once loaded. */
static void
journal_loaded(const struct gatherer *g, const struct gstate_jinfo *ji)
{
	if (ji->other_base)
		log_info("%s: follows an older %s, ignored (a compaction "
		         "stopped half-way: the newer one holds all of it)",
		    g->journal.path, STATE_FILE);
	if (ji->dropped > 0)
		log_warnx("%s: its last record is torn (%" PRIu64 " bytes), "
		          "dropped: the gatherer stopped while writing it, "
		          "and its batch was never sent",
		    g->journal.path, ji->dropped);
}

/*
 * The saved state, or a fresh start when there is none.  A file that
 * cannot be read this time (an I/O error, out of memory, a directory in
 * its place) is tried again, then kept as it is and the gatherer does not
 * start: starting afresh would overwrite it at the first sweep.  A state
 * refused (damaged, a newer format after a downgrade) is moved aside and
 * the gatherer starts with a baseline.  Returns 0, or -1 (logged).
 */
int
gatherer_load_state(struct gatherer *g)
{
	struct gstate_jinfo ji;
	struct lh_err err;
	uint64_t scope = 0;
	unsigned tries = 0;
	int rc;

	for (;;) {
		rc = gstate_journal_load(g->state_path, g->journal.path, &scope,
		    &g->table, &g->up.ob, &ji, &err);
		if (rc == 0 || rc == -ENOENT || rc == -EBADMSG ||
		    ++tries == STATEDIR_LOAD_TRIES)
			break;
		log_warnx("%s: %s; trying again", g->state_path, err.reason);
		start_afresh(g);
		(void)sleep(1);
	}
	if (rc == -ENOENT) {
		log_info("no saved state in %s: the first sweep is a baseline",
		    g->cfg->state_dir);
		start_afresh(g);
		return 0;
	}
	if (rc == -EBADMSG)
		return set_aside(g, err.reason);
	if (rc < 0) {
		log_warnx("%s: %s; not starting: the file is kept as it is "
		          "(start again once it can be read, or move it "
		          "aside to start afresh)",
		    g->state_path, err.reason);
		return -1;
	}
	journal_loaded(g, &ji);
	if (scope != g->scope) {
		log_info("%s: saved under another lustre_root or filesystems: "
		         "targets read for the first time start with a "
		         "baseline",
		    g->state_path);
		g->table.new_targets_are_old = true;
	}
	/* Saved by a version that did not split: a batch in flight too
	 * large for the frame was never sent, and is split. */
	if (outbox_fit(&g->up.ob, outbox_payload_max(g->cfg->max_frame)) > 0)
		log_warnx("%s: batch %" PRIu64 " in flight larger than "
		          "max_frame (%u bytes): split, %zu client records in "
		          "it, the others in the next batches",
		    g->state_path, g->up.ob.inflight.batch, g->cfg->max_frame,
		    g->up.ob.inflight.n);
	log_info("state restored: %zu exports on %zu targets, last sweep "
	         "%" PRIu64 " (%zu journal records)%s",
	    gtable_nexports(&g->table), g->table.ntargets,
	    (uint64_t)(g->table.last_sweep_ns / CLOCK_NS_PER_S), ji.records,
	    outbox_has_data(&g->up.ob) ? ", with deltas not yet acknowledged" :
	                                 "");
	return 0;
}

/* Save (compact: the whole state as the base).  Returns 0 or -1; says so
 * once per run of failures. */
static int
save_state(struct gatherer *g, bool compact)
{
	uint64_t t0 = clock_monotonic_ns(), t1;
	struct lh_err err;

	if (gstate_journal_save(&g->journal, g->scope, &g->table, &g->up.ob,
	        compact, &err) < 0) {
		if (ratelog_fail(&g->save_rl))
			log_warnx("%s: %s; holding new deltas back until the "
			          "state can be saved",
			    g->state_path, err.reason);
		return -1;
	}
	if (ratelog_recover(&g->save_rl))
		log_info("%s: saved again; sending the deltas held back",
		    g->state_path);
	t1 = clock_monotonic_ns();
	/* For docs/performance.md: what each save costs. */
	log_debug("state: %" PRIu64 " bytes %s in %.4f s", g->journal.written,
	    g->journal.compacted ? "written (a new base)" :
	                           "appended to the journal",
	    (double)(t1 - t0) / 1e9);
	return 0;
}

int
gatherer_save_state(struct gatherer *g)
{
	return save_state(g, false);
}

void
gatherer_stop_state(struct gatherer *g)
{
	(void)save_state(g, true);
	gstate_journal_close(&g->journal);
}

/* Number the pending batch, cut to fit max_frame (outbox_seal_within()):
 * true when a batch was numbered now. */
bool
gatherer_seal_batch(struct gatherer *g)
{
	bool was = outbox_ready(&g->up.ob);
	int rc;

	rc = outbox_seal_within(&g->up.ob,
	    outbox_payload_max(g->cfg->max_frame));
	if (rc < 0) {
		log_warnx("cannot number the next batch: %s; holding it back",
		    strerror(-rc));
		return false;
	}
	if (was || !outbox_ready(&g->up.ob))
		return false;
	if (rc > 0) {
		if (ratelog_fail(&g->splitting))
			log_warnx("batch %" PRIu64 ": larger than max_frame "
			          "(%u bytes): %zu client records in it, %zu "
			          "left for the next batches",
			    g->up.ob.inflight.batch, g->cfg->max_frame,
			    g->up.ob.inflight.n, g->up.ob.pending.n);
	} else if (ratelog_recover(&g->splitting)) {
		log_info("batch %" PRIu64 ": within max_frame again",
		    g->up.ob.inflight.batch);
	}
	return true;
}
