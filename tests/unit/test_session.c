/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The connection state machine, driven in memory: a listener and a
 * connector do the handshake, exchange frames, and then every way a peer
 * or a man in the middle can get a frame wrong is tried.  Each violation
 * must be refused with a reason and leave the session CLOSED.  Nonces are
 * fixed by the test, so every run sends the very same bytes.
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

#define KEY_A   "shared-secret-A-for-the-tests-0123"
#define KEY_OLD "old-secret-from-2019-xxxxxx-01234"
#define KEY_NEW "new-secret-from-2024-yyyyyy-01234"
#define KEY_X   "a-key-nobody-else-knows-zzzz-01234"

#define L_NAME "head1"
#define C_NAME "oss1"

/* Small enough that the bit-flip test can pad past any length. */
#define SMALL_MAX FRAME_MIN_MAX

static struct hmac_ctx *hm;

struct pair {
	struct keyring lring, cring;
	struct session l, c;
	size_t max_frame;
	uint64_t hello_seq;
	uint8_t sweep[256]; /* a SWEEP payload */
	size_t sweep_len;
};

static void
ring_init(struct keyring *ring, const char *text)
{
	memset(ring, 0, sizeof(*ring));
	ck_assert_int_eq(keyring_parse(ring, text, strlen(text), NULL), 0);
}

/* A buffer of exactly len bytes, so that ASan sees reads past the end. */
static uint8_t *
dup_exact(const uint8_t *p, size_t len)
{
	uint8_t *b = malloc(len > 0 ? len : 1);

	ck_assert_ptr_nonnull(b);
	if (len > 0)
		memcpy(b, p, len);
	return b;
}

/* session_input on a private copy of the bytes. */
static int
feed(struct session *s, const uint8_t *p, size_t len, struct session_frame *f,
    size_t *need, struct lh_err *err)
{
	uint8_t *b = dup_exact(p, len);
	struct session_frame dummy;
	size_t dneed;
	int rc;

	lh_err_clear(err);
	rc = session_input(s, b, len, f != NULL ? f : &dummy,
	    need != NULL ? need : &dneed, err);
	if (rc > 0 && f != NULL)
		f->payload = p + (f->payload - b);
	free(b);
	return rc;
}

/* A whole frame that must be accepted. */
static void
feed_ok(struct session *s, const uint8_t *p, size_t len,
    struct session_frame *f)
{
	struct lh_err err;
	int rc = feed(s, p, len, f, NULL, &err);

	ck_assert_msg(rc == (int)len, "frame of %zu bytes: %d (%s)", len, rc,
	    err.reason);
}

/* A violation: refused, with a reason, and the session is closed. */
static void
feed_bad(struct session *s, const uint8_t *p, size_t len, const char *what)
{
	struct lh_err err;
	int rc = feed(s, p, len, NULL, NULL, &err);

	ck_assert_msg(rc < 0, "%s: accepted (%d)", what, rc);
	ck_assert_msg(err.reason[0] != '\0', "%s: no reason", what);
	ck_assert_msg(s->state == SESSION_CLOSED, "%s: session not closed",
	    what);
}

static void
nonce(uint8_t out[MSG_NONCE_LEN], unsigned seed)
{
	size_t i;

	for (i = 0; i < MSG_NONCE_LEN; i++)
		out[i] = (uint8_t)(seed * 31 + i * 7 + 1);
}

