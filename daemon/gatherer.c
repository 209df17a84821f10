/* SPDX-License-Identifier: BSD-2-Clause */
/* The gatherer role: sweeps, delivery, state (see gatherer.h). */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "config.h"
#include "delta.h"
#include "err.h"
#include "gatherer.h"
#include "gstate.h"
#include "gtable.h"
#include "iocount.h"
#include "keyfile.h"
#include "log.h"
#include "loop.h"
#include "lustre_tree.h"
#include "mdops.h"
#include "msg.h"
#include "outbox.h"
#include "privsep.h"
#include "reader.h"
#include "sender.h"
#include "statedir.h"
#include "statsfeed.h"
#include "statsparse.h"

/* Export stats files are 0.2-2.5 KB; a file larger than this is not one. */
#define GATHER_FILE_MAX ((size_t)64 * 1024)
#define STATE_FILE      "gatherer.state"
#define LOCK_FILE       "gatherer.lock"

/* What went wrong during one sweep, for one summary line. */
struct sweep_trouble {
	unsigned unreadable; /* files that could not be read or parsed */
	char first[LH_ERR_REASON_MAX + LTREE_PATH_MAX + LTREE_NID_MAX + 32];
};

struct gatherer {
	struct lh_config *cfg; /* owned: replaced by a reload */
	struct event_base *base;
	struct event *tick;
	struct loop loop;
	struct keyring ring;
	struct sender *snd;
	struct outbox ob;
	struct gtable table;
	struct ltree tree;
	char *buf;         /* one file at a time */
	struct lstats *st; /* its parse */
	char state_path[PATH_MAX];
	int lock_fd;
	/* Duplicate ACKs, and the last line about them (monotonic ns). */
	uint64_t dups, dup_logged;
	uint64_t next_ns;  /* the boundary the timer is set for */
	bool troubled;     /* the last sweep had unreadable files */
	bool no_targets;   /* the last sweep found no target */
	uint64_t dropped;  /* outbox refusals already logged */
	uint64_t scope;    /* gstate_scope() of this configuration */
	bool save_failing; /* the last state save failed */
	bool slow;         /* the last sweep overran the interval */
	bool splitting;    /* the last batch numbered was cut to fit */
	/* Privilege separation: who we became, and the stats reader when
	 * the tree needs root (rd.fd -1: the tree is read here). */
	struct privsep ps;
	struct reader_conn rd;
	bool failed; /* the reader is gone: stop, exit 1 */
};

static void
trouble(struct sweep_trouble *tr, const struct ltree_target *lt,
    const char *path, const char *reason)
{
	int n;

	if (tr->unreadable++ != 0)
		return;
	n = snprintf(tr->first, sizeof(tr->first), "%s/%s: %s", lt->path, path,
	    reason);
	(void)n; /* a cut message is still a message */
}

/*
 * Read one NID directory's stats (and uuid when needed) and count it.
 * remote: the files as the stats reader read them (NULL: read them here);
 * when it has no uuid and one is needed, *ret_defer is set and nothing is
 * counted: the caller asks for the NID again, with its uuid.
 */
