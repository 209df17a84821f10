/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer's sweep: every wanted target's exports read (here, or by
 * the stats reader), their counters turned into per-(filesystem, NID)
 * deltas (common/gather/gtable.c), counted into the outbox, the state
 * saved, and the batch handed to the sender.  What goes wrong is one
 * line when it starts and one when it ends, not one a sweep.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "config.h"
#include "delta.h"
#include "err.h"
#include "gatherer_int.h"
#include "iocount.h"
#include "log.h"
#include "mdops.h"
#include "outbox.h"
#include "sender.h"
#include "statsdigest.h"
#include "statsfeed.h"
#include "statsparse.h"

/* What went wrong during one sweep, for one summary line. */
struct sweep_trouble {
	unsigned unreadable; /* files that could not be read or parsed */
	char first[LH_ERR_REASON_MAX + LTREE_PATH_MAX + LTREE_NID_MAX + 32];
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

/* "<nid>/<leaf>" into path (of cap bytes): done 90,000 times a sweep,
 * where snprintf() cost 1.5 % of the gatherer's time
 * (docs/performance.md).  A NID too long for it (never one the callers
 * let through) gives the empty path, which names no file. */
static void
nid_path(char *path, size_t cap, const char *nid, const char *leaf)
{
	size_t n = strlen(nid), l = strlen(leaf);

	if (n + 1 + l >= cap) {
		path[0] = '\0';
		return;
	}
	memcpy(path, nid, n);
	path[n] = '/';
	memcpy(path + n + 1, leaf, l + 1);
}

/*
 * A NID whose counters say it may be a new client (gtable_needs_uuid()):
 * its uuid read and classified.  Returns 0 to count it, or 1 when it is
 * gone, or when the stats reader has no uuid for it (*ret_defer set):
 * nothing is counted.
 */
static int
classify_export(struct gatherer *g, struct gt_export *e,
    struct ltree_target *lt, const char *nid, const struct sfeed_export *remote,
    bool *ret_defer)
{
	char path[LTREE_NID_MAX + 16];
	const char *text = g->buf;
	size_t len = 0;
	int rc;

	nid_path(path, sizeof(path), nid, "uuid");
	if (remote == NULL) {
		rc = ltree_read_stats_at(lt->exports_fd, path, &lt->open_flags,
		    g->buf, GATHER_FILE_MAX, &len);
	} else if (!remote->has_uuid) {
		*ret_defer = true;
		return 1;
	} else {
		rc = remote->uuid_rc;
		text = remote->uuid;
		len = remote->uuid_len;
	}
	if (rc < 0 && ltree_gone(rc))
		return 1;
	gtable_classify(&g->table, e,
	    rc == 0 ? ltree_classify_uuid(text, len) : LTREE_PEER_STALE);
	return 0;
}

/* trouble() with <nid>/stats. */
static void
stats_trouble(struct sweep_trouble *tr, const struct ltree_target *lt,
    const char *nid, const char *reason)
{
	char path[LTREE_NID_MAX + 16];

	nid_path(path, sizeof(path), nid, "stats");
	trouble(tr, lt, path, reason);
}

/* One NID's stats file as read: its text, or why it could not be. */
struct read_file {
	const char *text;
	size_t len;
	int rc; /* 0, or -errno */
};

/*
 * Count one NID directory's stats, read already (and read its uuid when
 * needed).  remote: the files as the stats reader read them (NULL: read
 * here); when it has no uuid and one is needed, *ret_defer is set and
 * nothing is counted: the caller asks for the NID again, with its uuid.
 */
static int
count_export(struct gatherer *g, struct gt_target *tg, struct ltree_target *lt,
    const char *nid, uint64_t ino, struct sweep_trouble *tr,
    const struct read_file *f, const struct sfeed_export *remote,
    bool *ret_defer)
{
	struct lstats_digest dg;
	struct delta_sample cur;
	struct iocount io;
	struct gt_export *e;
	struct lh_err err;
	int rc;

	e = gtable_export(&g->table, tg, nid, ino, &rc);
	if (e == NULL)
		return rc == -EINVAL ? 0 : rc;
	if (f->rc < 0) {
		/* Gone: the export stays known until it is no longer listed,
		 * so a passing failure does not make it new again. */
		if (!ltree_gone(f->rc))
			stats_trouble(tr, lt, nid,
			    f->rc == -EFBIG ? "larger than 64 KiB" :
			                      strerror(-f->rc));
		return 0;
	}
	gtable_prefetch(&g->table, tg, e);
	if (lstats_digest(&dg, f->text, f->len, lt->kind) == 0) {
		delta_sample_make(&cur, &dg.io, dg.samples, &dg.snapshot,
		    &dg.start);
	} else {
		/* Not a file as Lustre prints it: the general way, which
		 * also says what is wrong with it. */
		if (lstats_parse(g->st, f->text, f->len, LSTATS_PARSE_NO_MINMAX,
		        &err) < 0) {
			stats_trouble(tr, lt, nid, err.reason);
			return 0;
		}
		iocount_from_stats(&io, g->st, lt->kind);
		delta_sample_from(&cur, g->st, &io);
		if (lt->kind == LH_TARGET_MDT)
			mdops_from_stats(&dg.ops, g->st);
	}
	if (gtable_needs_uuid(e, &cur) &&
	    classify_export(g, e, lt, nid, remote, ret_defer) != 0)
		return 0;
	/* Per-op counts exist on MDTs only; an OST's stats have none. */
	return gtable_observe(&g->table, tg, e, &cur,
	    lt->kind == LH_TARGET_MDT ? &dg.ops : NULL);
}

/*
 * Files read ahead of their counting.  Between two files the kernel's
 * open, read and close run thousands of instructions of their own, and
 * the counting that follows each found its code, its branch history and
 * the table cold again; a run of files read one after another, then
 * counted one after another, keeps each side warm.  The table sees the
 * same calls in the same order: only the reads come earlier.
 */

static bool
ahead_full(const struct gather_ahead *a)
{
	return a->n == GATHER_AHEAD_FILES ||
	    GATHER_AHEAD_BYTES - a->used < GATHER_FILE_MAX + LTREE_NID_MAX;
}

/* Read <nid>/stats of lt into a (which must not be full). */
static void
ahead_read(struct gather_ahead *a, struct ltree_target *lt, const char *nid,
    size_t nidlen, uint64_t ino)
{
	struct ahead_item *it = &a->items[a->n++];
	char path[LTREE_NID_MAX + 16];
	size_t len = 0;

	nid_path(path, sizeof(path), nid, "stats");
	memcpy(a->buf + a->used, nid, nidlen + 1);
	it->ino = ino;
	it->nid = (uint32_t)a->used;
	a->used += nidlen + 1;
	it->text = (uint32_t)a->used;
	it->rc = ltree_read_stats_at(lt->exports_fd, path, &lt->open_flags,
	    a->buf + a->used, GATHER_FILE_MAX, &len);
	it->len = it->rc == 0 ? (uint32_t)len : 0;
	a->used += it->len;
}

/* Count what a holds, in the order it was read, and empty it.  Returns
 * 0 or -ENOMEM (the rest is dropped: the sweep stops). */
static int
ahead_count(struct gatherer *g, struct gt_target *tg, struct ltree_target *lt,
    struct sweep_trouble *tr)
{
	struct gather_ahead *a = &g->ahead;
	size_t i;
	int rc = 0;

