/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Ganglia consumer (consumer.h): gmetric/ganglia_out.c with its
 * event-loop and log glue, the flush timer that paces the sink and the
 * lines that say how a sweep's values went out.  In the relay role it
 * shows the sweeps only with `spoof' (which a reload may turn on or off).
 */
#ifndef LH_GANGLIA_H
#define LH_GANGLIA_H

#include <stdio.h>

struct consumer;
struct consumer_env;
struct lh_config;

/* A consumer_open_fn. */
int ganglia_open(const struct consumer_env *env, struct consumer *ret);

/* A consumer_check_fn: the hosts map and gmond_conf (-n). */
int ganglia_check(const struct lh_config *cfg, FILE *out);

#endif
