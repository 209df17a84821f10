/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The relay's state file (docs/relay.md): what it has taken from its
 * upstream senders and not yet had acknowledged by the clusters'
 * aggregators, so that neither a relay restart nor a downstream outage
 * loses or doubles anything.  It holds, written together after each
 * sweep (atomically, checksummed: statefile.h):
 *
 *  - the ledger entries of the batches that sweep took (each upstream
 *    sender's last batch counted): written in the same file as the deltas
 *    they became, so that after a crash a sender's resend is recognised
 *    exactly when its deltas were kept;
 *  - each route's outbox (obstate.h): the batch in flight to its
 *    downstream and the pending one.
 *
 * Layout: "LHRS", be32 version, be64 saved at (ns); ledger entries:
 * count, each str8 sender, batch; routes: count, each str8 route name,
 * be64 last batch number, the outbox; then the SHA-256.
 */
#ifndef LH_RSTATE_H
#define LH_RSTATE_H

#include <stddef.h>
#include <stdint.h>

struct lh_err;
struct outbox;

struct rstate_ledger {
	const char *sender;
	uint64_t batch;
};

struct rstate_route {
	const char *name;
	const struct outbox *ob;
};

/* Returns 0, or a negative errno with err set. */
int rstate_save(const char *path, const struct rstate_ledger *l, size_t nl,
    const struct rstate_route *r, size_t nr, struct lh_err *err);

/* What a restore hands over. */
struct rstate_cb {
	/* A ledger entry.  Non-zero stops the restore. */
	int (*ledger)(void *arg, const char *sender, uint64_t batch);
	/* A route's outbox, restored: the callee takes it (moves or
	 * drains and frees it).  Non-zero stops the restore. */
	int (*route)(void *arg, const char *name, struct outbox *ob);
	void *arg;
};

/* Restore from path.  Returns 0, -ENOENT (no file), a callback's return,
 * or another negative errno with err set. */
int
rstate_load(const char *path, const struct rstate_cb *cb, struct lh_err *err);

/* Restore from a buffer (the fuzz target's entry). */
int rstate_decode(const void *p, size_t n, const struct rstate_cb *cb,
    struct lh_err *err);

#endif
