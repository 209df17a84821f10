/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer role (on every OSS and MDS): at every sweep boundary, read
 * the per-client export stats of every local target, turn them into
 * per-(filesystem, client NID) deltas (common/gather/gtable.c), keep them in
 * the outbox until the aggregator acknowledges them (daemon/sender.c), and save
 * the counters read and the deltas not yet acknowledged in state_dir
 * (common/gather/gstate.c), so that a restart loses nothing.
 */
#ifndef LH_GATHERER_H
#define LH_GATHERER_H

struct lh_config;

#include <stdbool.h>

/*
 * Run until SIGTERM or SIGINT.  detach: become a daemon once everything
 * that can be refused (server, key file, state directory) was checked, so
 * that those errors still reach the terminal and the exit status.
 * SIGHUP reloads the configuration.  Takes cfg (frees it, or the one a
 * reload replaced it with).  Returns the process exit status, after one
 * log line on a problem.
 */
int gatherer_run(struct lh_config *cfg, bool detach);

#endif
