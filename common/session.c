/* SPDX-License-Identifier: BSD-2-Clause */
/* The per-connection protocol state machine (no I/O). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "frame.h"
#include "keyfile.h"
#include "session.h"
#include "wire.h"

int
session_init(struct session *s, enum session_role role,
    const struct keyring *keys, struct hmac_ctx *hmac, const char *my_name,
    size_t max_frame)
{
	memset(s, 0, sizeof(*s));
	if (keys == NULL || keys->n == 0 || hmac == NULL)
		return -EINVAL;
	s->role = role;
	s->state =
	    role == SESSION_LISTENER ? SESSION_START : SESSION_WAIT_CHALLENGE;
	s->keys = keys;
	s->hmac = hmac;
	if (max_frame == 0)
		max_frame = FRAME_MAX_DEFAULT;
	if (max_frame < FRAME_MIN_MAX)
		max_frame = FRAME_MIN_MAX;
	if (max_frame > FRAME_MAX_LIMIT)
		max_frame = FRAME_MAX_LIMIT;
	s->max_frame = max_frame;
	s->my_id = frame_sender_id(my_name);
	return 0;
}

void
session_clear(struct session *s)
{
	lh_cleanse(s->skey, sizeof(s->skey));
	lh_cleanse(s->skey_l2c, sizeof(s->skey_l2c));
	free(s->hello);
	s->hello = NULL;
	s->state = SESSION_CLOSED;
}

/* One key per direction: HMAC(K, label || nonce_L || nonce_C). */
static int
derive_skey(struct session *s, const struct keyring_key *k)
{
	struct hmac_part parts[] = {
	    {SESSION_LABEL, sizeof(SESSION_LABEL) - 1},
	    {s->nonce_l, MSG_NONCE_LEN},
	    {s->nonce_c, MSG_NONCE_LEN},
	};
	int rc;

	rc = hmac_sha256(s->hmac, k->bytes, k->len, parts, 3, s->skey);
	if (rc < 0)
		return rc;
	parts[0] = (struct hmac_part){SESSION_LABEL_LISTEN,
	    sizeof(SESSION_LABEL_LISTEN) - 1};
	return hmac_sha256(s->hmac, k->bytes, k->len, parts, 3, s->skey_l2c);
}

/* Append header, payload and MAC.  prefix (the listener's nonce) goes
 * into the MAC of HELLO only. */
static int
put_frame(struct session *s, uint8_t type, uint16_t flags, uint64_t sweep_id,
    const uint8_t *key, size_t keylen, uint32_t key_id, const uint8_t *prefix,
    const uint8_t *payload, size_t len, struct wbuf *w)
{
	uint8_t hdr[FRAME_HDR_LEN], mac[FRAME_MAC_LEN];
	struct frame_hdr h;
	struct hmac_part parts[3];
	size_t np = 0;
	int rc;

	if (len > s->max_frame - FRAME_OVERHEAD)
		return -EMSGSIZE;
	memset(&h, 0, sizeof(h));
	h.version = FRAME_VERSION;
	h.type = type;
	h.flags = flags;
	h.len = (uint32_t)len;
	h.key_id = key_id;
	h.sender_id = s->my_id;
	h.seq = s->send_seq + 1;
	h.sweep_id = sweep_id;
	frame_hdr_encode(&h, hdr);
	if (prefix != NULL)
		parts[np++] = (struct hmac_part){prefix, MSG_NONCE_LEN};
	parts[np++] = (struct hmac_part){hdr, sizeof(hdr)};
	parts[np++] = (struct hmac_part){payload, len};
	rc = hmac_sha256(s->hmac, key, keylen, parts, np, mac);
	if (rc < 0)
		return rc;
	(void)wbuf_put(w, hdr, sizeof(hdr));
	(void)wbuf_put(w, payload, len);
	(void)wbuf_put(w, mac, sizeof(mac));
	rc = wbuf_status(w);
	if (rc == 0)
		s->send_seq++;
	return rc;
}

int
session_challenge(struct session *s, const struct msg_challenge *c,
    struct wbuf *w)
{
	const struct keyring_key *k = &s->keys->keys[0];
	struct wbuf pl;
	int rc;

	if (s->role != SESSION_LISTENER || s->state != SESSION_START)
		return -EINVAL;
	wbuf_init(&pl, 0);
	rc = msg_challenge_encode(&pl, c);
	if (rc == 0)
		rc = put_frame(s, FRAME_CHALLENGE, 0, 0, k->bytes, k->len,
		    k->id, NULL, pl.data, pl.len, w);
	wbuf_free(&pl);
	if (rc < 0)
		return rc;
	memcpy(s->nonce_l, c->nonce, MSG_NONCE_LEN);
	s->state = SESSION_WAIT_HELLO;
	return 0;
}