	for (i = 0; i < a->n && rc == 0; i++) {
		const struct ahead_item *it = &a->items[i];
		struct read_file f = {a->buf + it->text, it->len, it->rc};

		rc = count_export(g, tg, lt, a->buf + it->nid, it->ino, tr, &f,
		    NULL, NULL);
	}
	a->n = 0;
	a->used = 0;
	return rc;
}

/* List one target's exports/ and read every NID directory in it. */
static int
gather_target(struct gatherer *g, struct ltree_target *lt,
    struct sweep_trouble *tr)
{
	struct gt_target *tg;
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int fd, rc = 0, listing = 0;

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
	while ((de = ltree_next_entry(d, &listing)) != NULL) {
		size_t n;

		/* The entries after this one, in the buffer the kernel filled
		 * with hundreds of them: by the time they are read, the opens
		 * and reads of as many files have pushed them out of the
		 * caches.  Only a hint: nothing is read through it. */
		__builtin_prefetch((const char *)de + de->d_reclen);
		__builtin_prefetch((const char *)de + de->d_reclen + 64);
		/* exports/ also holds the regular file "clear". */
		if (de->d_name[0] == '.' || ltree_nid_is_local(de->d_name) ||
		    (n = strlen(de->d_name)) >= LTREE_NID_MAX ||
		    !ltree_is_dir_entry(dirfd(d), de))
			continue;
		if (ahead_full(&g->ahead) &&
		    (rc = ahead_count(g, tg, lt, tr)) < 0)
			break;
		ahead_read(&g->ahead, lt, de->d_name, n, (uint64_t)de->d_ino);
	}
	/* (a count that failed has emptied the run already) */
	if (rc == 0)
		rc = ahead_count(g, tg, lt, tr);
	/* Only a complete listing says which exports are gone. */
	if (rc == 0 && listing == 0)
		gtable_target_listed(tg);
	else if (rc == 0 && !ltree_gone(-listing))
		log_warnx("%s: listing: %s", lt->path, strerror(listing));
	(void)closedir(d);
	return rc;
}

struct remote_ctx {
	struct gatherer *g;
	struct gt_target *tg;
	struct ltree_target *lt;
	struct sweep_trouble *tr;
};

static int
remote_export(void *arg, const struct sfeed_export *e, uint64_t ino,
    bool *ret_again)
{
	struct remote_ctx *c = arg;

	struct read_file f = {e->stats, e->stats_len, e->stats_rc};

	if (ltree_nid_is_local(e->nid))
		return 0;
	return count_export(c->g, c->tg, c->lt, e->nid, ino, c->tr, &f, e,
	    ret_again);
}

/* gather_target() through the stats reader (reader_read_target()).
 * Returns 0, -ENOMEM, or -EPIPE: the reader is gone (logged). */
static int
gather_target_remote(struct gatherer *g, size_t index, struct ltree_target *lt,
    struct sweep_trouble *tr)
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

int
gatherer_discover(struct gatherer *g)
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
	(void)outbox_add(&c->g->up.ob, r->fs, r->nid, &r->d, r->ops, r->span_us,
	    r->cspan_us, c->sweep_id, r->start_ns);
	return 0;
}

