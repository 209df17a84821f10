/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: any bytes as what a connector sends to a listener
 * that has just sent its CHALLENGE (fixed nonce, fixed key ring; the seed
 * corpus, made by gen_seeds.c with the same constants, holds a valid
 * HELLO and the frames that follow it).  Frames are taken off the input
 * one by one as the daemon's receiver does, answering the HELLO with its
 * ACK and decoding each payload.  The first 40 bytes also go through
 * frame_hdr_decode() alone.  The input is copied into a buffer of exactly
 * its size so ASan sees any read past the end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "frame.h"
#include "hmac.h"
#include "keyfile.h"
#include "msg.h"
#include "session.h"
#include "wire.h"

/* Keep in step with gen_seeds.c. */
#define FZ_KEYS                                                                \
	"fuzz-shared-secret-0123456789-abc\nfuzz-second-key-abcdefghijkl-0123\n"
#define FZ_LISTENER  "agg-fuzz"
#define FZ_MAX_FRAME 65536u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
count_cb(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	size_t *n = arg;

	(void)h;
	(void)r;
	(*n)++;
	return 0;
}

/* What the receiver does with a verified frame. */
static void
dispatch(struct session *s, const struct session_frame *f)
{
	static struct msg_sweep sw;
	struct msg_ack ack;
	struct msg_bye bye;
	struct wbuf w;
	size_t n = 0;

	switch (f->hdr.type) {
	case FRAME_HELLO:
		ack.kind = MSG_ACK_HELLO;
		ack.seq = f->hdr.seq;
		ack.batch = 0;
		ack.time_ns = 1;
		wbuf_init(&w, 0);
		if (msg_ack_encode(&w, &ack) == 0) {
			struct wbuf out;

			wbuf_init(&out, 0);
			if (session_send(s, FRAME_ACK, 0, 0, w.data, w.len,
			        &out) != 0)
				abort(); /* an open session must send */
			wbuf_free(&out);
		}
		wbuf_free(&w);
		break;
	case FRAME_SWEEP:
		if (msg_sweep_decode(&sw, f->payload, f->hdr.len, count_cb, &n,
		        NULL) == 0 &&
		    n + sw.ndropped != sw.nrecs)
			abort();
		break;
	case FRAME_ACK:
		(void)msg_ack_decode(&ack, f->payload, f->hdr.len, NULL);
		break;
	case FRAME_BYE:
		(void)msg_bye_decode(&bye, f->payload, f->hdr.len, NULL);
		break;
	default:
		if ((f->hdr.flags & FRAME_F_IGNORABLE) == 0)
			abort(); /* unknown types must be ignorable */
		break;
	}
}

/* A listener that has sent its CHALLENGE, as after accepting a peer. */
static void
listener_open(struct session *s, const struct keyring *ring,
    struct hmac_ctx *hm)
{
	struct msg_challenge c;
	struct wbuf w;
	size_t i;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < MSG_NONCE_LEN; i++)
		c.nonce[i] = (uint8_t)(i * 13 + 7);
	c.time_ns = 1718000000000000000ull;
	c.caps = MSG_CAP_SWEEP;
	c.role = MSG_ROLE_AGGREGATOR;
	memcpy(c.name, FZ_LISTENER, sizeof(FZ_LISTENER));
	if (session_init(s, SESSION_LISTENER, ring, hm, FZ_LISTENER,
	        FZ_MAX_FRAME) != 0)
		abort();
	wbuf_init(&w, 0);
	if (session_challenge(s, &c, &w) != 0)
		abort();
	wbuf_free(&w);
}

/* The input as what the peer sent: frame after frame until it is refused
 * or one is incomplete. */
static void
frames_feed(struct session *s, uint8_t *buf, size_t size)
{
	struct lh_err err;
	size_t off = 0;

	for (;;) {
		struct session_frame f;
		size_t need = 0;
		int rc;

		lh_err_clear(&err);
		rc = session_input(s, buf + off, size - off, &f, &need, &err);
		if (rc < 0) {
			if (err.reason[0] == '\0' || s->state != SESSION_CLOSED)
				abort();
			break;
		}
		if (rc == 0) {
			/* Incomplete: it must really be, and the wait
			 * bounded. */
			if (need <= size - off || need > FZ_MAX_FRAME)
				abort();
			break;
		}
		if ((size_t)rc > size - off || (size_t)rc < FRAME_OVERHEAD ||
		    f.payload != buf + off + FRAME_HDR_LEN ||
		    (size_t)rc != FRAME_OVERHEAD + f.hdr.len)
			abort();
		dispatch(s, &f);
		off += (size_t)rc;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hmac_ctx *hm;
	static struct keyring ring;
	struct session s;
	struct frame_hdr h;
	struct lh_err err;
	uint8_t *buf;

	if (hm == NULL) {
		hm = hmac_new();
		if (hm == NULL ||
		    keyring_parse(&ring, FZ_KEYS, strlen(FZ_KEYS), NULL) != 0)
			abort();
	}
	buf = malloc(size > 0 ? size : 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);

	if (size >= FRAME_HDR_LEN) {
		lh_err_clear(&err);
		if (frame_hdr_decode(&h, buf, FZ_MAX_FRAME, &err) < 0 &&
		    err.reason[0] == '\0')
			abort();
	}
	listener_open(&s, &ring, hm);
	frames_feed(&s, buf, size);
	session_clear(&s);
	free(buf);
	return 0;
}
