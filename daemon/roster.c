/* SPDX-License-Identifier: BSD-2-Clause */
/* Who reports (roster.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "clock.h"
#include "ledger.h"
#include "log.h"
#include "ratelog.h"
#include "msg.h"
#include "roster.h"
#include "sweeps.h"

#define MISSING_LOG_NS (600 * CLOCK_NS_PER_S) /* a missing gatherer */

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

void
roster_note(struct roster *r, const struct sweeps_report *rep, uint64_t now)
{
	size_t i, n = 0;

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
	r->v = NULL;
	r->n = r->cap = 0;
}