static void
pair_init(struct pair *p, const char *lkeys, const char *ckeys,
    size_t max_frame)
{
	struct msg_sweep h;
	struct msg_rec recs[3];
	struct wbuf w;

	memset(p, 0, sizeof(*p));
	ring_init(&p->lring, lkeys);
	ring_init(&p->cring, ckeys);
	p->max_frame = max_frame;
	ck_assert_int_eq(session_init(&p->l, SESSION_LISTENER, &p->lring, hm,
	                     L_NAME, max_frame),
	    0);
	ck_assert_int_eq(session_init(&p->c, SESSION_CONNECTOR, &p->cring, hm,
	                     C_NAME, max_frame),
	    0);

	memset(&h, 0, sizeof(h));
	h.batch = 1;
	h.first_sweep = 1718000000;
	h.start_ns = 1717999990000000000ull;
	h.span_us = 10000000;
	h.nfs = 1;
	(void)snprintf(h.fs[0], MSG_FS_MAX, "scratch");
	memset(recs, 0, sizeof(recs));
	recs[0].nid = "10.1.2.3@o2ib";
	recs[0].d.read_bytes = 104857600;
	recs[0].d.read_ops = 100;
	recs[1].nid = "10.1.2.4@o2ib";
	recs[1].d.write_bytes = 4096;
	recs[1].d.write_ops = 1;
	recs[2].nid = "27@gni";
	recs[2].d.mds_ops = 12;
	recs[0].span_us = recs[1].span_us = recs[2].span_us = h.span_us;
	wbuf_init(&w, sizeof(p->sweep));
	ck_assert_int_eq(msg_sweep_encode(&w, &h, recs, 3), 0);
	memcpy(p->sweep, w.data, w.len);
	p->sweep_len = w.len;
	wbuf_free(&w);
}

static void
pair_free(struct pair *p)
{
	session_clear(&p->l);
	session_clear(&p->c);
	keyring_clear(&p->lring);
	keyring_clear(&p->cring);
}

/* The listener's CHALLENGE, as bytes. */
static void
make_challenge(struct pair *p, unsigned seed, struct wbuf *w)
{
	struct msg_challenge c;

	memset(&c, 0, sizeof(c));
	nonce(c.nonce, seed);
	c.time_ns = 1718000000000000000ull;
	c.caps = MSG_CAP_SWEEP;
	c.role = MSG_ROLE_AGGREGATOR;
	(void)snprintf(c.name, sizeof(c.name), L_NAME);
	ck_assert_int_eq(session_challenge(&p->l, &c, w), 0);
	ck_assert_int_eq(p->l.state, SESSION_WAIT_HELLO);
}

static void
fill_hello(struct msg_hello *h, unsigned seed)
{
	memset(h, 0, sizeof(*h));
	nonce(h->nonce, seed + 1000);
	h->role = MSG_ROLE_GATHERER;
	(void)snprintf(h->software, sizeof(h->software), "lharvestd 0.1.0");
	h->time_ns = 1718000000500000000ull;
	h->interval = 10;
	h->caps = MSG_CAP_SWEEP;
	(void)snprintf(h->name, sizeof(h->name), C_NAME);
	h->nfs = 1;
	(void)snprintf(h->fs[0], MSG_FS_MAX, "scratch");
	h->ntargets = 2;
	(void)snprintf(h->targets[0].name, MSG_TARGET_MAX, "scratch-OST0000");
	(void)snprintf(h->targets[1].name, MSG_TARGET_MAX, "scratch-OST0001");
}

/* The connector's HELLO in answer to the CHALLENGE in chal. */
static void
make_hello(struct pair *p, unsigned seed, const struct wbuf *chal,
    struct wbuf *w)
{
	struct msg_hello *h = malloc(sizeof(*h));
	struct session_frame f;

	ck_assert_ptr_nonnull(h);
	feed_ok(&p->c, chal->data, chal->len, &f);
	ck_assert_uint_eq(f.hdr.type, FRAME_CHALLENGE);
	ck_assert_str_eq(p->c.challenge.name, L_NAME);
	fill_hello(h, seed);
	ck_assert_int_eq(session_hello(&p->c, h, w), 0);
	ck_assert_int_eq(p->c.state, SESSION_WAIT_HELLO_ACK);
	free(h);
}

/* Append a frame from s through session_send. */
static void
send_frame(struct session *s, uint8_t type, uint16_t flags, uint64_t sweep_id,
    const uint8_t *payload, size_t len, struct wbuf *w)
{
	ck_assert_int_eq(session_send(s, type, flags, sweep_id, payload, len,
	                     w),
	    0);
}

