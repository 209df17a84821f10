/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Counters that only go up: for each (host, filesystem), the sum of the
 * exact deltas of every closed sweep since the counters began (bytes and
 * operations, and the metadata operations one by one), beside the rates
 * of the last sweep it was in; and the same per filesystem over all its
 * clients.  They are what a Prometheus page shows as _total counters and
 * what the JSON API and `lharvest top` show as totals: made from deltas
 * that already survived Lustre's resets, kept across restarts of the
 * aggregator by a file saved with the ledger, so none of them ever goes
 * back (a counter that goes back is a reset to Prometheus, whose rate()
 * would then count the whole value again).
 *
 * Saved with the ledger: the file holds, beside the counters, the highest
 * batch of each sender whose deltas they include.  It is written just
 * before the ledger learns those batches, so at a restart a ledger entry
 * behind the file's is raised to it (those batches are in the counters:
 * their resends must not count again), and one ahead of it means a batch
 * the counters missed (a crash between the two writes cannot do that:
 * the file goes first).
 *
 * Cardinality: at most max_rows (host, filesystem) rows; a new one past
 * that is not made (hosttotals_add() says so, for one log line) and its
 * deltas are counted only in its filesystem's totals.  Rows are never
 * dropped while the process runs (a host that stops doing I/O keeps its
 * counters, as a Prometheus counter must).
 *
 * Pure: no I/O but hosttotals_save()/hosttotals_load() on the paths the
 * caller gives.
 */
#ifndef LH_HOSTTOTALS_H
#define LH_HOSTTOTALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iocount.h"
#include "mdops.h"
#include "sweeps.h"

struct hostsum_row;
struct lh_err;

/* One (host, filesystem). */
struct hosttotals_row {
	const char *host; /* interned: valid while the table lives */
	const char *fs;
	struct iocount total;          /* since the counters began */
	uint64_t op_total[MDOPS_N];    /* metadata ops, one by one */
	double rate[SWEEPS_NCOUNTERS]; /* the last sweep it was in */
	double oprate[MDOPS_N];
	uint64_t last_sweep; /* that sweep's id */
};

/* One filesystem, over all its clients (mapped to a host or not). */
struct hosttotals_fs {
	const char *fs;
	struct iocount total;
	uint64_t op_total[MDOPS_N];
	double rate[SWEEPS_NCOUNTERS]; /* the last sweep */
	double oprate[MDOPS_N];
	size_t clients; /* in the last sweep */
	uint64_t last_sweep;
};

struct hosttotals;

/* max_rows 0: no cap.  Returns 0 and *ret, or -ENOMEM. */
int hosttotals_new(size_t max_rows, struct hosttotals **ret);
void hosttotals_free(struct hosttotals *t);

/* A reload's cap (rows over it are kept; no new one is made). */
void hosttotals_set_max(struct hosttotals *t, size_t max_rows);

/*
 * A closed sweep's per-host row r (its deltas and rates, hostsum.h):
 * added to (r->host, r->fs).  Returns 0, 1 (the cap is reached: the row
 * was not made, its deltas are only in the filesystem's totals), or
 * -ENOMEM.
 */
int hosttotals_add(struct hosttotals *t, uint64_t sweep_id,
    const struct hostsum_row *r);

/* A closed sweep's filesystem totals.  Returns 0 or -ENOMEM. */
int hosttotals_add_fs(struct hosttotals *t, uint64_t sweep_id,
    const struct sweeps_fs_total *ft);

/* The batches of sender up to batch are in the counters.  Returns 0 or
 * -ENOMEM. */
int hosttotals_mark(struct hosttotals *t, const char *sender, uint64_t batch);

/* The last sweep added (0: none since the counters began). */
uint64_t hosttotals_last_sweep(const struct hosttotals *t);

/* Sweep sweep_id closed, whatever was in it: the last sweep from now on
 * (a row whose last_sweep is older was not in it: its rates are not
 * current), even when nothing was added (every gatherer away). */
void hosttotals_closed(struct hosttotals *t, uint64_t sweep_id);

/* The rows, in the order they were made; valid until the next add. */
const struct hosttotals_row *
hosttotals_rows(const struct hosttotals *t, size_t *ret_n);
const struct hosttotals_fs *
hosttotals_fss(const struct hosttotals *t, size_t *ret_n);

/* The row of (host, fs), or NULL. */
const struct hosttotals_row *
hosttotals_find(const struct hosttotals *t, const char *host, const char *fs);

/* Rows refused by the cap since the start (each (host, fs) once). */
size_t hosttotals_refused(const struct hosttotals *t);

/* Each sender mark, for the caller to raise its ledger to. */
typedef void (
    *hosttotals_mark_fn)(void *arg, const char *sender, uint64_t batch);
void hosttotals_each_mark(const struct hosttotals *t, hosttotals_mark_fn fn,
    void *arg);

/*
 * Save the counters and marks to path atomically (a temporary, fsync,
 * rename, fsync of the directory; checksummed).  Returns 0, or a negative
 * errno with err naming the file and the reason.
 */
int hosttotals_save(const struct hosttotals *t, const char *path,
    struct lh_err *err);

/*
 * Replace t's contents with path's.  Returns 0, -ENOENT (no file: t is
 * left empty, the counters begin now), or -EBADMSG / another negative
 * errno with err naming the file and the reason (t left empty).  The
 * rates are not in the file: 0 until a row is in a sweep again.
 */
int hosttotals_load(struct hosttotals *t, const char *path, struct lh_err *err);

/* The same from bytes in memory (the fuzz target's way in). */
int hosttotals_decode(struct hosttotals *t, const uint8_t *buf, size_t n,
    struct lh_err *err);

#endif
