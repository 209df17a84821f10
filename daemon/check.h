/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lharvestd -n: beyond the syntax and values config_load() checks, what
 * the configuration's keys name.  A file that is there must be usable (the
 * secret, the hosts map, the rewrite rules, gmond's configuration), with
 * the same one-line errors as at start.  A file or directory that is not
 * there yet (a secret not deployed, a state directory systemd will make,
 * no Lustre on the install host) is a warning: the shipped examples pass
 * right after installation.
 */
#ifndef LH_CHECK_H
#define LH_CHECK_H

#include <stdio.h>

struct lh_config;

/* Print errors and warnings to out, one line each.  Returns the exit
 * status: 0 (nothing but warnings) or 1. */
int check_config(const struct lh_config *cfg, FILE *out);

#endif
