/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The session suite (test_session.c), continued: keys.  Unknown and wrong
 * keys, forged CHALLENGEs, key rotation, no common key, a wrong version,
 * a SWEEP before the handshake.
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

/* ---- keys --------------------------------------------------------- */

/* The connector signs its HELLO with a key the listener does not have
 * (its first key; it holds the listener's too). */
START_TEST(unknown_key)
{
	struct wbuf chal, hello;
	struct pair p;

	pair_init(&p, KEY_A, KEY_X "\n" KEY_A, 0);
	wbuf_init(&chal, 0);
	wbuf_init(&hello, 0);
	make_challenge(&p, 1, &chal);
	make_hello(&p, 1, &chal, &hello);
	feed_bad(&p.l, hello.data, hello.len, "HELLO signed with unknown key");
	pair_free(&p);

	/* The CHALLENGE carries nothing made with a key, so a connector
	 * answers it whatever keys it holds; the listener then refuses the
	 * HELLO, signed with a key it lacks. */
	pair_init(&p, KEY_X, KEY_A, 0);
	wbuf_reset(&chal);
	wbuf_reset(&hello);
	make_challenge(&p, 1, &chal);
	make_hello(&p, 1, &chal, &hello);
	feed_bad(&p.l, hello.data, hello.len, "HELLO, no common key");
	pair_free(&p);

	/* A CHALLENGE with anything but zeros for key id or MAC. */
	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_reset(&chal);
	make_challenge(&p, 1, &chal);
	chal.data[chal.len - 1] ^= 0x40;
	feed_bad(&p.c, chal.data, chal.len, "CHALLENGE with a MAC");
	pair_free(&p);
	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_reset(&chal);
	make_challenge(&p, 1, &chal);
	chal.data[15] = 1;
	feed_bad(&p.c, chal.data, chal.len, "CHALLENGE with a key id");
	pair_free(&p);
	wbuf_free(&chal);
	wbuf_free(&hello);
}
END_TEST

/* Someone without the key sends a CHALLENGE (anyone can: it carries no
 * MAC) and then its own ACK of the HELLO:
 * that ACK cannot verify with the session key, and the connector never
 * opens. */
START_TEST(forged_challenge)
{
	struct wbuf chal, hello, w, pl;
	struct msg_ack a;
	struct frame_hdr h;
	struct pair p;
	uint8_t fake[HMAC_LEN];

	pair_init(&p, KEY_X, KEY_A, 0);
	wbuf_init(&chal, 0);
	wbuf_init(&hello, 0);
	wbuf_init(&w, 0);
	wbuf_init(&pl, 0);
	make_challenge(&p, 1, &chal);
	make_hello(&p, 1, &chal, &hello);
	a.kind = MSG_ACK_HELLO;
	a.seq = p.c.hello_seq;
	a.batch = 0;
	a.time_ns = 1;
	ck_assert_int_eq(msg_ack_encode(&pl, &a), 0);
	memset(&h, 0, sizeof(h));
	h.version = FRAME_VERSION;
	h.type = FRAME_ACK;
	h.len = (uint32_t)pl.len;
	h.key_id = p.c.key_id;
	h.sender_id = frame_sender_id(L_NAME);
	h.seq = 2;
	/* The forger's best guess: the session key it would derive. */
	v2_keyed((const uint8_t *)KEY_X, strlen(KEY_X), "lharvestd v2 listener",
	    &chal, hello.data, hello.len - FRAME_MAC_LEN, fake);
	craft(&h, fake, sizeof(fake), NULL, pl.data, pl.len, &w);
	feed_bad(&p.c, w.data, w.len, "ACK from a forger");
	ck_assert_int_ne(p.c.state, SESSION_OPEN);
	wbuf_free(&chal);
	wbuf_free(&hello);
	wbuf_free(&w);
	wbuf_free(&pl);
	pair_free(&p);
}
END_TEST

/* A HELLO with a known key id but signed with another key. */
START_TEST(wrong_key_same_id)
{
	struct wbuf chal, hello;
	struct pair p;
	struct frame_hdr h;
	struct msg_hello *m = malloc(sizeof(*m));
	struct wbuf pl;

	ck_assert_ptr_nonnull(m);
	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_init(&chal, 0);
	wbuf_init(&hello, 0);
	wbuf_init(&pl, 0);
	make_challenge(&p, 1, &chal);
	fill_hello(m, 1);
	ck_assert_int_eq(msg_hello_encode(&pl, m), 0);
	h = next_hdr(&p, FRAME_HELLO, pl.len);
	h.key_id = v2_key_id(KEY_A, p.l.nonce_l);
	h.seq = 1;
	craft(&h, (const uint8_t *)KEY_X, strlen(KEY_X), &chal, pl.data, pl.len,
	    &hello);
	feed_bad(&p.l, hello.data, hello.len, "HELLO with a forged key id");

	/* The same, signed with the right key, passes: the craft is good. */
	pair_free(&p);
	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_reset(&chal);
	wbuf_reset(&hello);
	make_challenge(&p, 1, &chal);
	craft(&h, (const uint8_t *)KEY_A, strlen(KEY_A), &chal, pl.data, pl.len,
	    &hello);
	feed_ok(&p.l, hello.data, hello.len, NULL);
	pair_free(&p);
	wbuf_free(&chal);
	wbuf_free(&hello);
	wbuf_free(&pl);
	free(m);
}
END_TEST

