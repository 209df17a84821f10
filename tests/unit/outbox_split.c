/* SPDX-License-Identifier: BSD-2-Clause */
/* The outbox suite (test_outbox.c), continued: batches sealed within a
 * size limit, split to fit a frame, and again after an unseal; the
 * seal's encoding kept for the sender. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "msg.h"
#include "outbox.h"
#include "outbox_tests.h"
#include "wire.h"

/* Every record of batches sealed within a limit, delivered one after the
 * other: each NID exactly once, the read bytes summed. */
struct split_seen {
	size_t n, batches;
	uint64_t read_bytes;
	unsigned char seen[400];
};

/* The client number of "10.0.A.B@o2ib": A * 256 + B. */
static unsigned long
client_no(const char *nid)
{
	char *end;
	unsigned long a, b;

	ck_assert(strncmp(nid, "10.0.", 5) == 0);
	a = strtoul(nid + 5, &end, 10);
	ck_assert(*end == '.');
	b = strtoul(end + 1, &end, 10);
	ck_assert_str_eq(end, "@o2ib");
	return a * 256 + b;
}

static int
split_cb(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	struct split_seen *s = arg;
	unsigned long i = client_no(r->nid);

	(void)h;
	ck_assert_uint_lt(i, 400);
	ck_assert_uint_eq(s->seen[i], 0);
	s->seen[i] = 1;
	s->n++;
	s->read_bytes += r->d.read_bytes;
	return 0;
}

static void
add_clients(struct outbox *ob, unsigned n, uint64_t rb, uint64_t sweep)
{
	struct iocount d = io(rb);
	char nid[NID_STR_MAX];
	unsigned i;

	for (i = 0; i < n; i++) {
		(void)snprintf(nid, sizeof(nid), "10.0.%u.%u@o2ib", i / 256,
		    i % 256);
		ck_assert_int_eq(outbox_add(ob, "scratch", nid, &d, NULL,
		                     10000000, NULL, sweep, 0),
		    0);
	}
}

/* Send and acknowledge every batch: at most max bytes each. */
static void
drain(struct outbox *ob, size_t max, struct split_seen *s)
{
	struct msg_sweep h;
	struct wbuf w;
	uint64_t batch, sweep;
	uint64_t last = ob->last_batch - (outbox_ready(ob) ? 1 : 0);

	wbuf_init(&w, 0);
	while (outbox_has_data(ob)) {
		ck_assert_int_ge(outbox_seal_within(ob, max), 0);
		wbuf_reset(&w);
		ck_assert_int_eq(outbox_next(ob, &w, true, &batch, &sweep), 0);
		ck_assert_uint_le(w.len, max);
		ck_assert_uint_eq(batch, last + 1);
		last = batch;
		ck_assert_int_eq(msg_sweep_decode(&h, w.data, w.len, split_cb,
		                     s, NULL),
		    0);
		ck_assert_int_eq(outbox_acked(ob, batch), 0);
		s->batches++;
	}
	wbuf_free(&w);
}

/* A batch larger than a frame is split before it is first sent; once
 * sent it is never changed; nothing is lost or sent twice. */
