/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer's memory, and the arithmetic of a sweep.  Pure: no I/O, no
 * clock; daemon/gatherer.c reads the files and feeds what it read here.
 *
 *  - targets: the OSTs and MDTs found under the Lustre root, by name, with
 *    the identity (st_dev, st_ino) of their exports/ directory, so that a
 *    target re-created between two sweeps (failover, remount) is noticed
 *    even when its counters happen to have climbed back;
 *  - exports: per target, one flat array of the client NIDs it exports to,
 *    each with the counters last read (struct delta_sample), the inode of
 *    its NID directory (a directory re-created by exports/clear is a new
 *    export) and what its uuid file said, read once;
 *  - clients: one per (filesystem, NID), shared by that NID's exports on
 *    every target of the filesystem, where a sweep's deltas are summed.
 *
 * A sweep: gtable_sweep_begin(), then for each target listed
 * gtable_target(), for each NID directory listed gtable_export(), and for
 * each stats file read gtable_observe() (after gtable_classify() when
 * gtable_needs_uuid() says so); gtable_sweep_end() forgets what was not
 * listed and hands out one record per client.
 *
 * Spans (docs/protocol.md 4.4): each export's delta covers the time
 * between the snapshot_time of the file read now and the one read before.
 * A client's record sums targets whose spans differ slightly; for each
 * counter c the record carries span_c = D_c / sum_i(d_ci / s_i), so that
 * D_c / span_c is exactly the sum of each target's own rate.
 *
 * Metadata ops (mdops.h): only MDT targets keep their exports' previous
 * op counts (a side array parallel to exp[]), and only a table that has
 * seen an MDT keeps per-client op sums (parallel to clients[]), so an
 * OSS pays nothing for them.  An export's op deltas follow the kind of
 * delta delta_compute() decided for its counters; per-op rates share the
 * span of mds_ops.
 */
#ifndef LH_GTABLE_H
#define LH_GTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delta.h"
#include "hindex.h"
#include "iocount.h"
#include "lustre_tree.h"
#include "mdops.h"
#include "nid.h"

#define GT_NCOUNTERS 6 /* the fields of struct iocount, in order */

struct gt_client {
	char fs[LTREE_FS_MAX];
	char nid[NID_STR_MAX];
	bool peer;         /* a server on some target of fs: never reported */
	uint32_t nexports; /* exports referring to it */
	/* This sweep's sums. */
	bool observed;          /* at least one export read */
	struct iocount d;       /* deltas */
	double q[GT_NCOUNTERS]; /* sum of d_c / s, s in microseconds */
	uint64_t smin, smax;    /* export spans, microseconds */
	uint64_t start_ns;      /* earliest span start */
	bool ops;               /* MDT op deltas were added (gtable.cops) */
};

struct gt_export {
	uint32_t client; /* index into gtable.clients */
	uint8_t cls;     /* enum ltree_peer */
	bool classified; /* cls is known */
	/* First seen on a target new to us but not to Lustre (the
	 * configuration now reads more): a baseline, not a new export. */
	bool base;
	bool have;     /* prev holds a read */
	uint64_t ino;  /* of the NID directory, 0 if unknown */
	uint64_t seen; /* the last sweep that listed it */
	struct delta_sample prev;
	/* MDT: prev holds no op counts (state saved by an older version):
	 * the next op delta is a baseline unless the counters reset. */
	bool ops_unknown;
};

struct gt_target {
	char name[LTREE_TARGET_MAX];
	char fs[LTREE_FS_MAX];
	enum lh_target_kind kind;
	uint64_t dev, ino; /* of exports/ */
	uint64_t seen;     /* the last sweep that listed it */
	bool listed;       /* its exports/ was listed completely this sweep */
	bool base;         /* its new exports are baselines (see gtable) */
	struct gt_export *exp;
	/* MDT only (NULL on an OST): the op counts last read of each
	 * export, parallel to exp[] (same capacity). */
	struct mdops *ops;
	size_t nexp, cap;
	struct hindex index; /* by client index */
};

/* What a sweep reports for one client: the record of a SWEEP. */
struct gt_record {
	const char *fs;
	const char *nid;
	struct iocount d;
	uint64_t span_us;                /* the record's span */
	uint64_t cspan_us[GT_NCOUNTERS]; /* per counter; 0: span_us */
	uint64_t start_ns;               /* when the span starts */
	/* The op deltas summed over the client's MDT exports counted this
	 * sweep, or NULL: none (no MDT export, a baseline).  Valid during
	 * the emit call. */
	const struct mdops *ops;
};