static void
send_ack(struct session *s, uint8_t kind, uint64_t seq, uint64_t batch,
    struct wbuf *w)
{
	struct msg_ack a = {kind, seq, batch, 1718000001000000000ull};
	struct wbuf pl;

	wbuf_init(&pl, 0);
	ck_assert_int_eq(msg_ack_encode(&pl, &a), 0);
	send_frame(s, FRAME_ACK, 0, 0, pl.data, pl.len, w);
	wbuf_free(&pl);
}

/* The whole handshake; both ends OPEN afterwards. */
static void
handshake(struct pair *p, unsigned seed)
{
	struct wbuf chal, hello, ack;
	struct session_frame f;

	wbuf_init(&chal, 0);
	wbuf_init(&hello, 0);
	wbuf_init(&ack, 0);
	make_challenge(p, seed, &chal);
	make_hello(p, seed, &chal, &hello);
	feed_ok(&p->l, hello.data, hello.len, &f);
	ck_assert_uint_eq(f.hdr.type, FRAME_HELLO);
	ck_assert_ptr_nonnull(p->l.hello);
	ck_assert_str_eq(p->l.hello->name, C_NAME);
	ck_assert_uint_eq(p->l.hello->ntargets, 2);
	ck_assert_uint_eq(p->l.peer_id, frame_sender_id(C_NAME));
	p->hello_seq = f.hdr.seq;
	send_ack(&p->l, MSG_ACK_HELLO, p->hello_seq, 0, &ack);
	feed_ok(&p->c, ack.data, ack.len, &f);
	ck_assert_uint_eq(f.hdr.type, FRAME_ACK);
	ck_assert_int_eq(p->l.state, SESSION_OPEN);
	ck_assert_int_eq(p->c.state, SESSION_OPEN);
	ck_assert(memcmp(p->l.skey, p->c.skey, HMAC_LEN) == 0);
	ck_assert_uint_eq(p->c.peer_id, frame_sender_id(L_NAME));
	wbuf_free(&chal);
	wbuf_free(&hello);
	wbuf_free(&ack);
}

/* A SWEEP frame from the connector, appended to w. */
static void
send_sweep(struct pair *p, uint64_t sweep_id, struct wbuf *w)
{
	send_frame(&p->c, FRAME_SWEEP, 0, sweep_id, p->sweep, p->sweep_len, w);
}

/* HMAC(key, label || T), T = SHA-256(CHALLENGE frame || HELLO header ||
 * HELLO payload): docs/protocol.md section 3, written out again here. */
static void
v2_keyed(const uint8_t *key, size_t keylen, const char *label,
    const struct wbuf *chal, const uint8_t *hello, size_t hello_len,
    uint8_t out[HMAC_LEN])
{
	uint8_t *all = malloc(chal->len + hello_len), t[SHA256_LEN];
	struct hmac_part parts[2];

	ck_assert_ptr_nonnull(all);
	memcpy(all, chal->data, chal->len);
	memcpy(all + chal->len, hello, hello_len);
	ck_assert_int_eq(sha256(all, chal->len + hello_len, t), 0);
	free(all);
	parts[0].p = label;
	parts[0].n = strlen(label);
	parts[1].p = t;
	parts[1].n = sizeof(t);
	ck_assert_int_eq(hmac_sha256(hm, key, keylen, parts, 2, out), 0);
}

/* The key id of key on a connection whose CHALLENGE had nonce_l. */
static uint32_t
v2_key_id(const char *key, const uint8_t *nonce_l)
{
	uint8_t mac[HMAC_LEN];
	struct hmac_part parts[2] = {{"lharvestd v2 key id", 19},
	    {nonce_l, MSG_NONCE_LEN}};

	ck_assert_int_eq(hmac_sha256(hm, (const uint8_t *)key, strlen(key),
	                     parts, 2, mac),
	    0);
	return wire_be32(mac);
}

