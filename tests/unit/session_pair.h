/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the session suites share (test_session.c, session_keys.c,
 * session_frames.c): the keys and names, a listener and a connector in
 * memory (struct pair), and the helpers that feed them frames, make
 * handshakes and craft frames by hand.  Nonces are fixed, so every run
 * sends the very same bytes.
 */
#ifndef LH_TESTS_SESSION_PAIR_H
#define LH_TESTS_SESSION_PAIR_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "frame.h"
#include "hmac.h"
#include "keyfile.h"
#include "msg.h"
#include "session.h"
#include "wire.h"

#define KEY_A   "shared-secret-A-for-the-tests-0123"
#define KEY_OLD "old-secret-from-2019-xxxxxx-01234"
#define KEY_NEW "new-secret-from-2024-yyyyyy-01234"
#define KEY_X   "a-key-nobody-else-knows-zzzz-01234"

#define L_NAME "head1"
#define C_NAME "oss1"

/* Small enough that the bit-flip test can pad past any length. */
#define SMALL_MAX FRAME_MIN_MAX

/* A listener and a connector in memory, and a SWEEP payload. */
struct pair {
	struct keyring lring, cring;
	struct session l, c;
	size_t max_frame;
	uint64_t hello_seq;
	uint8_t sweep[256]; /* a SWEEP payload */
	size_t sweep_len;
};

/* The HMAC context of every session, made by setup(). */
extern struct hmac_ctx *hm;

void ring_init(struct keyring *ring, const char *text);
uint8_t *dup_exact(const uint8_t *p, size_t len);
int feed(struct session *s, const uint8_t *p, size_t len,
    struct session_frame *f, size_t *need, struct lh_err *err);
void feed_ok(struct session *s, const uint8_t *p, size_t len,
    struct session_frame *f);
void
feed_bad(struct session *s, const uint8_t *p, size_t len, const char *what);
void nonce(uint8_t out[MSG_NONCE_LEN], unsigned seed);
void pair_init(struct pair *p, const char *lkeys, const char *ckeys,
    size_t max_frame);
void pair_free(struct pair *p);
void make_challenge(struct pair *p, unsigned seed, struct wbuf *w);
void fill_hello(struct msg_hello *h, unsigned seed);
void make_hello(struct pair *p, unsigned seed, const struct wbuf *chal,
    struct wbuf *w);
void send_frame(struct session *s, uint8_t type, uint16_t flags,
    uint64_t sweep_id, const uint8_t *payload, size_t len, struct wbuf *w);
void send_ack(struct session *s, uint8_t kind, uint64_t seq, uint64_t batch,
    struct wbuf *w);
void handshake(struct pair *p, unsigned seed);
void send_sweep(struct pair *p, uint64_t sweep_id, struct wbuf *w);
void v2_keyed(const uint8_t *key, size_t keylen, const char *label,
    const struct wbuf *chal, const uint8_t *hello, size_t hello_len,
    uint8_t out[HMAC_LEN]);
uint32_t v2_key_id(const char *key, const uint8_t *nonce_l);
void craft(const struct frame_hdr *h, const uint8_t *key, size_t keylen,
    const struct wbuf *chal, const uint8_t *payload, size_t len,
    struct wbuf *w);
struct frame_hdr next_hdr(const struct pair *p, uint8_t type, size_t len);
void setup(void);
void teardown(void);
void assert_prefixes(struct session *s, const uint8_t *frame, size_t len);
void
feed_refused(struct session *s, const uint8_t *d, size_t n, const char *want);

/* The tests of session_keys.c and session_frames.c, added to tc. */
void session_key_tests(TCase *tc);
void session_frame_tests(TCase *tc);

#endif