static int
gather_export(struct gatherer *g, struct gt_target *tg,
    const struct ltree_target *lt, const char *nid, uint64_t ino,
    struct sweep_trouble *tr, const struct sfeed_export *remote,
    bool *ret_defer)
{
	char path[LTREE_NID_MAX + 16];
	struct delta_sample cur;
	struct iocount io;
	struct mdops ops;
	struct gt_export *e;
	struct lh_err err;
	const char *text = g->buf;
	size_t len;
	int rc;

	e = gtable_export(&g->table, tg, nid, ino, &rc);
	if (e == NULL)
		return rc == -EINVAL ? 0 : rc;
	(void)snprintf(path, sizeof(path), "%s/stats", nid);
	if (remote == NULL) {
		rc = ltree_read_stats_at(lt->exports_fd, path, g->buf,
		    GATHER_FILE_MAX, &len);
	} else {
		rc = remote->stats_rc;
		text = remote->stats;
		len = remote->stats_len;
	}
	if (rc < 0) {
		/* Gone: the export stays known until it is no longer listed,
		 * so a passing failure does not make it new again. */
		if (!ltree_gone(rc))
			trouble(tr, lt, path,
			    rc == -EFBIG ? "larger than 64 KiB" :
			                   strerror(-rc));
		return 0;
	}
	if (lstats_parse(g->st, text, len, 0, &err) < 0) {
		trouble(tr, lt, path, err.reason);
		return 0;
	}
	iocount_from_stats(&io, g->st, lt->kind);
	delta_sample_from(&cur, g->st, &io);
	/* Per-op counts exist on MDTs only; an OST's stats have none. */
	if (lt->kind == LH_TARGET_MDT)
		mdops_from_stats(&ops, g->st);
	if (gtable_needs_uuid(e, &cur)) {
		(void)snprintf(path, sizeof(path), "%s/uuid", nid);
		text = g->buf;
		if (remote == NULL) {
			rc = ltree_read_at(lt->exports_fd, path, g->buf,
			    GATHER_FILE_MAX, &len);
		} else if (!remote->has_uuid) {
			*ret_defer = true;
			return 0;
		} else {
			rc = remote->uuid_rc;
			text = remote->uuid;
			len = remote->uuid_len;
		}
		if (rc < 0 && ltree_gone(rc))
			return 0;
		gtable_classify(&g->table, e,
		    rc == 0 ? ltree_classify_uuid(text, len) :
		              LTREE_PEER_STALE);
	}
	return gtable_observe(&g->table, tg, e, &cur,
	    lt->kind == LH_TARGET_MDT ? &ops : NULL);
}

/* List one target's exports/ and read every NID directory in it. */
static int
gather_target(struct gatherer *g, const struct ltree_target *lt,
    struct sweep_trouble *tr)
{
	struct gt_target *tg;
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int fd, rc = 0;

	if (fstat(lt->exports_fd, &sb) < 0) {
		log_warn("%s", lt->path);
		return 0;
	}
	tg = gtable_target(&g->table, lt->name, lt->fs, lt->kind,
	    (uint64_t)sb.st_dev, (uint64_t)sb.st_ino);
	if (tg == NULL)
		return -ENOMEM;
	/* A directory stream of its own: the held descriptor stays at its
	 * offset for openat(). */
	fd = openat(lt->exports_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (!ltree_gone(-errno))
			log_warn("%s", lt->path);
		if (fd >= 0)
			(void)close(fd);
		return 0;
	}
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		/* exports/ also holds the regular file "clear". */
		if (de->d_name[0] == '.' || ltree_nid_is_local(de->d_name) ||
		    strlen(de->d_name) >= LTREE_NID_MAX ||
		    !ltree_is_dir_entry(dirfd(d), de))
			continue;
		rc = gather_export(g, tg, lt, de->d_name, (uint64_t)de->d_ino,
		    tr, NULL, NULL);
		if (rc < 0)
			break;
		errno = 0;
	}
	/* Only a complete listing says which exports are gone. */
	if (rc == 0 && errno == 0)
		gtable_target_listed(tg);
	else if (rc == 0 && !ltree_gone(-errno))
		log_warn("%s: listing", lt->path);
	(void)closedir(d);
	return rc;
}

struct remote_ctx {
	struct gatherer *g;
	struct gt_target *tg;
	const struct ltree_target *lt;
	struct sweep_trouble *tr;
};

static int
remote_export(void *arg, const struct sfeed_export *e, uint64_t ino,
    bool *ret_again)
{
	struct remote_ctx *c = arg;

	if (ltree_nid_is_local(e->nid))
		return 0;
	return gather_export(c->g, c->tg, c->lt, e->nid, ino, c->tr, e,
	    ret_again);
}

/* gather_target() through the stats reader (reader_read_target()).
 * Returns 0, -ENOMEM, or -EPIPE: the reader is gone (logged). */