struct gtable {
	struct gt_target **targets;
	size_t ntargets, tcap;
	struct gt_client *clients;
	size_t nclients, ccap;
	struct hindex cindex;   /* by (fs, nid) */
	uint64_t gen;           /* sweeps begun, 0 before the first */
	bool history;           /* a sweep completed, or state was restored */
	bool baseline;          /* this sweep is the very first: no deltas */
	uint64_t sweep_ns;      /* when this sweep started (its boundary) */
	uint64_t last_sweep_ns; /* the previous one, 0 if none */
	uint64_t gap_ns;        /* span of a delta the files do not time */
	/* Set by the caller for one sweep: targets not known yet were there
	 * all along (the configuration now reads more): baselines. */
	bool new_targets_are_old;
	/* This sweep's op sums, parallel to clients[] (capacity ccap), once
	 * an MDT target has been seen (mdt); NULL before. */
	struct mdops *cops;
	bool mdt;
};

void gtable_init(struct gtable *t);
void gtable_free(struct gtable *t);

/*
 * Start a sweep at sweep_ns (the wall-clock boundary).  interval_ns is the
 * span given to deltas the files cannot time (a new export) when there
 * was no previous sweep; otherwise the time since the previous sweep is.
 */
void
gtable_sweep_begin(struct gtable *t, uint64_t sweep_ns, uint64_t interval_ns);

/*
 * The target name (of filesystem fs, kind kind) was found, its exports/
 * being (dev, ino).  A target seen before with another (dev, ino) was
 * re-created: its exports are forgotten, and count from zero.  Returns
 * the target, or NULL (out of memory).
 */
struct gt_target *gtable_target(struct gtable *t, const char *name,
    const char *fs, enum lh_target_kind kind, uint64_t dev, uint64_t ino);

/* Every NID of tg was listed (the exports/ readdir completed): only then
 * are the exports not listed forgotten at the end of the sweep. */
void gtable_target_listed(struct gt_target *tg);

/*
 * The NID directory nid (inode ino, 0 if unknown) is listed under tg.
 * Returns its export, created if new, or NULL with *rc = -ENOMEM or
 * -EINVAL (a NID that is too long).  A directory whose inode changed was
 * re-created: it is a new export.
 */
struct gt_export *gtable_export(struct gtable *t, struct gt_target *tg,
    const char *nid, uint64_t ino, int *rc);

/* Whether the caller should read the export's uuid file before
 * gtable_observe(): on first sight, and for a stale export (empty uuid)
 * whose counters move. */
bool
gtable_needs_uuid(const struct gt_export *e, const struct delta_sample *cur);

/* What the uuid file said.  A server peer marks its (fs, NID) as a peer
 * on every target: never reported. */
void
gtable_classify(struct gtable *t, struct gt_export *e, enum ltree_peer cls);

/* Count cur, the counters just read from e's stats file (e an export of
 * tg), and on an MDT ops, the op counts read with them (NULL: all zero;
 * ignored on an OST). */
void gtable_observe(struct gtable *t, struct gt_target *tg, struct gt_export *e,
    const struct delta_sample *cur, const struct mdops *ops);

/* Called for each client record at the end of a sweep; a non-zero
 * return stops and is returned by gtable_sweep_end(). */
typedef int (*gtable_emit_fn)(void *arg, const struct gt_record *r);

/*
 * End the sweep: forget the targets not found and the exports not listed,
 * then emit a record for every client (peers excepted), zeros included.
 * Returns 0, the emit function's non-zero return, or -ENOMEM.
 */
int gtable_sweep_end(struct gtable *t, gtable_emit_fn emit, void *arg);

/* State restore (gstate.c): a target and an export as they were saved
 * (prev NULL: listed, never read).  prev_ops: an MDT export's op counts
 * read with prev, NULL when the state did not keep them (the next op
 * delta is then a baseline); ignored on an OST. */
struct gt_target *gtable_restore_target(struct gtable *t, const char *name,
    const char *fs, enum lh_target_kind kind, uint64_t dev, uint64_t ino);
int gtable_restore_export(struct gtable *t, struct gt_target *tg,
    const char *nid, uint64_t ino, enum ltree_peer cls, bool classified,
    const struct delta_sample *prev, const struct mdops *prev_ops);
/* Restoring is done: the previous sweep was at last_sweep_ns. */
void gtable_restored(struct gtable *t, uint64_t last_sweep_ns);

/* Counts, for logs: exports over all targets. */
size_t gtable_nexports(const struct gtable *t);

#endif
