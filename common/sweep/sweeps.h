/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The aggregator's sweeps: SWEEP batches from every gatherer summed per
 * (filesystem, client NID) into the sweep they belong to, and each sweep
 * closed as soon as every expected gatherer has reported it, or at its
 * deadline.  Pure: no I/O, no clock of its own (callers pass now_ns).
 *
 *  - A batch belongs to the sweep of its frame's sweep id (rounded down to
 *    this aggregator's interval).  A batch for a sweep already closed is
 *    late: it is folded into the oldest open sweep, with its own span, so
 *    its deltas are never lost and its rate is that of its own window: no
 *    spike.  A batch ahead of the oldest open sweep (a gatherer's clock
 *    ahead, or a fast gatherer) waits in its own sweep, at most
 *    SWEEPS_AHEAD sweeps ahead.
 *  - A sender has normally one batch unacknowledged (it waits for the ACK
 *    before sending the next), and batches are acknowledged when the sweep
 *    holding them closes.  A sweep can still get two of one sender (its
 *    late batch folded in, then its next one on time): for each client
 *    they combine as deltas over summed spans, so a steady rate is shown
 *    as that rate, never as a spike; each batch is kept until its sweep
 *    closes for that.  A client's rate is the sum over senders of its
 *    delta / span, counter by counter (docs/protocol.md 4.4).
 *  - A batch never goes into a sweep before the one holding its sender's
 *    previous batch, so acknowledgements follow batch order.
 *  - A batch already in an open sweep and sent again (the gatherer
 *    reconnected) is not counted again; it is acknowledged, on the new
 *    connection, when that sweep closes.  A batch at or below the sender's
 *    ledger entry is a duplicate for the caller to acknowledge at once.
 *  - The roster: a sweep expects the configured gatherers and every sender
 *    that reported one of the last roster_sweeps sweeps.
 */
#ifndef LH_SWEEPS_H
#define LH_SWEEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iocount.h"
#include "mdops.h"
#include "msg.h"

struct lh_err;
struct sweeps;

#define SWEEPS_AHEAD     2 /* open sweeps beyond the oldest */
#define SWEEPS_NCOUNTERS 6 /* struct iocount's fields, in order */

struct sweeps_conf {
	unsigned interval_s;
	unsigned deadline_ms;   /* after the boundary; below the interval */
	unsigned roster_sweeps; /* 0: 3 */
	char *const *expected;  /* names always expected (may be NULL) */
	size_t nexpected;
};

/* Per-operation metadata counts (mdops.h) of a client or a filesystem
 * in a closed sweep: deltas, and rates over the span of mds_ops. */
struct sweeps_ops {
	struct mdops d;
	double rate[MDOPS_N];
};

/* One (filesystem, client NID) of a closed sweep. */
struct sweeps_client {
	const char *fs;
	const char *nid;
	struct iocount d;              /* deltas, summed over senders */
	double rate[SWEEPS_NCOUNTERS]; /* per second: sum of delta / span */
	const struct sweeps_ops *ops;  /* NULL: no sender gave any */
	unsigned nsenders;             /* batches that named it */
};

/* A filesystem's totals over all its clients, in a closed sweep. */
struct sweeps_fs_total {
	const char *fs;
	struct iocount d;
	double rate[SWEEPS_NCOUNTERS];
	struct sweeps_ops ops; /* zeros when no client had any */
	size_t nclients;
};

/* A batch to acknowledge now that its sweep is closed. */
struct sweeps_ack {
	char sender[MSG_NAME_MAX];
	uint64_t batch;
	uint64_t peer; /* the caller's connection id */
	uint64_t seq;  /* the frame's sequence number */
};

/* What a closed sweep was; valid until the next sweeps_close(). */
struct sweeps_report {
	uint64_t sweep_id; /* seconds since the epoch */
	bool by_deadline;  /* closed at the deadline, someone missing */
	size_t nclients;
	size_t nreported;              /* senders whose batch is in it */
	size_t nlate;                  /* of which late batches folded in */
	char (*missing)[MSG_NAME_MAX]; /* expected, not reported */
	size_t nmissing;
	struct sweeps_ack *acks;
	size_t nacks;
};

enum sweeps_verdict {
	SWEEPS_ON_TIME = 0, /* counted in its own sweep */
	SWEEPS_LATE,        /* its sweep was closed: folded into the oldest */
	SWEEPS_AHEAD_OF_US, /* counted in a later open sweep */
	SWEEPS_RESEND,      /* already counted: acknowledged at close */
	SWEEPS_DUPLICATE,   /* at or below the ledger: acknowledge now */
};

