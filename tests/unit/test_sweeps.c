/* SPDX-License-Identifier: BSD-2-Clause */
/* The aggregator's sweeps: sums over gatherers, exact rates, closing on
 * the roster or the deadline, late and early batches, resends. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "msg.h"
#include "sweeps.h"
#include "testutil.h"
#include "wire.h"

#define S   1000000000ULL
#define T0  1700000000ULL /* a multiple of 20 */
#define IVL 20

struct rec {
	const char *nid;
	uint64_t rb, wb;
	uint64_t span_us, rb_span_us; /* rb_span_us 0: the record's span */
};

/* Encode a SWEEP of batch over filesystems "scratch" and, with nfs 2,
 * "home", sweep T0 over 20 s, of the records mr, into w (initialised). */
static void
encode_recs(struct wbuf *w, uint64_t batch, unsigned nfs,
    const struct msg_rec *mr, size_t n)
{
	static const struct msg_sweep zero;
	struct msg_sweep h = zero;

	h.batch = batch;
	h.first_sweep = T0;
	h.start_ns = T0 * S;
	h.span_us = 20000000;
	h.nfs = nfs;
	(void)snprintf(h.fs[0], sizeof(h.fs[0]), "scratch");
	if (nfs > 1)
		(void)snprintf(h.fs[1], sizeof(h.fs[1]), "home");
	wbuf_init(w, 0);
	ck_assert_int_eq(msg_sweep_encode(w, &h, mr, n), 0);
}

/* Encode a one-filesystem SWEEP. */
static void
make(struct wbuf *w, uint64_t batch, const struct rec *r, size_t n)
{
	struct msg_rec mr[16];
	size_t i;

	ck_assert_uint_le(n, 16);
	memset(mr, 0, sizeof(mr));
	for (i = 0; i < n; i++) {
		mr[i].fs = 0;
		mr[i].nid = r[i].nid;
		mr[i].d.read_bytes = r[i].rb;
		mr[i].d.write_bytes = r[i].wb;
		mr[i].span_us = r[i].span_us;
		mr[i].cspan_us[0] = r[i].rb_span_us;
	}
	encode_recs(w, batch, 1, mr, n);
}

static int
add(struct sweeps *s, const char *sender, uint64_t sweep, uint64_t batch,
    const struct rec *r, size_t n, uint64_t safe)
{
	struct lh_err err;
	struct wbuf w;
	int rc;

	make(&w, batch, r, n);
	rc = sweeps_add(s, sender, sweep, NULL, w.data, w.len, safe, 7, batch,
	    &err);
	wbuf_free(&w);
	return rc;
}

struct seen {
	size_t n;
	char nid[16][NID_STR_MAX];
	double rrate[16], wrate[16];
	uint64_t rb[16];
	double fs_rrate;
	size_t nfs;
};

static int
on_client(void *arg, const struct sweeps_client *c)
{
	struct seen *s = arg;

	ck_assert_uint_lt(s->n, 16);
	(void)snprintf(s->nid[s->n], NID_STR_MAX, "%s", c->nid);
	s->rrate[s->n] = c->rate[0];
	s->wrate[s->n] = c->rate[1];
	s->rb[s->n] = c->d.read_bytes;
	s->n++;
	return 0;
}

static int
on_fs(void *arg, const struct sweeps_fs_total *t)
{
	struct seen *s = arg;

	s->fs_rrate += t->rate[0];
	s->nfs++;
	return 0;
}

static int
find(const struct seen *s, const char *nid)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (strcmp(s->nid[i], nid) == 0)
			return (int)i;
	}
	return -1;
}

static struct sweeps *
new_sweeps(uint64_t now_s)
{
	struct sweeps_conf c = {IVL, 5000, 3, NULL, 0};
	struct sweeps *s;

	ck_assert_int_eq(sweeps_new(&c, now_s * S, &s), 0);
	return s;
}

/* Two gatherers, different spans: the rate is the sum of each one's. */
START_TEST(sum_and_rates)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	struct seen seen;
	const struct rec a[] = {{"10.1.0.1@o2ib", 2000000, 0, 20000000, 0},
	    {"10.1.0.2@o2ib", 0, 0, 20000000, 0}};
	const struct rec b[] = {{"10.1.0.1@o2ib", 1000000, 500, 10000000, 0}};
	int i;

	ck_assert_int_eq(add(s, "oss1", T0, 1, a, 2, 0), SWEEPS_ON_TIME);
	ck_assert_int_eq(add(s, "oss2", T0, 1, b, 1, 0), SWEEPS_ON_TIME);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, on_client, on_fs, &seen,
	                     &rep),
	    0);
	ck_assert_uint_eq(rep.sweep_id, T0);
	ck_assert_uint_eq(rep.nclients, 2);
	ck_assert_uint_eq(rep.nacks, 2);
	i = find(&seen, "10.1.0.1@o2ib");
	ck_assert_int_ge(i, 0);
	ck_assert_uint_eq(seen.rb[i], 3000000);
	ck_assert(fabs(seen.rrate[i] - (100000.0 + 100000.0)) < 1e-6);
	ck_assert(fabs(seen.wrate[i] - 50.0) < 1e-9);
	ck_assert(fabs(seen.fs_rrate - 200000.0) < 1e-6);
	ck_assert_uint_eq(seen.nfs, 1);
	ck_assert_uint_eq(sweeps_open_id(s), T0 + IVL);
	sweeps_free(s);
}
END_TEST

/* A counter's own span is used for that counter. */
START_TEST(counter_spans)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	struct seen seen;
	const struct rec a[] = {{"1@gni", 1000000, 1000, 20000000, 10000000}};

	ck_assert_int_eq(add(s, "oss1", T0, 1, a, 1, 0), SWEEPS_ON_TIME);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, on_client, NULL, &seen,
	                     &rep),
	    0);
	ck_assert(fabs(seen.rrate[0] - 100000.0) < 1e-6);
	ck_assert(fabs(seen.wrate[0] - 50.0) < 1e-9);
	sweeps_free(s);
}
END_TEST

