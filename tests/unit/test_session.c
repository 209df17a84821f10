/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The connection state machine, driven in memory: a listener and a
 * connector do the handshake, exchange frames, and then every way a peer
 * or a man in the middle can get a frame wrong is tried.  Each violation
 * must be refused with a reason and leave the session CLOSED.  Nonces are
 * fixed by the test, so every run sends the very same bytes.  This file
 * has the happy path, tampering, truncation and replays; session_keys.c
 * and session_frames.c the rest; session_pair.c the helpers.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "frame.h"
#include "hmac.h"
#include "keyfile.h"
#include "msg.h"
#include "session.h"
#include "testutil.h"
#include "wire.h"
#include "session_pair.h"

/* ---- the happy path ----------------------------------------------- */

START_TEST(handshake_and_traffic)
{
	struct pair p;
	struct wbuf w;
	struct session_frame f;
	uint64_t i;

	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_init(&w, 0);

	/* SWEEPs from the connector, each acknowledged. */
	for (i = 0; i < 3; i++) {
		wbuf_reset(&w);
		send_sweep(&p, 1718000000 + 10 * i, &w);
		feed_ok(&p.l, w.data, w.len, &f);
		ck_assert_uint_eq(f.hdr.type, FRAME_SWEEP);
		ck_assert_uint_eq(f.hdr.sweep_id, 1718000000 + 10 * i);
		ck_assert_uint_eq(f.hdr.len, p.sweep_len);
		ck_assert_uint_eq(f.hdr.sender_id, frame_sender_id(C_NAME));
		ck_assert_ptr_eq(f.payload, w.data + FRAME_HDR_LEN);
		ck_assert(memcmp(f.payload, p.sweep, p.sweep_len) == 0);
		wbuf_reset(&w);
		send_ack(&p.l, MSG_ACK_SWEEP, f.hdr.seq, i + 1, &w);
		feed_ok(&p.c, w.data, w.len, &f);
		ck_assert_uint_eq(f.hdr.type, FRAME_ACK);
	}

	/* Two frames in one read: one at a time. */
	wbuf_reset(&w);
	send_sweep(&p, 1718000100, &w);
	send_sweep(&p, 1718000110, &w);
	{
		size_t first = w.len / 2;
		struct lh_err err;
		size_t need;
		int rc;

		rc = feed(&p.l, w.data, w.len, &f, &need, &err);
		ck_assert_msg(rc == (int)first, "%d: %s", rc, err.reason);
		ck_assert_uint_eq(f.hdr.sweep_id, 1718000100);
		feed_ok(&p.l, w.data + first, w.len - first, &f);
		ck_assert_uint_eq(f.hdr.sweep_id, 1718000110);
	}

	/* An empty payload is a valid frame (of a later, ignorable type). */
	wbuf_reset(&w);
	send_frame(&p.c, 99, FRAME_F_IGNORABLE, 0, p.sweep, 0, &w);
	ck_assert_uint_eq(w.len, FRAME_OVERHEAD);
	feed_ok(&p.l, w.data, w.len, &f);
	ck_assert_uint_eq(f.hdr.len, 0);

	/* BYE both ways. */
	{
		struct msg_bye b = {0, "shutting down"};
		struct wbuf pl;

		wbuf_init(&pl, 0);
		ck_assert_int_eq(msg_bye_encode(&pl, &b), 0);
		wbuf_reset(&w);
		send_frame(&p.l, FRAME_BYE, 0, 0, pl.data, pl.len, &w);
		feed_ok(&p.c, w.data, w.len, &f);
		ck_assert_uint_eq(f.hdr.type, FRAME_BYE);
		wbuf_reset(&w);
		send_frame(&p.c, FRAME_BYE, 0, 0, pl.data, pl.len, &w);
		feed_ok(&p.l, w.data, w.len, &f);
		ck_assert_uint_eq(f.hdr.type, FRAME_BYE);
		wbuf_free(&pl);
	}
	wbuf_free(&w);
	pair_free(&p);
}
END_TEST

/* The hand-built frames of the other tests are built right: a crafted
 * SWEEP with the session key and the next number is accepted. */
START_TEST(crafted_frame_ok)
{
	struct pair p;
	struct wbuf w;
	struct frame_hdr h;

	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_init(&w, 0);
	h = next_hdr(&p, FRAME_SWEEP, p.sweep_len);
	craft(&h, p.c.skey, HMAC_LEN, NULL, p.sweep, p.sweep_len, &w);
	feed_ok(&p.l, w.data, w.len, NULL);
	wbuf_free(&w);
	pair_free(&p);
}
END_TEST