/*
 * Build a frame by hand, the way docs/protocol.md describes it, for the
 * frames session_send() refuses to make: MAC = HMAC-SHA256(key, header ||
 * payload), or for a HELLO (chal given: the CHALLENGE it answers)
 * HMAC(key, "lharvestd v2 hello" || T).
 */
static void
craft(const struct frame_hdr *h, const uint8_t *key, size_t keylen,
    const struct wbuf *chal, const uint8_t *payload, size_t len, struct wbuf *w)
{
	uint8_t hdr[FRAME_HDR_LEN], mac[HMAC_LEN];
	size_t start = w->len;

	frame_hdr_encode(h, hdr);
	(void)wbuf_put(w, hdr, sizeof(hdr));
	(void)wbuf_put(w, payload, len);
	ck_assert_int_eq(wbuf_status(w), 0);
	if (chal != NULL) {
		v2_keyed(key, keylen, "lharvestd v2 hello", chal,
		    w->data + start, w->len - start, mac);
	} else {
		struct hmac_part parts[1] = {{w->data + start, w->len - start}};

		ck_assert_int_eq(hmac_sha256(hm, key, keylen, parts, 1, mac),
		    0);
	}
	(void)wbuf_put(w, mac, sizeof(mac));
	ck_assert_int_eq(wbuf_status(w), 0);
}

/* The header the connector's next frame would carry. */
static struct frame_hdr
next_hdr(const struct pair *p, uint8_t type, size_t len)
{
	struct frame_hdr h;

	memset(&h, 0, sizeof(h));
	h.version = FRAME_VERSION;
	h.type = type;
	h.len = (uint32_t)len;
	h.key_id = p->c.key_id;
	h.sender_id = frame_sender_id(C_NAME);
	h.seq = p->c.send_seq + 1;
	return h;
}

static void
setup(void)
{
	hm = hmac_new();
	ck_assert_ptr_nonnull(hm);
}

static void
teardown(void)
{
	hmac_free(hm);
	hm = NULL;
}

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

/* Every prefix of a frame is "incomplete", never accepted and never a
 * violation; need says how much to wait for. */
static void
assert_prefixes(struct session *s, const uint8_t *frame, size_t len)
{
	enum session_state st = s->state;
	size_t cut;

	for (cut = 0; cut < len; cut++) {
		struct lh_err err;
		size_t need = 0;
		int rc = feed(s, frame, cut, NULL, &need, &err);

		ck_assert_msg(rc == 0, "cut to %zu of %zu: %d (%s)", cut, len,
		    rc, err.reason);
		ck_assert_msg(need ==
		        (cut < FRAME_HDR_LEN ? FRAME_HDR_LEN : len),
		    "cut to %zu of %zu: need %zu", cut, len, need);
		ck_assert_int_eq(s->state, st);
	}
	feed_ok(s, frame, len, NULL);
}

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

/* Refused with a reason that names the problem. */
static void
feed_refused(struct session *s, const uint8_t *d, size_t n, const char *want)
{
	struct lh_err err;

	ck_assert_int_lt(feed(s, d, n, NULL, NULL, &err), 0);
	ck_assert_msg(strstr(err.reason, want) != NULL,
	    "reason \"%s\", expected \"%s\"", err.reason, want);
	ck_assert_int_eq(s->state, SESSION_CLOSED);
}

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
	tcase_add_test(tc, replay_same_connection);
	tcase_add_test(tc, reorder);
	tcase_add_test(tc, gap);
	tcase_add_test(tc, replay_other_connection);
	tcase_add_test(tc, reflection);
	tcase_add_test(tc, unknown_key);
	tcase_add_test(tc, forged_challenge);
	tcase_add_test(tc, wrong_key_same_id);
	tcase_add_loop_test(tc, rotation, 0,
	    sizeof(rotations) / sizeof(rotations[0]));
	tcase_add_test(tc, no_common_key);
	tcase_add_test(tc, wrong_version);
	tcase_add_test(tc, sweep_before_handshake);
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
	suite_add_tcase(s, tc);
	return tu_run(s);
}
