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

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct consumer_kind;
struct lh_config;

/* Print errors and warnings to out, one line each: the role's own keys,
 * then each of outs[0..nouts-1] (the role's outputs, consumer.h) checks
 * its own.  Returns the exit status: 0 (nothing but warnings) or 1. */
int check_config(const struct lh_config *cfg, FILE *out,
    const struct consumer_kind *outs, size_t nouts);

/* A path the key names: 1 if it is there, 0 (and a warning) if it is not
 * yet, -1 (and an error) if it cannot be looked at.  dir: it must be a
 * directory, else a regular file. */
int check_path(const struct lh_config *cfg, FILE *out, const char *key,
    const char *path, bool dir);

/* Rewrite rules and the hosts map, as the NID-to-host view loads them
 * (for the outputs that map hosts).  Returns 0 or -1. */
int check_hosts(const struct lh_config *cfg, FILE *out);

#endif