/* Closed as soon as every expected gatherer reported; else at the
 * deadline, naming the missing one. */
START_TEST(roster_and_deadline)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	const struct rec a[] = {{"10.1.0.1@o2ib", 1, 0, 20000000, 0}};

	ck_assert(!sweeps_ready(s, (T0 + 1) * S)); /* nobody yet */
	ck_assert_uint_eq(sweeps_next_ns(s), (T0 + 5) * S);
	ck_assert_int_eq(add(s, "oss1", T0, 1, a, 1, 0), SWEEPS_ON_TIME);
	ck_assert_int_eq(add(s, "oss2", T0, 1, a, 1, 0), SWEEPS_ON_TIME);
	ck_assert(sweeps_ready(s, (T0 + 1) * S));
	ck_assert_int_eq(sweeps_close(s, (T0 + 1) * S, NULL, NULL, NULL, &rep),
	    0);
	ck_assert(!rep.by_deadline);
	ck_assert_uint_eq(rep.nmissing, 0);

	/* Both report the next sweep before its boundary (their timers
	 * fired a little early): it is due at the boundary, not the
	 * deadline. */
	ck_assert_int_eq(add(s, "oss1", T0 + IVL, 2, a, 1, 0), SWEEPS_ON_TIME);
	ck_assert_int_eq(add(s, "oss2", T0 + IVL, 2, a, 1, 0), SWEEPS_ON_TIME);
	ck_assert(!sweeps_ready(s, (T0 + IVL) * S - 1000));
	ck_assert_uint_eq(sweeps_next_ns(s), (T0 + IVL) * S);
	ck_assert(sweeps_ready(s, (T0 + IVL) * S));
	ck_assert_int_eq(sweeps_close(s, (T0 + IVL) * S, NULL, NULL, NULL,
	                     &rep),
	    0);

	/* Next sweep: only oss1 reports. */
	ck_assert_int_eq(add(s, "oss1", T0 + 2 * IVL, 3, a, 1, 0),
	    SWEEPS_ON_TIME);
	ck_assert(!sweeps_ready(s, (T0 + 2 * IVL + 1) * S));
	ck_assert_uint_eq(sweeps_deadline_ns(s), (T0 + 2 * IVL + 5) * S);
	ck_assert(sweeps_ready(s, (T0 + 2 * IVL + 5) * S));
	ck_assert_int_eq(sweeps_close(s, (T0 + 2 * IVL + 5) * S, NULL, NULL,
	                     NULL, &rep),
	    0);
	ck_assert(rep.by_deadline);
	ck_assert_uint_eq(rep.nmissing, 1);
	ck_assert_str_eq(rep.missing[0], "oss2");
	sweeps_free(s);
}
END_TEST

/* A late batch goes into the oldest open sweep, with its own span; a
 * gatherer gone for longer than the roster is no longer waited for. */
START_TEST(late_batch_folded)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	struct seen seen;
	const struct rec a[] = {{"10.1.0.1@o2ib", 2000000, 0, 20000000, 0}};
	unsigned k;

	ck_assert_int_eq(add(s, "oss1", T0, 1, a, 1, 0), SWEEPS_ON_TIME);
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, NULL, NULL, NULL, &rep),
	    0);
	/* oss1's batch for T0 + IVL comes after that sweep closed. */
	ck_assert_int_eq(sweeps_close(s, (T0 + IVL + 5) * S, NULL, NULL, NULL,
	                     &rep),
	    0);
	ck_assert_uint_eq(rep.nmissing, 1);
	ck_assert_int_eq(add(s, "oss1", T0 + IVL, 2, a, 1, 0), SWEEPS_LATE);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + 2 * IVL + 5) * S, on_client,
	                     NULL, &seen, &rep),
	    0);
	ck_assert_uint_eq(rep.nlate, 1);
	ck_assert_uint_eq(rep.nacks, 1);
	ck_assert_uint_eq(rep.acks[0].batch, 2);
	/* Its own window's rate: no spike. */
	ck_assert(fabs(seen.rrate[0] - 100000.0) < 1e-6);
	/* Four silent sweeps: oss1 is no longer expected. */
	for (k = 3; k < 7; k++)
		(void)sweeps_close(s, (T0 + k * IVL + 5) * S, NULL, NULL, NULL,
		    &rep);
	ck_assert_uint_eq(rep.nmissing, 0);
	sweeps_free(s);
}
END_TEST

/* A late batch does not complete the sweep it is folded into: that
 * sweep waits for the sender's own batch of it (or the deadline).  Closed
 * at its boundary instead, a sole sender back from an outage stayed one
 * sweep behind for good (it_relay, LH_RELAY_SEED=30348). */