int
session_hello(struct session *s, const struct msg_hello *h, struct wbuf *w)
{
	const struct keyring_key *k = &s->keys->keys[0];
	struct wbuf pl;
	int rc;

	if (s->role != SESSION_CONNECTOR || s->state != SESSION_SEND_HELLO)
		return -EINVAL;
	memcpy(s->nonce_c, h->nonce, MSG_NONCE_LEN);
	wbuf_init(&pl, 0);
	rc = msg_hello_encode(&pl, h);
	if (rc == 0)
		rc = put_frame(s, FRAME_HELLO, 0, 0, k->bytes, k->len, k->id,
		    s->nonce_l, pl.data, pl.len, w);
	wbuf_free(&pl);
	if (rc == 0)
		rc = derive_skey(s, k);
	if (rc < 0)
		return rc;
	s->key_id = k->id;
	s->hello_seq = s->send_seq;
	s->state = SESSION_WAIT_HELLO_ACK;
	return 0;
}

int
session_send(struct session *s, uint8_t type, uint16_t flags, uint64_t sweep_id,
    const uint8_t *payload, size_t len, struct wbuf *w)
{
	if (s->state != SESSION_OPEN || type == FRAME_CHALLENGE ||
	    type == FRAME_HELLO || (flags & ~FRAME_F_KNOWN) != 0)
		return -EINVAL;
	return put_frame(s, type, flags, sweep_id,
	    s->role == SESSION_LISTENER ? s->skey_l2c : s->skey, HMAC_LEN,
	    s->key_id, NULL, payload, len, w);
}

static int
fail(struct session *s, int rc)
{
	s->state = SESSION_CLOSED;
	return rc;
}

static int
check_mac(struct session *s, const uint8_t *key, size_t keylen,
    const uint8_t *prefix, const uint8_t *frame, size_t len, struct lh_err *err)
{
	uint8_t mac[FRAME_MAC_LEN];
	struct hmac_part parts[2];
	size_t np = 0;

	if (prefix != NULL)
		parts[np++] = (struct hmac_part){prefix, MSG_NONCE_LEN};
	parts[np++] = (struct hmac_part){frame, len - FRAME_MAC_LEN};
	if (hmac_sha256(s->hmac, key, keylen, parts, np, mac) < 0)
		return lh_err_set(err, 0, -EIO, "HMAC computation failed");
	if (!hmac_equal(mac, frame + len - FRAME_MAC_LEN, FRAME_MAC_LEN))
		return lh_err_set(err, 0, -EBADMSG,
		    "bad MAC on %s frame (wrong key, or altered in transit)",
		    frame_type_name(frame[5]));
	return 0;
}

/* The frames each state accepts from the peer. */
static bool
type_allowed(const struct session *s, const struct frame_hdr *h)
{
	switch (s->state) {
	case SESSION_WAIT_HELLO:
		return h->type == FRAME_HELLO;
	case SESSION_WAIT_CHALLENGE:
		return h->type == FRAME_CHALLENGE;
	case SESSION_WAIT_HELLO_ACK:
		return h->type == FRAME_ACK;
	case SESSION_OPEN:
		if (h->type == FRAME_CHALLENGE || h->type == FRAME_HELLO)
			return false;
		if (h->type == FRAME_ACK || h->type == FRAME_BYE)
			return true;
		if (h->type == FRAME_SWEEP)
			return s->role == SESSION_LISTENER;
		/* A later message type: skipped if the sender said so. */
		return h->type > FRAME_BYE &&
		    (h->flags & FRAME_F_IGNORABLE) != 0;
	default:
		return false;
	}
}

