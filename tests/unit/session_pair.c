/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The session suites' shared helpers (session_pair.h says what they are).
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

struct hmac_ctx *hm;

void
ring_init(struct keyring *ring, const char *text)
{
	memset(ring, 0, sizeof(*ring));
	ck_assert_int_eq(keyring_parse(ring, text, strlen(text), NULL), 0);
}

/* A buffer of exactly len bytes, so that ASan sees reads past the end. */
uint8_t *
dup_exact(const uint8_t *p, size_t len)
{
	uint8_t *b = malloc(len > 0 ? len : 1);

	ck_assert_ptr_nonnull(b);
	if (len > 0)
		memcpy(b, p, len);
	return b;
}

/* session_input on a private copy of the bytes. */
int
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
void
feed_ok(struct session *s, const uint8_t *p, size_t len,
    struct session_frame *f)
{
	struct lh_err err;
	int rc = feed(s, p, len, f, NULL, &err);

	ck_assert_msg(rc == (int)len, "frame of %zu bytes: %d (%s)", len, rc,
	    err.reason);
}

/* A violation: refused, with a reason, and the session is closed. */
void
feed_bad(struct session *s, const uint8_t *p, size_t len, const char *what)
{
	struct lh_err err;
	int rc = feed(s, p, len, NULL, NULL, &err);

	ck_assert_msg(rc < 0, "%s: accepted (%d)", what, rc);
	ck_assert_msg(err.reason[0] != '\0', "%s: no reason", what);
	ck_assert_msg(s->state == SESSION_CLOSED, "%s: session not closed",
	    what);
}

void
nonce(uint8_t out[MSG_NONCE_LEN], unsigned seed)
{
	size_t i;

	for (i = 0; i < MSG_NONCE_LEN; i++)
		out[i] = (uint8_t)(seed * 31 + i * 7 + 1);
}

void
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

void
pair_free(struct pair *p)
{
	session_clear(&p->l);
	session_clear(&p->c);
	keyring_clear(&p->lring);
	keyring_clear(&p->cring);
}

/* The listener's CHALLENGE, as bytes. */
void
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

void
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
void
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
void
send_frame(struct session *s, uint8_t type, uint16_t flags, uint64_t sweep_id,
    const uint8_t *payload, size_t len, struct wbuf *w)
{
	ck_assert_int_eq(session_send(s, type, flags, sweep_id, payload, len,
	                     w),
	    0);
}

void
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
void
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
void
send_sweep(struct pair *p, uint64_t sweep_id, struct wbuf *w)
{
	send_frame(&p->c, FRAME_SWEEP, 0, sweep_id, p->sweep, p->sweep_len, w);
}

/* HMAC(key, label || T), T = SHA-256(CHALLENGE frame || HELLO header ||
 * HELLO payload): docs/protocol.md section 3, written out again here. */
void
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
uint32_t
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
void
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
struct frame_hdr
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

void
setup(void)
{
	hm = hmac_new();
	ck_assert_ptr_nonnull(hm);
}

void
teardown(void)
{
	hmac_free(hm);
	hm = NULL;
}

/* Every prefix of a frame is "incomplete", never accepted and never a
 * violation; need says how much to wait for. */
void
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

/* Refused with a reason that names the problem. */
void
feed_refused(struct session *s, const uint8_t *d, size_t n, const char *want)
{
	struct lh_err err;

	ck_assert_int_lt(feed(s, d, n, NULL, NULL, &err), 0);
	ck_assert_msg(strstr(err.reason, want) != NULL,
	    "reason \"%s\", expected \"%s\"", err.reason, want);
	ck_assert_int_eq(s->state, SESSION_CLOSED);
}