START_TEST(late_batch_not_a_report)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	const struct rec a[] = {{"10.1.0.1@o2ib", 2000000, 0, 20000000, 0}};
	uint64_t w = T0 + 2 * IVL;

	ck_assert_int_eq(add(s, "relay1", T0, 1, a, 1, 0), SWEEPS_ON_TIME);
	ck_assert_int_eq(sweeps_close(s, (T0 + 1) * S, NULL, NULL, NULL, &rep),
	    0);
	/* Its batch for T0 + IVL only after that sweep closed. */
	ck_assert_int_eq(sweeps_close(s, (T0 + IVL + 5) * S, NULL, NULL, NULL,
	                     &rep),
	    0);
	ck_assert_int_eq(add(s, "relay1", T0 + IVL, 2, a, 1, 0), SWEEPS_LATE);
	ck_assert(!sweeps_ready(s, w * S));
	ck_assert_uint_eq(sweeps_next_ns(s), (w + 5) * S);
	/* Its own batch of the sweep: combined with the late one, and the
	 * sweep is complete. */
	ck_assert_int_eq(add(s, "relay1", w, 3, a, 1, 0), SWEEPS_ON_TIME);
	ck_assert(sweeps_ready(s, w * S));
	ck_assert_int_eq(sweeps_close(s, w * S, NULL, NULL, NULL, &rep), 0);
	ck_assert(!rep.by_deadline);
	ck_assert_uint_eq(rep.nlate, 1);
	ck_assert_uint_eq(rep.nacks, 2);
	/* Only the late one: closed at the deadline. */
	ck_assert_int_eq(sweeps_close(s, (w + IVL + 5) * S, NULL, NULL, NULL,
	                     &rep),
	    0);
	ck_assert_int_eq(add(s, "relay1", w + IVL, 4, a, 1, 0), SWEEPS_LATE);
	ck_assert(!sweeps_ready(s, (w + 2 * IVL) * S));
	ck_assert(sweeps_ready(s, (w + 2 * IVL + 5) * S));
	sweeps_free(s);
}
END_TEST

/* A batch ahead waits in its own sweep. */
START_TEST(ahead)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	const struct rec a[] = {{"10.1.0.1@o2ib", 1, 0, 20000000, 0}};

	ck_assert_int_eq(add(s, "oss1", T0 + IVL, 1, a, 1, 0),
	    SWEEPS_AHEAD_OF_US);
	ck_assert_int_eq(add(s, "oss2", T0 + 100 * IVL, 1, a, 1, 0),
	    SWEEPS_AHEAD_OF_US);
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, NULL, NULL, NULL, &rep),
	    0);
	ck_assert_uint_eq(rep.nclients, 0);
	ck_assert_int_eq(sweeps_close(s, (T0 + IVL + 5) * S, NULL, NULL, NULL,
	                     &rep),
	    0);
	ck_assert_uint_eq(rep.nclients, 1);
	ck_assert_int_eq(sweeps_close(s, (T0 + 2 * IVL + 5) * S, NULL, NULL,
	                     NULL, &rep),
	    0);
	ck_assert_uint_eq(rep.nacks, 1); /* oss2's, clamped 2 sweeps ahead */
	sweeps_free(s);
}
END_TEST

/* A resend on a new connection is not counted again, and is
 * acknowledged there; at or below the ledger, a duplicate. */
START_TEST(resend_and_duplicate)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	struct seen seen;
	const struct rec a[] = {{"10.1.0.1@o2ib", 1000, 0, 20000000, 0}};
	struct lh_err err;
	struct wbuf w;

	ck_assert_int_eq(add(s, "oss1", T0, 5, a, 1, 4), SWEEPS_ON_TIME);
	ck_assert_uint_eq(sweeps_pending_batch(s, "oss1"), 5);
	make(&w, 5, a, 1);
	ck_assert_int_eq(sweeps_add(s, "oss1", T0, NULL, w.data, w.len, 4, 99,
	                     3, &err),
	    SWEEPS_RESEND);
	wbuf_free(&w);
	ck_assert_int_eq(add(s, "oss1", T0, 4, a, 1, 4), SWEEPS_DUPLICATE);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, on_client, NULL, &seen,
	                     &rep),
	    0);
	ck_assert_uint_eq(seen.rb[0], 1000);
	ck_assert_uint_eq(rep.nacks, 1);
	ck_assert_uint_eq(rep.acks[0].peer, 99);
	ck_assert_uint_eq(rep.acks[0].seq, 3);
	ck_assert_uint_eq(sweeps_pending_batch(s, "oss1"), 0);
	sweeps_free(s);
}
END_TEST

/*
 * Issue 15, item 13: a gatherer late past the deadline; its late batch
 * and its next one on time land in one sweep.  A steady 1000 B/s must
 * show as 1000 (it showed 2000): one sender's batches for one client
 * combine as deltas over summed spans.  Another sender's share of the
 * same client stays its own; a third batch combines as well.
 */
START_TEST(late_and_on_time_combined)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	struct seen seen;
	const struct rec a[] = {{"10.1.0.1@o2ib", 20000, 0, 20000000, 0},
	    {"10.1.0.2@o2ib", 40000, 0, 20000000, 0}};
	const struct rec b[] = {{"10.1.0.1@o2ib", 20000, 0, 20000000, 0},
	    {"10.1.0.3@o2ib", 2000, 0, 20000000, 0}};
	const struct rec other[] = {{"10.1.0.1@o2ib", 10000, 0, 20000000, 0}};
	int i;

	/* oss1's batch for T0 misses T0's deadline. */
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, NULL, NULL, NULL, &rep),
	    0);
	ck_assert_int_eq(add(s, "oss2", T0 + IVL, 1, other, 1, 0),
	    SWEEPS_ON_TIME);
	ck_assert_int_eq(add(s, "oss1", T0, 1, a, 2, 0), SWEEPS_LATE);
	ck_assert_int_eq(add(s, "oss1", T0 + IVL, 2, b, 2, 0), SWEEPS_ON_TIME);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + IVL + 5) * S, on_client, on_fs,
	                     &seen, &rep),
	    0);
	ck_assert_uint_eq(rep.nacks, 3);
	i = find(&seen, "10.1.0.1@o2ib");
	ck_assert_int_ge(i, 0);
	ck_assert_uint_eq(seen.rb[i], 50000);
	ck_assert_msg(fabs(seen.rrate[i] - 1500.0) < 1e-6, "%f", seen.rrate[i]);
	/* Named by one batch only: that batch's own rate. */
	i = find(&seen, "10.1.0.2@o2ib");
	ck_assert(fabs(seen.rrate[i] - 2000.0) < 1e-6);
	i = find(&seen, "10.1.0.3@o2ib");
	ck_assert(fabs(seen.rrate[i] - 100.0) < 1e-6);
	ck_assert(fabs(seen.fs_rrate - 3600.0) < 1e-6);

	/* Three batches of one sender in one sweep. */
	ck_assert_int_eq(add(s, "oss1", T0, 3, a, 1, 0), SWEEPS_LATE);
	ck_assert_int_eq(add(s, "oss1", T0 + IVL, 4, a, 1, 0), SWEEPS_LATE);
	ck_assert_int_eq(add(s, "oss1", T0 + 2 * IVL, 5, a, 1, 0),
	    SWEEPS_ON_TIME);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + 2 * IVL + 5) * S, on_client,
	                     NULL, &seen, &rep),
	    0);
	ck_assert_uint_eq(seen.n, 1);
	ck_assert_uint_eq(seen.rb[0], 60000);
	ck_assert_msg(fabs(seen.rrate[0] - 1000.0) < 1e-6, "%f", seen.rrate[0]);
	sweeps_free(s);
}
END_TEST

