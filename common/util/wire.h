/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bounds-checked byte buffers for the wire format.  struct wbuf grows as
 * it is written (big-endian integers, LEB128 varints, length-prefixed
 * strings); struct rbuf is a read-only view that refuses to read past its
 * end.  Every field of every message is written through these: never a
 * struct on the wire.
 */
#ifndef LH_WIRE_H
#define LH_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct wbuf {
	uint8_t *data;
	size_t len;
	size_t cap;
	size_t max;  /* writes past this fail (-EMSGSIZE); 0 = no limit */
	bool failed; /* a write failed: the buffer is unusable */
	int error;   /* the first failure: -ENOMEM or -EMSGSIZE */
};

struct rbuf {
	const uint8_t *p;
	size_t len; /* bytes left */
};

/* An empty buffer that will not grow past max bytes (0: no limit). */
void wbuf_init(struct wbuf *w, size_t max);
/* Free the storage; w can be initialised again. */
void wbuf_free(struct wbuf *w);
/* Forget the contents, keep the storage. */
void wbuf_reset(struct wbuf *w);

/*
 * Writers return 0, or -ENOMEM/-EMSGSIZE, after which w->failed is set and
 * every later write fails too, so a message can be written as a chain of
 * calls and checked once (wbuf_status).
 */
int wbuf_put(struct wbuf *w, const void *p, size_t n);
int wbuf_put_u8(struct wbuf *w, uint8_t v);
int wbuf_put_be16(struct wbuf *w, uint16_t v);
int wbuf_put_be32(struct wbuf *w, uint32_t v);
int wbuf_put_be64(struct wbuf *w, uint64_t v);
int wbuf_put_varint(struct wbuf *w, uint64_t v); /* LEB128, 1-10 bytes */
int wbuf_put_zigzag(struct wbuf *w, int64_t v);  /* signed varint */
/* A u8 length, then the bytes (at most 255). */
int wbuf_put_str8(struct wbuf *w, const char *s);
/* Overwrite 4 bytes at off (a length written after the fact). */
int wbuf_patch_be32(struct wbuf *w, size_t off, uint32_t v);
/* 0, or the error of the first failed write. */
int wbuf_status(const struct wbuf *w);

/*
 * For an encoder that writes many small fields in a row: room for up to n
 * bytes at the end of w, to be filled through the pointer returned and
 * then counted with wbuf_advance(w, used) (used <= n), or NULL when the
 * write fails (w->failed set, as any writer's).  varint_store() is
 * wbuf_put_varint() into such room.
 */
uint8_t *wbuf_room(struct wbuf *w, size_t n);
void wbuf_advance(struct wbuf *w, size_t used);

#define VARINT_MAX ((size_t)10) /* bytes of the longest LEB128 of 64 bits */

/* n bytes of src at p (room for them made); returns p past them. */
static inline uint8_t *
bytes_store(uint8_t *p, const void *src, size_t n)
{
	memcpy(p, src, n);
	return p + n;
}

/* v as LEB128 at p (VARINT_MAX bytes of room); returns p past it. */
static inline uint8_t *
varint_store(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Exchange what a and b hold (their storage: nothing is copied); each
 * keeps its own max.  Returns 0, or -EMSGSIZE when either has failed or
 * holds more than the other's max allows (nothing exchanged). */
int wbuf_swap(struct wbuf *a, struct wbuf *b);

void rbuf_init(struct rbuf *r, const void *p, size_t len);

/* Readers return 0, or -1 when the buffer is too short or the value is
 * malformed (an over-long or non-minimal varint: a last byte of 0 after
 * others), consuming nothing in that case. */
int rbuf_get(struct rbuf *r, void *out, size_t n);
int rbuf_skip(struct rbuf *r, size_t n);
int rbuf_get_u8(struct rbuf *r, uint8_t *v);
int rbuf_get_be16(struct rbuf *r, uint16_t *v);
int rbuf_get_be32(struct rbuf *r, uint32_t *v);
int rbuf_get_be64(struct rbuf *r, uint64_t *v);
int rbuf_get_varint(struct rbuf *r, uint64_t *v);
int rbuf_get_zigzag(struct rbuf *r, int64_t *v);
/* A u8-length string into out (size bytes, NUL added); -1 if it does not
 * fit or holds a NUL byte. */
int rbuf_get_str8(struct rbuf *r, char *out, size_t size);

/* Big-endian helpers on raw memory. */
uint32_t wire_be32(const uint8_t *p);
uint64_t wire_be64(const uint8_t *p);

#endif