/* Same nonces, same bytes: the tests below depend on it. */
START_TEST(deterministic)
{
	struct pair a, b;
	struct wbuf wa, wb;

	pair_init(&a, KEY_A, KEY_A, 0);
	pair_init(&b, KEY_A, KEY_A, 0);
	handshake(&a, 5);
	handshake(&b, 5);
	wbuf_init(&wa, 0);
	wbuf_init(&wb, 0);
	send_sweep(&a, 1, &wa);
	send_sweep(&b, 1, &wb);
	ck_assert_uint_eq(wa.len, wb.len);
	ck_assert(memcmp(wa.data, wb.data, wa.len) == 0);
	wbuf_free(&wa);
	wbuf_free(&wb);
	pair_free(&a);
	pair_free(&b);
}
END_TEST

/* ---- tampering ---------------------------------------------------- */

/*
 * Every single-bit change of a SWEEP frame is refused.  The frame is
 * followed by max_frame bytes of padding so that a length made larger by
 * the flip can never look like an incomplete frame: it is either too big
 * for max_frame or lands inside the buffer, where the MAC must fail.
 */
START_TEST(bit_flips)
{
	struct pair p;
	struct wbuf w;
	uint8_t *buf;
	size_t len, bit, total;

	pair_init(&p, KEY_A, KEY_A, SMALL_MAX);
	handshake(&p, 1);
	wbuf_init(&w, 0);
	send_sweep(&p, 1718000000, &w);
	len = w.len;
	total = len + SMALL_MAX;
	buf = calloc(1, total);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, w.data, len);
	/* Unchanged, it passes (with the padding after it). */
	{
		struct lh_err err;
		int rc = feed(&p.l, buf, total, NULL, NULL, &err);

		ck_assert_msg(rc == (int)len, "%d: %s", rc, err.reason);
	}
	pair_free(&p);

	for (bit = 0; bit < 8 * len; bit++) {
		char what[64];

		pair_init(&p, KEY_A, KEY_A, SMALL_MAX);
		handshake(&p, 1);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		(void)snprintf(what, sizeof(what), "bit %zu (byte %zu) flipped",
		    bit, bit / 8);
		feed_bad(&p.l, buf, total, what);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		pair_free(&p);
	}
	free(buf);
	wbuf_free(&w);
}
END_TEST

/* Every single-bit change of the HELLO is refused by the listener. */
START_TEST(hello_bit_flips)
{
	struct wbuf chal, hello;
	struct pair p;
	uint8_t *buf;
	size_t len, bit, total;

	pair_init(&p, KEY_A, KEY_A, SMALL_MAX);
	wbuf_init(&chal, 0);
	wbuf_init(&hello, 0);
	make_challenge(&p, 1, &chal);
	make_hello(&p, 1, &chal, &hello);
	pair_free(&p);
	len = hello.len;
	total = len + SMALL_MAX;
	buf = calloc(1, total);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, hello.data, len);
	for (bit = 0; bit < 8 * len; bit++) {
		char what[64];

		pair_init(&p, KEY_A, KEY_A, SMALL_MAX);
		wbuf_reset(&chal);
		make_challenge(&p, 1, &chal);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		(void)snprintf(what, sizeof(what), "HELLO bit %zu flipped",
		    bit);
		feed_bad(&p.l, buf, total, what);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		pair_free(&p);
	}
	free(buf);
	wbuf_free(&chal);
	wbuf_free(&hello);
}
END_TEST

START_TEST(truncation)
{
	struct wbuf chal, hello, w;
	struct pair p;

	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_init(&chal, 0);
	wbuf_init(&hello, 0);
	wbuf_init(&w, 0);
	make_challenge(&p, 1, &chal);
	assert_prefixes(&p.c, chal.data, chal.len);
	{
		struct msg_hello *h = malloc(sizeof(*h));

		ck_assert_ptr_nonnull(h);
		fill_hello(h, 1);
		ck_assert_int_eq(session_hello(&p.c, h, &hello), 0);
		free(h);
	}
	assert_prefixes(&p.l, hello.data, hello.len);
	send_ack(&p.l, MSG_ACK_HELLO, p.c.hello_seq, 0, &w);
	assert_prefixes(&p.c, w.data, w.len);
	wbuf_reset(&w);
	send_sweep(&p, 1, &w);
	assert_prefixes(&p.l, w.data, w.len);
	wbuf_free(&chal);
	wbuf_free(&hello);
	wbuf_free(&w);
	pair_free(&p);
}
END_TEST

/* A header announcing more than max_frame is refused as soon as its 40
 * bytes are in, before any payload is buffered; in every state. */
