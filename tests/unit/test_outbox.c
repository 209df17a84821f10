/* SPDX-License-Identifier: BSD-2-Clause */
/* The sender's unacknowledged data: coalescing, identical resends,
 * acknowledgements, bounded memory over a long outage, MDT op counts
 * (batches split to fit a frame: outbox_split.c). */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "nid.h"
#include "outbox.h"
#include "outbox_tests.h"
#include "testutil.h"
#include "wire.h"

struct seen {
	size_t n;
	uint64_t read_bytes, span_us;
};

static int
sum_cb(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	struct seen *s = arg;

	(void)h;
	s->n++;
	s->read_bytes += r->d.read_bytes;
	s->span_us += r->span_us;
	return 0;
}

struct iocount
io(uint64_t rb)
{
	struct iocount c;

	memset(&c, 0, sizeof(c));
	c.read_bytes = rb;
	c.read_ops = rb > 0 ? 1 : 0;
	return c;
}

START_TEST(coalesce_resend_ack)
{
	struct outbox ob;
	struct wbuf w1, w2;
	struct msg_sweep h;
	struct seen s;
	struct iocount d = io(100);
	uint64_t batch, sweep;

	outbox_init(&ob, 41); /* 41 batches sent before a restart */
	ck_assert(!outbox_has_data(&ob));
	wbuf_init(&w1, 0);
	wbuf_init(&w2, 0);
	ck_assert_int_eq(outbox_next(&ob, &w1, true, &batch, &sweep), -ENODATA);

	ck_assert_int_eq(outbox_add(&ob, "scratch", "10.1.0.1@o2ib", &d, NULL,
	                     20000000, NULL, 1000, 5),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "scratch", "10.1.0.1@o2ib", &d, NULL,
	                     20000000, NULL, 1020, 7),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "home", "10.1.0.1@o2ib", &d, NULL,
	                     20000000, NULL, 1020, 7),
	    0);
	ck_assert_uint_eq(ob.pending.n, 2);

	/* Nothing is numbered until sealed. */
	ck_assert_int_eq(outbox_next(&ob, &w1, true, &batch, &sweep), -ENODATA);
	outbox_seal(&ob);
	ck_assert_int_eq(outbox_next(&ob, &w1, true, &batch, &sweep), 0);
	ck_assert_uint_eq(batch, 42);
	ck_assert_uint_eq(sweep, 1020);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(msg_sweep_decode(&h, w1.data, w1.len, sum_cb, &s,
	                     NULL),
	    0);
	ck_assert_uint_eq(h.batch, 42);
	ck_assert_uint_eq(h.first_sweep, 1000);
	ck_assert_uint_eq(h.start_ns, 5);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.read_bytes, 300);
	ck_assert_uint_eq(s.span_us, 60000000);

	/* New data while 42 is in flight goes to the next batch; a resend
	 * of 42 is byte for byte the same. */
	ck_assert_int_eq(outbox_add(&ob, "scratch", "10.1.0.2@o2ib", &d, NULL,
	                     20000000, NULL, 1040, 9),
	    0);
	outbox_seal(&ob); /* 42 is in flight: nothing changes */
	ck_assert_int_eq(outbox_next(&ob, &w2, true, &batch, &sweep), 0);
	ck_assert_uint_eq(batch, 42);
	ck_assert(w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0);

	ck_assert_int_eq(outbox_acked(&ob, 41), -ESRCH);
	ck_assert_int_eq(outbox_acked(&ob, 42), 0);
	ck_assert_int_eq(outbox_acked(&ob, 42), -ESRCH);
	wbuf_reset(&w2);
	ck_assert_int_eq(outbox_next(&ob, &w2, true, &batch, &sweep), -ENODATA);
	outbox_seal(&ob);
	ck_assert_int_eq(outbox_next(&ob, &w2, true, &batch, &sweep), 0);
	ck_assert_uint_eq(batch, 43);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(msg_sweep_decode(&h, w2.data, w2.len, sum_cb, &s,
	                     NULL),
	    0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(h.first_sweep, 1040);
	ck_assert_int_eq(outbox_acked(&ob, 43), 0);
	ck_assert(!outbox_has_data(&ob));
	wbuf_free(&w1);
	wbuf_free(&w2);
	outbox_free(&ob);
}
END_TEST

/* Seal what is pending, take the next batch to send into w (emptied
 * first) and decode it into *h and *s; its number into *batch, the last
 * sweep it holds into *sweep. */
