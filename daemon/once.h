/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --once: read every target of this server once and print, per
 * (filesystem, client NID), the cumulative counters summed over this
 * server's targets as one JSON object per line.  Touches neither the
 * network nor the state directory.
 */
#ifndef LH_ONCE_H
#define LH_ONCE_H

#include <stdio.h>

struct lh_config;

/* Returns the process exit status. */
int once_run(const struct lh_config *cfg, FILE *out);

#endif
