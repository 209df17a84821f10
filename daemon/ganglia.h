/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Ganglia consumer (consumer.h): gmetric/ganglia_out.c with its
 * event-loop and log glue, the flush timer that paces the sink and the
 * lines that say how a sweep's values went out.  In the relay role it
 * shows the sweeps only with `spoof' (which a reload may turn on or off).
 */
#ifndef LH_GANGLIA_H
#define LH_GANGLIA_H

struct consumer;
struct consumer_env;

/* A consumer_open_fn. */
int ganglia_open(const struct consumer_env *env, struct consumer *ret);

#endif
