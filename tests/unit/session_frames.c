/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The session suite (test_session.c), continued: frames out of place.
 * ACKs, HELLOs and types where they do not belong, closed sessions,
 * transcripts, version 1, ignorable types and oversized CHALLENGEs.
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

/* An ACK of something else than the HELLO does not open the session. */
START_TEST(wrong_hello_ack)
{
	static const struct {
		uint8_t kind;
		uint64_t seq;
	} acks[] = {{MSG_ACK_SWEEP, 1}, {MSG_ACK_HELLO, 2}, {MSG_ACK_HELLO, 0}};
	struct wbuf chal, hello, w;
	struct pair p;
	size_t i;

	for (i = 0; i < sizeof(acks) / sizeof(acks[0]); i++) {
		pair_init(&p, KEY_A, KEY_A, 0);
		wbuf_init(&chal, 0);
		wbuf_init(&hello, 0);
		wbuf_init(&w, 0);
		make_challenge(&p, 1, &chal);
		make_hello(&p, 1, &chal, &hello);
		feed_ok(&p.l, hello.data, hello.len, NULL);
		send_ack(&p.l, acks[i].kind, acks[i].seq, 0, &w);
		feed_bad(&p.c, w.data, w.len, "wrong ACK of HELLO");
		pair_free(&p);
		wbuf_free(&chal);
		wbuf_free(&hello);
		wbuf_free(&w);
	}
}
END_TEST

START_TEST(hello_twice)
{
	struct pair p;
	struct wbuf chal, hello, w, pl;
	struct msg_hello *m = malloc(sizeof(*m));
	struct frame_hdr h;
	int how;

	ck_assert_ptr_nonnull(m);
	/* The same HELLO again, after the handshake. */
	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_init(&chal, 0);
	wbuf_init(&hello, 0);
	wbuf_init(&w, 0);
	wbuf_init(&pl, 0);
	make_challenge(&p, 1, &chal);
	make_hello(&p, 1, &chal, &hello);
	feed_ok(&p.l, hello.data, hello.len, NULL);
	feed_bad(&p.l, hello.data, hello.len, "HELLO replayed");
	pair_free(&p);

	/* A second HELLO with the next number, signed with the shared key
	 * over a transcript as the first one was, or with the session key. */
	fill_hello(m, 1);
	ck_assert_int_eq(msg_hello_encode(&pl, m), 0);
	for (how = 0; how < 2; how++) {
		pair_init(&p, KEY_A, KEY_A, 0);
		handshake(&p, 1);
		wbuf_reset(&chal);
		(void)wbuf_put(&chal, p.l.chal, p.l.chal_len);
		ck_assert_int_lt(session_hello(&p.c, m, &w), 0);
		wbuf_reset(&w);
		h = next_hdr(&p, FRAME_HELLO, pl.len);
		if (how == 0) {
			craft(&h, (const uint8_t *)KEY_A, strlen(KEY_A), &chal,
			    pl.data, pl.len, &w);
		} else {
			craft(&h, p.c.skey, HMAC_LEN, NULL, pl.data, pl.len,
			    &w);
		}
		feed_bad(&p.l, w.data, w.len, "second HELLO");
		pair_free(&p);
		wbuf_reset(&w);
	}
	/* session_send() will not make handshake frames. */
	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	ck_assert_int_lt(session_send(&p.c, FRAME_HELLO, 0, 0, pl.data, pl.len,
	                     &w),
	    0);
	ck_assert_int_lt(session_send(&p.l, FRAME_CHALLENGE, 0, 0, pl.data,
	                     pl.len, &w),
	    0);
	pair_free(&p);
	wbuf_free(&chal);
	wbuf_free(&hello);
	wbuf_free(&w);
	wbuf_free(&pl);
	free(m);
}
END_TEST

/* Later message types: dropped unless marked ignorable, in which case the
 * caller sees the frame and skips it. */