static void
send_pending(struct outbox *ob, struct wbuf *w, struct msg_sweep *h,
    struct seen *s, uint64_t *batch, uint64_t *sweep)
{
	outbox_seal(ob);
	wbuf_reset(w);
	ck_assert_int_eq(outbox_next(ob, w, true, batch, sweep), 0);
	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(msg_sweep_decode(h, w->data, w->len, sum_cb, s, NULL),
	    0);
}

/* n clients NET.<i / 250>.<i % 250>@o2ib of filesystem scratch, each
 * with delta d, the first named first instead when not NULL. */
static void
add_clients(struct outbox *ob, unsigned net, unsigned n, const char *first,
    const struct iocount *d, uint64_t sweep, uint64_t start_ns)
{
	char nid[32];
	unsigned i;

	for (i = 0; i < n; i++) {
		(void)snprintf(nid, sizeof(nid), "10.%u.%u.%u@o2ib", net,
		    i / 250, i % 250);
		ck_assert_int_eq(outbox_add(ob, "scratch",
		                     i == 0 && first != NULL ? first : nid, d,
		                     NULL, 20000000, NULL, sweep, start_ns),
		    0);
	}
}

/* An acknowledged batch's storage becomes the next pending batch's, when
 * nothing is pending yet: a busy gatherer's next sweep then writes into
 * pages it already has (no page faults, no regrowth), and still sends
 * only its own records, none left over from the batch before. */
START_TEST(ack_keeps_storage)
{
	struct outbox ob;
	struct wbuf w;
	struct msg_sweep h;
	struct seen s;
	struct iocount d = io(100);
	uint64_t batch, sweep;
	struct outbox_rec *recs;
	size_t cap;

	outbox_init(&ob, 0);
	wbuf_init(&w, 0);
	add_clients(&ob, 1, 500, NULL, &d, 1000, 5);
	send_pending(&ob, &w, &h, &s, &batch, &sweep);
	ck_assert_int_eq(outbox_acked(&ob, batch), 0);
	ck_assert_uint_eq(ob.pending.n, 0);
	ck_assert_uint_ge(ob.pending.cap, 500);
	ck_assert_ptr_null(ob.inflight.recs);
	recs = ob.pending.recs;
	cap = ob.pending.cap;

	/* The next sweep: one client of the last batch again, and others. */
	add_clients(&ob, 2, 400, "10.1.0.0@o2ib", &d, 1020, 6);
	ck_assert_ptr_eq(ob.pending.recs, recs);
	ck_assert_uint_eq(ob.pending.cap, cap);
	send_pending(&ob, &w, &h, &s, &batch, &sweep);
	ck_assert_uint_eq(h.first_sweep, 1020);
	ck_assert_uint_eq(s.n, 400);
	ck_assert_uint_eq(s.read_bytes, 400 * 100);

	/* Data queued before the ack came: the pending batch is left as it
	 * is, the acknowledged one freed. */
	add_clients(&ob, 3, 1, NULL, &d, 1040, 7);
	ck_assert_int_eq(outbox_acked(&ob, batch), 0);
	ck_assert_ptr_null(ob.inflight.recs);
	ck_assert_uint_eq(ob.pending.n, 1);
	send_pending(&ob, &w, &h, &s, &batch, &sweep);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.read_bytes, 100);
	wbuf_free(&w);
	outbox_free(&ob);
}
END_TEST

/* A day-long outage of a 250-client server at 20 s: 4,320 sweeps, and
 * still one record per client, every byte kept, spans added up (a day in
 * microseconds does not fit 32 bits: the span is 64-bit). */