START_TEST(split_to_fit)
{
	struct outbox ob;
	struct split_seen s, s1;
	struct msg_sweep h;
	struct wbuf w1, w2;
	uint64_t batch, sweep, b2, s2;
	size_t first;

	memset(&s, 0, sizeof(s));
	memset(&s1, 0, sizeof(s1));
	outbox_init(&ob, 100);
	add_clients(&ob, 400, 7, 1);
	ck_assert_int_eq(outbox_seal_within(&ob, 600), 1);
	ck_assert_uint_eq(ob.splits, 1);
	ck_assert_uint_eq(ob.last_batch, 101);
	first = ob.inflight.n;
	ck_assert_uint_gt(first, 10);
	ck_assert_uint_eq(first + ob.pending.n, 400);
	/* Sent again unchanged, even after more deltas came in (they go
	 * to the pending rest, coalesced). */
	wbuf_init(&w1, 0);
	wbuf_init(&w2, 0);
	ck_assert_int_eq(outbox_next(&ob, &w1, true, &batch, &sweep), 0);
	ck_assert_uint_le(w1.len, 600);
	add_clients(&ob, 400, 1, 2);
	ck_assert_int_eq(outbox_seal_within(&ob, 600), 0);
	ck_assert_int_eq(outbox_next(&ob, &w2, true, &b2, &s2), 0);
	ck_assert_uint_eq(b2, batch);
	ck_assert_uint_eq(w1.len, w2.len);
	ck_assert(memcmp(w1.data, w2.data, w1.len) == 0);
	ck_assert_uint_eq(ob.pending.n, 400);
	ck_assert_int_eq(outbox_acked(&ob, batch), 0);
	/* The rest first: the records not sent yet lead the next batch. */
	ck_assert_int_eq(outbox_seal_within(&ob, 600), 1);
	ck_assert_uint_eq(ob.inflight.recs[0].d.read_bytes, 8);
	ck_assert_int_eq(msg_sweep_decode(&h, w1.data, w1.len, split_cb, &s1,
	                     NULL),
	    0);
	ck_assert_uint_eq(s1.n, first);
	/* Every client once more: the first batch's with the second
	 * sweep's deltas only. */
	drain(&ob, 600, &s);
	ck_assert_uint_ge(s.batches, 3);
	ck_assert_uint_eq(s.n, 400);
	ck_assert_uint_eq(s1.read_bytes + s.read_bytes, 400 * 8);
	wbuf_free(&w1);
	wbuf_free(&w2);
	outbox_free(&ob);
}
END_TEST

/* A split seal that cannot be saved is undone whole; a restored batch in
 * flight too large for the frame is split (it was never sent). */
START_TEST(split_unseal_and_fit)
{
	struct outbox ob;
	struct split_seen s;

	memset(&s, 0, sizeof(s));
	outbox_init(&ob, 5);
	add_clients(&ob, 300, 3, 1);
	ck_assert_int_eq(outbox_seal_within(&ob, 500), 1);
	ck_assert_int_eq(outbox_unseal(&ob), 0);
	ck_assert(!outbox_ready(&ob));
	ck_assert_uint_eq(ob.last_batch, 5);
	ck_assert_uint_eq(ob.pending.n, 300);
	ck_assert_str_eq(outbox_rec_nid(&ob.pending, &ob.pending.recs[299]),
	    "10.0.1.43@o2ib");
	/* Sealed whole (an older version, or a larger max_frame), then
	 * restored: split, under the same number. */
	outbox_seal(&ob);
	ck_assert_uint_eq(ob.inflight.n, 300);
	ck_assert_int_eq(outbox_fit(&ob, 500), 1);
	ck_assert_uint_eq(ob.inflight.batch, 6);
	ck_assert_uint_lt(ob.inflight.n, 300);
	ck_assert_int_eq(outbox_fit(&ob, 500), 0);
	drain(&ob, 500, &s);
	ck_assert_uint_eq(s.n, 300);
	ck_assert_uint_eq(s.read_bytes, 900);
	/* Not even one record fits: nothing sealed. */
	add_clients(&ob, 1, 3, 2);
	ck_assert_int_eq(outbox_seal_within(&ob, 20), -EMSGSIZE);
	ck_assert(!outbox_ready(&ob));
	ck_assert_uint_eq(ob.pending.n, 1);
	ck_assert_uint_eq(ob.last_batch, 5 + s.batches);
	outbox_free(&ob);
}
END_TEST

/* outbox_next() into w, after the room for a frame header, as a sender
 * asks for it. */