START_TEST(unknown_type)
{
	static const uint8_t payload[] = {1, 2, 3, 4, 5};
	struct session_frame f;
	struct pair p;
	struct wbuf w;
	struct frame_hdr h;

	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_init(&w, 0);
	send_frame(&p.c, 42, FRAME_F_IGNORABLE, 7, payload, sizeof(payload),
	    &w);
	feed_ok(&p.l, w.data, w.len, &f);
	ck_assert_uint_eq(f.hdr.type, 42);
	ck_assert_uint_eq(f.hdr.flags, FRAME_F_IGNORABLE);
	ck_assert_uint_eq(f.hdr.len, sizeof(payload));
	ck_assert(memcmp(f.payload, payload, sizeof(payload)) == 0);
	/* The session carries on after it. */
	wbuf_reset(&w);
	send_sweep(&p, 1, &w);
	feed_ok(&p.l, w.data, w.len, &f);
	ck_assert_uint_eq(f.hdr.type, FRAME_SWEEP);
	/* Without the flag: a violation. */
	wbuf_reset(&w);
	h = next_hdr(&p, 42, sizeof(payload));
	craft(&h, p.c.skey, HMAC_LEN, NULL, payload, sizeof(payload), &w);
	feed_bad(&p.l, w.data, w.len, "unknown type, not ignorable");
	pair_free(&p);

	/* Unknown flag bits are refused too, MAC or not. */
	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_reset(&w);
	h = next_hdr(&p, FRAME_SWEEP, p.sweep_len);
	h.flags = 0x0002;
	craft(&h, p.c.skey, HMAC_LEN, NULL, p.sweep, p.sweep_len, &w);
	feed_bad(&p.l, w.data, w.len, "unknown flag");
	pair_free(&p);

	/* Type 0 is not a type, even ignorable. */
	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_reset(&w);
	h = next_hdr(&p, 0, 0);
	h.flags = FRAME_F_IGNORABLE;
	craft(&h, p.c.skey, HMAC_LEN, NULL, payload, 0, &w);
	feed_bad(&p.l, w.data, w.len, "type 0");
	wbuf_free(&w);
	pair_free(&p);
}
END_TEST

/* Once closed, a session takes nothing more, not even a good frame. */
START_TEST(closed_stays_closed)
{
	struct pair p;
	struct wbuf a, b;

	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_init(&a, 0);
	wbuf_init(&b, 0);
	send_sweep(&p, 1, &a);
	send_sweep(&p, 2, &b);
	a.data[a.len - 1] ^= 1;
	feed_bad(&p.l, a.data, a.len, "bad MAC");
	a.data[a.len - 1] ^= 1;
	feed_bad(&p.l, a.data, a.len, "good frame after a violation");
	feed_bad(&p.l, b.data, b.len, "next frame after a violation");
	wbuf_free(&a);
	wbuf_free(&b);
	pair_free(&p);
}
END_TEST

/* A payload that fits the frame but is not a valid HELLO. */
START_TEST(bad_hello_payload)
{
	struct pair p;
	struct wbuf chal, w;
	struct frame_hdr h;
	static const uint8_t junk[] = {0xff, 0xff, 0xff};

	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_init(&chal, 0);
	wbuf_init(&w, 0);
	make_challenge(&p, 1, &chal);
	h = next_hdr(&p, FRAME_HELLO, sizeof(junk));
	h.key_id = v2_key_id(KEY_A, p.l.nonce_l);
	h.seq = 1;
	craft(&h, (const uint8_t *)KEY_A, strlen(KEY_A), &chal, junk,
	    sizeof(junk), &w);
	feed_bad(&p.l, w.data, w.len, "HELLO with a junk payload");
	pair_free(&p);
	wbuf_free(&chal);
	wbuf_free(&w);
}
END_TEST

/* ---- protocol 2 (issue 15, items 6 and 14) ------------------------ */

/*
 * The transcript binds the whole CHALLENGE: a man in the middle who
 * changes any bit of it (strips a capability, changes the role, the
 * name, the time) either gets it refused by the connector or makes the
 * listener refuse the HELLO that answers it.
 */