/* An MDT export's op deltas straight into the outbox's pending batch
 * (gtable_set_ops_sink()): only a lack of memory stops the sweep; a
 * record refused for want of room is counted by the outbox, as in
 * emit_record(). */
static int
sweep_ops(void *arg, const char *fs, const char *nid, const struct mdops *d)
{
	struct emit_ctx *c = arg;

	return outbox_add_ops(&c->g->up.ob, fs, nid, d, c->sweep_id) ==
	        -ENOMEM ?
	    -ENOMEM :
	    0;
}

/* Read every wanted target into the table; *ret_used: how many.
 * Returns 0, -EPIPE (the reader is gone) or -ENOMEM. */
static int
sweep_read(struct gatherer *g, struct sweep_trouble *tr, size_t *ret_used)
{
	size_t i, used = 0;
	int rc = 0;

	if (gatherer_discover(g) < 0)
		return -EPIPE;
	for (i = 0; i < g->tree.ntargets && rc == 0; i++) {
		if (!config_wants_fs(g->cfg, g->tree.targets[i].fs))
			continue;
		used++;
		rc = g->rd.fd < 0 ?
		    gather_target(g, &g->tree.targets[i], tr) :
		    gather_target_remote(g, i, &g->tree.targets[i], tr);
	}
	*ret_used = used;
	return rc;
}

/* No target, unreadable files: one line when it starts, one when over. */
static void
sweep_complain(struct gatherer *g, size_t used, const struct sweep_trouble *tr)
{
	const struct lh_config *cfg = g->cfg;

	if (used == 0) {
		if (ratelog_fail(&g->no_targets))
			log_warnx("no Lustre target found under %s%s; still "
			          "looking",
			    cfg->lustre_root,
			    cfg->nfilesystems > 0 ?
			        " for the configured filesystems" :
			        "");
	} else if (ratelog_recover(&g->no_targets)) {
		log_info("%zu Lustre targets found", used);
	}
	if (tr->unreadable > 0) {
		if (ratelog_fail(&g->troubled))
			log_warnx("%s%s", tr->first,
			    tr->unreadable > 1 ?
			        " (and more files like it; counted again "
			        "once readable)" :
			        "");
	} else if (ratelog_recover(&g->troubled)) {
		log_info("every stats file is readable again");
	}
}