START_TEST(oversize_header)
{
	struct pair p;
	struct frame_hdr h;
	uint8_t hdr[FRAME_HDR_LEN];
	size_t cut;
	int stage;

	for (stage = 0; stage < 3; stage++) {
		struct wbuf chal;
		struct session *s;

		pair_init(&p, KEY_A, KEY_A, SMALL_MAX);
		wbuf_init(&chal, 0);
		if (stage == 0) {
			make_challenge(&p, 1, &chal);
			s = &p.l; /* waiting for HELLO */
		} else if (stage == 1) {
			s = &p.c; /* waiting for CHALLENGE */
		} else {
			handshake(&p, 1);
			s = &p.l;
		}
		h = next_hdr(&p,
		    stage == 0     ? FRAME_HELLO :
		        stage == 1 ? FRAME_CHALLENGE :
		                     FRAME_SWEEP,
		    SMALL_MAX - FRAME_OVERHEAD + 1);
		frame_hdr_encode(&h, hdr);
		for (cut = 0; cut < FRAME_HDR_LEN; cut++) {
			size_t need = 0;
			struct lh_err err;

			ck_assert_int_eq(feed(s, hdr, cut, NULL, &need, &err),
			    0);
			ck_assert_uint_eq(need, FRAME_HDR_LEN);
		}
		feed_bad(s, hdr, FRAME_HDR_LEN, "oversize header");
		wbuf_free(&chal);
		pair_free(&p);
	}

	/* The largest frame that fits is fine. */
	{
		uint8_t *big = calloc(1, SMALL_MAX - FRAME_OVERHEAD);
		struct wbuf w;

		ck_assert_ptr_nonnull(big);
		pair_init(&p, KEY_A, KEY_A, SMALL_MAX);
		handshake(&p, 1);
		wbuf_init(&w, 0);
		send_frame(&p.c, FRAME_SWEEP, 0, 1, big,
		    SMALL_MAX - FRAME_OVERHEAD, &w);
		ck_assert_uint_eq(w.len, SMALL_MAX);
		feed_ok(&p.l, w.data, w.len, NULL);
		/* One byte more cannot even be sent. */
		wbuf_reset(&w);
		ck_assert_int_lt(session_send(&p.c, FRAME_SWEEP, 0, 1, big,
		                     SMALL_MAX - FRAME_OVERHEAD + 1, &w),
		    0);
		wbuf_free(&w);
		pair_free(&p);
		free(big);
	}
}
END_TEST

/* A frame sealed in place (the sender's SWEEP) is the frame session_send
 * makes of the same payload, and is as limited by max_frame. */
START_TEST(seal_in_place)
{
	static const uint8_t room[FRAME_HDR_LEN];
	size_t n = SMALL_MAX - FRAME_OVERHEAD;
	uint8_t *big = malloc(n + 1);
	struct session_frame f;
	struct pair p;
	struct wbuf a, b;

	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i <= n; i++)
		big[i] = (uint8_t)(i * 7 + 1);
	pair_init(&p, KEY_A, KEY_A, SMALL_MAX);
	handshake(&p, 1);
	wbuf_init(&a, 0);
	wbuf_init(&b, 0);
	send_frame(&p.c, FRAME_SWEEP, 0, 5, big, n, &a);
	(void)wbuf_put(&b, room, sizeof(room));
	(void)wbuf_put(&b, big, n);
	ck_assert_int_eq(session_seal(&p.c, FRAME_SWEEP, 0, 5, &b), 0);
	ck_assert_uint_eq(b.len, a.len);
	feed_ok(&p.l, a.data, a.len, NULL);
	feed_ok(&p.l, b.data, b.len, &f);
	ck_assert_uint_eq(f.hdr.len, n);
	ck_assert_uint_eq(f.hdr.sweep_id, 5);
	ck_assert_mem_eq(f.payload, big, n);
	/* One byte more is refused, and a buffer without its header room. */
	wbuf_reset(&b);
	(void)wbuf_put(&b, room, sizeof(room));
	(void)wbuf_put(&b, big, n + 1);
	ck_assert_int_eq(session_seal(&p.c, FRAME_SWEEP, 0, 5, &b), -EMSGSIZE);
	wbuf_reset(&b);
	(void)wbuf_put(&b, room, FRAME_HDR_LEN - 1);
	ck_assert_int_eq(session_seal(&p.c, FRAME_SWEEP, 0, 5, &b), -EINVAL);
	wbuf_free(&a);
	wbuf_free(&b);
	pair_free(&p);
	free(big);
}
END_TEST

/* ---- replay, reorder ---------------------------------------------- */

START_TEST(replay_same_connection)
{
	struct pair p;
	struct wbuf w;

	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_init(&w, 0);
	send_sweep(&p, 1, &w);
	feed_ok(&p.l, w.data, w.len, NULL);
	feed_bad(&p.l, w.data, w.len, "replayed SWEEP");
	wbuf_free(&w);
	pair_free(&p);
}
END_TEST

