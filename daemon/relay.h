/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The relay's way out (docs/relay.md): each client's deltas of a closed
 * sweep, routed by the LNet network of its NID to the aggregator of the
 * cluster it belongs to.  One outbox and one sender per route, so that a
 * downstream that is slow or down delays no other; its deltas accumulate
 * in its outbox (coalesced per client: bounded memory) and go out when it
 * is back.  Everything not yet acknowledged downstream is saved in
 * state_dir with the ledger entries of the batches it came from, before
 * those batches are acknowledged upstream (common/proto/rstate.h).
 */
#ifndef LH_RELAY_H
#define LH_RELAY_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct keyring;
struct ledger;
struct lh_config;
struct relay;
struct sweeps_ack;
struct sweeps_client;

/* Routes from cfg; state_path the state file.  Returns 0 and *ret, or -1
 * after logging why. */
int relay_new(const struct lh_config *cfg, const struct keyring *keys,
    const char *state_path, struct relay **ret);

/* Restore the state file: its ledger entries into ledger (where they are
 * higher), its routes' outboxes (a route no longer configured: its
 * clients routed again).  A file that cannot be read is tried again; one
 * that still cannot, or is refused (damaged, a newer format), is kept as
 * it is and the relay must not start (its deltas were acknowledged
 * upstream: see docs/relay.md); should r run anyway (a reload), its saves
 * fail, holding acknowledgements back, rather than overwrite the file.
 * Returns 0, or -1 after one log line. */
int relay_restore(struct relay *r, struct ledger *ledger);

/* Connect to every downstream.  Returns 0 or -1 after logging why. */
int relay_start(struct relay *r, struct event_base *base);

/* One client of the sweep being closed. */
void relay_add(struct relay *r, uint64_t sweep_id, unsigned interval_s,
    const struct sweeps_client *c);

/*
 * The sweep's clients are all added: number each route's batch and save
 * the state with the ledger entries of acks (the batches they came from).
 * Returns 0 (the acks may go out), or -1: not saved, logged, the new
 * deltas held back until a save succeeds (the acks must wait).
 */
int relay_commit(struct relay *r, uint64_t sweep_id,
    const struct sweeps_ack *acks, size_t nacks);

/* A reloaded configuration whose routes, name and limits are those r was
 * made with: r now refers to cfg's. */
void relay_rebind(struct relay *r, const struct lh_config *cfg);

void relay_free(struct relay *r);

/* Each route's part of a status snapshot (status.h), calloc'd: 0 with
 * *ret (NULL when there is no route) and *ret_n, or -ENOMEM. */
struct status_route;
int
relay_status(const struct relay *r, struct status_route **ret, size_t *ret_n);

#endif