START_TEST(long_outage_bounded)
{
	struct outbox ob;
	struct iocount d = io(7);
	struct msg_sweep h;
	struct seen s;
	struct wbuf w;
	uint64_t batch, sweep, k;
	char nid[64];
	unsigned c;

	outbox_init(&ob, 0);
	for (k = 0; k < 4320; k++) {
		for (c = 0; c < 250; c++) {
			(void)snprintf(nid, sizeof(nid), "10.1.0.%u@o2ib",
			    c + 1);
			ck_assert_int_eq(outbox_add(&ob, "scratch", nid, &d,
			                     NULL, 20000000, NULL,
			                     1000 + k * 20, 0),
			    0);
		}
	}
	ck_assert_uint_eq(ob.pending.n, 250);
	wbuf_init(&w, 0);
	send_pending(&ob, &w, &h, &s, &batch, &sweep);
	ck_assert_uint_eq(s.n, 250);
	ck_assert_uint_eq(s.read_bytes, 7ULL * 4320 * 250);
	/* 86,400 s in microseconds: above 2^32, sent whole (it was once
	 * clamped to UINT32_MAX). */
	ck_assert_uint_gt(4320ULL * 20000000, UINT32_MAX);
	ck_assert_uint_eq(h.span_us, 4320ULL * 20000000);
	ck_assert_uint_eq(s.span_us, 250ULL * 4320 * 20000000);
	ck_assert_uint_eq(h.first_sweep, 1000);
	ck_assert_uint_eq(sweep, 1000 + 4319 * 20);
	wbuf_free(&w);
	outbox_free(&ob);
}
END_TEST

/* The records of one decoded batch, by NID. */
struct recs {
	size_t n;
	char nid[8][NID_STR_MAX];
	struct iocount d[8];
	uint64_t span_us[8];
	uint64_t cspan_us[8][MSG_NCOUNTERS];
	bool has_cspan[8];
	bool has_ops[8];
	struct mdops ops[8];
};

static int
keep_cb(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	struct recs *k = arg;

	(void)h;
	ck_assert_uint_lt(k->n, 8);
	(void)snprintf(k->nid[k->n], NID_STR_MAX, "%s", r->nid);
	k->d[k->n] = r->d;
	k->span_us[k->n] = r->span_us;
	memcpy(k->cspan_us[k->n], r->cspan_us, sizeof(r->cspan_us));
	k->has_cspan[k->n] = r->has_cspan;
	k->has_ops[k->n] = r->ops != NULL;
	if (r->ops != NULL)
		k->ops[k->n] = *r->ops;
	k->n++;
	return 0;
}

static size_t
find(const struct recs *k, const char *nid)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (strcmp(k->nid[i], nid) == 0)
			return i;
	ck_abort_msg("%s not in the batch", nid);
	return 0;
}

/* Send the pending batch and decode it into k. */
static void
send_and_keep(struct outbox *ob, struct recs *k, struct msg_sweep *h)
{
	uint64_t batch, sweep;
	struct wbuf w;

	wbuf_init(&w, 0);
	outbox_seal(ob);
	ck_assert_int_eq(outbox_next(ob, &w, true, &batch, &sweep), 0);
	memset(k, 0, sizeof(*k));
	ck_assert_int_eq(msg_sweep_decode(h, w.data, w.len, keep_cb, k, NULL),
	    0);
	ck_assert_int_eq(outbox_acked(ob, batch), 0);
	wbuf_free(&w);
}

/* Each counter's span is added up on its own; a NULL or a 0 adds the
 * record's span for that counter; bit 7 only where a span differs. */
START_TEST(coalesce_counter_spans)
{
	static const uint64_t cs1[MSG_NCOUNTERS] = {20000100, 0, 19999900, 0, 0,
	    0};
	static const uint64_t cs2[MSG_NCOUNTERS] = {10000000, 10000000,
	    10000000, 10000000, 10000000, 10000000};
	static const uint64_t absent_only[MSG_NCOUNTERS] = {0, 0, 0, 5, 5, 5};
	struct iocount d = io(100);
	struct msg_sweep h;
	struct outbox ob;
	struct recs k;
	size_t i;

	d.write_bytes = 4096; /* present, never given a span of its own */
	outbox_init(&ob, 0);
	/* a: own spans, then none (NULL), then all equal to the span */
	ck_assert_int_eq(outbox_add(&ob, "scratch", "1@gni", &d, NULL, 20000000,
	                     cs1, 1000, 0),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "scratch", "1@gni", &d, NULL, 20000000,
	                     NULL, 1020, 0),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "scratch", "1@gni", &d, NULL, 10000000,
	                     cs2, 1040, 0),
	    0);
	/* b: NULL only; c: spans only for counters that stay 0 */
	ck_assert_int_eq(outbox_add(&ob, "scratch", "2@gni", &d, NULL, 20000000,
	                     NULL, 1000, 0),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "scratch", "3@gni", &d, NULL, 20000000,
	                     absent_only, 1000, 0),
	    0);
	send_and_keep(&ob, &k, &h);
	ck_assert_uint_eq(k.n, 3);

	i = find(&k, "1@gni");
	ck_assert_uint_eq(k.span_us[i], 50000000);
	ck_assert(k.has_cspan[i]);
	ck_assert_uint_eq(k.cspan_us[i][0], 50000100); /* read_bytes */
	ck_assert_uint_eq(k.cspan_us[i][1], 50000000); /* write_bytes */
	ck_assert_uint_eq(k.cspan_us[i][2], 49999900); /* read_ops */
	ck_assert_uint_eq(k.cspan_us[i][3], 50000000); /* absent */
	ck_assert_uint_eq(k.d[i].read_bytes, 300);

	i = find(&k, "2@gni");
	ck_assert(!k.has_cspan[i]);
	ck_assert_uint_eq(k.span_us[i], 20000000);
	for (unsigned c = 0; c < MSG_NCOUNTERS; c++)
		ck_assert_uint_eq(k.cspan_us[i][c], 20000000);

	/* Spans for absent counters are not sent: nothing differs. */
	i = find(&k, "3@gni");
	ck_assert(!k.has_cspan[i]);
	ck_assert_uint_eq(k.cspan_us[i][3], 20000000);
	outbox_free(&ob);
}
END_TEST

