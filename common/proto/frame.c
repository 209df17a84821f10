/* SPDX-License-Identifier: BSD-2-Clause */
/* The fixed frame header. */
#include <errno.h>
#include <string.h>

#include "err.h"
#include "frame.h"
#include "hmac.h"
#include "wire.h"

static void
put_be64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void
frame_hdr_encode(const struct frame_hdr *h, uint8_t out[FRAME_HDR_LEN])
{
	put_be32(out, FRAME_MAGIC);
	out[4] = h->version;
	out[5] = h->type;
	out[6] = (uint8_t)(h->flags >> 8);
	out[7] = (uint8_t)h->flags;
	put_be32(out + 8, h->len);
	put_be32(out + 12, h->key_id);
	put_be64(out + 16, h->sender_id);
	put_be64(out + 24, h->seq);
	put_be64(out + 32, h->sweep_id);
}

int
frame_hdr_decode(struct frame_hdr *ret, const uint8_t in[FRAME_HDR_LEN],
    size_t max_frame, struct lh_err *err)
{
	uint32_t magic = wire_be32(in);
	struct frame_hdr h;

	if (magic != FRAME_MAGIC)
		return lh_err_set(err, 0, -EBADMSG,
		    "bad magic 0x%08x (not an lharvestd peer)", magic);
	/* Version 1 peers are the ones an operator meets after upgrading
	 * part of a site: say what to do about them. */
	if (in[4] == 1)
		return lh_err_set(err, 0, -EPROTONOSUPPORT,
		    "protocol version 1: upgrade this peer to lharvestd with "
		    "protocol %u",
		    FRAME_VERSION);
	if (in[4] != FRAME_VERSION)
		return lh_err_set(err, 0, -EPROTONOSUPPORT,
		    "protocol version %u, this side speaks %u", in[4],
		    FRAME_VERSION);
	h.version = in[4];
	h.type = in[5];
	h.flags = (uint16_t)((unsigned)in[6] << 8 | in[7]);
	h.len = wire_be32(in + 8);
	h.key_id = wire_be32(in + 12);
	h.sender_id = wire_be64(in + 16);
	h.seq = wire_be64(in + 24);
	h.sweep_id = wire_be64(in + 32);
	if ((h.flags & ~FRAME_F_KNOWN) != 0)
		return lh_err_set(err, 0, -EBADMSG, "unknown flags 0x%04x",
		    h.flags);
	if (h.len > max_frame || max_frame - h.len < FRAME_OVERHEAD)
		return lh_err_set(err, 0, -EMSGSIZE,
		    "frame of %llu bytes, limit %zu",
		    (unsigned long long)h.len + FRAME_OVERHEAD, max_frame);
	*ret = h;
	return 0;
}

const char *
frame_type_name(uint8_t type)
{
	switch (type) {
	case FRAME_CHALLENGE:
		return "CHALLENGE";
	case FRAME_HELLO:
		return "HELLO";
	case FRAME_ACK:
		return "ACK";
	case FRAME_SWEEP:
		return "SWEEP";
	case FRAME_BYE:
		return "BYE";
	default:
		return "unknown";
	}
}

uint64_t
frame_sender_id(const char *name)
{
	uint8_t d[SHA256_LEN];

	if (sha256(name, strlen(name), d) < 0)
		return 0;
	return wire_be64(d);
}