/*
 * Issue 15, item 14: a batch with a lower sweep id after a later one on
 * the same connection is not acknowledged before it: it waits in the
 * sweep of the earlier batch, and the acknowledgements go in batch
 * order (before, batch 6 was acknowledged first and batch 5's resend
 * then counted again).
 */
START_TEST(ack_order_follows_batches)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	const struct rec a[] = {{"10.1.0.1@o2ib", 20000, 0, 20000000, 0}};

	ck_assert_int_eq(add(s, "oss1", T0 + 2 * IVL, 5, a, 1, 0),
	    SWEEPS_AHEAD_OF_US);
	ck_assert_int_eq(add(s, "oss1", T0, 6, a, 1, 0), SWEEPS_AHEAD_OF_US);
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, NULL, NULL, NULL, &rep),
	    0);
	ck_assert_uint_eq(rep.nacks, 0);
	ck_assert_int_eq(sweeps_close(s, (T0 + IVL + 5) * S, NULL, NULL, NULL,
	                     &rep),
	    0);
	ck_assert_uint_eq(rep.nacks, 0);
	ck_assert_int_eq(sweeps_close(s, (T0 + 2 * IVL + 5) * S, NULL, NULL,
	                     NULL, &rep),
	    0);
	ck_assert_uint_eq(rep.nacks, 2);
	ck_assert_uint_eq(rep.acks[0].batch, 5);
	ck_assert_uint_eq(rep.acks[1].batch, 6);
	ck_assert_uint_eq(sweeps_pending_batch(s, "oss1"), 0);
	sweeps_free(s);
}
END_TEST

/* Issue 15, item 7: the caller's wall clock stepped; the open sweeps
 * are relabelled with what they hold, and close as the new clock says. */
START_TEST(shift_relabels)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	const struct rec a[] = {{"10.1.0.1@o2ib", 20000, 0, 20000000, 0}};

	ck_assert_int_eq(add(s, "oss1", T0 + IVL, 1, a, 1, 0),
	    SWEEPS_AHEAD_OF_US);
	sweeps_shift(s, 3600 + 7); /* whole intervals only */
	ck_assert_uint_eq(sweeps_open_id(s), T0 + 3600);
	ck_assert(!sweeps_ready(s, (T0 + 5) * S));
	ck_assert(sweeps_ready(s, (T0 + 3605) * S));
	ck_assert_int_eq(sweeps_close(s, (T0 + 3605) * S, NULL, NULL, NULL,
	                     &rep),
	    0);
	ck_assert_uint_eq(rep.nacks, 0);
	/* oss1's next batch, by its clock that did not step, is late now:
	 * it joins its first. */
	ck_assert_int_eq(add(s, "oss1", T0 + 2 * IVL, 2, a, 1, 0), SWEEPS_LATE);
	ck_assert_int_eq(sweeps_close(s, (T0 + 3600 + IVL + 5) * S, NULL, NULL,
	                     NULL, &rep),
	    0);
	ck_assert_uint_eq(rep.sweep_id, T0 + 3600 + IVL);
	ck_assert_uint_eq(rep.nacks, 2);
	ck_assert_uint_eq(rep.acks[0].batch, 1);
	/* Back, below 0: to 0. */
	sweeps_shift(s, -(int64_t)(T0 * 2));
	ck_assert_uint_eq(sweeps_open_id(s), 0);
	sweeps_free(s);
}
END_TEST

START_TEST(malformed_refused)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct lh_err err;
	const uint8_t junk[] = {1, 2, 3};

	ck_assert_int_lt(sweeps_add(s, "oss1", T0, NULL, junk, sizeof(junk), 0,
	                     1, 1, &err),
	    0);
	ck_assert(err.reason[0] != '\0');
	sweeps_free(s);
}
END_TEST

START_TEST(configured_roster)
{
	char n1[] = "oss1", n9[] = "oss9";
	char *names[] = {n1, n9};
	struct sweeps_conf c = {IVL, 5000, 3, names, 2};
	struct sweeps *s;
	struct sweeps_report rep;
	const struct rec a[] = {{"10.1.0.1@o2ib", 1, 0, 20000000, 0}};

	ck_assert_int_eq(sweeps_new(&c, (T0 + 1) * S, &s), 0);
	ck_assert_int_eq(add(s, "oss1", T0, 1, a, 1, 0), SWEEPS_ON_TIME);
	ck_assert(!sweeps_ready(s, (T0 + 2) * S));
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, NULL, NULL, NULL, &rep),
	    0);
	ck_assert_uint_eq(rep.nmissing, 1);
	ck_assert_str_eq(rep.missing[0], "oss9");

	/* Reloaded without oss9 and with a shorter deadline: the next sweep
	 * closes on oss1 alone; another interval is refused. */
	c.nexpected = 1;
	c.deadline_ms = 3000;
	ck_assert_int_eq(sweeps_reconfigure(s, &c), 0);
	ck_assert_uint_eq(sweeps_deadline_ns(s), (T0 + IVL + 3) * S);
	ck_assert_int_eq(add(s, "oss1", T0 + IVL, 2, a, 1, 0), SWEEPS_ON_TIME);
	ck_assert(sweeps_ready(s, (T0 + IVL) * S));
	c.interval_s = IVL * 2;
	ck_assert_int_eq(sweeps_reconfigure(s, &c), -EINVAL);
	c.interval_s = IVL;
	sweeps_free(s);
	c.deadline_ms = IVL * 1000;
	ck_assert_int_eq(sweeps_new(&c, 0, &s), -EINVAL);
}
END_TEST