/* Spans above 2^32 us are sent whole (they were once clamped to
 * UINT32_MAX), and sums saturate at 2^63-1 instead of wrapping. */
START_TEST(big_spans)
{
	const uint64_t big = 3ULL * UINT32_MAX; /* about 3.6 hours */
	const uint64_t cs[MSG_NCOUNTERS] = {big + 7, 0, big - 7, 0, 0, 0};
	const uint64_t huge[MSG_NCOUNTERS] = {UINT64_MAX, 0, INT64_MAX, 0, 0,
	    0};
	struct iocount d = io(5);
	struct msg_sweep h;
	struct outbox ob;
	struct recs k;
	size_t i;

	outbox_init(&ob, 0);
	ck_assert_int_eq(outbox_add(&ob, "scratch", "1@gni", &d, NULL, big,
	                     NULL, 1, 0),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "scratch", "2@gni", &d, NULL, big,
	                     NULL, 1, 0),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "scratch", "3@gni", &d, NULL, 2 * big,
	                     cs, 1, 0),
	    0);
	send_and_keep(&ob, &k, &h);
	ck_assert_uint_eq(h.span_us, big); /* the most common span */
	i = find(&k, "1@gni");
	ck_assert_uint_eq(k.span_us[i], big);
	i = find(&k, "3@gni");
	ck_assert_uint_eq(k.span_us[i], 2 * big);
	ck_assert(k.has_cspan[i]);
	ck_assert_uint_eq(k.cspan_us[i][0], big + 7);
	ck_assert_uint_eq(k.cspan_us[i][2], big - 7);

	/* Saturation: each add near the top, and more than the top. */
	for (int n = 0; n < 3; n++) {
		ck_assert_int_eq(outbox_add(&ob, "scratch", "4@gni", &d, NULL,
		                     INT64_MAX - 1, NULL, 2, 0),
		    0);
		ck_assert_int_eq(outbox_add(&ob, "scratch", "5@gni", &d, NULL,
		                     UINT64_MAX, huge, 2, 0),
		    0);
		ck_assert_int_eq(outbox_add(&ob, "scratch", "6@gni", &d, NULL,
		                     1000, huge, 2, 0),
		    0);
	}
	send_and_keep(&ob, &k, &h);
	ck_assert_uint_eq(k.n, 3);
	i = find(&k, "4@gni");
	ck_assert_uint_eq(k.span_us[i], INT64_MAX);
	ck_assert(!k.has_cspan[i]);
	i = find(&k, "5@gni");
	ck_assert_uint_eq(k.span_us[i], INT64_MAX);
	ck_assert(!k.has_cspan[i]);
	i = find(&k, "6@gni");
	ck_assert_uint_eq(k.span_us[i], 3000);
	ck_assert(k.has_cspan[i]);
	ck_assert_uint_eq(k.cspan_us[i][0], INT64_MAX);
	ck_assert_uint_eq(k.cspan_us[i][2], INT64_MAX);
	ck_assert_uint_eq(k.d[i].read_bytes, 15);
	outbox_free(&ob);
}
END_TEST