/* The sweep's deltas into the outbox, numbered, saved, and sent.
 * *ret_save_ns: how long saving the state took (for the -v line: the
 * benchmarks tell the state file's share of a sweep by it). */
static void
sweep_deliver(struct gatherer *g, struct emit_ctx *ec, uint64_t *ret_save_ns)
{
	uint64_t t0;
	bool sealed;

	if (gtable_sweep_end(&g->table, emit_record, ec) < 0)
		log_warnx("sweep %" PRIu64 ": out of memory", ec->sweep_id);
	if (g->up.ob.dropped > g->dropped) {
		log_warnx("more than %zu clients: %" PRIu64 " records not sent",
		    (size_t)OUTBOX_MAX_KEYS, g->up.ob.dropped - g->dropped);
		g->dropped = g->up.ob.dropped;
	}
	/* Number the batch before saving: see outbox_seal().  What cannot
	 * be saved is not sent: after a restart from the older state the
	 * same deltas are computed again, and must not have been counted. */
	sealed = gatherer_seal_batch(g);
	t0 = clock_monotonic_ns();
	if (gatherer_save_state(g) < 0 && sealed)
		(void)outbox_unseal(&g->up.ob);
	*ret_save_ns = clock_monotonic_ns() - t0;
	uplink_kick(&g->up);
}

/* The process's CPU time so far, in seconds (0 if unknown). */
static double
clock_cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A sweep longer than the interval: one line when it starts, one when
 * sweeps fit again. */
static void
sweep_timed(struct gatherer *g, uint64_t sweep_id, uint64_t took_ns)
{
	unsigned interval = g->cfg->interval;

	if (took_ns > (uint64_t)interval * CLOCK_NS_PER_S) {
		if (ratelog_fail(&g->slow))
			log_warnx("sweep %" PRIu64 " took %.1f s, longer than "
			          "the interval (%u s): sweeps are skipped",
			    sweep_id, (double)took_ns / 1e9, interval);
	} else if (ratelog_recover(&g->slow)) {
		log_info("sweep %" PRIu64 " took %.1f s: within the interval "
		         "again",
		    sweep_id, (double)took_ns / 1e9);
	}
}

void
gatherer_sweep(struct gatherer *g, uint64_t sweep_ns)
{
	struct sweep_trouble tr;
	struct emit_ctx ec = {g, sweep_ns / CLOCK_NS_PER_S, 0};
	uint64_t t0 = clock_monotonic_ns(), t1, save_ns = 0;
	double cpu0 = clock_cpu_s();
	size_t used = 0;
	int rc;

	memset(&tr, 0, sizeof(tr));
	gtable_sweep_begin(&g->table, sweep_ns,
	    (uint64_t)g->cfg->interval * CLOCK_NS_PER_S);
	/* The table may have been made afresh since the last sweep (a
	 * state load): the sink is set for each sweep, and its context
	 * lives as long as the sweep. */
	gtable_set_ops_sink(&g->table, sweep_ops, &ec);
	rc = sweep_read(g, &tr, &used);
	gtable_set_ops_sink(&g->table, NULL, NULL);
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
	sweep_complain(g, used, &tr);
	sweep_deliver(g, &ec, &save_ns);
	t1 = clock_monotonic_ns();
	log_debug("sweep %" PRIu64 ": %zu targets, %zu exports, %zu clients "
	          "in %.3f s (%.3f s CPU, state saved in %.3f s)%s",
	    ec.sweep_id, used, gtable_nexports(&g->table), ec.nrecs,
	    (double)(t1 - t0) / 1e9, clock_cpu_s() - cpu0,
	    (double)save_ns / 1e9,
	    sender_connected(g->up.snd) ? "" : " (aggregator not connected)");
	sweep_timed(g, ec.sweep_id, t1 - t0);
}