/* A restarted aggregator expects the gatherers of its ledger at once. */
START_TEST(expect_after_restart)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	const struct rec a[] = {{"10.1.0.1@o2ib", 1, 0, 20000000, 0}};

	ck_assert_int_eq(sweeps_expect(s, "oss1"), 0);
	ck_assert_int_eq(sweeps_expect(s, "oss2"), 0);
	ck_assert_int_eq(add(s, "oss1", T0, 1, a, 1, 0), SWEEPS_ON_TIME);
	ck_assert(!sweeps_ready(s, (T0 + 1) * S)); /* oss2 awaited */
	ck_assert_int_eq(add(s, "oss2", T0, 1, a, 1, 0), SWEEPS_ON_TIME);
	ck_assert(sweeps_ready(s, (T0 + 1) * S));
	ck_assert_int_eq(sweeps_close(s, (T0 + 1) * S, NULL, NULL, NULL, &rep),
	    0);
	ck_assert_uint_eq(rep.nmissing, 0);
	sweeps_free(s);
}
END_TEST

/* One MDT record with metadata op counts: mds_ops over mds_span_us. */
static int
add_mdt(struct sweeps *s, const char *sender, uint64_t sweep, uint64_t batch,
    const char *nid, const struct mdops *ops, uint64_t mds_span_us)
{
	static const struct msg_sweep zero;
	struct msg_sweep h = zero;
	struct msg_rec mr[2];
	struct lh_err err;
	struct wbuf w;
	unsigned i;
	int rc;

	h.batch = batch;
	h.first_sweep = sweep;
	h.start_ns = sweep * S;
	h.span_us = 20000000;
	h.nfs = 1;
	h.ops = true;
	(void)snprintf(h.fs[0], sizeof(h.fs[0]), "scratch");
	memset(mr, 0, sizeof(mr));
	mr[0].nid = nid;
	mr[0].span_us = 20000000;
	for (i = 0; i < MDOPS_N; i++)
		mr[0].d.mds_ops += ops->v[i];
	mr[0].d.mds_ops += 5; /* ops not broken down */
	mr[0].cspan_us[5] = mds_span_us;
	mr[0].ops = ops;
	/* A client with no MDT activity in the same batch. */
	mr[1].nid = "10.1.0.9@o2ib";
	mr[1].span_us = 20000000;
	mr[1].d.read_bytes = 4096;
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_sweep_encode(&w, &h, mr, 2), 0);
	rc = sweeps_add(s, sender, sweep, NULL, w.data, w.len, 0, 7, batch,
	    &err);
	wbuf_free(&w);
	return rc;
}

struct seen_ops {
	size_t nclients, nwith;
	struct sweeps_ops client, total;
};

static int
on_client_ops(void *arg, const struct sweeps_client *c)
{
	struct seen_ops *s = arg;

	s->nclients++;
	if (c->ops == NULL) {
		ck_assert_str_eq(c->nid, "10.1.0.9@o2ib");
		return 0;
	}
	ck_assert_str_eq(c->nid, "10.1.0.1@o2ib");
	s->nwith++;
	s->client = *c->ops;
	return 0;
}

static int
on_fs_ops(void *arg, const struct sweeps_fs_total *t)
{
	struct seen_ops *s = arg;

	s->total = t->ops;
	return 0;
}

/* Two MDSs (DNE) with different spans: each op's rate is the sum over
 * them of delta / mds_ops span; a client without ops has none; the
 * next sweep starts from nothing. */
START_TEST(metadata_ops)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	struct seen_ops seen;
	struct mdops a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.v[MDOPS_OPEN] = 200;
	a.v[MDOPS_GETATTR] = 1000;
	b.v[MDOPS_OPEN] = 100;
	b.v[MDOPS_UNLINK] = 7;
	ck_assert_int_eq(add_mdt(s, "mds1", T0, 1, "10.1.0.1@o2ib", &a,
	                     20000000),
	    SWEEPS_ON_TIME);
	ck_assert_int_eq(add_mdt(s, "mds2", T0, 1, "10.1.0.1@o2ib", &b,
	                     10000000),
	    SWEEPS_ON_TIME);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, on_client_ops, on_fs_ops,
	                     &seen, &rep),
	    0);
	ck_assert_uint_eq(seen.nclients, 2);
	ck_assert_uint_eq(seen.nwith, 1);
	ck_assert_uint_eq(seen.client.d.v[MDOPS_OPEN], 300);
	ck_assert_uint_eq(seen.client.d.v[MDOPS_GETATTR], 1000);
	ck_assert_uint_eq(seen.client.d.v[MDOPS_UNLINK], 7);
	ck_assert_uint_eq(seen.client.d.v[MDOPS_CLOSE], 0);
	ck_assert(fabs(seen.client.rate[MDOPS_OPEN] - (10.0 + 10.0)) < 1e-9);
	ck_assert(fabs(seen.client.rate[MDOPS_GETATTR] - 50.0) < 1e-9);
	ck_assert(fabs(seen.client.rate[MDOPS_UNLINK] - 0.7) < 1e-9);
	ck_assert(fabs(seen.total.rate[MDOPS_OPEN] - 20.0) < 1e-9);
	ck_assert_uint_eq(seen.total.d.v[MDOPS_GETATTR], 1000);

	/* The next sweep: one MDS only. */
	ck_assert_int_eq(add_mdt(s, "mds1", T0 + IVL, 2, "10.1.0.1@o2ib", &b,
	                     20000000),
	    SWEEPS_ON_TIME);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + IVL + 5) * S, on_client_ops,
	                     on_fs_ops, &seen, &rep),
	    0);
	ck_assert_uint_eq(seen.client.d.v[MDOPS_OPEN], 100);
	ck_assert_uint_eq(seen.client.d.v[MDOPS_GETATTR], 0);
	ck_assert(fabs(seen.client.rate[MDOPS_OPEN] - 5.0) < 1e-9);
	sweeps_free(s);
}
END_TEST

