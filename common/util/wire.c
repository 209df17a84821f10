/* SPDX-License-Identifier: BSD-2-Clause */
/* Bounds-checked big-endian and varint encoding. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "wire.h"

void
wbuf_init(struct wbuf *w, size_t max)
{
	w->data = NULL;
	w->len = 0;
	w->cap = 0;
	w->max = max;
	w->failed = false;
	w->error = 0;
}

void
wbuf_free(struct wbuf *w)
{
	free(w->data);
	wbuf_init(w, w->max);
}

void
wbuf_reset(struct wbuf *w)
{
	w->len = 0;
	w->failed = false;
	w->error = 0;
}

static int
wbuf_fail(struct wbuf *w, int error)
{
	if (!w->failed) {
		w->failed = true;
		w->error = error;
	}
	return w->error;
}

static int
wbuf_reserve(struct wbuf *w, size_t n)
{
	uint8_t *d;
	size_t cap;

	if (w->failed)
		return w->error;
	if (n > SIZE_MAX - w->len || (w->max != 0 && w->len + n > w->max))
		return wbuf_fail(w, -EMSGSIZE);
	if (w->len + n <= w->cap)
		return 0;
	cap = array_capacity(w->cap < 256 ? 256 : w->cap, w->len + n);
	if (w->max != 0 && cap > w->max)
		cap = w->max;
	d = array_resize(w->data, &w->cap, cap, 1);
	if (d == NULL)
		return wbuf_fail(w, -ENOMEM);
	w->data = d;
	return 0;
}

uint8_t *
wbuf_room(struct wbuf *w, size_t n)
{
	return wbuf_reserve(w, n) < 0 ? NULL : w->data + w->len;
}

void
wbuf_advance(struct wbuf *w, size_t used)
{
	/* Only what wbuf_room() made room for. */
	if (!w->failed && used <= w->cap - w->len)
		w->len += used;
}

int
wbuf_swap(struct wbuf *a, struct wbuf *b)
{
	struct wbuf t = *a;

	if (a->failed || b->failed || (a->max != 0 && b->len > a->max) ||
	    (b->max != 0 && a->len > b->max))
		return -EMSGSIZE;
	a->data = b->data;
	a->len = b->len;
	a->cap = b->cap;
	b->data = t.data;
	b->len = t.len;
	b->cap = t.cap;
	return 0;
}

int
wbuf_put(struct wbuf *w, const void *p, size_t n)
{
	int rc = wbuf_reserve(w, n);

	if (rc < 0)
		return rc;
	if (n > 0)
		memcpy(w->data + w->len, p, n);
	w->len += n;
	return 0;
}

int
wbuf_put_u8(struct wbuf *w, uint8_t v)
{
	/* Room already there (cap never exceeds max): no call, no copy.
	 * Encoders write millions of these a sweep. */
	if (!w->failed && w->len < w->cap) {
		w->data[w->len++] = v;
		return 0;
	}
	return wbuf_put(w, &v, 1);
}

int
wbuf_put_be16(struct wbuf *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	return wbuf_put(w, b, sizeof(b));
}

int
wbuf_put_be32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16),
	    (uint8_t)(v >> 8), (uint8_t)v};

	return wbuf_put(w, b, sizeof(b));
}

int
wbuf_put_be64(struct wbuf *w, uint64_t v)
{
	uint8_t b[8];
	int i;

	for (i = 7; i >= 0; i--) {
		b[i] = (uint8_t)v;
		v >>= 8;
	}
	return wbuf_put(w, b, sizeof(b));
}

int
wbuf_put_varint(struct wbuf *w, uint64_t v)
{
	uint8_t b[VARINT_MAX];

	/* Room for the longest already there: written in place, as
	 * wbuf_put_u8() does. */
	if (!w->failed && w->cap - w->len >= sizeof(b)) {
		uint8_t *p = w->data + w->len;

		w->len += (size_t)(varint_store(p, v) - p);
		return 0;
	}
	return wbuf_put(w, b, (size_t)(varint_store(b, v) - b));
}