static void
next_framed(struct outbox *ob, struct wbuf *w, bool ops)
{
	static const uint8_t room[FRAME_HDR_LEN];
	uint64_t batch, sweep;

	wbuf_reset(w);
	(void)wbuf_put(w, room, sizeof(room));
	ck_assert_int_eq(outbox_next(ob, w, ops, &batch, &sweep), 0);
	ck_assert_uint_eq(batch, ob->inflight.batch);
}

/* A seal that found the whole batch fits keeps what it encoded: the
 * sender gets exactly the bytes a fresh encoding gives, once, and only
 * with the op section; an unseal, a split, an acknowledgement or the
 * caller forget it. */
START_TEST(seal_keeps_encoding)
{
	struct mdops ops;
	struct outbox ob;
	struct wbuf a, b, c;

	memset(&ops, 0, sizeof(ops));
	ops.v[MDOPS_OPEN] = 3;
	wbuf_init(&a, 0);
	wbuf_init(&b, 0);
	wbuf_init(&c, 0);
	outbox_init(&ob, 7);
	add_clients(&ob, 200, 5, 1);
	ck_assert_int_eq(outbox_add_ops(&ob, "scratch", "10.0.0.9@o2ib", &ops,
	                     1),
	    0);
	ck_assert_int_eq(outbox_seal_within(&ob, 1 << 20), 0);
	ck_assert_uint_eq(ob.kept_batch, 8);
	/* Without the op section: encoded, the kept one left alone. */
	next_framed(&ob, &a, false);
	ck_assert_uint_eq(ob.kept_batch, 8);
	/* With it: handed over, then encoded afresh the same. */
	next_framed(&ob, &b, true);
	ck_assert_uint_eq(ob.kept_batch, 0);
	ck_assert_ptr_null(ob.kept.data);
	next_framed(&ob, &c, true);
	ck_assert_uint_eq(b.len, c.len);
	ck_assert(memcmp(b.data, c.data, b.len) == 0);
	ck_assert_uint_lt(a.len, b.len);
	ck_assert_int_eq(outbox_acked(&ob, 8), 0);
	/* Unsealed (the save failed): forgotten with the number. */
	add_clients(&ob, 10, 5, 2);
	ck_assert_int_eq(outbox_seal_within(&ob, 1 << 20), 0);
	ck_assert_uint_eq(ob.kept_batch, 9);
	ck_assert_int_eq(outbox_unseal(&ob), 0);
	ck_assert_uint_eq(ob.kept_batch, 0);
	ck_assert_ptr_null(ob.kept.data);
	/* Sealed again with more: the new encoding, not the old. */
	add_clients(&ob, 20, 1, 3);
	ck_assert_int_eq(outbox_seal_within(&ob, 1 << 20), 0);
	next_framed(&ob, &b, true);
	next_framed(&ob, &c, true);
	ck_assert_uint_eq(b.len, c.len);
	ck_assert(memcmp(b.data, c.data, b.len) == 0);
	ck_assert_uint_eq(ob.inflight.n, 20);
	/* The caller forgets what its sender did not take. */
	ck_assert_int_eq(outbox_acked(&ob, 9), 0);
	add_clients(&ob, 10, 5, 4);
	ck_assert_int_eq(outbox_seal_within(&ob, 1 << 20), 0);
	ck_assert_ptr_nonnull(ob.kept.data);
	outbox_forget_encoding(&ob);
	ck_assert_ptr_null(ob.kept.data);
	ck_assert_int_eq(outbox_acked(&ob, 10), 0);
	/* Split: nothing kept. */
	add_clients(&ob, 400, 5, 5);
	ck_assert_int_eq(outbox_seal_within(&ob, 600), 1);
	ck_assert_uint_eq(ob.kept_batch, 0);
	wbuf_free(&a);
	wbuf_free(&b);
	wbuf_free(&c);
	outbox_free(&ob);
}
END_TEST

void
outbox_split_tests(TCase *tc)
{
	tcase_add_test(tc, split_to_fit);
	tcase_add_test(tc, split_unseal_and_fit);
	tcase_add_test(tc, seal_keeps_encoding);
}
