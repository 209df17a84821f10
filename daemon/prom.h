/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Prometheus consumer (consumer.h): GET /metrics on the role's HTTP
 * listener (httpd.h) in the text exposition format, docs/api.md section
 * 2.  It adds nothing to a sweep and never holds an acknowledgement: the
 * counters are the role's (consumer_env.totals, saved with the ledger),
 * the health a status snapshot (status.h).  The counters' part of the
 * page is written at the first scrape after each closed sweep and shared,
 * by reference, by every scrape until the next one; only the small
 * health part is written per scrape, so that scrapes, however many,
 * cost a sweep nothing (docs/performance.md).
 */
#ifndef LH_PROM_H
#define LH_PROM_H

struct consumer;
struct consumer_env;

/* A consumer_open_fn. */
int prom_open(const struct consumer_env *env, struct consumer *ret);

#endif