static int
gather_target_remote(struct gatherer *g, size_t index,
    const struct ltree_target *lt, struct sweep_trouble *tr)
{
	struct remote_ctx c = {g, NULL, lt, tr};
	struct lh_err err;
	int rc, end = 0;

	c.tg = gtable_target(&g->table, lt->name, lt->fs, lt->kind, lt->dev,
	    lt->ino);
	if (c.tg == NULL)
		return -ENOMEM;
	/* A target seen for the first time: every export needs its uuid,
	 * so each is read with its stats at once. */
	rc = reader_read_target(&g->rd, (uint32_t)index, c.tg->nexp == 0,
	    remote_export, &c, &end, &err);
	if (rc == -EPIPE)
		log_warnx("%s", err.reason);
	/* Only a complete listing says which exports are gone. */
	if (rc == 0 && end == 0)
		gtable_target_listed(c.tg);
	else if (rc == 0 && !ltree_gone(end))
		log_warnx("%s: listing: %s", lt->path, strerror(-end));
	return rc;
}

/* The targets, found here or by the stats reader.  Returns 0, or -EPIPE
 * when the reader is gone (logged); what else goes wrong is logged, and
 * the targets found are read. */
static int
discover(struct gatherer *g)
{
	struct lh_err err;
	int rc;

	ltree_clear(&g->tree);
	if (g->rd.fd < 0)
		rc = ltree_discover(&g->tree, g->cfg->lustre_root, &err);
	else
		rc = reader_discover(&g->rd, &g->tree, &err);
	if (rc < 0)
		log_warnx("%s", err.reason);
	return g->rd.fd >= 0 && rc < 0 && rc != -ENOMEM ? -EPIPE : 0;
}

/* Without its reader the gatherer cannot read the tree, nor become root
 * again to read it: stop, and let the service manager start it again.
 * The state saved after the last complete sweep is kept as it is. */
static void
reader_lost(struct gatherer *g)
{
	log_warnx("stopping: the Lustre tree cannot be read without the stats "
	          "reader (the state of the last sweep is kept)");
	g->failed = true;
	if (g->base != NULL)
		(void)event_base_loopbreak(g->base);
}

struct emit_ctx {
	struct gatherer *g;
	uint64_t sweep_id;
	size_t nrecs;
};

static int
emit_record(void *arg, const struct gt_record *r)
{
	struct emit_ctx *c = arg;

	c->nrecs++;
	/* -ENOSPC (more clients than an outbox holds) is counted in the
	 * outbox and logged once per sweep; nothing else can fail here
	 * but memory. */
	(void)outbox_add(&c->g->ob, r->fs, r->nid, &r->d, r->ops, r->span_us,
	    r->cspan_us, c->sweep_id, r->start_ns);
	return 0;
}

/* Returns 0 or -1; says so once per run of failures. */
static int
save_state(struct gatherer *g)
{
	struct lh_err err;

	if (gstate_save(g->state_path, g->scope, &g->table, &g->ob, &err) < 0) {
		if (!g->save_failing)
			log_warnx("%s: %s; holding new deltas back until the "
			          "state can be saved",
			    g->state_path, err.reason);
		g->save_failing = true;
		return -1;
	}
	if (g->save_failing)
		log_info("%s: saved again; sending the deltas held back",
		    g->state_path);
	g->save_failing = false;
	return 0;
}

/* Number the pending batch, cut to fit max_frame (outbox_seal_within()):
 * true when a batch was numbered now. */
static bool
seal_batch(struct gatherer *g)
{
	bool was = outbox_ready(&g->ob);
	int rc;

	rc = outbox_seal_within(&g->ob, outbox_payload_max(g->cfg->max_frame));
	if (rc < 0) {
		log_warnx("cannot number the next batch: %s; holding it back",
		    strerror(-rc));
		return false;
	}
	if (was || !outbox_ready(&g->ob))
		return false;
	if (rc > 0 && !g->splitting)
		log_warnx("batch %" PRIu64 ": larger than max_frame (%u "
		          "bytes): %zu client records in it, %zu left for the "
		          "next batches",
		    g->ob.inflight.batch, g->cfg->max_frame, g->ob.inflight.n,
		    g->ob.pending.n);
	else if (rc == 0 && g->splitting)
		log_info("batch %" PRIu64 ": within max_frame again",
		    g->ob.inflight.batch);
	g->splitting = rc > 0;
	return true;
}