/* Clients no batch names any more are forgotten after a while; the ones
 * still named keep their sums, and a forgotten one may come back. */
START_TEST(dictionary_pruned)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	struct seen seen;
	struct rec many[10];
	char nids[10][32];
	const struct rec one[] = {{"10.1.0.1@o2ib", 1000, 0, 20000000, 0}};
	uint64_t k, id;
	int i;

	for (i = 0; i < 10; i++) {
		(void)snprintf(nids[i], sizeof(nids[i]), "10.1.0.%d@o2ib",
		    i + 1);
		many[i].nid = nids[i];
		many[i].rb = 1000;
		many[i].wb = 0;
		many[i].span_us = 20000000;
		many[i].rb_span_us = 0;
	}
	ck_assert_int_eq(add(s, "oss1", T0, 1, many, 10, 0), SWEEPS_ON_TIME);
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, NULL, NULL, NULL, &rep),
	    0);
	ck_assert_uint_eq(sweeps_nclients(s), 10);
	for (k = 1; k <= 130; k++) {
		id = T0 + k * IVL;
		ck_assert_int_eq(add(s, "oss1", id, 1 + k, one, 1, 0),
		    SWEEPS_ON_TIME);
		memset(&seen, 0, sizeof(seen));
		ck_assert_int_eq(sweeps_close(s, (id + 5) * S, on_client, on_fs,
		                     &seen, &rep),
		    0);
		ck_assert_uint_eq(rep.sweep_id, id);
		ck_assert_uint_eq(seen.n, 1);
		ck_assert_str_eq(seen.nid[0], "10.1.0.1@o2ib");
		ck_assert_uint_eq(seen.rb[0], 1000);
	}
	/* Pruned at the 128th close: only the client still named. */
	ck_assert_uint_eq(sweeps_nclients(s), 1);
	id = T0 + 131 * IVL;
	ck_assert_int_eq(add(s, "oss1", id, 132, many, 3, 0), SWEEPS_ON_TIME);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (id + 5) * S, on_client, on_fs, &seen,
	                     &rep),
	    0);
	ck_assert_uint_eq(seen.n, 3);
	for (i = 0; i < 3; i++) {
		int j = find(&seen, nids[i]);

		ck_assert_int_ge(j, 0);
		ck_assert_uint_eq(seen.rb[j], 1000);
	}
	ck_assert_uint_eq(sweeps_nclients(s), 3);
	sweeps_free(s);
}
END_TEST

/*
 * Issue 15, item 9: a record whose op counts add up to more than its
 * mds_ops is counted without them; sweeps_add() tells the caller how
 * many (the decoder counts them only while handing records out), for a
 * first batch and for a second one combined with it.
 */
START_TEST(ops_above_mds_dropped)
{
	static const struct msg_sweep zero;
	struct sweeps *s = new_sweeps(T0 + 1);
	struct msg_sweep h = zero, got;
	struct sweeps_report rep;
	struct seen_ops seen;
	struct msg_rec mr;
	struct mdops ops;
	struct lh_err err;
	struct wbuf w;
	uint64_t batch;

	memset(&ops, 0, sizeof(ops));
	ops.v[MDOPS_OPEN] = 500000;
	h.first_sweep = T0;
	h.start_ns = T0 * S;
	h.span_us = 20000000;
	h.nfs = 1;
	h.ops = true;
	(void)snprintf(h.fs[0], sizeof(h.fs[0]), "scratch");
	memset(&mr, 0, sizeof(mr));
	mr.nid = "10.1.0.9@o2ib"; /* on_client_ops: no ops */
	mr.span_us = 20000000;
	mr.d.mds_ops = 10;
	mr.ops = &ops;
	for (batch = 1; batch <= 2; batch++) {
		h.batch = batch;
		wbuf_init(&w, 0);
		ck_assert_int_eq(msg_sweep_encode(&w, &h, &mr, 1), 0);
		ck_assert_int_eq(msg_sweep_decode(&got, w.data, w.len, NULL,
		                     NULL, &err),
		    0);
		ck_assert_uint_eq(got.nops_dropped, 0); /* not counted yet */
		ck_assert_int_ge(sweeps_add(s, "mds1", T0, &got, w.data, w.len,
		                     0, 7, batch, &err),
		    0);
		ck_assert_uint_eq(got.nops_dropped, 1);
		wbuf_free(&w);
	}
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, on_client_ops, on_fs_ops,
	                     &seen, &rep),
	    0);
	ck_assert_uint_eq(seen.nclients, 1);
	ck_assert_uint_eq(seen.nwith, 0);
	ck_assert_uint_eq(seen.total.d.v[MDOPS_OPEN], 0);
	ck_assert_uint_eq(rep.nacks, 2);
	sweeps_free(s);
}
END_TEST

/* A SWEEP of records over filesystems "scratch" and "home" (fs 0, 1),
 * read_bytes rb each over 20 s. */