/*
 * Key rotation (keyfile.h): add the new key as a second line everywhere,
 * then move it first everywhere, then drop the old one.  Every pair of
 * rings that can meet during that rollout must talk, and so must a
 * connector that already has only the new key and a listener that has
 * not moved it first yet (it answers a CHALLENGE it cannot check).
 */
struct rotation_case {
	const char *what;
	const char *lkeys, *ckeys;
};

static const struct rotation_case rotations[] = {
    {"listener [new,old], connector [old]", KEY_NEW "\n" KEY_OLD, KEY_OLD},
    {"listener [new,old], connector [old,new]", KEY_NEW "\n" KEY_OLD,
        KEY_OLD "\n" KEY_NEW},
    {"listener [new,old], connector [new]", KEY_NEW "\n" KEY_OLD, KEY_NEW},
    {"listener [old,new], connector [new]", KEY_OLD "\n" KEY_NEW, KEY_NEW},
    {"listener [old,new], connector [old]", KEY_OLD "\n" KEY_NEW, KEY_OLD},
    {"listener [old,new], connector [new,old]", KEY_OLD "\n" KEY_NEW,
        KEY_NEW "\n" KEY_OLD},
    {"listener [old], connector [old,new]", KEY_OLD, KEY_OLD "\n" KEY_NEW},
    {"listener [new], connector [new,old]", KEY_NEW, KEY_NEW "\n" KEY_OLD},
};

START_TEST(rotation)
{
	const struct rotation_case *c = &rotations[_i];
	struct wbuf chal, hello, ack, w;
	struct session_frame f;
	struct lh_err err;
	struct pair p;
	int rc;

	pair_init(&p, c->lkeys, c->ckeys, 0);
	wbuf_init(&chal, 0);
	wbuf_init(&hello, 0);
	wbuf_init(&ack, 0);
	wbuf_init(&w, 0);
	make_challenge(&p, 1, &chal);
	rc = feed(&p.c, chal.data, chal.len, &f, NULL, &err);
	ck_assert_msg(rc == (int)chal.len,
	    "%s: connector refused the "
	    "CHALLENGE: %s",
	    c->what, err.reason);
	{
		struct msg_hello *h = malloc(sizeof(*h));

		ck_assert_ptr_nonnull(h);
		fill_hello(h, 1);
		ck_assert_int_eq(session_hello(&p.c, h, &hello), 0);
		free(h);
	}
	rc = feed(&p.l, hello.data, hello.len, &f, NULL, &err);
	ck_assert_msg(rc == (int)hello.len,
	    "%s: listener refused the HELLO: %s", c->what, err.reason);
	send_ack(&p.l, MSG_ACK_HELLO, f.hdr.seq, 0, &ack);
	rc = feed(&p.c, ack.data, ack.len, &f, NULL, &err);
	ck_assert_msg(rc == (int)ack.len, "%s: connector refused the ACK: %s",
	    c->what, err.reason);
	send_sweep(&p, 1, &w);
	feed_ok(&p.l, w.data, w.len, NULL);
	wbuf_free(&chal);
	wbuf_free(&hello);
	wbuf_free(&ack);
	wbuf_free(&w);
	pair_free(&p);
}
END_TEST

/* No key in common: refused, whoever notices first. */
START_TEST(no_common_key)
{
	struct wbuf chal, hello;
	struct pair p;
	struct lh_err err;
	int rc;

	pair_init(&p, KEY_OLD, KEY_NEW, 0);
	wbuf_init(&chal, 0);
	wbuf_init(&hello, 0);
	make_challenge(&p, 1, &chal);
	rc = feed(&p.c, chal.data, chal.len, NULL, NULL, &err);
	if (rc > 0) {
		struct msg_hello *h = malloc(sizeof(*h));

		ck_assert_ptr_nonnull(h);
		fill_hello(h, 1);
		ck_assert_int_eq(session_hello(&p.c, h, &hello), 0);
		free(h);
		feed_bad(&p.l, hello.data, hello.len, "HELLO, no common key");
	} else {
		ck_assert_int_lt(rc, 0);
		ck_assert_int_eq(p.c.state, SESSION_CLOSED);
	}
	wbuf_free(&chal);
	wbuf_free(&hello);
	pair_free(&p);
}
END_TEST