START_TEST(transcript_binds_challenge)
{
	struct wbuf chal, hello;
	struct pair p;
	size_t bit, answered = 0;

	wbuf_init(&chal, 0);
	wbuf_init(&hello, 0);
	pair_init(&p, KEY_A, KEY_A, 0);
	make_challenge(&p, 1, &chal);
	pair_free(&p);
	for (bit = 0; bit < 8 * (chal.len - FRAME_MAC_LEN); bit++) {
		struct msg_hello *m = malloc(sizeof(*m));
		struct wbuf mine;
		struct lh_err err;
		char what[64];

		ck_assert_ptr_nonnull(m);
		wbuf_init(&mine, 0);
		pair_init(&p, KEY_A, KEY_A, 0);
		make_challenge(&p, 1, &mine); /* the listener's own */
		mine.data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (feed(&p.c, mine.data, mine.len, NULL, NULL, &err) > 0) {
			answered++;
			fill_hello(m, 1);
			wbuf_reset(&hello);
			ck_assert_int_eq(session_hello(&p.c, m, &hello), 0);
			(void)snprintf(what, sizeof(what),
			    "HELLO to a CHALLENGE with bit %zu flipped", bit);
			feed_bad(&p.l, hello.data, hello.len, what);
		}
		free(m);
		wbuf_free(&mine);
		pair_free(&p);
	}
	/* Most bits (nonce, time, capabilities) decode: the test did test
	 * the transcript, not only the decoder. */
	ck_assert_uint_gt(answered, 8 * (MSG_NONCE_LEN + 16));

	/* The named case: capability bit 1 (metadata ops) stripped. */
	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_reset(&chal);
	{
		struct msg_challenge c;

		memset(&c, 0, sizeof(c));
		nonce(c.nonce, 1);
		c.caps = MSG_CAP_SWEEP | MSG_CAP_MDOPS;
		c.role = MSG_ROLE_AGGREGATOR;
		(void)snprintf(c.name, sizeof(c.name), L_NAME);
		ck_assert_int_eq(session_challenge(&p.l, &c, &chal), 0);
	}
	/* caps is the u64 after the nonce and the time: its last byte. */
	ck_assert_uint_eq(chal.data[FRAME_HDR_LEN + MSG_NONCE_LEN + 15], 3);
	chal.data[FRAME_HDR_LEN + MSG_NONCE_LEN + 15] = 1;
	wbuf_reset(&hello);
	make_hello(&p, 1, &chal, &hello);
	ck_assert_uint_eq(p.c.challenge.caps, MSG_CAP_SWEEP);
	feed_bad(&p.l, hello.data, hello.len, "HELLO after stripped caps");
	pair_free(&p);
	wbuf_free(&chal);
	wbuf_free(&hello);
}
END_TEST

/*
 * Nothing a listener sends before the HELLO depends on its key (so that
 * connecting to it is no guessing oracle), and the key id a HELLO carries
 * is salted: another nonce, another id, and not SHA-256(key).
 */
START_TEST(challenge_no_oracle)
{
	struct wbuf a, b, ha, hb;
	struct pair p, q;

	wbuf_init(&a, 0);
	wbuf_init(&b, 0);
	wbuf_init(&ha, 0);
	wbuf_init(&hb, 0);
	pair_init(&p, KEY_A, KEY_A, 0);
	pair_init(&q, KEY_X, KEY_X, 0);
	make_challenge(&p, 1, &a);
	make_challenge(&q, 1, &b);
	ck_assert_uint_eq(a.len, b.len);
	ck_assert(memcmp(a.data, b.data, a.len) == 0);
	ck_assert_uint_eq(wire_be32(a.data + 12), 0);
	pair_free(&p);
	pair_free(&q);

	pair_init(&p, KEY_A, KEY_A, 0);
	pair_init(&q, KEY_A, KEY_A, 0);
	wbuf_reset(&a);
	wbuf_reset(&b);
	make_challenge(&p, 1, &a);
	make_challenge(&q, 2, &b);
	make_hello(&p, 1, &a, &ha);
	make_hello(&q, 1, &b, &hb);
	ck_assert_uint_ne(wire_be32(ha.data + 12), wire_be32(hb.data + 12));
	ck_assert_uint_ne(wire_be32(ha.data + 12), p.cring.keys[0].id);
	ck_assert_uint_eq(wire_be32(ha.data + 12),
	    v2_key_id(KEY_A, p.l.nonce_l));
	feed_ok(&p.l, ha.data, ha.len, NULL);
	feed_ok(&q.l, hb.data, hb.len, NULL);
	ck_assert(memcmp(p.l.skey, q.l.skey, HMAC_LEN) != 0);
	pair_free(&p);
	pair_free(&q);
	wbuf_free(&a);
	wbuf_free(&b);
	wbuf_free(&ha);
	wbuf_free(&hb);
}
END_TEST

/* A version 1 frame gets the line that says what to do. */
START_TEST(version_1_refused)
{
	struct wbuf chal;
	struct pair p;
	struct lh_err err;

	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_init(&chal, 0);
	make_challenge(&p, 1, &chal);
	chal.data[4] = 1;
	ck_assert_int_eq(feed(&p.c, chal.data, chal.len, NULL, NULL, &err),
	    -EPROTONOSUPPORT);
	ck_assert_str_eq(err.reason,
	    "protocol version 1: upgrade this peer to lharvestd with "
	    "protocol 2");
	ck_assert_int_eq(p.c.state, SESSION_CLOSED);
	pair_free(&p);
	wbuf_free(&chal);
}
END_TEST

/* Only a listener acknowledges: an ACK from a connector is refused, even
 * an empty one, on its header. */
