/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One connection's protocol state, without any I/O: the handshake that
 * binds the connection, sequence numbers in each direction, and the
 * authentication of every frame.  The daemon feeds it the bytes it reads
 * and sends the bytes it writes; tests and fuzzers drive it directly.
 *
 *   listener                          connector
 *   CHALLENGE(nonce_L) ------------->             MAC: key K
 *              <---------------------- HELLO(nonce_C, identity)
 *                                                 MAC: K over nonce_L||frame
 *   ACK(HELLO) --------------------->             MAC: session key
 *              <---------------------- SWEEP ...  MAC: session key
 *
 * session keys, one per direction, so that no frame can be reflected back
 * to its sender:
 *   connector -> listener: HMAC-SHA256(K, "lharvestd session v1" || nonce_L ||
 * nonce_C) listener -> connector: HMAC-SHA256(K, "lharvestd session v1
 * listener" || nonce_L || nonce_C) where K is the key the HELLO was signed with
 * (identified by its key id, so either side may sign with any key of the shared
 * key file).  Sequence numbers start at 1 in each direction and grow by exactly
 * 1 per frame.
 *
 * The connector trusts the listener only once the ACK of its HELLO
 * verifies with the session key.  A CHALLENGE signed with a key the
 * connector does not hold (the listener moved to a new first key before
 * this node got it) is therefore still answered; challenge_unverified
 * says so, for the log.
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

#define SESSION_LABEL        "lharvestd session v1"
#define SESSION_LABEL_LISTEN "lharvestd session v1 listener"

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
	uint32_t key_id;  /* key of the handshake */
	uint8_t nonce_l[MSG_NONCE_LEN];
	uint8_t nonce_c[MSG_NONCE_LEN];
	uint8_t skey[HMAC_LEN];         /* signs connector -> listener frames */
	uint8_t skey_l2c[HMAC_LEN];     /* signs listener -> connector frames */
	uint64_t send_seq;              /* last sent */
	uint64_t recv_seq;              /* last received */
	uint64_t hello_seq;             /* connector: seq of its HELLO */
	struct msg_challenge challenge; /* what the peer (listener) said */
	bool challenge_unverified;      /* signed with a key we do not hold */
	struct msg_hello *hello;        /* listener: the peer's HELLO, owned */
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
 * random bytes) to w.  The session key is derived here. */
int session_hello(struct session *s, const struct msg_hello *h, struct wbuf *w);

/* Append any other frame (ACK, SWEEP, BYE, later types) in OPEN state. */
int session_send(struct session *s, uint8_t type, uint16_t flags,
    uint64_t sweep_id, const uint8_t *payload, size_t len, struct wbuf *w);

/*
 * Look at the len bytes received so far (buf starts at a frame boundary).
 *  0: incomplete; *ret_need is the size of the whole next frame once its
 *     header has arrived (its length is checked first, before a reader
 *     buffers the payload), else FRAME_HDR_LEN.
 * >0: one frame of that many bytes was verified and is in *ret.  The
 *     handshake frames (CHALLENGE, HELLO, the ACK of HELLO) are acted on
 *     here; the caller sees them too.
 * <0: a violation (bad magic, version, length, MAC, unknown key, sequence,
 *     a frame the state does not allow); err says which.  The session is
 *     CLOSED: drop the connection.
 */
int session_input(struct session *s, const uint8_t *buf, size_t len,
    struct session_frame *ret, size_t *ret_need, struct lh_err *err);

#endif
