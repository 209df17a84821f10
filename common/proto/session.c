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

#define LABEL(s)                                                               \
	{                                                                      \
		(s), sizeof(s) - 1                                             \
	}

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

int
session_key_id(struct hmac_ctx *h, const uint8_t *key, size_t keylen,
    const uint8_t nonce_l[MSG_NONCE_LEN], uint32_t *ret)
{
	struct hmac_part parts[] = {
	    LABEL(SESSION_LABEL_KEYID),
	    {nonce_l, MSG_NONCE_LEN},
	};
	uint8_t mac[HMAC_LEN];
	int rc;

	rc = hmac_sha256(h, key, keylen, parts, 2, mac);
	if (rc < 0)
		return rc;
	*ret = wire_be32(mac);
	return 0;
}

/* T: the CHALLENGE frame, then the HELLO's header and payload. */
static int
transcript(const struct session *s, const uint8_t *hello, size_t len,
    uint8_t out[SHA256_LEN])
{
	struct sha256_ctx *c = sha256_begin();

	if (c == NULL)
		return -ENOMEM;
	if (sha256_update(c, s->chal, s->chal_len) < 0 ||
	    sha256_update(c, hello, len) < 0) {
		(void)sha256_end(c, out);
		return -EIO;
	}
	return sha256_end(c, out);
}

/* HMAC(K, label || T) */
static int
keyed(struct session *s, const struct keyring_key *k, const char *label,
    const uint8_t t[SHA256_LEN], uint8_t out[HMAC_LEN])
{
	struct hmac_part parts[] = {
	    {label, strlen(label)},
	    {t, SHA256_LEN},
	};

	return hmac_sha256(s->hmac, k->bytes, k->len, parts, 2, out);
}

/* One session key per direction, both bound to the whole transcript. */
static int
derive_skeys(struct session *s, const struct keyring_key *k,
    const uint8_t t[SHA256_LEN])
{
	int rc = keyed(s, k, SESSION_LABEL, t, s->skey);

	return rc < 0 ? rc : keyed(s, k, SESSION_LABEL_LISTEN, t, s->skey_l2c);
}

static void
put_header(struct session *s, uint8_t type, uint16_t flags, uint64_t sweep_id,
    uint32_t key_id, size_t len, uint8_t hdr[FRAME_HDR_LEN])
{
	struct frame_hdr h;

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
}

/* Append header, payload and MAC = HMAC(key, header || payload). */
static int
put_frame(struct session *s, uint8_t type, uint16_t flags, uint64_t sweep_id,
    const uint8_t *key, size_t keylen, const uint8_t *payload, size_t len,
    struct wbuf *w)
{
	uint8_t hdr[FRAME_HDR_LEN], mac[FRAME_MAC_LEN];
	struct hmac_part parts[2];
	int rc;

	if (len > s->max_frame - FRAME_OVERHEAD)
		return -EMSGSIZE;
	put_header(s, type, flags, sweep_id, s->key_id, len, hdr);
	parts[0] = (struct hmac_part){hdr, sizeof(hdr)};
	parts[1] = (struct hmac_part){payload, len};
	rc = hmac_sha256(s->hmac, key, keylen, parts, 2, mac);
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
	struct wbuf pl;
	int rc;

	if (s->role != SESSION_LISTENER || s->state != SESSION_START)
		return -EINVAL;
	wbuf_init(&pl, MSG_CHALLENGE_MAX);
	rc = msg_challenge_encode(&pl, c);
	if (rc == 0) {
		/* Key id 0 and a MAC of zeros: nothing made with a key goes
		 * to a peer that has not proved it holds one. */
		s->chal_len = FRAME_OVERHEAD + pl.len;
		memset(s->chal, 0, sizeof(s->chal));
		put_header(s, FRAME_CHALLENGE, 0, 0, 0, pl.len, s->chal);
		memcpy(s->chal + FRAME_HDR_LEN, pl.data, pl.len);
		rc = wbuf_put(w, s->chal, s->chal_len);
	}
	wbuf_free(&pl);
	if (rc < 0)
		return rc;
	s->send_seq++;
	memcpy(s->nonce_l, c->nonce, MSG_NONCE_LEN);
	s->state = SESSION_WAIT_HELLO;
	return 0;
}

