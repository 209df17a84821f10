/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who reports to the aggregator and relay roles: a gatherer that missed
 * sweeps is named once, then every ten minutes, and said to be back when
 * it reports again; after a restart, the gatherers counted in the last
 * three sweeps (by their ledger files) are expected from the first sweep.
 * And each gatherer's record for the status snapshot (status.h): its
 * connection, its batches, the sweeps it missed or was late for.
 */
#ifndef LH_ROSTER_H
#define LH_ROSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ledger;
struct lh_config;
struct lh_status;
struct roster_gatherer;
struct roster_missing;
struct sweeps;
struct sweeps_report;

struct roster {
	struct roster_missing *v;
	size_t n, cap;
	struct roster_gatherer *g; /* every gatherer seen since the start */
	size_t ng, gcap;
	uint64_t last_sweep; /* the last closed sweep noted */
};

/* A gatherer's connection was accepted (its HELLO), or closes. */
void roster_connected(struct roster *r, const char *name, const char *addr);
void roster_closed(struct roster *r, const char *name);

/* A batch of name was counted (late: folded into a later sweep because
 * its own had closed). */
void roster_counted(struct roster *r, const char *name, bool late);

/* The gatherers' part of st (status.h): every gatherer configured,
 * expected, connected or seen since the start, sorted by name.  Out of
 * memory: st->ngatherers set, st->gatherers NULL. */
void roster_status(const struct roster *r, const struct lh_config *cfg,
    struct lh_status *st);

/* The closed sweep rep's missing gatherers (now_ns: the sweep clock),
 * and who was in it. */
void
roster_note(struct roster *r, const struct sweeps_report *rep, uint64_t now_ns);

/* Expect in s the senders whose ledger entries changed within three
 * intervals of now_s. */
void roster_seed(struct sweeps *s, struct ledger *ledger, uint64_t now_s,
    unsigned interval_s);

void roster_free(struct roster *r);

#endif
