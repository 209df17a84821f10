/* SPDX-License-Identifier: BSD-2-Clause */
/* The consumers of a role and the acknowledgements they hold (consumer.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "consumer.h"
#include "log.h"
#include "sweeps.h"

int
consumers_open(struct consumers *cs, const struct consumer_kind *kinds,
    size_t n, const struct consumer_env *env)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (cs->n == CONSUMER_MAX) {
			log_warnx("more than %d outputs", CONSUMER_MAX);
			return -1;
		}
		if (kinds[i].open(env, &cs->c[cs->n]) < 0)
			return -1;
		cs->n++;
	}
	return 0;
}

bool
consumers_want_hosts(const struct consumers *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		const struct consumer *c = &cs->c[i];

		if (c->ops->wants_hosts != NULL && c->ops->wants_hosts(c->ctx))
			return true;
	}
	return false;
}

int
consumers_start(struct consumers *cs, struct event_base *base)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		const struct consumer *c = &cs->c[i];

		if (c->ops->start != NULL && c->ops->start(c->ctx, base) < 0)
			return -1;
	}
	return 0;
}

void
consumers_row(struct consumers *cs, const struct consumer_row *r)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		const struct consumer *c = &cs->c[i];

		if (c->ops->row != NULL)
			c->ops->row(c->ctx, r);
	}
}

/* Room for n held acknowledgements.  Returns 0 or -ENOMEM. */
static int
held_reserve(struct consumers *cs, size_t n)
{
	struct sweeps_ack *v;

	while (cs->heldcap < n) {
		v = array_grow(cs->held, &cs->heldcap, cs->heldcap, sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		cs->held = v;
	}
	return 0;
}

int
consumers_save(struct consumers *cs, uint64_t sweep_id,
    const struct sweeps_ack *acks, size_t nacks)
{
	size_t i, need = cs->nheld + nacks;
	int all = 1;

	if (held_reserve(cs, need) < 0) {
		log_warnx("sweep %" PRIu64 ": out of memory; its "
		          "acknowledgements are lost (the senders will resend)",
		    sweep_id);
		return -ENOMEM;
	}
	if (nacks > 0)
		memcpy(cs->held + cs->nheld, acks, nacks * sizeof(*acks));
	cs->nheld = need;
	for (i = 0; i < cs->n; i++) {
		const struct consumer *c = &cs->c[i];

		if (c->ops->save != NULL &&
		    c->ops->save(c->ctx, sweep_id, cs->held, cs->nheld) < 0)
			all = 0;
	}
	return all;
}

void
consumers_publish(struct consumers *cs, const struct consumer_sweep *s)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		const struct consumer *c = &cs->c[i];

		if (c->ops->publish != NULL)
			c->ops->publish(c->ctx, s);
	}
}

const struct sweeps_ack *
consumers_held(const struct consumers *cs, size_t *ret_n)
{
	*ret_n = cs->nheld;
	return cs->held;
}

void
consumers_release(struct consumers *cs)
{
	cs->nheld = 0;
}

bool
consumers_held_resend(struct consumers *cs, const char *sender, uint64_t batch,
    uint64_t peer, uint64_t seq)
{
	bool found = false;
	size_t i;

	for (i = 0; i < cs->nheld; i++) {
		if (strcmp(cs->held[i].sender, sender) == 0 &&
		    batch <= cs->held[i].batch) {
			cs->held[i].peer = peer;
			cs->held[i].seq = seq;
			found = true;
		}
	}
	return found;
}

void
consumers_stop(struct consumers *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		const struct consumer *c = &cs->c[i];

		if (c->ops->stop != NULL)
			c->ops->stop(c->ctx);
	}
}

void
consumers_reload_abort(struct consumers *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		const struct consumer *c = &cs->c[i];

		if (c->ops->reload_abort != NULL)
			c->ops->reload_abort(c->ctx);
	}
}

int
consumers_reload_prepare(struct consumers *cs, const struct lh_config *old,
    const struct lh_config *cfg)
{
	size_t i;
	int rc, save = 0;

	for (i = 0; i < cs->n; i++) {
		const struct consumer *c = &cs->c[i];

		if (c->ops->reload_prepare == NULL)
			continue;
		rc = c->ops->reload_prepare(c->ctx, old, cfg);
		if (rc < 0) {
			consumers_reload_abort(cs);
			return -1;
		}
		if (rc > 0)
			save = 1;
	}
	return save;
}

void
consumers_reload_apply(struct consumers *cs, const struct lh_config *cfg,
    struct event_base *base)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		const struct consumer *c = &cs->c[i];

		if (c->ops->reload_apply != NULL)
			c->ops->reload_apply(c->ctx, cfg, base);
	}
}

void
consumers_status(const struct consumers *cs, struct lh_status *st)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		const struct consumer *c = &cs->c[i];

		if (c->ops->status != NULL)
			c->ops->status(c->ctx, st);
	}
}

void
consumers_log_stats(struct consumers *cs)
{
	char line[512];
	size_t i;

	for (i = 0; i < cs->n; i++) {
		const struct consumer *c = &cs->c[i];

		if (c->ops->stats == NULL)
			continue;
		line[0] = '\0';
		c->ops->stats(c->ctx, line, sizeof(line));
		if (line[0] != '\0')
			log_debug("%s: %s", c->ops->name, line);
	}
}

void
consumers_free(struct consumers *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		cs->c[i].ops->free(cs->c[i].ctx);
	cs->n = 0;
	free(cs->held);
	cs->held = NULL;
	cs->nheld = cs->heldcap = 0;
}