START_TEST(reorder)
{
	struct pair p;
	struct wbuf a, b;

	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_init(&a, 0);
	wbuf_init(&b, 0);
	send_sweep(&p, 1, &a);
	send_sweep(&p, 2, &b);
	feed_bad(&p.l, b.data, b.len, "second SWEEP first");
	wbuf_free(&a);
	wbuf_free(&b);
	pair_free(&p);
}
END_TEST

/* A skipped frame is as bad as a reordered one. */
START_TEST(gap)
{
	struct pair p;
	struct wbuf a, b;

	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_init(&a, 0);
	wbuf_init(&b, 0);
	send_sweep(&p, 1, &a);
	feed_ok(&p.l, a.data, a.len, NULL);
	wbuf_reset(&a);
	send_sweep(&p, 2, &a); /* lost */
	send_sweep(&p, 3, &b);
	feed_bad(&p.l, b.data, b.len, "frame after a gap");
	wbuf_free(&a);
	wbuf_free(&b);
	pair_free(&p);
}
END_TEST

/* Frames recorded on one connection are worthless on another: a second
 * handshake with other nonces gives another session key. */
START_TEST(replay_other_connection)
{
	struct pair p1, p2;
	struct wbuf chal1, hello1, s1, chal2;

	pair_init(&p1, KEY_A, KEY_A, 0);
	wbuf_init(&chal1, 0);
	wbuf_init(&hello1, 0);
	wbuf_init(&s1, 0);
	wbuf_init(&chal2, 0);
	make_challenge(&p1, 1, &chal1);
	make_hello(&p1, 1, &chal1, &hello1);
	feed_ok(&p1.l, hello1.data, hello1.len, NULL);
	{
		struct wbuf ack;

		wbuf_init(&ack, 0);
		send_ack(&p1.l, MSG_ACK_HELLO, 1, 0, &ack);
		feed_ok(&p1.c, ack.data, ack.len, NULL);
		wbuf_free(&ack);
	}
	send_sweep(&p1, 1, &s1);

	/* The SWEEP into an open session with other nonces. */
	pair_init(&p2, KEY_A, KEY_A, 0);
	handshake(&p2, 2);
	ck_assert(memcmp(p1.l.skey, p2.l.skey, HMAC_LEN) != 0);
	feed_bad(&p2.l, s1.data, s1.len, "SWEEP from another connection");
	pair_free(&p2);

	/* The HELLO into a listener that sent another nonce. */
	pair_init(&p2, KEY_A, KEY_A, 0);
	make_challenge(&p2, 2, &chal2);
	feed_bad(&p2.l, hello1.data, hello1.len,
	    "HELLO from another connection");
	pair_free(&p2);

	/* The CHALLENGE of the first connection is just a CHALLENGE: a
	 * connector cannot tell, but the HELLO it answers with is bound to
	 * that old nonce, which the new listener refuses (done above). */
	pair_free(&p1);
	wbuf_free(&chal1);
	wbuf_free(&hello1);
	wbuf_free(&s1);
	wbuf_free(&chal2);
}
END_TEST

/* A frame the listener sent, reflected back at it. */
START_TEST(reflection)
{
	struct pair p;
	struct wbuf w;

	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_init(&w, 0);
	/* After one SWEEP the listener expects number 3 from the connector,
	 * and its own next frame (after CHALLENGE and ACK) is number 3: the
	 * same session key, the right number, only the sender differs. */
	send_sweep(&p, 1, &w);
	feed_ok(&p.l, w.data, w.len, NULL);
	wbuf_reset(&w);
	send_ack(&p.l, MSG_ACK_SWEEP, 2, 1, &w);
	ck_assert_uint_eq(p.l.send_seq, p.l.recv_seq + 1);
	feed_bad(&p.l, w.data, w.len, "listener's own ACK");
	wbuf_free(&w);
	pair_free(&p);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("session");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, handshake_and_traffic);
	tcase_add_test(tc, crafted_frame_ok);
	tcase_add_test(tc, deterministic);
	tcase_add_test(tc, bit_flips);
	tcase_add_test(tc, hello_bit_flips);
	tcase_add_test(tc, truncation);
	tcase_add_test(tc, oversize_header);
	tcase_add_test(tc, seal_in_place);
	tcase_add_test(tc, replay_same_connection);
	tcase_add_test(tc, reorder);
	tcase_add_test(tc, gap);
	tcase_add_test(tc, replay_other_connection);
	tcase_add_test(tc, reflection);
	session_key_tests(tc);
	session_frame_tests(tc);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
