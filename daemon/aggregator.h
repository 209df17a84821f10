/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The aggregator role (on a cluster's management head), whose sweep
 * engine the relay role runs too: accept every gatherer (daemon/intake.c),
 * sum their SWEEPs per (filesystem, client) into sweeps
 * (common/sweep/sweeps.c), close each sweep when every expected gatherer
 * reported or at its deadline, map each client NID to its host once
 * (daemon/hostview.c), and stream the closed sweep through the outputs
 * (daemon/consumer.h: Ganglia, relay forwarding).  A batch is
 * acknowledged once every output committed the sweep holding it and the
 * gatherer's batch number is written to the ledger in state_dir.
 */
#ifndef LH_AGGREGATOR_H
#define LH_AGGREGATOR_H

#include <stdbool.h>
#include <stddef.h>

#include "consumer.h"

struct lh_config;

/* Run until SIGTERM or SIGINT, reloading on SIGHUP; as gatherer_run()
 * (it takes cfg).  outs: the outputs of its closed sweeps (consumer.h),
 * opened in this order; main.c picks them per role (the relay role runs
 * this same sweep engine with its forwarding as an output). */
int aggregator_run(struct lh_config *cfg, bool detach,
    const struct consumer_kind *outs, size_t nouts);

#endif