static void
sweep(struct gatherer *g, uint64_t sweep_ns)
{
	const struct lh_config *cfg = g->cfg;
	struct sweep_trouble tr;
	struct emit_ctx ec = {g, sweep_ns / CLOCK_NS_PER_S, 0};
	uint64_t t0 = clock_monotonic_ns(), t1;
	size_t i, used = 0;
	bool sealed, slow;
	int rc = 0;

	memset(&tr, 0, sizeof(tr));
	gtable_sweep_begin(&g->table, sweep_ns,
	    (uint64_t)cfg->interval * CLOCK_NS_PER_S);
	if (discover(g) < 0) {
		reader_lost(g);
		return;
	}
	for (i = 0; i < g->tree.ntargets && rc == 0; i++) {
		if (!config_wants_fs(cfg, g->tree.targets[i].fs))
			continue;
		used++;
		rc = g->rd.fd < 0 ?
		    gather_target(g, &g->tree.targets[i], &tr) :
		    gather_target_remote(g, i, &g->tree.targets[i], &tr);
	}
	if (rc == -EPIPE) {
		reader_lost(g);
		return;
	}
	if (rc < 0) {
		/* Out of memory half-way: forget nothing, count nothing;
		 * the next sweep reads again from the same counters. */
		log_warnx("sweep %" PRIu64 ": out of memory, skipped",
		    ec.sweep_id);
		return;
	}
	if (used == 0 && !g->no_targets)
		log_warnx("no Lustre target found under %s%s; still looking",
		    cfg->lustre_root,
		    cfg->nfilesystems > 0 ? " for the configured filesystems" :
		                            "");
	else if (used > 0 && g->no_targets)
		log_info("%zu Lustre targets found", used);
	g->no_targets = used == 0;
	if (tr.unreadable > 0 && !g->troubled)
		log_warnx("%s%s", tr.first,
		    tr.unreadable > 1 ? " (and more files like it; counted "
		                        "again once readable)" :
		                        "");
	else if (tr.unreadable == 0 && g->troubled)
		log_info("every stats file is readable again");
	g->troubled = tr.unreadable > 0;

	if (gtable_sweep_end(&g->table, emit_record, &ec) < 0)
		log_warnx("sweep %" PRIu64 ": out of memory", ec.sweep_id);
	if (g->ob.dropped > g->dropped) {
		log_warnx("more than %zu clients: %" PRIu64 " records not sent",
		    (size_t)OUTBOX_MAX_KEYS, g->ob.dropped - g->dropped);
		g->dropped = g->ob.dropped;
	}
	/* Number the batch before saving: see outbox_seal().  What cannot
	 * be saved is not sent: after a restart from the older state the
	 * same deltas are computed again, and must not have been counted. */
	sealed = seal_batch(g);
	if (save_state(g) < 0 && sealed)
		(void)outbox_unseal(&g->ob);
	sender_kick(g->snd);
	t1 = clock_monotonic_ns();
	log_debug("sweep %" PRIu64 ": %zu targets, %zu exports, %zu clients "
	          "in %.3f s%s",
	    ec.sweep_id, used, gtable_nexports(&g->table), ec.nrecs,
	    (double)(t1 - t0) / 1e9,
	    sender_connected(g->snd) ? "" : " (aggregator not connected)");
	slow = t1 - t0 > (uint64_t)cfg->interval * CLOCK_NS_PER_S;
	if (slow && !g->slow)
		log_warnx("sweep %" PRIu64 " took %.1f s, longer than the "
		          "interval (%u s): sweeps are skipped",
		    ec.sweep_id, (double)(t1 - t0) / 1e9, cfg->interval);
	else if (!slow && g->slow)
		log_info("sweep %" PRIu64 " took %.1f s: within the interval "
		         "again",
		    ec.sweep_id, (double)(t1 - t0) / 1e9);
	g->slow = slow;
}

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
	sweep(g, at);
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
	if (g->dup_logged != 0 && now - g->dup_logged < 60 * CLOCK_NS_PER_S)
		return;
	g->dup_logged = now;
	log_info("batch %" PRIu64 " acknowledged (the aggregator had it "
	         "already): a duplicate, not counted twice (%" PRIu64
	         " in all)",
	    batch, g->dups);
}