struct frec {
	uint16_t fs;
	const char *nid;
	uint64_t rb;
};

static void
make2(struct wbuf *w, uint64_t batch, const struct frec *r, size_t n)
{
	struct msg_rec mr[16];
	size_t i;

	ck_assert_uint_le(n, 16);
	memset(mr, 0, sizeof(mr));
	for (i = 0; i < n; i++) {
		mr[i].fs = r[i].fs;
		mr[i].nid = r[i].nid;
		mr[i].d.read_bytes = r[i].rb;
		mr[i].span_us = 20000000;
	}
	encode_recs(w, batch, 2, mr, n);
}

static int
add2(struct sweeps *s, const char *sender, uint64_t sweep, uint64_t batch,
    const struct frec *r, size_t n)
{
	struct msg_sweep h;
	struct lh_err err;
	struct wbuf w;
	int rc;

	make2(&w, batch, r, n);
	/* As the intake does: decoded once, then counted. */
	ck_assert_int_eq(sweeps_decode(s, w.data, w.len, &h, &err), 0);
	rc = sweeps_add(s, sender, sweep, &h, w.data, w.len, 0, 7, batch, &err);
	wbuf_free(&w);
	return rc;
}

struct seen_fs {
	size_t n;
	char key[16][MSG_FS_MAX + NID_STR_MAX];
	uint64_t rb[16];
	double rrate[16];
	unsigned nsenders[16];
};

static int
on_client_fs(void *arg, const struct sweeps_client *c)
{
	struct seen_fs *s = arg;

	ck_assert_uint_lt(s->n, 16);
	(void)snprintf(s->key[s->n], sizeof(s->key[0]), "%s %s", c->fs, c->nid);
	s->rb[s->n] = c->d.read_bytes;
	s->rrate[s->n] = c->rate[0];
	s->nsenders[s->n] = c->nsenders;
	s->n++;
	return 0;
}

static int
find_fs(const struct seen_fs *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (strcmp(s->key[i], key) == 0)
			return (int)i;
	}
	return -1;
}

/* rb and the rate of client key in seen, or a failure. */
static void
expect_client(const struct seen_fs *seen, const char *key, uint64_t rb,
    unsigned nsenders)
{
	int i = find_fs(seen, key);

	ck_assert_msg(i >= 0, "%s missing", key);
	ck_assert_msg(seen->rb[i] == rb, "%s: %llu, expected %llu", key,
	    (unsigned long long)seen->rb[i], (unsigned long long)rb);
	ck_assert(fabs(seen->rrate[i] - (double)rb / 20) < 1e-6);
	ck_assert_uint_eq(seen->nsenders[i], nsenders);
}

/*
 * Clients are summed by (filesystem, network, address), not by text: one
 * address in two filesystems or two networks is two clients, o2ib0 is
 * o2ib, two spellings of an IPv6 address are one client, numbered NIDs
 * and text addresses sum as IPv4 ones do; a second batch of a sender in
 * the same sweep (combined through the NIDs' text) finds the same
 * clients.
 */
START_TEST(clients_by_binary_key)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	struct sweeps_report rep;
	struct seen_fs seen;
	const struct frec a[] = {{0, "10.1.0.1@o2ib", 100},
	    {1, "10.1.0.1@o2ib", 200}, {0, "10.1.0.1@o2ib2", 400},
	    {0, "7@gni", 800}, {0, "2001:db8::1@tcp", 1600},
	    {1, "weird<x>@<1:2>", 3200}};
	const struct frec b[] = {{0, "10.1.0.1@o2ib0", 1}, {0, "7@gni0", 2},
	    {0, "2001:DB8:0::1@tcp", 4}, {1, "weird<x>@<1:2>", 8},
	    {1, "10.1.0.2@o2ib", 16}};
	const struct frec late[] = {{0, "7@gni", 20},
	    {0, "2001:db8::1@tcp", 40}, {1, "weird<x>@<1:2>", 80}};

	ck_assert_int_eq(add2(s, "oss1", T0, 1, a, 6), SWEEPS_ON_TIME);
	ck_assert_int_eq(add2(s, "oss2", T0, 1, b, 5), SWEEPS_ON_TIME);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, on_client_fs, NULL,
	                     &seen, &rep),
	    0);
	ck_assert_uint_eq(seen.n, 7);
	expect_client(&seen, "scratch 10.1.0.1@o2ib", 101, 2);
	expect_client(&seen, "home 10.1.0.1@o2ib", 200, 1);
	expect_client(&seen, "scratch 10.1.0.1@o2ib2", 400, 1);
	expect_client(&seen, "scratch 7@gni", 802, 2);
	expect_client(&seen, "scratch 2001:db8::1@tcp", 1604, 2);
	expect_client(&seen, "home weird<x>@<1:2>", 3208, 2);
	expect_client(&seen, "home 10.1.0.2@o2ib", 16, 1);

	/* oss1 late for T0 + IVL, then on time: one sender's two batches
	 * in one sweep, combined; oss2's share stays its own. */
	ck_assert_int_eq(sweeps_close(s, (T0 + IVL + 5) * S, NULL, NULL, NULL,
	                     &rep),
	    0);
	ck_assert_int_eq(add2(s, "oss2", T0 + 2 * IVL, 2, b, 5),
	    SWEEPS_ON_TIME);
	ck_assert_int_eq(add2(s, "oss1", T0 + IVL, 2, late, 3), SWEEPS_LATE);
	ck_assert_int_eq(add2(s, "oss1", T0 + 2 * IVL, 3, late, 3),
	    SWEEPS_ON_TIME);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + 2 * IVL + 5) * S, on_client_fs,
	                     NULL, &seen, &rep),
	    0);
	ck_assert_uint_eq(seen.n, 5);
	/* 2 x 20 over 2 x 20 s is 1 a second, plus oss2's 2 over 20 s. */
	ck_assert_int_ge(find_fs(&seen, "scratch 7@gni"), 0);
	ck_assert_uint_eq(seen.rb[find_fs(&seen, "scratch 7@gni")], 42);
	ck_assert(
	    fabs(seen.rrate[find_fs(&seen, "scratch 7@gni")] - 1.1) < 1e-9);
	ck_assert_uint_eq(seen.rb[find_fs(&seen, "scratch 2001:db8::1@tcp")],
	    84);
	ck_assert_uint_eq(seen.rb[find_fs(&seen, "home weird<x>@<1:2>")], 168);
	sweeps_free(s);
}
END_TEST