typedef int (*sweeps_client_fn)(void *arg, const struct sweeps_client *c);
typedef int (*sweeps_fs_fn)(void *arg, const struct sweeps_fs_total *t);

/* The oldest open sweep is the one now_ns is in.  Returns 0, -EINVAL
 * (bad configuration) or -ENOMEM. */
int
sweeps_new(const struct sweeps_conf *c, uint64_t now_ns, struct sweeps **ret);
void sweeps_free(struct sweeps *s);

/*
 * Decode a SWEEP frame's payload (authenticated), checked whole, in one
 * pass (msg_sweep_stage()), its header into *ret, its records kept for
 * sweeps_add() of the same payload next.  Returns 0 or a negative errno
 * with err set (-EBADMSG: malformed, as msg_sweep_decode() says).
 */
int sweeps_decode(struct sweeps *s, const uint8_t *payload, size_t n,
    struct msg_sweep *ret, struct lh_err *err);

/*
 * A SWEEP frame (authenticated) from sender: sweep_id from its header,
 * payload its SWEEP message, hdr what sweeps_decode() made of that
 * payload just before (NULL, or another payload decoded since: decoded
 * here); when it is counted, hdr->nops_dropped is set to the records
 * whose op counts the decoder left out.  safe_batch: the sender's highest
 * batch in the caller's ledger.  peer and seq say where to acknowledge
 * it.  Returns an enum sweeps_verdict, or a negative errno with err set
 * (a malformed SWEEP: nothing of it is counted).
 */
int sweeps_add(struct sweeps *s, const char *sender, uint64_t sweep_id,
    struct msg_sweep *hdr, const uint8_t *payload, size_t n,
    uint64_t safe_batch, uint64_t peer, uint64_t seq, struct lh_err *err);

/* Batches counted in the oldest open sweep so far. */
size_t sweeps_open_batches(const struct sweeps *s);

/* Clients (fs, NID) the aggregator knows by id: those named in the last
 * hour or so (sweeps.c, PRUNE_AFTER), for tests and logs. */
size_t sweeps_nclients(const struct sweeps *s);

/* The oldest open sweep, and when it must close at the latest (ns). */
uint64_t sweeps_open_id(const struct sweeps *s);
uint64_t sweeps_deadline_ns(const struct sweeps *s);

/* True when the oldest open sweep can close: its deadline has passed, or
 * its boundary has and every expected sender reported it. */
bool sweeps_ready(const struct sweeps *s, uint64_t now_ns);

/* When the oldest open sweep will be ready at the latest: its boundary if
 * every expected sender already reported it (early timers), else its
 * deadline (ns). */
uint64_t sweeps_next_ns(const struct sweeps *s);

/*
 * Close the oldest open sweep: call client_fn for each client in it and
 * fs_fn for each filesystem's totals (either may be NULL), fill rep, and
 * open the next.  A callback's non-zero return stops the calls and is
 * returned; the sweep is closed all the same.
 */
int sweeps_close(struct sweeps *s, uint64_t now_ns, sweeps_client_fn client_fn,
    sweeps_fs_fn fs_fn, void *arg, struct sweeps_report *rep);

/* A reloaded configuration: the names always expected and the deadline
 * change from now on; the interval cannot.  Returns 0, -EINVAL (another
 * interval, a deadline not below it, a name too long) or -ENOMEM; s is
 * unchanged then. */
int sweeps_reconfigure(struct sweeps *s, const struct sweeps_conf *c);

/* Expect sender from the oldest open sweep on, as if it had reported the
 * previous one (an aggregator restarted: the gatherers of its ledger).
 * Returns 0 or -ENOMEM. */
int sweeps_expect(struct sweeps *s, const char *sender);

/*
 * The caller's wall clock stepped: relabel the open sweeps, and what
 * refers to them, by shift_s seconds (a multiple of the interval), so
 * that sweeps stay labelled by the wall clock while each closes when it
 * was due (issue 15, item 7).  A shift that would take the oldest open
 * sweep below 0 takes it to 0.
 */
void sweeps_shift(struct sweeps *s, int64_t shift_s);

/* The sender's last batch counted in an open sweep (0: none), so that
 * the caller can tell a resend before decoding it. */
uint64_t sweeps_pending_batch(const struct sweeps *s, const char *sender);

#endif
