/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The intake of the aggregator and relay roles: the listener (receiver.c)
 * and what it admits into the open sweeps.  A HELLO from a name bound to
 * networks (gatherer_networks) is taken from those only; a SWEEP is
 * decoded, matched against the acknowledgements the outputs hold back
 * (a resend: acknowledged with them), against the sender's ledger entry
 * (a duplicate: acknowledged as one; an entry that cannot be read: held),
 * and against the clock (a batch number or sweep id no clock can give:
 * refused), then counted in its sweep.  Its part of struct lh_config: the
 * listen address and the admission keys, compared at a reload here.
 */
#ifndef LH_INTAKE_H
#define LH_INTAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ratelog.h"

struct consumers;
struct event_base;
struct keyring;
struct ledger;
struct lh_config;
struct receiver;
struct roster;
struct sweeps;
struct sweeps_ack;
struct wallclock;

struct intake {
	const struct lh_config *cfg; /* the role's, replaced by a reload */
	const struct keyring *ring;
	struct ledger *ledger;
	struct sweeps *sweeps;
	struct consumers *outs; /* the acknowledgements they hold */
	const struct wallclock *clock;
	void (*counted)(void *arg); /* a SWEEP was counted */
	void *arg;
	struct roster *roster; /* told of connections and batches; NULL */
	struct receiver *rcv;
	/* A reload's listener: made (next), or to be made after the
	 * running one is let go (next_later: the same address). */
	struct receiver *next;
	bool next_later;
	/* Batches counted already and sent again (acknowledged as
	 * duplicates), held for a ledger entry that cannot be read, and
	 * refused (batch number or sweep id out of bounds). */
	uint64_t duplicates, held_batches, refused;
	struct ratelog dup_rl, held_rl, refused_rl;
	/* What the decoder left out of SWEEPs counted (docs/protocol.md
	 * 4.4): records, and records' metadata-op counts. */
	uint64_t dropped_recs, dropped_ops;
	struct ratelog dropped_rl;
};

/* Listen, with in's fields but rcv and the counters set by the caller.
 * Returns 0, or -1 after logging why. */
int intake_start(struct intake *in, struct event_base *base);

/* Where it listens, for the log. */
const char *intake_addr(const struct intake *in);

/* The batches of acks are safe: tell their senders (now_ns: the sweep
 * clock) on the connections they came, or were sent again, on. */
void intake_ack(struct intake *in, const struct sweeps_ack *acks, size_t n,
    uint64_t now_ns);

/* A reload: a listener for cfg when its address or options changed.
 * Returns 0, or -1 after one log line.  Then apply (in->cfg becomes cfg)
 * or abort. */
int intake_reload_prepare(struct intake *in, struct event_base *base,
    const struct lh_config *cfg);
void intake_reload_apply(struct intake *in, struct event_base *base,
    const struct lh_config *cfg);
void intake_reload_abort(struct intake *in);

void intake_free(struct intake *in);

#endif
