/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The JSON API (docs/api.md section 3): a consumer (consumer.h) that
 * shows nothing of a sweep as it closes but answers questions about it
 * at any time, on the role's HTTP listener (httpd.h): /v1/status,
 * /v1/hosts, /v1/hosts/HOST, /v1/gatherers, /v1/routes.  It reads the
 * role's counters (consumer_env.totals, hosttotals.h) and status board
 * (status.h); every answer is the envelope {"success", "message",
 * "data"} built with jansson.  With http off it does nothing.
 */
#ifndef LH_API_H
#define LH_API_H

struct consumer;
struct consumer_env;

/* A consumer_open_fn. */
int api_open(const struct consumer_env *env, struct consumer *ret);

#endif