/* Hold state_dir for this process, and know where the state file is. */
static int
lock_state_dir(struct gatherer *g)
{
	const char *dir = g->cfg->state_dir;

	if (snprintf(g->state_path, sizeof(g->state_path), "%s/%s", dir,
	        STATE_FILE) >= (int)sizeof(g->state_path)) {
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
	outbox_free(&g->ob);
	outbox_init(&g->ob, clock_realtime_ns() / 1000);
}

/*
 * The saved state, or a fresh start when there is none.  A file that
 * cannot be read this time (an I/O error, out of memory, a directory in
 * its place) is tried again, then kept as it is and the gatherer does not
 * start: starting afresh would overwrite it at the first sweep.  A file
 * refused (damaged, a newer format after a downgrade) is moved aside and
 * the gatherer starts with a baseline.  Returns 0, or -1 (logged).
 */
static int
load_state(struct gatherer *g)
{
	struct lh_err err;
	uint64_t scope = 0;
	unsigned tries = 0;
	int rc;

	for (;;) {
		rc =
		    gstate_load(g->state_path, &scope, &g->table, &g->ob, &err);
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
	if (rc == -EBADMSG) {
		start_afresh(g);
		return statedir_set_aside(g->state_path, err.reason,
		    "starting afresh: the first sweep is a baseline; what it "
		    "held (counts since its last save, deltas not yet "
		    "acknowledged) is lost");
	}
	if (rc < 0) {
		log_warnx("%s: %s; not starting: the file is kept as it is "
		          "(start again once it can be read, or move it "
		          "aside to start afresh)",
		    g->state_path, err.reason);
		return -1;
	}
	if (scope != g->scope) {
		log_info("%s: saved under another lustre_root or filesystems: "
		         "targets read for the first time start with a "
		         "baseline",
		    g->state_path);
		g->table.new_targets_are_old = true;
	}
	/* Saved by a version that did not split: a batch in flight too
	 * large for the frame was never sent, and is split. */
	if (outbox_fit(&g->ob, outbox_payload_max(g->cfg->max_frame)) > 0)
		log_warnx("%s: batch %" PRIu64 " in flight larger than "
		          "max_frame (%u bytes): split, %zu client records in "
		          "it, the others in the next batches",
		    g->state_path, g->ob.inflight.batch, g->cfg->max_frame,
		    g->ob.inflight.n);
	log_info("state restored: %zu exports on %zu targets, last sweep "
	         "%" PRIu64 "%s",
	    gtable_nexports(&g->table), g->table.ntargets,
	    (uint64_t)(g->table.last_sweep_ns / CLOCK_NS_PER_S),
	    outbox_has_data(&g->ob) ? ", with deltas not yet acknowledged" :
	                              "");
	return 0;
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
	if (lock_state_dir(g) < 0)
		return -1;
	g->buf = malloc(GATHER_FILE_MAX);
	g->st = malloc(sizeof(*g->st));
	if (g->buf == NULL || g->st == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	g->scope =
	    gstate_scope(cfg->lustre_root, cfg->filesystems, cfg->nfilesystems);
	if (load_state(g) < 0)
		return -1;
	return discover(g);
}

/* The connection to the aggregator, as the configuration says. */
static int
make_sender(struct gatherer *g)
{
	const struct lh_config *cfg = g->cfg;
	struct sender_conf sc;

	memset(&sc, 0, sizeof(sc));
	sc.host = cfg->server_host;
	sc.port = cfg->server_port;
	sc.keys = &g->ring;
	sc.name = cfg->name;
	sc.max_frame = cfg->max_frame;
	sc.handshake_timeout = cfg->handshake_timeout;
	/* An aggregator acknowledges a batch when the sweep holding it is
	 * closed, up to an interval later: wait at least two. */
	sc.ack_timeout =
	    cfg->interval * 2 + 30 > 120 ? cfg->interval * 2 + 30 : 120;
	sc.outbox = &g->ob;
	sc.fill_hello = fill_hello;
	sc.on_acked = acked;
	sc.arg = g;
	return sender_new(g->base, &sc, &g->snd);
}

/* Whether the connection must be made again for cfg. */
static bool
sender_changed(const struct lh_config *a, const struct lh_config *b)
{
	return strcmp(a->server_host, b->server_host) != 0 ||
	    a->server_port != b->server_port || strcmp(a->name, b->name) != 0 ||
	    a->max_frame != b->max_frame ||
	    a->handshake_timeout != b->handshake_timeout ||
	    a->interval != b->interval;
}

/*
 * SIGHUP: the configuration file again.  Anything wrong with it (syntax,
 * values, the key file, a key that needs a restart) is one line, and the
 * running configuration stays.  Otherwise it applies at once: a new key
 * file for the next handshake, a new aggregator, name or interval with a
 * new connection (what is not acknowledged goes there), and targets a new
 * lustre_root or filesystems list adds start with a baseline.
 */
static void
reload(void *arg)
{
	struct gatherer *g = arg;
	struct lh_config *cfg, *old = g->cfg;
	struct keyring ring;
	struct lh_err err;
	uint64_t scope;
	bool reconnect, keep_key;
	int rc;

	if (config_load(old->path, &cfg, &err) < 0) {
		log_warnx("%s; keeping the running configuration", err.reason);
		return;
	}
	if (cfg->role != LH_ROLE_GATHERER ||
	    strcmp(cfg->state_dir, old->state_dir) != 0 ||
	    cfg->server_host == NULL || cfg->server_host[0] == '\0') {
		log_warnx("%s: %s; keeping the running configuration",
		    cfg->path,
		    cfg->role != LH_ROLE_GATHERER ?
		        "role: a change needs a restart" :
		        cfg->server_host == NULL ||
		            cfg->server_host[0] == '\0' ?
		        "the gatherer needs server = \"host[:port]\"" :
		        "state_dir: a change needs a restart");
		config_free(cfg);
		return;
	}
	if (g->rd.fd >= 0 && strcmp(cfg->lustre_root, old->lustre_root) != 0) {
		log_warnx("%s: lustre_root: a change needs a restart while the "
		          "stats reader reads the tree; keeping the running "
		          "configuration",
		    cfg->path);
		config_free(cfg);
		return;
	}
	memset(&ring, 0, sizeof(ring));
	rc = keyfile_load(cfg->secret_file, &ring, &err);
	/* A key file root keeps to itself was read at start, as root: the
	 * user we became cannot read it again. */
	keep_key = rc == -EACCES && g->ps.dropped;
	if (keep_key) {
		log_warnx("%s; keeping the key read at start (give the file to "
		          "%s for a new key to apply without a restart)",
		    err.reason, g->ps.user);
	} else if (rc < 0) {
		log_warnx("%s; keeping the running configuration", err.reason);
		config_free(cfg);
		return;
	}
	/* From here on the new configuration is taken. */
	if (!keep_key) {
		keyring_clear(&g->ring);
		g->ring = ring; /* the sender's pointer stays valid */
	}
	reconnect = sender_changed(old, cfg);
	scope =
	    gstate_scope(cfg->lustre_root, cfg->filesystems, cfg->nfilesystems);
	if (scope != g->scope) {
		g->scope = scope;
		g->table.new_targets_are_old = true;
	}
	g->cfg = cfg;
	if (reconnect) {
		sender_free(g->snd);
		g->snd = NULL;
		if (make_sender(g) < 0)
			log_warnx("cannot connect to the aggregator");
	}
	if (old->interval != cfg->interval)
		schedule(g, 0);
	log_info("configuration reloaded from %s%s", cfg->path,
	    reconnect ? ": connecting to the aggregator again" : "");
	config_free(old);
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
	if (make_sender(g) < 0)
		return -1;
	loop_on_reload(&g->loop, reload, g);
	schedule(g, 0);
	return 0;
}

static void
teardown(struct gatherer *g)
{
	if (g->snd != NULL)
		sender_free(g->snd);
	if (g->tick != NULL)
		event_free(g->tick);
	loop_free(&g->loop);
	ltree_free(&g->tree);
	reader_conn_close(&g->rd);
	gtable_free(&g->table);
	outbox_free(&g->ob);
	keyring_clear(&g->ring);
	config_free(g->cfg);
	free(g->buf);
	free(g->st);
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
	g.rd.fd = -1;
	gtable_init(&g.table);
	outbox_init(&g.ob, 0);
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
			(void)save_state(&g);
		status = g.failed ? 1 : 0;
	}
out:
	teardown(&g);
	return status;
}
