/* SPDX-License-Identifier: BSD-2-Clause */
/* Counter deltas with epochs (see delta.h). */
#include <string.h>

#include "delta.h"
#include "statsparse.h"

static uint64_t
time_ns(const struct lstats_time *t)
{
	if (!t->present || t->sec > UINT64_MAX / 1000000000u - 1)
		return 0;
	return t->sec * 1000000000u + t->nsec;
}

void
delta_sample_make(struct delta_sample *s, const struct iocount *c,
    uint64_t samples, const struct lstats_time *snapshot,
    const struct lstats_time *start)
{
	s->c = *c;
	s->samples = samples;
	s->snap_ns = time_ns(snapshot);
	/* 2.15.0 and 2.15.1 print start_time 0: it says nothing. */
	s->start_ns = time_ns(start);
}

void
delta_sample_from(struct delta_sample *s, const struct lstats *st,
    const struct iocount *c)
{
	uint64_t samples = 0;
	unsigned i;

	for (i = 0; i < st->ncounters; i++) {
		if ((st->counters[i].neg & LSTATS_NEG_COUNT) == 0)
			samples += st->counters[i].count;
	}
	delta_sample_make(s, c, samples, &st->snapshot, &st->start);
}

static bool
went_down(const struct iocount *p, const struct iocount *c)
{
	return c->read_bytes < p->read_bytes ||
	    c->write_bytes < p->write_bytes || c->read_ops < p->read_ops ||
	    c->write_ops < p->write_ops || c->oss_ops < p->oss_ops ||
	    c->mds_ops < p->mds_ops;
}

static void
sub(struct iocount *r, const struct iocount *c, const struct iocount *p)
{
	r->read_bytes = c->read_bytes - p->read_bytes;
	r->write_bytes = c->write_bytes - p->write_bytes;
	r->read_ops = c->read_ops - p->read_ops;
	r->write_ops = c->write_ops - p->write_ops;
	r->oss_ops = c->oss_ops - p->oss_ops;
	r->mds_ops = c->mds_ops - p->mds_ops;
}

/* The time between the two reads, when the files tell. */
static uint64_t
span_between(const struct delta_sample *prev, const struct delta_sample *cur)
{
	if (prev->snap_ns == 0 || cur->snap_ns <= prev->snap_ns)
		return 0;
	return cur->snap_ns - prev->snap_ns;
}

enum delta_kind
delta_compute(const struct delta_sample *prev, const struct delta_sample *cur,
    bool first_sweep, struct iocount *ret, uint64_t *ret_span_ns)
{
	if (prev == NULL) {
		if (first_sweep) {
			memset(ret, 0, sizeof(*ret));
			*ret_span_ns = 0;
			return DELTA_BASELINE;
		}
		*ret = cur->c;
		*ret_span_ns = 0;
		return DELTA_NEW;
	}
	/* A new epoch: start_time moved (2.15.2+), or anything went down,
	 * including the total of all samples (which catches a reset on
	 * versions without start_time even when our six counters have
	 * already climbed back above their old values). */
	if ((cur->start_ns != 0 && prev->start_ns != 0 &&
	        cur->start_ns != prev->start_ns) ||
	    cur->samples < prev->samples || went_down(&prev->c, &cur->c)) {
		*ret = cur->c;
		*ret_span_ns = span_between(prev, cur);
		return DELTA_RESET;
	}
	sub(ret, &cur->c, &prev->c);
	*ret_span_ns = span_between(prev, cur);
	return DELTA_NORMAL;
}