/* What sweeps_decode() kept is used by sweeps_add() for that payload
 * only; a malformed one is refused by either, with nothing counted. */
START_TEST(decode_then_add)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	const struct frec a[] = {{0, "10.1.0.1@o2ib", 100}};
	const struct frec b[] = {{1, "10.1.0.9@o2ib", 300}};
	struct sweeps_report rep;
	struct seen_fs seen;
	struct msg_sweep h;
	struct lh_err err;
	struct wbuf wa, wb;
	uint8_t junk[64];

	make2(&wa, 1, a, 1);
	make2(&wb, 1, b, 1);
	ck_assert_int_eq(sweeps_decode(s, wa.data, wa.len, &h, &err), 0);
	ck_assert_int_eq(sweeps_add(s, "oss1", T0, &h, wb.data, wb.len, 0, 7, 1,
	                     &err),
	    SWEEPS_ON_TIME);
	/* Cut short: refused, and what was kept before is not used. */
	ck_assert_int_eq(sweeps_decode(s, wa.data, wa.len, &h, &err), 0);
	memcpy(junk, wa.data, wa.len - 1);
	ck_assert_int_eq(sweeps_decode(s, junk, wa.len - 1, &h, &err),
	    -EBADMSG);
	ck_assert_int_eq(sweeps_add(s, "oss2", T0, &h, junk, wa.len - 1, 0, 7,
	                     1, &err),
	    -EBADMSG);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, on_client_fs, NULL,
	                     &seen, &rep),
	    0);
	ck_assert_uint_eq(seen.n, 1);
	expect_client(&seen, "home 10.1.0.9@o2ib", 300, 1);
	ck_assert_uint_eq(rep.nacks, 1);
	wbuf_free(&wa);
	wbuf_free(&wb);
	sweeps_free(s);
}
END_TEST

/* The groups (filesystem, network) of forgotten clients are forgotten
 * with them; the clients kept keep their sums under the new numbers. */
START_TEST(groups_pruned)
{
	struct sweeps *s = new_sweeps(T0 + 1);
	const struct frec first[] = {{0, "10.1.0.1@o2ib", 1}, {0, "3@gni", 2},
	    {1, "10.1.0.1@tcp", 4}};
	const struct frec kept[] = {{1, "10.1.0.1@tcp", 4}};
	struct sweeps_report rep;
	struct seen_fs seen;
	uint64_t k, id;

	ck_assert_int_eq(add2(s, "oss1", T0, 1, first, 3), SWEEPS_ON_TIME);
	ck_assert_int_eq(sweeps_close(s, (T0 + 5) * S, NULL, NULL, NULL, &rep),
	    0);
	for (k = 1; k <= 130; k++) {
		id = T0 + k * IVL;
		ck_assert_int_eq(add2(s, "oss1", id, 1 + k, kept, 1),
		    SWEEPS_ON_TIME);
		memset(&seen, 0, sizeof(seen));
		ck_assert_int_eq(sweeps_close(s, (id + 5) * S, on_client_fs,
		                     NULL, &seen, &rep),
		    0);
		ck_assert_uint_eq(seen.n, 1);
		expect_client(&seen, "home 10.1.0.1@tcp", 4, 1);
	}
	ck_assert_uint_eq(sweeps_nclients(s), 1);
	id = T0 + 131 * IVL;
	ck_assert_int_eq(add2(s, "oss1", id, 132, first, 3), SWEEPS_ON_TIME);
	ck_assert_int_eq(add2(s, "oss2", id, 1, first, 3), SWEEPS_ON_TIME);
	memset(&seen, 0, sizeof(seen));
	ck_assert_int_eq(sweeps_close(s, (id + 5) * S, on_client_fs, NULL,
	                     &seen, &rep),
	    0);
	ck_assert_uint_eq(seen.n, 3);
	expect_client(&seen, "scratch 10.1.0.1@o2ib", 2, 2);
	expect_client(&seen, "scratch 3@gni", 4, 2);
	expect_client(&seen, "home 10.1.0.1@tcp", 8, 2);
	ck_assert_uint_eq(sweeps_nclients(s), 3);
	sweeps_free(s);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("sweeps");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sum_and_rates);
	tcase_add_test(tc, counter_spans);
	tcase_add_test(tc, roster_and_deadline);
	tcase_add_test(tc, late_batch_folded);
	tcase_add_test(tc, ahead);
	tcase_add_test(tc, resend_and_duplicate);
	tcase_add_test(tc, malformed_refused);
	tcase_add_test(tc, late_and_on_time_combined);
	tcase_add_test(tc, ack_order_follows_batches);
	tcase_add_test(tc, shift_relabels);
	tcase_add_test(tc, ops_above_mds_dropped);
	tcase_add_test(tc, configured_roster);
	tcase_add_test(tc, expect_after_restart);
	tcase_add_test(tc, dictionary_pruned);
	tcase_add_test(tc, metadata_ops);
	tcase_add_test(tc, clients_by_binary_key);
	tcase_add_test(tc, decode_then_add);
	tcase_add_test(tc, groups_pruned);
	tcase_add_test(tc, late_batch_not_a_report);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(su, tc);
	return tu_run(su);
}
