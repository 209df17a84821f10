/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who reports to the aggregator and relay roles: a gatherer that missed
 * sweeps is named once, then every ten minutes, and said to be back when
 * it reports again; after a restart, the gatherers counted in the last
 * three sweeps (by their ledger files) are expected from the first sweep.
 */
#ifndef LH_ROSTER_H
#define LH_ROSTER_H

#include <stddef.h>
#include <stdint.h>

struct ledger;
struct roster_missing;
struct sweeps;
struct sweeps_report;

struct roster {
	struct roster_missing *v;
	size_t n, cap;
};

/* The closed sweep rep's missing gatherers (now_ns: the sweep clock). */
void
roster_note(struct roster *r, const struct sweeps_report *rep, uint64_t now_ns);

/* Expect in s the senders whose ledger entries changed within three
 * intervals of now_s. */
void roster_seed(struct sweeps *s, struct ledger *ledger, uint64_t now_s,
    unsigned interval_s);

void roster_free(struct roster *r);

#endif