START_TEST(bad_names)
{
	struct outbox ob;
	struct iocount d = io(1);

	outbox_init(&ob, 0);
	ck_assert_int_eq(outbox_add(&ob, "", "1@gni", &d, NULL, 1, NULL, 1, 0),
	    -EINVAL);
	ck_assert_int_eq(outbox_add(&ob, "fs", "", &d, NULL, 1, NULL, 1, 0),
	    -EINVAL);
	ck_assert_int_eq(outbox_add(&ob, "waytoolongfsname", "1@gni", &d, NULL,
	                     1, NULL, 1, 0),
	    -EINVAL);
	outbox_free(&ob);
}
END_TEST

/* A batch sealed but not saved goes back to pending, number and all. */
START_TEST(unseal)
{
	struct outbox ob;
	struct iocount d = io(5);
	struct wbuf w;
	uint64_t batch, sweep;

	outbox_init(&ob, 9);
	ck_assert_int_eq(outbox_unseal(&ob), -EINVAL);
	ck_assert_int_eq(outbox_add(&ob, "fs", "1@gni", &d, NULL, 1, NULL, 1,
	                     0),
	    0);
	outbox_seal(&ob);
	ck_assert_uint_eq(ob.last_batch, 10);
	ck_assert_int_eq(outbox_unseal(&ob), 0);
	ck_assert(!outbox_ready(&ob));
	ck_assert_uint_eq(ob.last_batch, 9);
	ck_assert_int_eq(outbox_add(&ob, "fs", "1@gni", &d, NULL, 1, NULL, 2,
	                     0),
	    0);
	outbox_seal(&ob);
	wbuf_init(&w, 0);
	ck_assert_int_eq(outbox_next(&ob, &w, true, &batch, &sweep), 0);
	ck_assert_uint_eq(batch, 10);
	ck_assert_uint_eq(ob.inflight.recs[0].d.read_bytes, 10);
	ck_assert_uint_eq(ob.inflight.first_sweep, 1);
	/* Something pending already: nothing to undo safely. */
	ck_assert_int_eq(outbox_add(&ob, "fs", "2@gni", &d, NULL, 1, NULL, 3,
	                     0),
	    0);
	ck_assert_int_eq(outbox_unseal(&ob), -EINVAL);
	wbuf_free(&w);
	outbox_free(&ob);
}
END_TEST

static struct mdops
ops3(uint64_t open, uint64_t getattr, uint64_t unlink)
{
	struct mdops m;

	memset(&m, 0, sizeof(m));
	m.v[MDOPS_OPEN] = open;
	m.v[MDOPS_GETATTR] = getattr;
	m.v[MDOPS_UNLINK] = unlink;
	return m;
}

/* Decode the batch in flight, encoded for a receiver that takes the op
 * section (ops) or not, into k. */
static void
encode_inflight(struct outbox *ob, bool ops, struct recs *k,
    struct msg_sweep *h, struct wbuf *w)
{
	uint64_t batch, sweep;

	wbuf_reset(w);
	ck_assert_int_eq(outbox_next(ob, w, ops, &batch, &sweep), 0);
	memset(k, 0, sizeof(*k));
	ck_assert_int_eq(msg_sweep_decode(h, w->data, w->len, keep_cb, k, NULL),
	    0);
}

/* Op counts add up per (fs, NID); NULL and zeros add none and take no
 * slot; a receiver without the capability gets the batch without them,
 * and the same batch with them after reconnecting to one that has it. */
