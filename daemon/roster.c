/* SPDX-License-Identifier: BSD-2-Clause */
/* Who reports (roster.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "clock.h"
#include "config.h"
#include "ledger.h"
#include "log.h"
#include "ratelog.h"
#include "msg.h"
#include "roster.h"
#include "status.h"
#include "sweeps.h"

#define MISSING_LOG_NS (600 * CLOCK_NS_PER_S) /* a missing gatherer */
#define ROSTER_SWEEPS  3 /* sweeps_conf.roster_sweeps's default */

/* A gatherer's record since the start (the status snapshot). */
struct roster_gatherer {
	char name[MSG_NAME_MAX];
	char addr[STATUS_ADDR_MAX]; /* of its last connection */
	unsigned conns;             /* accepted and open now */
	bool late_pending;          /* a late batch in the open sweeps */
	bool late, missing;         /* in the last closed sweep */
	uint64_t last_sweep;        /* the last closed sweep it was in */
	uint64_t batches;
	uint64_t sweeps_missed;
};

/* A gatherer that missed sweeps: named once, then every ten minutes. */
struct roster_missing {
	char name[MSG_NAME_MAX];
	uint64_t since;    /* the first sweep it missed */
	struct ratelog rl; /* its "no sweep since" line */
	uint64_t seen;     /* the last close that found it missing */
};

/* The entry of name, made if it is new (NULL: out of memory). */
static struct roster_missing *
missing_get(struct roster *r, const char *name, uint64_t sweep_id)
{
	struct roster_missing *m, *v;
	size_t j;

	for (j = 0; j < r->n; j++) {
		if (strcmp(r->v[j].name, name) == 0)
			return &r->v[j];
	}
	if (r->n == r->cap) {
		v = array_grow(r->v, &r->cap, r->n, sizeof(*v));
		if (v == NULL)
			return NULL;
		r->v = v;
	}
	m = &r->v[r->n++];
	memset(m, 0, sizeof(*m));
	(void)snprintf(m->name, sizeof(m->name), "%s", name);
	m->since = sweep_id;
	return m;
}

/* The record of name, made if it is new (NULL: out of memory). */
static struct roster_gatherer *
gatherer_get(struct roster *r, const char *name)
{
	struct roster_gatherer *g, *v;
	size_t j;

	for (j = 0; j < r->ng; j++) {
		if (strcmp(r->g[j].name, name) == 0)
			return &r->g[j];
	}
	if (r->ng == r->gcap) {
		v = array_grow(r->g, &r->gcap, r->ng, sizeof(*v));
		if (v == NULL)
			return NULL;
		r->g = v;
	}
	g = &r->g[r->ng++];
	memset(g, 0, sizeof(*g));
	(void)snprintf(g->name, sizeof(g->name), "%s", name);
	return g;
}

static bool
gatherer_known(const struct roster *r, const char *name)
{
	size_t j;

	for (j = 0; j < r->ng; j++)
		if (strcmp(r->g[j].name, name) == 0)
			return true;
	return false;
}

void
roster_connected(struct roster *r, const char *name, const char *addr)
{
	struct roster_gatherer *g = gatherer_get(r, name);

	if (g == NULL)
		return;
	g->conns++;
	(void)snprintf(g->addr, sizeof(g->addr), "%s", addr);
}

void
roster_closed(struct roster *r, const char *name)
{
	struct roster_gatherer *g = gatherer_get(r, name);

	if (g != NULL && g->conns > 0)
		g->conns--;
}

void
roster_counted(struct roster *r, const char *name, bool late)
{
	struct roster_gatherer *g = gatherer_get(r, name);

	if (g == NULL)
		return;
	g->batches++;
	if (late)
		g->late_pending = true;
}

/* Who was in the closed sweep rep, who missed it, who was late. */
static void
note_gatherers(struct roster *r, const struct sweeps_report *rep)
{
	struct roster_gatherer *g;
	size_t i;

	for (i = 0; i < r->ng; i++) {
		r->g[i].late = r->g[i].late_pending;
		r->g[i].late_pending = false;
		r->g[i].missing = false;
	}
	for (i = 0; i < rep->nacks; i++) {
		g = gatherer_get(r, rep->acks[i].sender);
		if (g != NULL)
			g->last_sweep = rep->sweep_id;
	}
	for (i = 0; i < rep->nmissing; i++) {
		g = gatherer_get(r, rep->missing[i]);
		if (g == NULL)
			continue;
		g->missing = true;
		g->sweeps_missed++;
	}
	r->last_sweep = rep->sweep_id;
}

