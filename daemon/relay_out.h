/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The relay-forwarding consumer (consumer.h) over daemon/relay.c: each
 * client row of a closed sweep goes into the outbox of the route its NID
 * network takes; the sweep is committed when the routes' outboxes are
 * saved in state_dir with the ledger entries of the batches they came
 * from.  Until a save succeeds it holds the acknowledgements back (the
 * consumer registry keeps them and matches their resends).  Its part of
 * struct lh_config: route, default_route, and the name, max_frame and
 * handshake_timeout its downstream connections are made with.
 */
#ifndef LH_RELAY_OUT_H
#define LH_RELAY_OUT_H

struct consumer;
struct consumer_env;

/* A consumer_open_fn: the routes, and their state restored (a state file
 * that cannot be is refused: see relay_restore()). */
int relay_out_open(const struct consumer_env *env, struct consumer *ret);

#endif