START_TEST(ack_from_connector)
{
	struct pair p;
	struct wbuf w;
	struct frame_hdr h;
	int empty;

	for (empty = 0; empty < 2; empty++) {
		pair_init(&p, KEY_A, KEY_A, 0);
		handshake(&p, 1);
		wbuf_init(&w, 0);
		if (empty) {
			h = next_hdr(&p, FRAME_ACK, 0);
			craft(&h, p.c.skey, HMAC_LEN, NULL, NULL, 0, &w);
		} else {
			send_ack(&p.c, MSG_ACK_SWEEP, 1, 1, &w);
		}
		feed_refused(&p.l, w.data, FRAME_HDR_LEN,
		    "ACK from a connector");
		wbuf_free(&w);
		pair_free(&p);
	}
}
END_TEST

/* A type this side knows, marked ignorable: refused, not skipped. */
START_TEST(known_type_ignorable)
{
	static const uint8_t types[] = {FRAME_SWEEP, FRAME_BYE};
	struct pair p;
	struct wbuf w;
	struct frame_hdr h;
	size_t i;

	for (i = 0; i < sizeof(types); i++) {
		pair_init(&p, KEY_A, KEY_A, 0);
		handshake(&p, 1);
		wbuf_init(&w, 0);
		h = next_hdr(&p, types[i], p.sweep_len);
		h.flags = FRAME_F_IGNORABLE;
		craft(&h, p.c.skey, HMAC_LEN, NULL, p.sweep, p.sweep_len, &w);
		feed_refused(&p.l, w.data, w.len, "ignorable flag");
		wbuf_free(&w);
		pair_free(&p);
	}
	/* An ACK from the listener, likewise. */
	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_init(&w, 0);
	send_frame(&p.l, FRAME_ACK, FRAME_F_IGNORABLE, 0, p.sweep, 0, &w);
	feed_refused(&p.c, w.data, w.len, "ignorable flag");
	wbuf_free(&w);
	pair_free(&p);
}
END_TEST

/* ACK and BYE carry sweep id 0, refused on the header otherwise. */
START_TEST(ack_bye_sweep_id)
{
	struct msg_bye b = {0, "bye"};
	struct wbuf w, pl;
	struct pair p;

	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_init(&w, 0);
	wbuf_init(&pl, 0);
	ck_assert_int_eq(msg_bye_encode(&pl, &b), 0);
	send_frame(&p.c, FRAME_BYE, 0, 1718000000, pl.data, pl.len, &w);
	feed_refused(&p.l, w.data, FRAME_HDR_LEN, "sweep id not 0");
	pair_free(&p);

	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	wbuf_reset(&w);
	wbuf_reset(&pl);
	{
		struct msg_ack a = {MSG_ACK_SWEEP, 3, 1, 1};

		ck_assert_int_eq(msg_ack_encode(&pl, &a), 0);
	}
	send_frame(&p.l, FRAME_ACK, 0, 1718000000, pl.data, pl.len, &w);
	feed_refused(&p.c, w.data, FRAME_HDR_LEN, "sweep id not 0");
	pair_free(&p);
	/* A CHALLENGE, likewise. */
	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_reset(&w);
	make_challenge(&p, 1, &w);
	w.data[39] = 1;
	feed_refused(&p.c, w.data, w.len, "sweep id not 0");
	pair_free(&p);
	wbuf_free(&w);
	wbuf_free(&pl);
}
END_TEST

/* A CHALLENGE header announcing more than the longest legal one is
 * refused before its payload is buffered. */
START_TEST(challenge_too_long)
{
	struct frame_hdr h;
	uint8_t hdr[FRAME_HDR_LEN];
	struct pair p;

	pair_init(&p, KEY_A, KEY_A, 0);
	memset(&h, 0, sizeof(h));
	h.version = FRAME_VERSION;
	h.type = FRAME_CHALLENGE;
	h.len = MSG_CHALLENGE_MAX + 1;
	h.sender_id = frame_sender_id(L_NAME);
	h.seq = 1;
	frame_hdr_encode(&h, hdr);
	feed_refused(&p.c, hdr, sizeof(hdr), "CHALLENGE too long");
	pair_free(&p);
}
END_TEST

void
session_frame_tests(TCase *tc)
{
	tcase_add_test(tc, wrong_hello_ack);
	tcase_add_test(tc, hello_twice);
	tcase_add_test(tc, unknown_type);
	tcase_add_test(tc, closed_stays_closed);
	tcase_add_test(tc, bad_hello_payload);
	tcase_add_test(tc, transcript_binds_challenge);
	tcase_add_test(tc, challenge_no_oracle);
	tcase_add_test(tc, version_1_refused);
	tcase_add_test(tc, ack_from_connector);
	tcase_add_test(tc, known_type_ignorable);
	tcase_add_test(tc, ack_bye_sweep_id);
	tcase_add_test(tc, challenge_too_long);
}