void
roster_note(struct roster *r, const struct sweeps_report *rep, uint64_t now)
{
	size_t i, n = 0;

	note_gatherers(r, rep);

	for (i = 0; i < rep->nmissing; i++) {
		struct roster_missing *m =
		    missing_get(r, rep->missing[i], rep->sweep_id);

		if (m == NULL)
			continue;
		m->seen = rep->sweep_id;
		if (ratelog_every(&m->rl, clock_monotonic_ns(), MISSING_LOG_NS,
		        NULL)) {
			log_warnx(
			    "gatherer %s: no sweep since %" PRIu64
			    " (%.1f s late); its deltas go into the sweep "
			    "they arrive for",
			    m->name, m->since,
			    (double)(now - m->since * CLOCK_NS_PER_S) / 1e9);
		}
	}
	/* Those no longer missing: say they are back, and forget them. */
	for (i = 0; i < r->n; i++) {
		if (r->v[i].seen == rep->sweep_id) {
			r->v[n++] = r->v[i];
			continue;
		}
		log_info("gatherer %s: reporting again", r->v[i].name);
	}
	r->n = n;
}

struct seed_ctx {
	struct sweeps *sweeps;
	int64_t since; /* ledger files changed since then: active */
	size_t n;
};

static void
seed_one(void *arg, const char *sender, int64_t mtime)
{
	struct seed_ctx *c = arg;

	if (mtime >= c->since && sweeps_expect(c->sweeps, sender) == 0)
		c->n++;
}

/*
 * After a restart, expect the gatherers whose batches were counted
 * recently (their ledger files changed within the roster's reach): the
 * first sweeps then wait for all of them, instead of closing on the first
 * to reconnect and showing the others' clients at zero.
 */
void
roster_seed(struct sweeps *s, struct ledger *ledger, uint64_t now_s,
    unsigned interval_s)
{
	struct seed_ctx c = {s, (int64_t)now_s - (int64_t)interval_s * 3, 0};

	if (ledger_each(ledger, seed_one, &c) > 0 && c.n > 0)
		log_info("expecting the %zu gatherers counted in the last "
		         "three sweeps",
		    c.n);
}

void
roster_free(struct roster *r)
{
	free(r->v);
	free(r->g);
	memset(r, 0, sizeof(*r));
}

static bool
configured(const struct lh_config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->ngatherers; i++)
		if (strcmp(cfg->gatherers[i], name) == 0)
			return true;
	return false;
}

static void
status_one(const struct roster *r, const struct roster_gatherer *g,
    const struct lh_config *cfg, struct status_gatherer *s)
{
	uint64_t reach = (uint64_t)cfg->interval * (ROSTER_SWEEPS - 1);

	(void)snprintf(s->name, sizeof(s->name), "%s", g->name);
	(void)snprintf(s->addr, sizeof(s->addr), "%s",
	    g->conns > 0 ? g->addr : "");
	s->connected = g->conns > 0;
	/* What the sweeps expect: the names configured, and whoever was in
	 * one of the last roster sweeps (or missed the last). */
	s->expected = g->missing || configured(cfg, g->name) ||
	    (g->last_sweep != 0 && g->last_sweep + reach >= r->last_sweep);
	s->missing = g->missing;
	s->late = g->late;
	s->last_sweep = g->last_sweep;
	s->batches = g->batches;
	s->sweeps_missed = g->sweeps_missed;
}

static int
by_name(const void *x, const void *y)
{
	const struct status_gatherer *p = x, *q = y;

	return strcmp(p->name, q->name);
}

void
roster_status(const struct roster *r, const struct lh_config *cfg,
    struct lh_status *st)
{
	struct roster_gatherer none;
	size_t i, n = r->ng;

	/* The names configured that never connected have no record. */
	for (i = 0; i < cfg->ngatherers; i++)
		if (!gatherer_known(r, cfg->gatherers[i]))
			n++;
	st->ngatherers = n;
	if (n == 0)
		return;
	st->gatherers = calloc(n, sizeof(*st->gatherers));
	if (st->gatherers == NULL)
		return;
	for (i = 0; i < r->ng; i++)
		status_one(r, &r->g[i], cfg, &st->gatherers[i]);
	n = r->ng;
	for (i = 0; i < cfg->ngatherers; i++) {
		if (gatherer_known(r, cfg->gatherers[i]))
			continue;
		memset(&none, 0, sizeof(none));
		(void)snprintf(none.name, sizeof(none.name), "%s",
		    cfg->gatherers[i]);
		status_one(r, &none, cfg, &st->gatherers[n++]);
	}
	qsort(st->gatherers, n, sizeof(*st->gatherers), by_name);
	for (i = 0; i < n; i++) {
		const struct status_gatherer *s = &st->gatherers[i];

		st->gatherers_connected += s->connected;
		st->gatherers_expected += s->expected;
		st->gatherers_missing += s->missing;
		st->gatherers_late += s->late;
	}
}