int
session_hello(struct session *s, const struct msg_hello *h, struct wbuf *w)
{
	const struct keyring_key *k = &s->keys->keys[0];
	uint8_t t[SHA256_LEN], mac[HMAC_LEN], hdr[FRAME_HDR_LEN] = {0};
	struct wbuf f;
	int rc;

	if (s->role != SESSION_CONNECTOR || s->state != SESSION_SEND_HELLO)
		return -EINVAL;
	memcpy(s->nonce_c, h->nonce, MSG_NONCE_LEN);
	rc = session_key_id(s->hmac, k->bytes, k->len, s->nonce_l, &s->key_id);
	if (rc < 0)
		return rc;
	/* The header first, with room for it, then the payload after it:
	 * the MAC covers both as they will be sent. */
	wbuf_init(&f, s->max_frame);
	(void)wbuf_put(&f, hdr, sizeof(hdr));
	rc = msg_hello_encode(&f, h);
	if (rc == 0 && f.len + FRAME_MAC_LEN > s->max_frame)
		rc = -EMSGSIZE;
	if (rc == 0) {
		put_header(s, FRAME_HELLO, 0, 0, s->key_id,
		    f.len - FRAME_HDR_LEN, f.data);
		rc = transcript(s, f.data, f.len, t);
	}
	if (rc == 0)
		rc = keyed(s, k, SESSION_LABEL_HELLO, t, mac);
	if (rc == 0)
		rc = derive_skeys(s, k, t);
	if (rc == 0) {
		(void)wbuf_put(w, f.data, f.len);
		rc = wbuf_put(w, mac, sizeof(mac));
	}
	wbuf_free(&f);
	lh_cleanse(t, sizeof(t));
	if (rc < 0)
		return rc;
	s->send_seq++;
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
	    payload, len, w);
}

int
session_seal(struct session *s, uint8_t type, uint16_t flags, uint64_t sweep_id,
    struct wbuf *w)
{
	const uint8_t *key =
	    s->role == SESSION_LISTENER ? s->skey_l2c : s->skey;
	uint8_t mac[FRAME_MAC_LEN];
	struct hmac_part part;
	size_t len;
	int rc = wbuf_status(w);

	if (rc < 0)
		return rc;
	if (s->state != SESSION_OPEN || type == FRAME_CHALLENGE ||
	    type == FRAME_HELLO || (flags & ~FRAME_F_KNOWN) != 0 ||
	    w->len < FRAME_HDR_LEN)
		return -EINVAL;
	len = w->len - FRAME_HDR_LEN;
	if (len > s->max_frame - FRAME_OVERHEAD)
		return -EMSGSIZE;
	put_header(s, type, flags, sweep_id, s->key_id, len, w->data);
	part = (struct hmac_part){w->data, w->len};
	rc = hmac_sha256(s->hmac, key, HMAC_LEN, &part, 1, mac);
	if (rc == 0)
		rc = wbuf_put(w, mac, sizeof(mac));
	if (rc == 0)
		s->send_seq++;
	return rc;
}

static int
fail(struct session *s, int rc)
{
	s->state = SESSION_CLOSED;
	return rc;
}

static int
bad_mac(const uint8_t *frame, struct lh_err *err)
{
	return lh_err_set(err, 0, -EBADMSG,
	    "bad MAC on %s frame (wrong key, or altered in transit)",
	    frame_type_name(frame[5]));
}

static int
check_mac(struct session *s, const uint8_t *key, size_t keylen,
    const uint8_t *frame, size_t len, struct lh_err *err)
{
	uint8_t mac[FRAME_MAC_LEN];
	struct hmac_part part = {frame, len - FRAME_MAC_LEN};

	if (hmac_sha256(s->hmac, key, keylen, &part, 1, mac) < 0)
		return lh_err_set(err, 0, -EIO, "HMAC computation failed");
	if (!hmac_equal(mac, frame + len - FRAME_MAC_LEN, FRAME_MAC_LEN))
		return bad_mac(frame, err);
	return 0;
}

/*
 * Why the peer may not send this frame now, or NULL if it may.  Checked
 * on the header alone, before the payload is buffered.
 */
static const char *
type_refused(const struct session *s, const struct frame_hdr *h)
{
	bool ignorable = (h->flags & FRAME_F_IGNORABLE) != 0;

	/* A type this side knows has one meaning: skipping it would drop
	 * data (a SWEEP) or a protocol step without a word. */
	if (ignorable && h->type >= FRAME_CHALLENGE && h->type <= FRAME_BYE)
		return "known type with the ignorable flag (only types above "
		       "5 may have it)";
	/* Only a SWEEP belongs to a sweep (docs/protocol.md, section 2). */
	if (h->sweep_id != 0 && h->type >= FRAME_CHALLENGE &&
	    h->type <= FRAME_BYE && h->type != FRAME_SWEEP)
		return "sweep id not 0 (only a SWEEP has one)";
	switch (s->state) {
	case SESSION_START:
	case SESSION_SEND_HELLO:
		return "frame before the handshake allows one";
	case SESSION_WAIT_HELLO:
		return h->type == FRAME_HELLO ? NULL : "expected a HELLO";
	case SESSION_WAIT_CHALLENGE:
		if (h->type != FRAME_CHALLENGE)
			return "expected a CHALLENGE";
		/* Nothing in it is authenticated yet: buffer no more than
		 * the longest legal one. */
		return h->len > MSG_CHALLENGE_MAX ? "CHALLENGE too long" : NULL;
	case SESSION_WAIT_HELLO_ACK:
		return h->type == FRAME_ACK ? NULL :
		                              "expected the ACK of HELLO";
	case SESSION_OPEN:
		if (h->type == FRAME_CHALLENGE || h->type == FRAME_HELLO)
			return "handshake frame in an open session";
		/* Acknowledgements flow from the listener only: an ACK from
		 * a connector acknowledges nothing it was sent. */
		if (h->type == FRAME_ACK)
			return s->role == SESSION_CONNECTOR ?
			    NULL :
			    "ACK from a connector (only a listener "
			    "acknowledges)";
		if (h->type == FRAME_BYE)
			return NULL;
		if (h->type == FRAME_SWEEP)
			return s->role == SESSION_LISTENER ?
			    NULL :
			    "SWEEP from a listener";
		/* A later message type: skipped if the sender said so. */
		return h->type > FRAME_BYE && ignorable ?
		    NULL :
		    "unknown type without the ignorable flag";
	default:
		return "session closed";
	}
}

