/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The role's per-host counters (common/sweep/hosttotals.h) and their file,
 * state_dir/totals: loaded at the start (a ledger behind the file raised
 * to it), every closed sweep added and saved just before the ledger
 * learns the sweep's batches (docs/reliability.md, "The counters").  The
 * event loop's side: the log lines, the file's path, the cap.
 */
#ifndef LH_HTOTALS_H
#define LH_HTOTALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ratelog.h"

struct hostsum_row;
struct hosttotals;
struct ledger;
struct sweeps_ack;
struct sweeps_fs_total;

#define HTOTALS_FILE     "totals"
#define HTOTALS_MAX_ROWS ((size_t)1000000) /* (host, fs) rows */

struct htotals {
	struct hosttotals *t;
	char *path;
	bool capped;       /* the cap's line was logged */
	struct ratelog rl; /* saving fails: one line, one when it works */
	uint64_t failed;   /* saves failed in the current outage */
	bool dirty;        /* changed since the last save */
};

/*
 * Load state_dir/totals (none: the counters begin at zero; damaged: set
 * aside, begin at zero; each with one line), then raise each ledger entry
 * below the file's mark to it (one line per sender).  Returns 0, or -1
 * after one line (out of memory, or a file that cannot be read now and
 * must not be overwritten).
 */
int
htotals_open(struct htotals *h, const char *state_dir, struct ledger *ledger);

/* A closed sweep's per-host rows and filesystem totals (none: it still
 * is the last sweep). */
void htotals_add(struct htotals *h, uint64_t sweep_id,
    const struct hostsum_row *rows, size_t nrows,
    const struct sweeps_fs_total *fs, size_t nfs);

/* The batches of acks are about to be recorded in the ledger (NULL, 0:
 * none): marked, then the file saved.  A failure is one line (and one
 * when it works again), and the old file is removed, so that a restart
 * begins the counters at zero rather than behind (a step back reads as a
 * reset and a spike). */
void
htotals_save(struct htotals *h, const struct sweeps_ack *acks, size_t nacks);

void htotals_free(struct htotals *h);

#endif
