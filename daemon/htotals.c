/* SPDX-License-Identifier: BSD-2-Clause */
/* The role's per-host counters and their file (htotals.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "hostsum.h"
#include "hosttotals.h"
#include "htotals.h"
#include "ledger.h"
#include "log.h"
#include "statefile.h"
#include "sweeps.h"

/* A file that will never load: set aside, the counters begin at zero. */
static void
set_aside(const struct htotals *h, const struct lh_err *err)
{
	char aside[PATH_MAX];
	struct lh_err e2;

	if (statefile_set_aside(h->path, (uint64_t)time(NULL), aside,
	        sizeof(aside), &e2) < 0) {
		log_warnx("%s: %s; cannot set it aside (%s): the counters "
		          "begin at zero and will replace it",
		    h->path, err->reason, e2.reason);
		return;
	}
	log_warnx("%s: %s; set aside as %s, the counters begin at zero",
	    h->path, err->reason, aside);
}

struct raise_ctx {
	struct ledger *ledger;
	const char *path;
};

/* A sender whose batches up to batch are in the counters: its ledger
 * entry raised to it, so that their resends are duplicates. */
static void
raise_one(void *arg, const char *sender, uint64_t batch)
{
	struct raise_ctx *c = arg;
	struct lh_err err;
	uint64_t cur = 0;

	if (ledger_lookup(c->ledger, sender, &cur, &err) < 0) {
		log_warnx("%s: %s: ledger entry unreadable (%s); not raised",
		    c->path, sender, err.reason);
		return;
	}
	if (cur >= batch)
		return;
	if (ledger_set(c->ledger, sender, batch, &err) < 0) {
		log_warnx("%s: %s: cannot raise the ledger from batch %" PRIu64
		          " to %" PRIu64 ": %s",
		    c->path, sender, cur, batch, err.reason);
		return;
	}
	log_info("%s: %s: ledger raised from batch %" PRIu64 " to %" PRIu64
	         ", the batches already in the counters",
	    c->path, sender, cur, batch);
}

static int
load(struct htotals *h)
{
	struct lh_err err;
	size_t n;
	int rc;

	lh_err_clear(&err);
	rc = hosttotals_load(h->t, h->path, &err);
	if (rc == -ENOENT) {
		log_info("%s: none; the counters begin at zero", h->path);
		return 0;
	}
	if (rc == -EBADMSG) {
		set_aside(h, &err);
		return 0;
	}
	if (rc < 0) {
		log_warnx("%s: %s; cannot start without it (it is kept: fix "
		          "it or remove it to begin the counters at zero)",
		    h->path,
		    err.reason[0] != '\0' ? err.reason : strerror(-rc));
		return -1;
	}
	(void)hosttotals_rows(h->t, &n);
	log_info("%s: %zu (host, filesystem) counters since sweep %" PRIu64,
	    h->path, n, hosttotals_last_sweep(h->t));
	return 0;
}

int
htotals_open(struct htotals *h, const char *state_dir, struct ledger *ledger)
{
	struct raise_ctx c;

	memset(h, 0, sizeof(*h));
	if (asprintf(&h->path, "%s/%s", state_dir, HTOTALS_FILE) < 0) {
		h->path = NULL;
		log_warnx("out of memory");
		return -1;
	}
	if (hosttotals_new(HTOTALS_MAX_ROWS, &h->t) < 0) {
		log_warnx("out of memory");
		return -1;
	}
	if (load(h) < 0)
		return -1;
	c.ledger = ledger;
	c.path = h->path;
	hosttotals_each_mark(h->t, raise_one, &c);
	return 0;
}

void
htotals_add(struct htotals *h, uint64_t sweep_id,
    const struct hostsum_row *rows, size_t nrows,
    const struct sweeps_fs_total *fs, size_t nfs)
{
	bool nomem = false;
	size_t i;

	hosttotals_closed(h->t, sweep_id);
	h->dirty = h->dirty || nrows > 0 || nfs > 0;
	for (i = 0; i < nrows; i++) {
		int rc = hosttotals_add(h->t, sweep_id, &rows[i]);

		if (rc == 1 && !h->capped) {
			log_warnx("totals: %zu (host, filesystem) rows, the "
			          "most kept: %s in %s and later new ones are "
			          "counted only in their filesystem's totals",
			    HTOTALS_MAX_ROWS, rows[i].host, rows[i].fs);
			h->capped = true;
		}
		nomem = nomem || rc < 0;
	}
	for (i = 0; i < nfs; i++)
		nomem = hosttotals_add_fs(h->t, sweep_id, &fs[i]) < 0 || nomem;
	if (nomem)
		log_warnx("sweep %" PRIu64 ": out of memory; some counters "
		          "miss it",
		    sweep_id);
}

void
htotals_save(struct htotals *h, const struct sweeps_ack *acks, size_t nacks)
{
	struct lh_err err;
	size_t i;
	int rc = 0;

	/* An idle sweep (no batch, nothing counted) changes nothing: the
	 * file stays, unless the last save failed. */
	if (!h->dirty && nacks == 0 && !h->rl.failing)
		return;
	for (i = 0; i < nacks && rc == 0; i++)
		rc = hosttotals_mark(h->t, acks[i].sender, acks[i].batch);
	if (rc == 0)
		rc = hosttotals_save(h->t, h->path, &err);
	else
		(void)lh_err_set(&err, 0, rc, "out of memory");
	if (rc == 0) {
		h->dirty = false;
		if (ratelog_recover(&h->rl))
			log_warnx("%s: written again after %" PRIu64
			          " failed saves",
			    h->path, h->failed);
		h->failed = 0;
		return;
	}
	/* A file left behind would be an older value at a restart. */
	(void)unlink(h->path);
	h->failed++;
	if (ratelog_fail(&h->rl))
		log_warnx("%s: %s; removed, so that a restart begins the "
		          "counters at zero (they go on in memory)",
		    h->path, err.reason);
}

void
htotals_free(struct htotals *h)
{
	hosttotals_free(h->t);
	free(h->path);
	memset(h, 0, sizeof(*h));
}