int
wbuf_put_zigzag(struct wbuf *w, int64_t v)
{
	uint64_t u = (uint64_t)v;

	return wbuf_put_varint(w, (u << 1) ^ (v < 0 ? UINT64_MAX : 0));
}

int
wbuf_put_str8(struct wbuf *w, const char *s)
{
	size_t n = strlen(s);
	int rc;

	if (n > 255)
		return wbuf_fail(w, -EMSGSIZE);
	rc = wbuf_put_u8(w, (uint8_t)n);
	return rc < 0 ? rc : wbuf_put(w, s, n);
}

int
wbuf_patch_be32(struct wbuf *w, size_t off, uint32_t v)
{
	if (w->failed || off > w->len || w->len - off < 4)
		return -EINVAL;
	w->data[off] = (uint8_t)(v >> 24);
	w->data[off + 1] = (uint8_t)(v >> 16);
	w->data[off + 2] = (uint8_t)(v >> 8);
	w->data[off + 3] = (uint8_t)v;
	return 0;
}

int
wbuf_status(const struct wbuf *w)
{
	return w->failed ? w->error : 0;
}

void
rbuf_init(struct rbuf *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
}

int
rbuf_get(struct rbuf *r, void *out, size_t n)
{
	if (r->len < n)
		return -1;
	if (n > 0)
		memcpy(out, r->p, n);
	r->p += n;
	r->len -= n;
	return 0;
}

int
rbuf_skip(struct rbuf *r, size_t n)
{
	if (r->len < n)
		return -1;
	r->p += n;
	r->len -= n;
	return 0;
}

int
rbuf_get_u8(struct rbuf *r, uint8_t *v)
{
	return rbuf_get(r, v, 1);
}

int
rbuf_get_be16(struct rbuf *r, uint16_t *v)
{
	if (r->len < 2)
		return -1;
	*v = (uint16_t)((unsigned)r->p[0] << 8 | r->p[1]);
	r->p += 2;
	r->len -= 2;
	return 0;
}

uint32_t
wire_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

uint64_t
wire_be64(const uint8_t *p)
{
	return (uint64_t)wire_be32(p) << 32 | wire_be32(p + 4);
}

int
rbuf_get_be32(struct rbuf *r, uint32_t *v)
{
	if (r->len < 4)
		return -1;
	*v = wire_be32(r->p);
	r->p += 4;
	r->len -= 4;
	return 0;
}

int
rbuf_get_be64(struct rbuf *r, uint64_t *v)
{
	if (r->len < 8)
		return -1;
	*v = wire_be64(r->p);
	r->p += 8;
	r->len -= 8;
	return 0;
}

int
rbuf_get_varint(struct rbuf *r, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	/* At most 10 bytes, and the 10th may only carry the top bit. */
	for (i = 0; i < 10 && i < r->len; i++) {
		uint8_t b = r->p[i];

		if (i == 9 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if ((b & 0x80) == 0) {
			/* A last byte of 0 after others adds nothing: a second
			 * spelling of the same number (80 00 for 0), which the
			 * format does not allow, so that every value has one
			 * encoding. */
			if (b == 0 && i > 0)
				return -1;
			*v = x;
			r->p += i + 1;
			r->len -= i + 1;
			return 0;
		}
	}
	return -1;
}

int
rbuf_get_zigzag(struct rbuf *r, int64_t *v)
{
	uint64_t u;

	if (rbuf_get_varint(r, &u) < 0)
		return -1;
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return 0;
}

int
rbuf_get_str8(struct rbuf *r, char *out, size_t size)
{
	uint8_t n;

	if (r->len < 1)
		return -1;
	n = r->p[0];
	if ((size_t)n + 1 > size || r->len < (size_t)n + 1 ||
	    memchr(r->p + 1, '\0', n) != NULL)
		return -1;
	memcpy(out, r->p + 1, n);
	out[n] = '\0';
	r->p += (size_t)n + 1;
	r->len -= (size_t)n + 1;
	return 0;
}