static int
input_hello(struct session *s, const struct frame_hdr *h, const uint8_t *f,
    size_t total, struct lh_err *err)
{
	const struct keyring_key *k = keyring_find(s->keys, h->key_id);
	int rc;

	if (k == NULL)
		return lh_err_set(err, 0, -EACCES,
		    "HELLO signed with unknown key id %08x", h->key_id);
	rc = check_mac(s, k->bytes, k->len, s->nonce_l, f, total, err);
	if (rc < 0)
		return rc;
	if (s->hello == NULL && (s->hello = malloc(sizeof(*s->hello))) == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	rc = msg_hello_decode(s->hello, f + FRAME_HDR_LEN, h->len, err);
	if (rc < 0)
		return rc;
	if (h->sender_id != frame_sender_id(s->hello->name))
		return lh_err_set(err, 0, -EBADMSG,
		    "sender id does not match the name '%s'", s->hello->name);
	memcpy(s->nonce_c, s->hello->nonce, MSG_NONCE_LEN);
	rc = derive_skey(s, k);
	if (rc < 0)
		return lh_err_set(err, 0, rc, "key derivation failed");
	s->key_id = k->id;
	s->peer_id = h->sender_id;
	s->state = SESSION_OPEN;
	return 0;
}

static int
input_challenge(struct session *s, const struct frame_hdr *h, const uint8_t *f,
    size_t total, struct lh_err *err)
{
	const struct keyring_key *k = keyring_find(s->keys, h->key_id);
	int rc;

	/* Nothing in a CHALLENGE is trusted before the ACK of our HELLO
	 * verifies with the session key, so a key we do not hold (during a
	 * rotation) is no reason to give up; a bad MAC with a key we hold
	 * is. */
	s->challenge_unverified = k == NULL;
	if (k != NULL) {
		rc = check_mac(s, k->bytes, k->len, NULL, f, total, err);
		if (rc < 0)
			return rc;
	}
	rc =
	    msg_challenge_decode(&s->challenge, f + FRAME_HDR_LEN, h->len, err);
	if (rc < 0)
		return rc;
	if (h->sender_id != frame_sender_id(s->challenge.name))
		return lh_err_set(err, 0, -EBADMSG,
		    "sender id does not match the name '%s'",
		    s->challenge.name);
	memcpy(s->nonce_l, s->challenge.nonce, MSG_NONCE_LEN);
	s->peer_id = h->sender_id;
	s->state = SESSION_SEND_HELLO;
	return 0;
}

static int
input_session_frame(struct session *s, const struct frame_hdr *h,
    const uint8_t *f, size_t total, struct lh_err *err)
{
	struct msg_ack ack;
	int rc;

	if (h->key_id != s->key_id)
		return lh_err_set(err, 0, -EACCES,
		    "key id %08x, the session uses %08x", h->key_id, s->key_id);
	rc = check_mac(s, s->role == SESSION_LISTENER ? s->skey : s->skey_l2c,
	    HMAC_LEN, NULL, f, total, err);
	if (rc < 0)
		return rc;
	if (h->sender_id != s->peer_id)
		return lh_err_set(err, 0, -EBADMSG,
		    "sender id changed within the connection");
	if (s->state == SESSION_WAIT_HELLO_ACK) {
		rc = msg_ack_decode(&ack, f + FRAME_HDR_LEN, h->len, err);
		if (rc < 0)
			return rc;
		if (ack.kind != MSG_ACK_HELLO || ack.seq != s->hello_seq)
			return lh_err_set(err, 0, -EBADMSG,
			    "expected the ACK of HELLO");
		s->state = SESSION_OPEN;
	}
	return 0;
}

int
session_input(struct session *s, const uint8_t *buf, size_t len,
    struct session_frame *ret, size_t *ret_need, struct lh_err *err)
{
	struct frame_hdr h;
	size_t total;
	int rc;

	if (s->state == SESSION_CLOSED)
		return lh_err_set(err, 0, -EPIPE, "session already closed");
	if (len < FRAME_HDR_LEN) {
		*ret_need = FRAME_HDR_LEN;
		return 0;
	}
	rc = frame_hdr_decode(&h, buf, s->max_frame, err);
	if (rc < 0)
		return fail(s, rc);
	if (!type_allowed(s, &h)) {
		if (s->state == SESSION_START || s->state == SESSION_SEND_HELLO)
			return fail(s,
			    lh_err_set(err, 0, -EPROTO,
			        "%s frame before the handshake "
			        "allows one",
			        frame_type_name(h.type)));
		return fail(s,
		    lh_err_set(err, 0, -EPROTO,
		        "%s frame (type %u, flags 0x%04x) not "
		        "allowed here",
		        frame_type_name(h.type), h.type, h.flags));
	}
	/* Only now that the length is known to be within the limit may the
	 * caller buffer the rest. */
	total = FRAME_OVERHEAD + (size_t)h.len;
	if (len < total) {
		*ret_need = total;
		return 0;
	}
	switch (s->state) {
	case SESSION_WAIT_HELLO:
		rc = input_hello(s, &h, buf, total, err);
		break;
	case SESSION_WAIT_CHALLENGE:
		rc = input_challenge(s, &h, buf, total, err);
		break;
	default:
		rc = input_session_frame(s, &h, buf, total, err);
		break;
	}
	if (rc < 0)
		return fail(s, rc);
	/* MAC first, then order: a frame replayed or reordered within the
	 * connection carries a valid MAC but the wrong number. */
	if (h.seq != s->recv_seq + 1)
		return fail(s,
		    lh_err_set(err, 0, -EBADMSG,
		        "sequence number %llu, expected %llu "
		        "(replayed or reordered frame)",
		        (unsigned long long)h.seq,
		        (unsigned long long)s->recv_seq + 1));
	s->recv_seq = h.seq;
	ret->hdr = h;
	ret->payload = buf + FRAME_HDR_LEN;
	*ret_need = FRAME_HDR_LEN;
	return (int)total;
}
