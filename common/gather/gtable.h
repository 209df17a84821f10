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
 *    each with the counters last read (a struct delta_sample, packed in
 *    56 bytes: struct gt_export), the inode of its NID directory (a
 *    directory re-created by exports/clear is a new export) and what its
 *    uuid file said, read once; found by client index (gt_target.slot),
 *    and most often at once, as the next one listed (gt_target.cursor);
 *  - clients: one per (filesystem, NID), shared by that NID's exports on
 *    every target of the filesystem, where a sweep's deltas are summed
 *    (only the clients whose counters moved get sums: gtable.sums).
 *    Their NIDs are kept once, in gtable.names.
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
 * op counts (a side array parallel to exp[]), and only the clients whose
 * op counts moved get op sums (gtable.cops), so an OSS pays nothing for
 * them; with an op sink (gtable_set_ops_sink(): the gatherer's), none
 * do, the deltas going to the sink as they are read.  An export's op
 * deltas follow the kind of delta delta_compute() decided for its
 * counters; per-op rates share the span of mds_ops.
 */
#ifndef LH_GTABLE_H
#define LH_GTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delta.h"
#include "fsnames.h"
#include "hindex.h"
#include "iocount.h"
#include "lustre_tree.h"
#include "mdops.h"
#include "msg.h"
#include "nid.h"
#include "strpool.h"

#define GT_NCOUNTERS 6 /* the fields of struct iocount, in order */

/* An MDT export's op counts, low 32 bits of each. */
struct gt_ops32 {
	uint32_t v[MDOPS_N];
};

/* Exports and clients are limited to what 24 bits can number. */
#define GT_INDEX_MAX ((uint32_t)1 << 24)

struct gt_client {
	uint32_t name; /* its NID: an offset into gtable.names */
	/* The NID it is reported under (gtable_client_out()): the same
	 * offset, unless the name is not in canonical form. */
	uint32_t out;
	uint16_t fs;       /* its filesystem: an index into gtable.fsn */
	bool peer;         /* a server on some target of fs: never reported */
	bool observed;     /* this sweep: at least one export read */
	uint32_t nexports; /* exports referring to it */
	/* This sweep's sums of what moved, when something did: positions
	 * in gtable.sums and gtable.cops, or HINDEX_NONE (all zero).  An
	 * idle client, most of them most of the time, costs no more. */
	uint32_t sums;
	uint32_t ops;
	uint64_t smin, smax; /* export spans, microseconds */
	uint64_t start_ns;   /* earliest span start */
};

/* A client's deltas in a sweep, and what makes its spans exact. */
struct gt_sums {
	struct iocount d;       /* deltas */
	double q[GT_NCOUNTERS]; /* sum of d_c / s, s in microseconds */
};

/*
 * One export, in 56 bytes: an OSS holds one per client per OST, and they
 * are most of its memory (docs/performance.md).  What its stats file said
 * last time is a struct delta_sample, kept smaller:
 *  - without the counter the target's kind never has (an OST has no
 *    mds_ops, an MDT no oss_ops);
 *  - read_ops, write_ops and the total of all samples as their low 32
 *    bits: each is only ever compared with the next read's, and moves by
 *    far less than 2^31 in a sweep, so serial-number arithmetic (RFC 1982)
 *    gives the same answers as the whole value.  read_ops and write_ops
 *    are the sample counts of the read_bytes and write_bytes lines, whose
 *    sums (kept whole, as a busy client moves more than 2 GiB through one
 *    OST in a sweep) go down with them at a reset; oss_ops and mds_ops
 *    stay whole too, so that an MDT export, which may move no bytes,
 *    still sees every reset its counters show;
 *  - start_time as a 32-bit tag (gtable_start_tag()): it is only ever
 *    tested for a change.
 * gtable_export_prev() gives it back in that form, which is also the
 * form the state file keeps (version 5).
 */
#define GT_INO_BITS 26 /* of the NID directory's inode, kept */
#define GT_INO_MASK (((uint32_t)1 << GT_INO_BITS) - 1)

struct gt_export {
	uint64_t prev_bytes[2]; /* read, write */
	uint64_t prev_snap_ns;
	uint64_t prev_ops;       /* oss_ops on an OST, mds_ops on an MDT */
	uint32_t prev_n[2];      /* read_ops, write_ops: low 32 bits */
	uint32_t prev_samples;   /* low 32 bits */
	uint32_t prev_start_tag; /* gtable_start_tag(start_ns) */
	unsigned client : 24;    /* index into gtable.clients */
	unsigned cls : 2;        /* enum ltree_peer */
	unsigned classified : 1; /* cls is known */
	/* First seen on a target new to us but not to Lustre (the
	 * configuration now reads more): a baseline, not a new export. */
	unsigned base : 1;
	unsigned have : 1;   /* prev_* hold a read */
	unsigned listed : 1; /* listed by this sweep */
	/* MDT: prev holds no op counts (state saved by an older version):
	 * the next op delta is a baseline unless the counters reset. */
	unsigned ops_unknown : 1;
	/* Changed since the state journal last wrote it (gstate_journal.c):
	 * anything but the snapshot time of an idle read. */
	unsigned changed : 1;
	/* The NID directory's inode, its low GT_INO_BITS bits (0 if
	 * unknown): a directory re-created with the same ones still shows
	 * as a reset, its counters having gone down. */
	unsigned ino : GT_INO_BITS;
	/* A stale export that starts moving has its uuid read again
	 * (gtable_needs_uuid()): once per spell of moving reads (uuid_spell:
	 * this one was dealt with), and each time that still finds it
	 * stale, the next 1, 2, 4, then 7 spells do not look (uuid_skip
	 * left to wait, uuid_level how many times it was found so). */
	unsigned uuid_skip : 3;
	unsigned uuid_level : 2;
	unsigned uuid_spell : 1;
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
	 * export, parallel to exp[] (same capacity), as their low 32 bits:
	 * like the samples total, each is only ever compared with the next
	 * read's (see struct gt_export). */
	struct gt_ops32 *ops;
	size_t nexp, cap;
	/* By client index: the position of its export in exp[], or
	 * HINDEX_NONE; entries from nslot on are HINDEX_NONE too. */
	uint32_t *slot;
	size_t nslot, slotcap;
	/* Where the next export listed probably is: a directory lists its
	 * entries in the same order every time, so that most lookups are
	 * one string comparison. */
	size_t cursor;
	/* This sweep: exports read idle (only their snapshot time moved)
	 * and not changed otherwise, for the state journal. */
	size_t nidle;
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
	 * sweep, or NULL: all zero (no MDT export, a baseline, or no op
	 * moved).  Valid during the emit call. */
	const struct mdops *ops;
};

/*
 * Where an export's op deltas go as they are counted, when the caller
 * sets one (gtable_set_ops_sink()): (fs, nid) and the deltas of one MDT
 * export.  The client's records then carry no op sums (gt_record.ops
 * NULL): the op counts of a busy MDS are not held twice, once per client
 * here and once in the caller's batch.  Returns 0 or -ENOMEM (the
 * read is then not counted, as if it failed: gtable_observe()).
 */
typedef int (*gtable_ops_fn)(void *arg, const char *fs, const char *nid,
    const struct mdops *d);

struct gtable {
	struct gt_target **targets;
	size_t ntargets, tcap;
	struct gt_client *clients;
	size_t nclients, ccap;
	struct hindex cindex; /* by (fs, nid) */
	/* Every client's NID once, NUL-terminated (gt_client.name), and the
	 * filesystems' names (gt_client.fs): kept apart from the clients,
	 * whose NIDs would otherwise take NID_STR_MAX bytes each. */
	struct strpool names;
	struct fsnames fsn;
	uint64_t gen;           /* sweeps begun, 0 before the first */
	bool history;           /* a sweep completed, or state was restored */
	bool baseline;          /* this sweep is the very first: no deltas */
	uint64_t sweep_ns;      /* when this sweep started (its boundary) */
	uint64_t last_sweep_ns; /* the previous one, 0 if none */
	uint64_t gap_ns;        /* span of a delta the files do not time */
	/* Set by the caller for one sweep: targets not known yet were there
	 * all along (the configuration now reads more): baselines. */
	bool new_targets_are_old;
	/* This sweep's sums of the clients whose counters moved, and op
	 * sums of those whose MDT op counts did (gt_client.sums, .ops). */
	struct gt_sums *sums;
	size_t nsums, sumscap;
	struct mdops *cops;
	size_t ncops, copscap;
	/* The exports and targets the state journal last wrote, plus those
	 * added since: fewer now means some were forgotten. */
	size_t jexports, jtargets;
	/* The op deltas' sink, or NULL: into cops (gtable_set_ops_sink()). */
	gtable_ops_fn ops_fn;
	void *ops_arg;
};

void gtable_init(struct gtable *t);
void gtable_free(struct gtable *t);

/* Send every export's op deltas to fn as they are counted, instead of
 * summing them per client for the records (see gtable_ops_fn). */
void gtable_set_ops_sink(struct gtable *t, gtable_ops_fn fn, void *arg);

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
 * gtable_observe(), asked once per read: on first sight, and for a stale
 * export (empty uuid) whose counters move.  A stale export that keeps
 * moving, a client that reconnects and goes idle again between two
 * sweeps, is looked at less often while its uuid keeps saying stale
 * (struct gt_export): this call counts those reads down. */
bool gtable_needs_uuid(struct gt_export *e, const struct delta_sample *cur);

/* What the uuid file said.  A server peer marks its (fs, NID) as a peer
 * on every target: never reported. */
void
gtable_classify(struct gtable *t, struct gt_export *e, enum ltree_peer cls);

/* Count cur, the counters just read from e's stats file (e an export of
 * tg), and on an MDT ops, the op counts read with them (NULL: all zero;
 * ignored on an OST).  Returns 0, or -ENOMEM with nothing changed. */
int gtable_observe(struct gtable *t, struct gt_target *tg, struct gt_export *e,
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
 * (prev NULL: listed, never read; else in gtable_export_prev()'s form,
 * samples and start_ns tag truncated to 32 bits).  prev_ops: an MDT export's op
 * counts read with prev, NULL when the state did not keep them (the next op
 * delta is then a baseline); ignored on an OST. */
struct gt_target *gtable_restore_target(struct gtable *t, const char *name,
    const char *fs, enum lh_target_kind kind, uint64_t dev, uint64_t ino);
int gtable_restore_export(struct gtable *t, struct gt_target *tg,
    const char *nid, uint64_t ino, enum ltree_peer cls, bool classified,
    const struct delta_sample *prev, const struct mdops *prev_ops);
/* The same for a state journal's record: the export is updated if it
 * exists, created if not, and marked changed (gt_export.changed). */
int gtable_update_export(struct gtable *t, struct gt_target *tg,
    const char *nid, uint64_t ino, enum ltree_peer cls, bool classified,
    const struct delta_sample *prev, const struct mdops *prev_ops);
/* A target by name, or NULL. */
struct gt_target *gtable_find_target(const struct gtable *t, const char *name);
/* Whether exports or targets were forgotten since gtable_journaled(). */
bool gtable_forgot(const struct gtable *t);
/* The state journal wrote everything: nothing is changed any more. */
void gtable_journaled(struct gtable *t);
/* Restoring is done: the previous sweep was at last_sweep_ns. */
void gtable_restored(struct gtable *t, uint64_t last_sweep_ns);

/* A client's NID and filesystem. */
static inline const char *
gtable_client_nid(const struct gtable *t, uint32_t client)
{
	return strpool_get(&t->names, t->clients[client].name);
}

/*
 * While export e of tg is being read, ask for what it and the next ones
 * in its order will touch first: e's client's sums of this sweep (and op
 * sums), which it adds its delta to once its file is parsed; the NID the
 * next export's name is compared with, its client, its own entry.
 * Between two exports the kernel's opens and reads push the table out of
 * the caches; fetched a step ahead, one stage per export, each is there
 * when it is needed.  Only a hint: nothing is read that the exports would
 * not read.
 */
static inline void
gtable_prefetch(const struct gtable *t, const struct gt_target *tg,
    const struct gt_export *e)
{
	const struct gt_client *ec = &t->clients[e->client];
	size_t i = tg->cursor;

	if (ec->sums != HINDEX_NONE) {
		__builtin_prefetch(&t->sums[ec->sums].d);
		__builtin_prefetch(&t->sums[ec->sums].q[GT_NCOUNTERS - 1]);
	}
	if (ec->ops != HINDEX_NONE && t->cops != NULL)
		__builtin_prefetch(&t->cops[ec->ops]);
	if (tg->ops != NULL)
		__builtin_prefetch(&tg->ops[e - tg->exp]);
	if (i + 2 < tg->nexp)
		__builtin_prefetch(&tg->exp[i + 2]);
	if (i + 1 < tg->nexp)
		__builtin_prefetch(&t->clients[tg->exp[i + 1].client]);
	if (i < tg->nexp) {
		const struct gt_client *c = &t->clients[tg->exp[i].client];

		__builtin_prefetch(strpool_get(&t->names, c->name));
	}
}

/* The NID a client is reported under: canonical (nid_canon()), so that
 * two directories whose names differ only in form ("@o2ib", "@o2ib0")
 * are one client on the wire, their deltas summed, never two records
 * the SWEEP refuses. */
static inline const char *
gtable_client_out(const struct gtable *t, uint32_t client)
{
	return strpool_get(&t->names, t->clients[client].out);
}

static inline const char *
gtable_client_fs(const struct gtable *t, uint32_t client)
{
	return fsnames_get(&t->fsn, t->clients[client].fs);
}

/* What e's stats file said when last read (e->have): into ret, with
 * read_ops, write_ops and samples as their low 32 bits and start_ns as its
 * tag. */
void gtable_export_prev(const struct gt_target *tg, const struct gt_export *e,
    struct delta_sample *ret);

/* The op counts an MDT export read last (tg an MDT, e->have), in the
 * form they are kept: low 32 bits of each.  Into ret. */
void gtable_export_ops(const struct gt_target *tg, const struct gt_export *e,
    struct mdops *ret);

/* The tag of a start_time (0: none), a 32-bit digest that changes when
 * the time does (but for one pair in 2^31). */
uint32_t gtable_start_tag(uint64_t start_ns);

/* Counts, for logs: exports over all targets. */
size_t gtable_nexports(const struct gtable *t);

#endif
