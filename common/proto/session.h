/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One connection's protocol state, without any I/O: the handshake that
 * binds the connection, sequence numbers in each direction, and the
 * authentication of every frame.  The daemon feeds it the bytes it reads
 * and sends the bytes it writes; tests and fuzzers drive it directly.
 *
 *   listener                          connector
 *   CHALLENGE(nonce_L) ------------->             no MAC (32 zero bytes)
 *              <---------------------- HELLO(nonce_C, identity)
 *                                                 MAC: K over T
 *   ACK(HELLO) --------------------->             MAC: session key S_l
 *              <---------------------- SWEEP ...  MAC: session key S_c
 *
 * Protocol version 2 (docs/protocol.md, section 3):
 *   T   = SHA-256(the whole CHALLENGE frame || HELLO header || HELLO payload)
 *   HELLO MAC = HMAC(K, "lharvestd v2 hello" || T)
 *   S_c = HMAC(K, "lharvestd v2 connector" || T)
 *   S_l = HMAC(K, "lharvestd v2 listener" || T)
 *   key id = first 4 bytes of HMAC(K, "lharvestd v2 key id" || nonce_L)
 * where K is the connector's signing key.  The CHALLENGE carries nothing
 * made with a key (key id 0, a MAC of zeros): anyone may connect and read
 * it, so it must not be a guessing oracle for the key.  It is
 * authenticated afterwards: every byte of it is in T, so a man in the
 * middle who changes one (a capability bit) breaks the HELLO's MAC and
 * both session keys.  The key id is salted with the nonce, so that it
 * identifies a key only within one connection.  Sequence numbers start at
 * 1 in each direction and grow by exactly 1 per frame.
 *
 * The connector trusts the listener only once the ACK of its HELLO
 * verifies with S_l, which only a holder of K computes.
 */
#ifndef LH_SESSION_H
#define LH_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "hmac.h"
#include "msg.h"

struct keyring;
struct wbuf;
struct lh_err;

#define SESSION_LABEL_KEYID  "lharvestd v2 key id"
#define SESSION_LABEL_HELLO  "lharvestd v2 hello"
#define SESSION_LABEL        "lharvestd v2 connector"
#define SESSION_LABEL_LISTEN "lharvestd v2 listener"

/* A whole CHALLENGE frame, the longest there is. */
#define SESSION_CHALLENGE_MAX (FRAME_OVERHEAD + MSG_CHALLENGE_MAX)

enum session_role {
	SESSION_LISTENER,
	SESSION_CONNECTOR,
};

enum session_state {
	SESSION_START,          /* nothing sent or received */
	SESSION_WAIT_HELLO,     /* listener: CHALLENGE sent */
	SESSION_WAIT_CHALLENGE, /* connector: nothing received yet */
	SESSION_SEND_HELLO,     /* connector: CHALLENGE in, HELLO to send */
	SESSION_WAIT_HELLO_ACK, /* connector: HELLO sent */
	SESSION_OPEN,           /* handshake done: SWEEP, ACK, BYE flow */
	SESSION_CLOSED,         /* a violation was seen: drop the peer */
};

struct session {
	enum session_role role;
	enum session_state state;
	const struct keyring *keys; /* borrowed */
	struct hmac_ctx *hmac;      /* borrowed */
	size_t max_frame;
	uint64_t my_id;   /* sender id of this end */
	uint64_t peer_id; /* sender id of the peer, once known */
	uint32_t key_id;  /* salted id of the handshake's key (see above) */
	uint8_t nonce_l[MSG_NONCE_LEN];
	uint8_t nonce_c[MSG_NONCE_LEN];
	uint8_t skey[HMAC_LEN];         /* signs connector -> listener frames */
	uint8_t skey_l2c[HMAC_LEN];     /* signs listener -> connector frames */
	uint64_t send_seq;              /* last sent */
	uint64_t recv_seq;              /* last received */
	uint64_t hello_seq;             /* connector: seq of its HELLO */
	struct msg_challenge challenge; /* what the peer (listener) said */
	/* The CHALLENGE frame as sent, every byte: it goes into T. */
	uint8_t chal[SESSION_CHALLENGE_MAX];
	size_t chal_len;
	struct msg_hello *hello; /* listener: the peer's HELLO, owned */
};

/* A frame that passed every check; payload points into the input. */
struct session_frame {
	struct frame_hdr hdr;
	const uint8_t *payload;
};

int session_init(struct session *s, enum session_role role,
    const struct keyring *keys, struct hmac_ctx *hmac, const char *my_name,
    size_t max_frame);

/* Wipe the keys and free what s owns. */
void session_clear(struct session *s);

/* Listener, right after accept: append the CHALLENGE (c->nonce must be
 * fresh random bytes) to w. */
int session_challenge(struct session *s, const struct msg_challenge *c,
    struct wbuf *w);

/* Connector, after the CHALLENGE arrived: append a HELLO (h->nonce fresh
 * random bytes) to w.  The session keys are derived here. */
int session_hello(struct session *s, const struct msg_hello *h, struct wbuf *w);

/* Append any other frame (ACK, SWEEP, BYE, later types) in OPEN state. */
int session_send(struct session *s, uint8_t type, uint16_t flags,
    uint64_t sweep_id, const uint8_t *payload, size_t len, struct wbuf *w);

/* The same, in place: w holds FRAME_HDR_LEN bytes of any value and then
 * the payload.  The header is written over the first bytes and the MAC
 * appended, so a large payload is never copied into a second buffer. */
int session_seal(struct session *s, uint8_t type, uint16_t flags,
    uint64_t sweep_id, struct wbuf *w);

/*
 * Look at the len bytes received so far (buf starts at a frame boundary).
 *  0: incomplete; *ret_need is the size of the whole next frame once its
 *     header has arrived (its length is checked first, before a reader
 *     buffers the payload), else FRAME_HDR_LEN.
 * >0: one frame of that many bytes was verified and is in *ret.  The
 *     handshake frames (CHALLENGE, HELLO, the ACK of HELLO) are acted on
 *     here; the caller sees them too.
 * <0: a violation (bad magic, version, length, MAC, unknown key, sequence,
 *     a frame the state does not allow, an ACK from a connector, a known
 *     type with the ignorable flag, an ACK or BYE with a sweep id); err
 *     says which.  The session is CLOSED: drop the connection.
 */
int session_input(struct session *s, const uint8_t *buf, size_t len,
    struct session_frame *ret, size_t *ret_need, struct lh_err *err);

/* The key id a frame carries for key on a connection whose CHALLENGE
 * had nonce_l (for tools and tests that build frames by hand). */
int session_key_id(struct hmac_ctx *h, const uint8_t *key, size_t keylen,
    const uint8_t nonce_l[MSG_NONCE_LEN], uint32_t *ret);

#endif
