/* SPDX-License-Identifier: BSD-2-Clause */
/* The relay-forwarding consumer (relay_out.h). */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "consumer.h"
#include "log.h"
#include "relay.h"
#include "relay_out.h"
#include "status.h"

#define RELAY_FILE "relay.state"

struct relay_out {
	const struct lh_config *cfg;
	const struct keyring *keys;
	struct ledger *ledger;
	char path[PATH_MAX];
	struct relay *r;
	struct relay *next; /* a reload's new routes, until applied */
};

static int
ro_start(void *ctx, struct event_base *base)
{
	struct relay_out *o = ctx;

	return relay_start(o->r, base);
}

static void
ro_row(void *ctx, const struct consumer_row *row)
{
	struct relay_out *o = ctx;

	relay_add(o->r, row->sweep_id, row->interval_s, row->c);
}

static int
ro_save(void *ctx, uint64_t sweep_id, const struct sweeps_ack *acks,
    size_t nacks)
{
	struct relay_out *o = ctx;

	return relay_commit(o->r, sweep_id, acks, nacks);
}

/* The routes changed: new ones are made now, and replace the running
 * ones once those are saved (returns 1: the registry saves first). */
static int
ro_reload_prepare(void *ctx, const struct lh_config *old,
    const struct lh_config *cfg)
{
	struct relay_out *o = ctx;

	if (config_section_equal(old, cfg, "relay"))
		return 0;
	if (relay_new(cfg, o->keys, o->path, &o->next) < 0)
		return -1;
	return 1;
}

/* What the old routes held is saved; the new ones start from that file
 * (a route that is gone has its clients routed again). */
static void
ro_reload_apply(void *ctx, const struct lh_config *cfg, struct event_base *base)
{
	struct relay_out *o = ctx;

	o->cfg = cfg;
	if (o->next != NULL) {
		relay_free(o->r);
		o->r = o->next;
		o->next = NULL;
		if (relay_restore(o->r, o->ledger) < 0 ||
		    relay_start(o->r, base) < 0)
			log_warnx("relay: the new routes could not all start");
	}
	relay_rebind(o->r, cfg);
}

static void
ro_reload_abort(void *ctx)
{
	struct relay_out *o = ctx;

	relay_free(o->next);
	o->next = NULL;
}

/* Its part of a status snapshot: the routes.  Out of memory leaves
 * nroutes set and routes NULL, which status_collect() reports. */
static void
ro_status(void *ctx, struct lh_status *st)
{
	struct relay_out *o = ctx;
	size_t n = 0;

	if (relay_status(o->r, &st->routes, &n) < 0)
		n = o->cfg->nroutes;
	st->nroutes = n;
}

static void
ro_free(void *ctx)
{
	struct relay_out *o = ctx;

	relay_free(o->r);
	relay_free(o->next);
	free(o);
}

static const struct consumer_ops relay_out_ops = {
    .name = "relay",
    .start = ro_start,
    .row = ro_row,
    .save = ro_save,
    .reload_prepare = ro_reload_prepare,
    .reload_apply = ro_reload_apply,
    .reload_abort = ro_reload_abort,
    .status = ro_status,
    .free = ro_free,
};

int
relay_out_open(const struct consumer_env *env, struct consumer *ret)
{
	const struct lh_config *cfg = env->cfg;
	struct relay_out *o = calloc(1, sizeof(*o));

	if (o == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	o->cfg = cfg;
	o->keys = env->keys;
	o->ledger = env->ledger;
	if (snprintf(o->path, sizeof(o->path), "%s/%s", cfg->state_dir,
	        RELAY_FILE) >= (int)sizeof(o->path) ||
	    relay_new(cfg, o->keys, o->path, &o->r) < 0 ||
	    relay_restore(o->r, o->ledger) < 0) {
		ro_free(o);
		return -1;
	}
	ret->ops = &relay_out_ops;
	ret->ctx = o;
	return 0;
}
