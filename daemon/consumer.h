/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The outputs of a closed sweep (docs/architecture.md, "the consumer
 * seam").  When a sweep closes, the role streams it through every
 * consumer it was given (main.c picks them per role): each client's row
 * with its host already mapped (daemon/hostview.c, once for all
 * consumers), each filesystem's totals, and then the whole sweep with
 * the per-host sums.  A consumer is one file: its context, its own part
 * of struct lh_config, its reload, its statistics and its teardown behind
 * struct consumer_ops.  Ganglia (daemon/ganglia.c over gmetric/ganglia_out.c)
 * and relay forwarding (daemon/relay_out.c over daemon/relay.c) are the
 * two today; a Prometheus page, a JSON API, InfluxDB or job statistics
 * are each one more.
 *
 * Acknowledgement: a batch is acknowledged when every consumer has
 * committed the sweep that holds it.  A consumer commits when the sweep
 * is safe in its own keeping: Ganglia when it is handed to the sink
 * (which never fails: a gmond that is down never holds an ACK), a relay
 * route when it is saved with the ledger entries of its batches.  A
 * consumer that cannot commit holds the acknowledgements back (the
 * registry keeps them, recognises their resends, and sends them with
 * the first sweep every consumer commits).
 *
 * The order, per closed sweep: rows and totals to every consumer; every
 * consumer's save() (with all acknowledgements held so far); when all
 * saved, the ledger learns the batches; then every consumer's publish()
 * (what shows the sweep: after the ledger, so that a crash in between
 * loses a sweep's display, never counts one twice); then the ACKs.
 */
#ifndef LH_CONSUMER_H
#define LH_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct event_base;
struct hostsum_row;
struct hosttotals;
struct httpd;
struct keyring;
struct lh_status;
struct status_board;
struct ledger;
struct lh_config;
struct sweeps_ack;
struct sweeps_client;
struct sweeps_fs_total;

/* One client of the sweep being closed. */
struct consumer_row {
	uint64_t sweep_id;
	unsigned interval_s;
	const struct sweeps_client *c; /* deltas, rates, metadata ops */
	const char *host; /* its mapped host; NULL: none (or not asked) */
};

/* The closed sweep as a whole, once every row went through. */
struct consumer_sweep {
	uint64_t sweep_id;
	const struct hostsum_row *hosts; /* per (host, fs), spoof address */
	size_t nhosts;
	const struct sweeps_fs_total *totals; /* per filesystem */
	size_t ntotals;
};

/* What a consumer is opened with (the role owns all of it; the pointers
 * stay valid for the consumer's life: a reload swaps the keyring's
 * contents, not the keyring). */
struct consumer_env {
	const struct lh_config *cfg;
	const struct keyring *keys;
	struct ledger *ledger;
	/* The HTTP listener the question-answering outputs register their
	 * paths on (httpd.h); NULL when the http section turns it off. */
	struct httpd *http;
	/* What the role says of itself, asked at any time (status.h). */
	const struct status_board *board;
	/* The counters since they began and the last sweep's rates, per
	 * (host, fs) and per fs (hosttotals.h): the role updates and saves
	 * them with the ledger before publish(); read-only here. */
	const struct hosttotals *totals;
};

/* Every callback but free may be NULL: nothing to do. */
struct consumer_ops {
	const char *name; /* "ganglia", "relay" */
	/* Whether it wants rows with their host (and the per-host sums) in
	 * the sweep now closing: only then are NIDs mapped. */
	bool (*wants_hosts)(void *ctx);
	/* After the event loop exists.  0, or -1 after logging why. */
	int (*start)(void *ctx, struct event_base *base);
	void (*row)(void *ctx, const struct consumer_row *r);
	/* Make the sweep safe in its keeping, with the ledger entries of
	 * acks.  0: committed; -1: not (logged): the ACKs wait. */
	int (*save)(void *ctx, uint64_t sweep_id, const struct sweeps_ack *acks,
	    size_t nacks);
	void (*publish)(void *ctx, const struct consumer_sweep *s);
	/* The role is stopping: send what is queued while it can. */
	void (*stop)(void *ctx);
	/*
	 * A reload: compare its own part of old and cfg, and make what cfg
	 * needs without changing anything that runs.  Returns 0, 1 (and its
	 * save() must succeed before apply: what runs is replaced), or -1
	 * (refused, after one log line).  Then exactly one of apply (cfg is
	 * the running configuration from now on) or abort.
	 */
	int (*reload_prepare)(void *ctx, const struct lh_config *old,
	    const struct lh_config *cfg);
	void (*reload_apply)(void *ctx, const struct lh_config *cfg,
	    struct event_base *base);
	void (*reload_abort)(void *ctx);
	/* Its part of a status snapshot (status.h): Ganglia's sends, a
	 * relay's routes. */
	void (*status)(void *ctx, struct lh_status *st);
	/* One line of statistics for the log ("" when there is nothing). */
	void (*stats)(void *ctx, char *buf, size_t size);
	void (*free)(void *ctx);
};

struct consumer {
	const struct consumer_ops *ops;
	void *ctx;
};

/* A consumer's constructor: 0 and *ret, or -1 after one log line (the
 * role does not start). */
typedef int (
    *consumer_open_fn)(const struct consumer_env *env, struct consumer *ret);

/* What -n checks of an output's part of cfg beyond config_load(): errors
 * and warnings to out, one line each (check.h).  Returns 0 or -1. */
typedef int (*consumer_check_fn)(const struct lh_config *cfg, FILE *out);

/* An output as main.c lists it for a role. */
struct consumer_kind {
	consumer_open_fn open;
	consumer_check_fn check; /* NULL: nothing beyond the syntax */
};

#define CONSUMER_MAX 8

/* The consumers of a role, and the acknowledgements they hold back. */
struct consumers {
	struct consumer c[CONSUMER_MAX];
	size_t n;
	struct sweeps_ack *held;
	size_t nheld, heldcap;
};

/* Open each of kinds[0..n-1] in order.  Returns 0, or -1 (logged;
 * those opened are freed by consumers_free()). */
int consumers_open(struct consumers *cs, const struct consumer_kind *kinds,
    size_t n, const struct consumer_env *env);

/* Whether any consumer wants hosts mapped for the sweep now closing. */
bool consumers_want_hosts(const struct consumers *cs);

int consumers_start(struct consumers *cs, struct event_base *base);
void consumers_row(struct consumers *cs, const struct consumer_row *r);

/*
 * The closed sweep's acks join those held; every consumer saves.
 * Returns 1 (all committed: record the held acks in the ledger, publish,
 * then send them and call consumers_release()), 0 (some consumer holds
 * them back: publish only), or -ENOMEM (the new acks are lost: the
 * senders resend; logged).
 */
int consumers_save(struct consumers *cs, uint64_t sweep_id,
    const struct sweeps_ack *acks, size_t nacks);
void consumers_publish(struct consumers *cs, const struct consumer_sweep *s);

/* The acks held (all of them, once consumers_save() returned 1). */
const struct sweeps_ack *
consumers_held(const struct consumers *cs, size_t *ret_n);
/* They are sent: forget them. */
void consumers_release(struct consumers *cs);

/* A batch whose acknowledgement is held back, sent again by sender with
 * batch number batch, on connection peer as frame seq: acknowledged on
 * that connection when it can be.  True if it was one. */
bool consumers_held_resend(struct consumers *cs, const char *sender,
    uint64_t batch, uint64_t peer, uint64_t seq);

void consumers_stop(struct consumers *cs);

/* A reload: every consumer prepares; returns 0, 1 (some consumer needs
 * its state saved first: call consumers_save() with no new acks) or -1
 * (refused: every consumer aborted). */
int consumers_reload_prepare(struct consumers *cs, const struct lh_config *old,
    const struct lh_config *cfg);
void consumers_reload_apply(struct consumers *cs, const struct lh_config *cfg,
    struct event_base *base);
void consumers_reload_abort(struct consumers *cs);

/* Each consumer's part of st (status_collect()). */
void consumers_status(const struct consumers *cs, struct lh_status *st);

/* Each consumer's statistics line, at debug level. */
void consumers_log_stats(struct consumers *cs);

void consumers_free(struct consumers *cs);

#endif