START_TEST(coalesce_ops)
{
	struct outbox ob;
	struct iocount d = io(100);
	struct mdops a = ops3(5, 3, 0), b = ops3(1, 0, 2), zero;
	struct msg_sweep h;
	struct recs k;
	struct wbuf w, w2;
	size_t i, plain_len;

	memset(&zero, 0, sizeof(zero));
	/* The counts are part of mds_ops: a receiver drops counts above it
	 * (docs/protocol.md 4.4). */
	d.mds_ops = 100;
	outbox_init(&ob, 0);
	wbuf_init(&w, 0);
	wbuf_init(&w2, 0);
	ck_assert_int_eq(outbox_add(&ob, "fs", "1@gni", &d, &a, 100, NULL, 1,
	                     0),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "fs", "1@gni", &d, &b, 100, NULL, 2,
	                     0),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "fs", "1@gni", &d, NULL, 100, NULL, 3,
	                     0),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "fs", "2@gni", &d, &zero, 100, NULL, 3,
	                     0),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "fs", "3@gni", &d, NULL, 100, NULL, 3,
	                     0),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "home", "4@gni", &d, &b, 100, NULL, 3,
	                     0),
	    0);
	ck_assert_uint_eq(ob.pending.n, 4);
	ck_assert_uint_eq(outbox_batch_nops(&ob.pending),
	    2); /* only those with counts */
	outbox_seal(&ob);

	/* A receiver that takes the section. */
	encode_inflight(&ob, true, &k, &h, &w);
	ck_assert(h.ops);
	ck_assert_uint_eq(k.n, 4);
	i = find(&k, "1@gni");
	ck_assert(k.has_ops[i]);
	ck_assert_uint_eq(k.ops[i].v[MDOPS_OPEN], 6);
	ck_assert_uint_eq(k.ops[i].v[MDOPS_GETATTR], 3);
	ck_assert_uint_eq(k.ops[i].v[MDOPS_UNLINK], 2);
	ck_assert_uint_eq(k.d[i].read_bytes, 300);
	ck_assert(!k.has_ops[find(&k, "2@gni")]);
	ck_assert(!k.has_ops[find(&k, "3@gni")]);
	i = find(&k, "4@gni");
	ck_assert(k.has_ops[i]);
	ck_assert_uint_eq(k.ops[i].v[MDOPS_OPEN], 1);
	ck_assert_uint_eq(k.ops[i].v[MDOPS_UNLINK], 2);

	/* One that does not: no section at all, everything else the same. */
	encode_inflight(&ob, false, &k, &h, &w2);
	ck_assert(!h.ops);
	ck_assert_uint_eq(k.n, 4);
	for (i = 0; i < k.n; i++)
		ck_assert(!k.has_ops[i]);
	ck_assert_uint_lt(w2.len, w.len);
	plain_len = w2.len;

	/* Counted meanwhile: pending, apart from the batch in flight. */
	ck_assert_int_eq(outbox_add(&ob, "fs", "1@gni", &d, &a, 100, NULL, 4,
	                     0),
	    0);
	ck_assert_uint_eq(outbox_batch_nops(&ob.pending), 1);

	/* The resend to a receiver that has it: the same bytes as before. */
	encode_inflight(&ob, true, &k, &h, &w2);
	ck_assert_uint_eq(w2.len, w.len);
	ck_assert(memcmp(w2.data, w.data, w.len) == 0);
	ck_assert_uint_gt(w.len, plain_len);
	ck_assert_int_eq(outbox_acked(&ob, 1), 0);

	/* Without any op counts, ops=true adds nothing. */
	outbox_seal(&ob);
	ck_assert_int_eq(outbox_acked(&ob, 2), 0);
	ck_assert_uint_eq(outbox_batch_nops(&ob.inflight), 0);
	ck_assert_int_eq(outbox_add(&ob, "fs", "1@gni", &d, NULL, 100, NULL, 5,
	                     0),
	    0);
	outbox_seal(&ob);
	encode_inflight(&ob, true, &k, &h, &w);
	encode_inflight(&ob, false, &k, &h, &w2);
	ck_assert(!h.ops);
	ck_assert_uint_eq(w.len, w2.len);
	ck_assert(memcmp(w2.data, w.data, w.len) == 0);
	wbuf_free(&w);
	wbuf_free(&w2);
	outbox_free(&ob);
}
END_TEST

/* Op deltas added on their own as they are read (outbox_add_ops()),
 * then the record's counters and spans: the same SWEEP, byte for byte,
 * as one outbox_add() with the summed ops; a record given only ops has
 * no span yet, and the batch's sweeps are those of the adds. */
