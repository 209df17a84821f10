/* SPDX-License-Identifier: BSD-2-Clause */
/* Who a sweep waits for (sweeps.h): the expected senders, the ones that
 * reported lately, when a sweep is ready, and who was missing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "err.h"
#include "hindex.h"
#include "sweeps.h"
#include "sweeps_int.h"

static bool
in_sweep(const struct sw_sweep *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->nacks; i++) {
		if (strcmp(w->acks[i].sender, name) == 0)
			return true;
	}
	return false;
}

/*
 * name sent its batch of sweep w (on time, or ahead): a late batch
 * folded into w is an older sweep's, and does not complete w.  Were it
 * to, a sole sender back from an outage would stay one sweep behind for
 * good: its late batch closes w at w's boundary, before its batch of w
 * can come (one batch in flight: it waits for the ACK of the late one),
 * which is then late in turn and closes the next sweep early the same
 * way (it_relay, LH_RELAY_SEED=30348).  Now w waits for it until the
 * deadline at most, once, and the next sweep is on time.
 */
static bool
reported(const struct sw_sweep *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->nacks; i++) {
		if (!w->batches[i].late && strcmp(w->acks[i].sender, name) == 0)
			return true;
	}
	return false;
}

/* Expected in sweep w: configured, or reported one of the last
 * roster sweeps. */
static bool
recent(const struct sweeps *s, const struct sw_sender *p, uint64_t id)
{
	uint64_t horizon = (uint64_t)s->roster * s->interval;

	return p->last_reported != 0 && p->last_reported + horizon >= id;
}

/* Every expected sender reported the oldest open sweep (and someone
 * was expected). */
static bool
complete(const struct sweeps *s)
{
	const struct sw_sweep *w = &s->ring[0];
	size_t i, expected = 0;

	for (i = 0; i < s->nexpected; i++) {
		expected++;
		if (!reported(w, s->expected[i]))
			return false;
	}
	for (i = 0; i < s->nsenders; i++) {
		if (!recent(s, &s->senders[i], w->id))
			continue;
		expected++;
		if (!reported(w, s->senders[i].name))
			return false;
	}
	return expected > 0;
}

bool
sweeps_ready(const struct sweeps *s, uint64_t now_ns)
{
	if (now_ns >= sweeps_deadline_ns(s))
		return true;
	return now_ns >= s->ring[0].id * NS_PER_S && complete(s);
}

uint64_t
sweeps_next_ns(const struct sweeps *s)
{
	return complete(s) ? s->ring[0].id * NS_PER_S : sweeps_deadline_ns(s);
}

static int
add_missing(struct sweeps *s, size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if (strcmp(s->missing[i], name) == 0)
			return 0;
	}
	char(*v)[MSG_NAME_MAX];

	v = array_grow(s->missing, &s->mcap, *n, sizeof(*s->missing));
	if (v == NULL)
		return -ENOMEM;
	s->missing = v;
	(void)snprintf(s->missing[*n], MSG_NAME_MAX, "%s", name);
	(*n)++;
	return 0;
}

void
sw_report_missing(struct sweeps *s, const struct sw_sweep *w,
    struct sweeps_report *rep)
{
	size_t i, nmissing = 0;
	int mrc = 0;

	for (i = 0; i < s->nexpected && mrc == 0; i++) {
		if (!in_sweep(w, s->expected[i]))
			mrc = add_missing(s, &nmissing, s->expected[i]);
	}
	for (i = 0; i < s->nsenders && mrc == 0; i++) {
		if (recent(s, &s->senders[i], w->id) &&
		    !in_sweep(w, s->senders[i].name))
			mrc = add_missing(s, &nmissing, s->senders[i].name);
	}
	rep->missing = s->missing;
	rep->nmissing = mrc == 0 ? nmissing : 0;
}

int
sweeps_reconfigure(struct sweeps *s, const struct sweeps_conf *c)
{
	char(*expected)[MSG_NAME_MAX] = NULL;
	size_t i;

	if (c->interval_s != s->interval ||
	    (uint64_t)c->deadline_ms >= (uint64_t)c->interval_s * 1000u)
		return -EINVAL;
	if (c->nexpected > 0) {
		expected = calloc(c->nexpected, sizeof(*expected));
		if (expected == NULL)
			return -ENOMEM;
	}
	for (i = 0; i < c->nexpected; i++) {
		if (strlen(c->expected[i]) >= MSG_NAME_MAX) {
			free(expected);
			return -EINVAL;
		}
		memcpy(expected[i], c->expected[i], strlen(c->expected[i]) + 1);
	}
	free(s->expected);
	s->expected = expected;
	s->nexpected = c->nexpected;
	s->deadline_ns = (uint64_t)c->deadline_ms * 1000000u;
	if (c->roster_sweeps != 0)
		s->roster = c->roster_sweeps;
	return 0;
}

int
sweeps_expect(struct sweeps *s, const char *sender)
{
	struct sw_sender *p = sw_sender_get(s, sender);

	if (p == NULL)
		return -ENOMEM;
	if (p->last_reported == 0 && s->ring[0].id >= s->interval)
		p->last_reported = s->ring[0].id - s->interval;
	return 0;
}