static int
input_hello(struct session *s, const struct frame_hdr *h, const uint8_t *f,
    size_t total, struct lh_err *err)
{
	const struct keyring_key *k = NULL;
	uint8_t t[SHA256_LEN], mac[HMAC_LEN];
	bool known = false;
	size_t i;
	int rc;

	rc = transcript(s, f, total - FRAME_MAC_LEN, t);
	if (rc < 0)
		return lh_err_set(err, 0, rc, "SHA-256 failed");
	/* The key id is salted with our nonce: compute it for each key.
	 * Two keys with one id (one chance in 2^32) are both tried. */
	for (i = 0; i < s->keys->n && k == NULL; i++) {
		const struct keyring_key *c = &s->keys->keys[i];
		uint32_t id;

		if (session_key_id(s->hmac, c->bytes, c->len, s->nonce_l, &id) <
		    0)
			return lh_err_set(err, 0, -EIO,
			    "HMAC computation failed");
		if (id != h->key_id)
			continue;
		known = true;
		if (keyed(s, c, SESSION_LABEL_HELLO, t, mac) < 0)
			return lh_err_set(err, 0, -EIO,
			    "HMAC computation failed");
		if (hmac_equal(mac, f + total - FRAME_MAC_LEN, FRAME_MAC_LEN))
			k = c;
	}
	if (!known)
		return lh_err_set(err, 0, -EACCES,
		    "HELLO signed with a key this side does not hold (key id "
		    "%08x)",
		    h->key_id);
	if (k == NULL)
		return bad_mac(f, err);
	if (s->hello == NULL && (s->hello = malloc(sizeof(*s->hello))) == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	rc = msg_hello_decode(s->hello, f + FRAME_HDR_LEN, h->len, err);
	if (rc < 0)
		return rc;
	if (h->sender_id != frame_sender_id(s->hello->name))
		return lh_err_set(err, 0, -EBADMSG,
		    "sender id does not match the name '%s'", s->hello->name);
	memcpy(s->nonce_c, s->hello->nonce, MSG_NONCE_LEN);
	rc = derive_skeys(s, k, t);
	lh_cleanse(t, sizeof(t));
	if (rc < 0)
		return lh_err_set(err, 0, rc, "key derivation failed");
	s->key_id = h->key_id;
	s->peer_id = h->sender_id;
	s->state = SESSION_OPEN;
	return 0;
}

static int
input_challenge(struct session *s, const struct frame_hdr *h, const uint8_t *f,
    size_t total, struct lh_err *err)
{
	static const uint8_t zero[FRAME_MAC_LEN];
	int rc;

	/* Unauthenticated by design (see session.h): its key id and MAC
	 * are zero, so that one CHALLENGE has one encoding. */
	if (h->key_id != 0 ||
	    memcmp(f + total - FRAME_MAC_LEN, zero, FRAME_MAC_LEN) != 0)
		return lh_err_set(err, 0, -EBADMSG,
		    "CHALLENGE with a key id or MAC (protocol 2 sends zeros)");
	rc =
	    msg_challenge_decode(&s->challenge, f + FRAME_HDR_LEN, h->len, err);
	if (rc < 0)
		return rc;
	if (h->sender_id != frame_sender_id(s->challenge.name))
		return lh_err_set(err, 0, -EBADMSG,
		    "sender id does not match the name '%s'",
		    s->challenge.name);
	memcpy(s->chal, f, total);
	s->chal_len = total;
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
	    HMAC_LEN, f, total, err);
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
	const char *why;
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
	why = type_refused(s, &h);
	if (why != NULL)
		return fail(s,
		    lh_err_set(err, 0, -EPROTO,
		        "%s frame (type %u, flags 0x%04x): %s",
		        frame_type_name(h.type), h.type, h.flags, why));
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