START_TEST(ops_first_then_counters)
{
	struct outbox a, b;
	struct iocount d = io(100);
	struct mdops x = ops3(5, 3, 0), y = ops3(1, 0, 2), xy = ops3(6, 3, 2);
	uint64_t cs[MSG_NCOUNTERS] = {0, 0, 0, 0, 0, 70};
	struct wbuf wa, wb;
	uint64_t batch, sweep;

	d.mds_ops = 100;
	outbox_init(&a, 0);
	outbox_init(&b, 0);
	wbuf_init(&wa, 0);
	wbuf_init(&wb, 0);
	ck_assert_int_eq(outbox_add_ops(&a, "fs", "1@gni", &x, 7), 0);
	ck_assert_int_eq(outbox_add_ops(&a, "fs", "1@gni", &y, 7), 0);
	ck_assert_uint_eq(a.pending.n, 1);
	ck_assert_uint_eq(a.pending.recs[0].span_us, 0);
	ck_assert_int_eq(outbox_add(&a, "fs", "2@gni", &d, NULL, 80, NULL, 7,
	                     5),
	    0);
	ck_assert_int_eq(outbox_add(&a, "fs", "1@gni", &d, NULL, 90, cs, 7, 3),
	    0);
	ck_assert_int_eq(outbox_add(&b, "fs", "1@gni", &d, &xy, 90, cs, 7, 3),
	    0);
	ck_assert_int_eq(outbox_add(&b, "fs", "2@gni", &d, NULL, 80, NULL, 7,
	                     5),
	    0);
	outbox_seal(&a);
	outbox_seal(&b);
	ck_assert_int_eq(outbox_next(&a, &wa, true, &batch, &sweep), 0);
	ck_assert_uint_eq(sweep, 7);
	ck_assert_int_eq(outbox_next(&b, &wb, true, &batch, &sweep), 0);
	ck_assert_uint_eq(a.inflight.start_ns, b.inflight.start_ns);
	ck_assert_uint_eq(a.inflight.first_sweep, 7);
	/* Records in another order: the encoder sorts them. */
	ck_assert_uint_eq(wa.len, wb.len);
	ck_assert(memcmp(wa.data, wb.data, wa.len) == 0);
	wbuf_free(&wa);
	wbuf_free(&wb);
	outbox_free(&a);
	outbox_free(&b);
}
END_TEST

/*
 * Op sums are kept packed: through a long outage, where every sweep adds
 * to every client's sums and their packed forms grow (values crossing
 * varint sizes, ops turning non-zero one after another, the largest
 * values there are), each sum stays exact and the dead bytes that the
 * growth leaves behind stay bounded by the live ones.
 */
START_TEST(packed_ops_long_outage)
{
	enum { NC = 300, SWEEPS = 200 };
	static struct mdops want[NC];
	struct outbox ob;
	struct mdops add, got;
	char nid[32];
	size_t c, k, live_max = 0;
	unsigned op;

	memset(want, 0, sizeof(want));
	outbox_init(&ob, 0);
	for (k = 0; k < SWEEPS; k++) {
		for (c = 0; c < NC; c++) {
			memset(&add, 0, sizeof(add));
			for (op = 0; op <= (k + c) % MDOPS_N; op++)
				add.v[op] = (uint64_t)1 << ((k * 7 + op) % 40);
			if (c == 0 && k == SWEEPS - 1)
				add.v[MDOPS_N - 1] =
				    UINT64_MAX - want[c].v[MDOPS_N - 1];
			mdops_add(&want[c], &add);
			(void)snprintf(nid, sizeof(nid), "10.0.%zu.%zu@o2ib",
			    c / 250, c % 250);
			ck_assert_int_eq(outbox_add_ops(&ob, "fs", nid, &add,
			                     k + 1),
			    0);
		}
		if (ob.pending.ops.live > live_max)
			live_max = ob.pending.ops.live;
		ck_assert_uint_le(opsarena_dead(&ob.pending.ops),
		    ob.pending.ops.live + 4096 + OPSARENA_ENTRY_MAX);
	}
	ck_assert_uint_eq(ob.pending.n, NC);
	for (c = 0; c < NC; c++) {
		const struct outbox_rec *r = &ob.pending.recs[c];

		ck_assert_ptr_nonnull(outbox_rec_ops(&ob.pending, r, &got));
		ck_assert(memcmp(&got, &want[c], sizeof(got)) == 0);
	}
	/* Packed: far less than a struct mdops each. */
	ck_assert_uint_lt(live_max, NC * sizeof(struct mdops));
	outbox_free(&ob);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("outbox");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, coalesce_resend_ack);
	tcase_add_test(tc, ack_keeps_storage);
	tcase_add_test(tc, long_outage_bounded);
	tcase_add_test(tc, coalesce_counter_spans);
	tcase_add_test(tc, big_spans);
	tcase_add_test(tc, bad_names);
	tcase_add_test(tc, unseal);
	tcase_add_test(tc, coalesce_ops);
	tcase_add_test(tc, ops_first_then_counters);
	tcase_add_test(tc, packed_ops_long_outage);
	outbox_split_tests(tc);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