/* ---- protocol violations ------------------------------------------ */

START_TEST(wrong_version)
{
	struct wbuf chal, hello, w;
	struct pair p;
	struct frame_hdr h;

	/* A HELLO with version 3 in its header. */
	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_init(&chal, 0);
	wbuf_init(&hello, 0);
	wbuf_init(&w, 0);
	make_challenge(&p, 1, &chal);
	make_hello(&p, 1, &chal, &hello);
	hello.data[4] = 3;
	{
		struct lh_err err;
		int rc = feed(&p.l, hello.data, hello.len, NULL, NULL, &err);

		ck_assert_int_eq(rc, -EPROTONOSUPPORT);
		ck_assert_int_eq(p.l.state, SESSION_CLOSED);
	}
	pair_free(&p);

	/* A version-3 SWEEP with a valid MAC, in an open session. */
	pair_init(&p, KEY_A, KEY_A, 0);
	handshake(&p, 1);
	h = next_hdr(&p, FRAME_SWEEP, p.sweep_len);
	h.version = 3;
	craft(&h, p.c.skey, HMAC_LEN, NULL, p.sweep, p.sweep_len, &w);
	{
		struct lh_err err;
		int rc = feed(&p.l, w.data, w.len, NULL, NULL, &err);

		ck_assert_int_eq(rc, -EPROTONOSUPPORT);
		ck_assert(err.reason[0] != '\0');
		ck_assert_int_eq(p.l.state, SESSION_CLOSED);
	}
	wbuf_free(&chal);
	wbuf_free(&hello);
	wbuf_free(&w);
	pair_free(&p);
}
END_TEST

/* A SWEEP (or ACK, or anything but HELLO) before the handshake, signed
 * with the shared key: the listener wants a HELLO first. */
START_TEST(sweep_before_handshake)
{
	static const uint8_t types[] = {FRAME_SWEEP, FRAME_ACK, FRAME_BYE,
	    FRAME_CHALLENGE};
	struct wbuf chal, w;
	struct pair p;
	struct frame_hdr h;
	size_t i;

	for (i = 0; i < sizeof(types); i++) {
		pair_init(&p, KEY_A, KEY_A, 0);
		wbuf_init(&chal, 0);
		wbuf_init(&w, 0);
		make_challenge(&p, 1, &chal);
		h = next_hdr(&p, types[i], p.sweep_len);
		h.key_id = p.lring.keys[0].id;
		h.seq = 1;
		craft(&h, (const uint8_t *)KEY_A, strlen(KEY_A), NULL, p.sweep,
		    p.sweep_len, &w);
		feed_bad(&p.l, w.data, w.len, "frame before HELLO");
		pair_free(&p);
		wbuf_free(&chal);
		wbuf_free(&w);
	}

	/* Before the CHALLENGE was even sent. */
	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_init(&w, 0);
	h = next_hdr(&p, FRAME_SWEEP, p.sweep_len);
	h.key_id = p.lring.keys[0].id;
	h.seq = 1;
	craft(&h, (const uint8_t *)KEY_A, strlen(KEY_A), NULL, p.sweep,
	    p.sweep_len, &w);
	feed_bad(&p.l, w.data, w.len, "frame before CHALLENGE");
	pair_free(&p);
	wbuf_free(&w);

	/* A connector that has sent its HELLO wants the ACK, nothing else. */
	pair_init(&p, KEY_A, KEY_A, 0);
	wbuf_init(&chal, 0);
	wbuf_init(&w, 0);
	{
		struct wbuf hello;

		wbuf_init(&hello, 0);
		make_challenge(&p, 1, &chal);
		make_hello(&p, 1, &chal, &hello);
		feed_ok(&p.l, hello.data, hello.len, NULL);
		wbuf_free(&hello);
	}
	{
		struct msg_bye b = {0, "bye"};
		struct wbuf pl;

		wbuf_init(&pl, 0);
		ck_assert_int_eq(msg_bye_encode(&pl, &b), 0);
		send_frame(&p.l, FRAME_BYE, 0, 0, pl.data, pl.len, &w);
		wbuf_free(&pl);
	}
	feed_bad(&p.c, w.data, w.len, "BYE instead of the ACK of HELLO");
	pair_free(&p);
	wbuf_free(&chal);
	wbuf_free(&w);
}
END_TEST

void
session_key_tests(TCase *tc)
{
	tcase_add_test(tc, unknown_key);
	tcase_add_test(tc, forged_challenge);
	tcase_add_test(tc, wrong_key_same_id);
	tcase_add_loop_test(tc, rotation, 0,
	    sizeof(rotations) / sizeof(rotations[0]));
	tcase_add_test(tc, no_common_key);
	tcase_add_test(tc, wrong_version);
	tcase_add_test(tc, sweep_before_handshake);
}
