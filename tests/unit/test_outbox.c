/* SPDX-License-Identifier: BSD-2-Clause */
/* The sender's unacknowledged data: coalescing, identical resends,
 * acknowledgements, bounded memory over a long outage. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "msg.h"
#include "outbox.h"
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

static struct iocount
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
	ck_assert_int_eq(outbox_next(&ob, &w1, &batch, &sweep), -ENODATA);

	ck_assert_int_eq(outbox_add(&ob, "scratch", "10.1.0.1@o2ib", &d,
	                     20000000, 1000, 5),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "scratch", "10.1.0.1@o2ib", &d,
	                     20000000, 1020, 7),
	    0);
	ck_assert_int_eq(outbox_add(&ob, "home", "10.1.0.1@o2ib", &d, 20000000,
	                     1020, 7),
	    0);
	ck_assert_uint_eq(ob.pending.n, 2);

	ck_assert_int_eq(outbox_next(&ob, &w1, &batch, &sweep), 0);
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
	ck_assert_int_eq(outbox_add(&ob, "scratch", "10.1.0.2@o2ib", &d,
	                     20000000, 1040, 9),
	    0);
	ck_assert_int_eq(outbox_next(&ob, &w2, &batch, &sweep), 0);
	ck_assert_uint_eq(batch, 42);
	ck_assert(w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0);

	ck_assert_int_eq(outbox_acked(&ob, 41), -ESRCH);
	ck_assert_int_eq(outbox_acked(&ob, 42), 0);
	ck_assert_int_eq(outbox_acked(&ob, 42), -ESRCH);
	wbuf_reset(&w2);
	ck_assert_int_eq(outbox_next(&ob, &w2, &batch, &sweep), 0);
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
			                     20000000, 1000 + k * 20, 0),
			    0);
		}
	}
	ck_assert_uint_eq(ob.pending.n, 250);
	wbuf_init(&w, 0);
	ck_assert_int_eq(outbox_next(&ob, &w, &batch, &sweep), 0);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(msg_sweep_decode(&h, w.data, w.len, sum_cb, &s, NULL),
	    0);
	ck_assert_uint_eq(s.n, 250);
	ck_assert_uint_eq(s.read_bytes, 7ULL * 4320 * 250);
	ck_assert_uint_eq(h.span_us,
	    4320ULL * 20000000 > UINT32_MAX ? UINT32_MAX : 4320ULL * 20000000);
	ck_assert_uint_eq(h.first_sweep, 1000);
	ck_assert_uint_eq(sweep, 1000 + 4319 * 20);
	wbuf_free(&w);
	outbox_free(&ob);
}
END_TEST

START_TEST(bad_names)
{
	struct outbox ob;
	struct iocount d = io(1);

	outbox_init(&ob, 0);
	ck_assert_int_eq(outbox_add(&ob, "", "1@gni", &d, 1, 1, 0), -EINVAL);
	ck_assert_int_eq(outbox_add(&ob, "fs", "", &d, 1, 1, 0), -EINVAL);
	ck_assert_int_eq(outbox_add(&ob, "waytoolongfsname", "1@gni", &d, 1, 1,
	                     0),
	    -EINVAL);
	outbox_free(&ob);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("outbox");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, coalesce_resend_ack);
	tcase_add_test(tc, long_outage_bounded);
	tcase_add_test(tc, bad_names);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
