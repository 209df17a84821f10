/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A frame: 40-byte header, payload, 32-byte HMAC-SHA256.  docs/protocol.md
 * is the specification; this file is its implementation.
 *
 *  off len  field
 *   0   4   magic "LHVD" (0x4C 0x48 0x56 0x44)
 *   4   1   protocol version (2)
 *   5   1   message type
 *   6   2   flags (bit 0: ignorable; all others 0)
 *   8   4   payload length
 *  12   4   key id
 *  16   8   sender id
 *  24   8   sequence number
 *  32   8   sweep id
 *  40   n   payload
 *  40+n 32  HMAC-SHA256
 *
 * All integers big-endian.
 */
#ifndef LH_FRAME_H
#define LH_FRAME_H

#include <stddef.h>
#include <stdint.h>

struct lh_err;

#define FRAME_MAGIC       0x4C485644u /* "LHVD" */
#define FRAME_VERSION     2
#define FRAME_HDR_LEN     40
#define FRAME_MAC_LEN     32
#define FRAME_OVERHEAD    (FRAME_HDR_LEN + FRAME_MAC_LEN)
#define FRAME_MAX_DEFAULT ((size_t)16 << 20) /* whole frame, bytes */
#define FRAME_MAX_LIMIT   ((size_t)256 << 20)
#define FRAME_MIN_MAX     ((size_t)4096) /* smallest max_frame allowed */

/* Frames a receiver that does not know their type may skip (after their
 * MAC and sequence number are checked) instead of closing. */
#define FRAME_F_IGNORABLE 0x0001u
#define FRAME_F_KNOWN     FRAME_F_IGNORABLE

enum frame_type {
	FRAME_CHALLENGE = 1, /* listener -> connector, on accept */
	FRAME_HELLO = 2, /* connector -> listener, signed over the CHALLENGE */
	FRAME_ACK = 3,   /* either way */
	FRAME_SWEEP = 4, /* one server's per-(fs, NID) deltas */
	FRAME_BYE = 5,   /* either way, before a clean close */
	/* 6-127 are reserved for later messages (per-job deltas, relayed
	 * subsets): they are sent with FRAME_F_IGNORABLE so that an older
	 * receiver skips them instead of dropping the peer. */
};

struct frame_hdr {
	uint8_t version;
	uint8_t type;
	uint16_t flags;
	uint32_t len; /* payload only */
	uint32_t key_id;
	uint64_t sender_id;
	uint64_t seq;
	uint64_t sweep_id;
};

/* Write the 40 header bytes. */
void frame_hdr_encode(const struct frame_hdr *h, uint8_t out[FRAME_HDR_LEN]);

/*
 * Read and check the 40 header bytes, before any payload is buffered:
 * magic (-EBADMSG), version (-EPROTONOSUPPORT; version 1 with a line that
 * says to upgrade the peer), unknown flags (-EBADMSG),
 * and FRAME_OVERHEAD + len <= max_frame (-EMSGSIZE).
 */
int frame_hdr_decode(struct frame_hdr *h, const uint8_t in[FRAME_HDR_LEN],
    size_t max_frame, struct lh_err *err);

const char *frame_type_name(uint8_t type);

/* Sender id of a name: the first 8 bytes of SHA-256(name), big-endian. */
uint64_t frame_sender_id(const char *name);

#endif
