/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The byte buffers under every message: each writer against the bytes it
 * must produce, each reader against short and malformed input (which must
 * be refused without consuming anything), varint and zigzag edge values,
 * and the sticky failure of a buffer that hit its size limit.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "wire.h"

/* w holds exactly the n bytes of want. */
static void
assert_bytes(const struct wbuf *w, const uint8_t *want, size_t n)
{
	size_t i;

	ck_assert_int_eq(wbuf_status(w), 0);
	ck_assert_uint_eq(w->len, n);
	for (i = 0; i < n; i++)
		ck_assert_msg(w->data[i] == want[i],
		    "byte %zu is 0x%02x, expected 0x%02x", i, w->data[i],
		    want[i]);
}

START_TEST(fixed_width)
{
	static const uint8_t want[] = {0xab, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef,
	    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 'x', 'y'};
	struct wbuf w;
	struct rbuf r;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	char raw[2];

	wbuf_init(&w, 0);
	ck_assert_int_eq(wbuf_put_u8(&w, 0xab), 0);
	ck_assert_int_eq(wbuf_put_be16(&w, 0x1234), 0);
	ck_assert_int_eq(wbuf_put_be32(&w, 0xdeadbeefu), 0);
	ck_assert_int_eq(wbuf_put_be64(&w, 0x0102030405060708ull), 0);
	ck_assert_int_eq(wbuf_put(&w, "xy", 2), 0);
	assert_bytes(&w, want, sizeof(want));
	ck_assert_uint_eq(wire_be32(w.data + 3), 0xdeadbeefu);
	ck_assert_uint_eq(wire_be64(w.data + 7), 0x0102030405060708ull);

	rbuf_init(&r, w.data, w.len);
	ck_assert_int_eq(rbuf_get_u8(&r, &u8), 0);
	ck_assert_uint_eq(u8, 0xab);
	ck_assert_int_eq(rbuf_get_be16(&r, &u16), 0);
	ck_assert_uint_eq(u16, 0x1234);
	ck_assert_int_eq(rbuf_get_be32(&r, &u32), 0);
	ck_assert_uint_eq(u32, 0xdeadbeefu);
	ck_assert_int_eq(rbuf_get_be64(&r, &u64), 0);
	ck_assert_uint_eq(u64, 0x0102030405060708ull);
	ck_assert_int_eq(rbuf_get(&r, raw, 2), 0);
	ck_assert(raw[0] == 'x' && raw[1] == 'y');
	ck_assert_uint_eq(r.len, 0);
	ck_assert_int_eq(rbuf_get_u8(&r, &u8), -1);
	ck_assert_int_eq(rbuf_skip(&r, 0), 0);
	ck_assert_int_eq(rbuf_skip(&r, 1), -1);
	wbuf_free(&w);
}
END_TEST

/* Every fixed-width reader on every too-short input: -1, nothing consumed,
 * the output untouched. */
START_TEST(short_reads)
{
	static const uint8_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	size_t n;

	for (n = 0; n < sizeof(in); n++) {
		struct rbuf r;
		uint16_t u16 = 0x5a5a;
		uint32_t u32 = 0x5a5a5a5a;
		uint64_t u64 = 0x5a5a5a5a5a5a5a5aull;
		uint8_t raw[8] = {0};

		rbuf_init(&r, in, n);
		if (n < 2) {
			ck_assert_int_eq(rbuf_get_be16(&r, &u16), -1);
			ck_assert_uint_eq(u16, 0x5a5a);
		}
		if (n < 4) {
			ck_assert_int_eq(rbuf_get_be32(&r, &u32), -1);
			ck_assert_uint_eq(u32, 0x5a5a5a5a);
		}
		ck_assert_int_eq(rbuf_get_be64(&r, &u64), -1);
		ck_assert_uint_eq(u64, 0x5a5a5a5a5a5a5a5aull);
		ck_assert_int_eq(rbuf_get(&r, raw, n + 1), -1);
		ck_assert_int_eq(rbuf_skip(&r, n + 1), -1);
		ck_assert_int_eq(rbuf_skip(&r, SIZE_MAX), -1);
		ck_assert_uint_eq(r.len, n);
		ck_assert_ptr_eq(r.p, in);
	}
}
END_TEST

struct varint_case {
	uint64_t v;
	size_t n;
	uint8_t bytes[10];
};

static const struct varint_case varint_cases[] = {
    {0, 1, {0x00}},
    {1, 1, {0x01}},
    {127, 1, {0x7f}},
    {128, 2, {0x80, 0x01}},
    {300, 2, {0xac, 0x02}},
    {16383, 2, {0xff, 0x7f}},
    {16384, 3, {0x80, 0x80, 0x01}},
    {UINT32_MAX, 5, {0xff, 0xff, 0xff, 0xff, 0x0f}},
    {(uint64_t)1 << 63, 10,
        {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
    {UINT64_MAX, 10,
        {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
};

START_TEST(varint_edges)
{
	const struct varint_case *c = &varint_cases[_i];
	struct wbuf w;
	struct rbuf r;
	uint64_t v = 0;
	size_t cut;

	wbuf_init(&w, 0);
	ck_assert_int_eq(wbuf_put_varint(&w, c->v), 0);
	assert_bytes(&w, c->bytes, c->n);

	rbuf_init(&r, w.data, w.len);
	ck_assert_int_eq(rbuf_get_varint(&r, &v), 0);
	ck_assert_uint_eq(v, c->v);
	ck_assert_uint_eq(r.len, 0);

	/* Cut short anywhere: refused, nothing consumed. */
	for (cut = 0; cut < c->n; cut++) {
		v = 42;
		rbuf_init(&r, c->bytes, cut);
		ck_assert_int_eq(rbuf_get_varint(&r, &v), -1);
		ck_assert_uint_eq(v, 42);
		ck_assert_uint_eq(r.len, cut);
		ck_assert_ptr_eq(r.p, c->bytes);
	}
	wbuf_free(&w);
}
END_TEST

struct zigzag_case {
	int64_t v;
	uint64_t z; /* the varint it is written as */
};

static const struct zigzag_case zigzag_cases[] = {
    {0, 0},
    {-1, 1},
    {1, 2},
    {-64, 127},
    {64, 128},
    {INT64_MAX, UINT64_MAX - 1},
    {INT64_MIN, UINT64_MAX},
    {INT64_MIN + 1, UINT64_MAX - 2},
};

START_TEST(zigzag_edges)
{
	const struct zigzag_case *c = &zigzag_cases[_i];
	struct wbuf w, want;
	struct rbuf r;
	int64_t v = 0;

	wbuf_init(&w, 0);
	wbuf_init(&want, 0);
	ck_assert_int_eq(wbuf_put_zigzag(&w, c->v), 0);
	ck_assert_int_eq(wbuf_put_varint(&want, c->z), 0);
	assert_bytes(&w, want.data, want.len);
	rbuf_init(&r, w.data, w.len);
	ck_assert_int_eq(rbuf_get_zigzag(&r, &v), 0);
	ck_assert_msg(v == c->v, "zigzag %lld read back as %lld",
	    (long long)c->v, (long long)v);
	ck_assert_uint_eq(r.len, 0);
	wbuf_free(&w);
	wbuf_free(&want);
}
END_TEST

struct bad_varint {
	const char *what;
	size_t n;
	uint8_t bytes[12];
};

static const struct bad_varint bad_varints[] = {
    {"11 bytes", 11,
        {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}},
    {"11 bytes, value 1", 11,
        {0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}},
    {"12 bytes", 12,
        {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0x01}},
    {"10th byte 2", 10,
        {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}},
    {"10th byte 0x7f", 10,
        {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}},
    {"10th byte continues", 10,
        {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81}},
    {"unterminated", 3, {0x80, 0x80, 0x80}},
    /* Non-minimal: a second spelling of a number (issue 15, item 14). */
    {"0 as 80 00", 2, {0x80, 0x00}},
    {"1 as 81 00", 2, {0x81, 0x00}},
    {"127 as ff 80 00", 3, {0xff, 0x80, 0x00}},
    {"10 bytes ending 00", 10,
        {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}},
};

START_TEST(varint_overlong)
{
	const struct bad_varint *c = &bad_varints[_i];
	struct rbuf r;
	uint64_t v = 42;
	int64_t s = 42;

	rbuf_init(&r, c->bytes, c->n);
	ck_assert_msg(rbuf_get_varint(&r, &v) == -1, "%s accepted", c->what);
	ck_assert_uint_eq(v, 42);
	ck_assert_uint_eq(r.len, c->n);
	ck_assert_ptr_eq(r.p, c->bytes);
	ck_assert_msg(rbuf_get_zigzag(&r, &s) == -1, "%s accepted (zigzag)",
	    c->what);
	ck_assert_int_eq(s, 42);
	ck_assert_uint_eq(r.len, c->n);
}
END_TEST

START_TEST(varint_sequence)
{
	static const uint64_t vals[] = {0, 1, 127, 128, 255, 256, 65535,
	    (uint64_t)1 << 32, (uint64_t)1 << 56, UINT64_MAX};
	struct wbuf w;
	struct rbuf r;
	uint64_t v;
	size_t i;

	wbuf_init(&w, 0);
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		(void)wbuf_put_varint(&w, vals[i]);
	ck_assert_int_eq(wbuf_status(&w), 0);
	rbuf_init(&r, w.data, w.len);
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		ck_assert_int_eq(rbuf_get_varint(&r, &v), 0);
		ck_assert_uint_eq(v, vals[i]);
	}
	ck_assert_uint_eq(r.len, 0);
	wbuf_free(&w);
}
END_TEST

START_TEST(max_limit)
{
	struct wbuf w;

	wbuf_init(&w, 6);
	ck_assert_int_eq(wbuf_put_be32(&w, 1), 0);
	ck_assert_int_eq(wbuf_put_u8(&w, 2), 0);
	ck_assert_int_eq(wbuf_put_be16(&w, 3), -EMSGSIZE);
	ck_assert(w.failed);
	ck_assert_int_eq(wbuf_status(&w), -EMSGSIZE);
	/* Sticky: even a write that would fit fails now. */
	ck_assert_int_lt(wbuf_put_u8(&w, 4), 0);
	ck_assert_int_lt(wbuf_put_varint(&w, 0), 0);
	ck_assert_int_lt(wbuf_put(&w, "", 0), 0);
	ck_assert_int_eq(wbuf_status(&w), -EMSGSIZE);
	ck_assert(w.len <= 6);
	wbuf_free(&w);

	/* Exactly max is fine; one more byte is not. */
	wbuf_init(&w, 8);
	ck_assert_int_eq(wbuf_put_be64(&w, 1), 0);
	ck_assert_int_eq(wbuf_status(&w), 0);
	ck_assert_int_eq(wbuf_put_u8(&w, 0), -EMSGSIZE);
	ck_assert_int_eq(wbuf_status(&w), -EMSGSIZE);
	wbuf_free(&w);

	/* A large write in one go against the limit. */
	{
		static uint8_t big[5000];

		wbuf_init(&w, 4096);
		ck_assert_int_eq(wbuf_put(&w, big, sizeof(big)), -EMSGSIZE);
		ck_assert(w.failed);
		wbuf_free(&w);
	}

	/* No limit: grows well past the first allocation. */
	{
		size_t i;

		wbuf_init(&w, 0);
		for (i = 0; i < 100000; i++)
			(void)wbuf_put_be32(&w, (uint32_t)i);
		ck_assert_int_eq(wbuf_status(&w), 0);
		ck_assert_uint_eq(w.len, 400000);
		ck_assert_uint_eq(wire_be32(w.data + 4 * 99999), 99999);
		wbuf_free(&w);
	}
}
END_TEST

START_TEST(reset_and_patch)
{
	static const uint8_t want[] = {0, 0, 0, 9, 'a', 'b'};
	struct wbuf w;

	wbuf_init(&w, 0);
	ck_assert_int_eq(wbuf_put_be32(&w, 0), 0);
	ck_assert_int_eq(wbuf_put(&w, "ab", 2), 0);
	ck_assert_int_eq(wbuf_patch_be32(&w, 0, 9), 0);
	assert_bytes(&w, want, sizeof(want));
	ck_assert_int_lt(wbuf_patch_be32(&w, 3, 9), 0); /* past the end */
	ck_assert_int_lt(wbuf_patch_be32(&w, SIZE_MAX - 1, 9), 0);
	wbuf_reset(&w);
	ck_assert_uint_eq(w.len, 0);
	ck_assert_int_eq(wbuf_put_u8(&w, 7), 0);
	ck_assert_uint_eq(w.len, 1);
	ck_assert_uint_eq(w.data[0], 7);
	wbuf_free(&w);
	/* Free, then use again. */
	wbuf_init(&w, 0);
	ck_assert_int_eq(wbuf_put_u8(&w, 8), 0);
	wbuf_free(&w);
}
END_TEST

/* Two buffers exchange their bytes, each keeping its max; one that holds
 * more than the other's max allows, or has failed, is refused whole. */
START_TEST(swap)
{
	struct wbuf a, b, big;

	wbuf_init(&a, 8);
	wbuf_init(&b, 0);
	wbuf_init(&big, 0);
	ck_assert_int_eq(wbuf_put(&a, "ab", 2), 0);
	ck_assert_int_eq(wbuf_put(&b, "xyz", 3), 0);
	ck_assert_int_eq(wbuf_put(&big, "0123456789", 10), 0);
	ck_assert_int_eq(wbuf_swap(&a, &b), 0);
	ck_assert_uint_eq(a.len, 3);
	ck_assert(memcmp(a.data, "xyz", 3) == 0);
	ck_assert_uint_eq(a.max, 8);
	ck_assert_uint_eq(b.len, 2);
	ck_assert(memcmp(b.data, "ab", 2) == 0);
	ck_assert_uint_eq(b.max, 0);
	ck_assert_int_eq(wbuf_swap(&a, &big), -EMSGSIZE);
	ck_assert_uint_eq(a.len, 3);
	ck_assert_uint_eq(big.len, 10);
	ck_assert_int_eq(wbuf_put(&a, "0123456789", 10), -EMSGSIZE);
	ck_assert_int_eq(wbuf_swap(&b, &a), -EMSGSIZE);
	ck_assert_uint_eq(b.len, 2);
	wbuf_free(&a);
	wbuf_free(&b);
	wbuf_free(&big);
}
END_TEST

/* Room made, filled in place and counted: the bytes wbuf_put_varint()
 * writes; a buffer at its max refuses the room and stays failed. */
START_TEST(room_and_store)
{
	static const uint64_t vals[] = {0, 1, 127, 128, 16383, 16384,
	    (uint64_t)1 << 35, UINT64_MAX >> 1, UINT64_MAX};
	struct wbuf a, b, small;
	uint8_t *p, *start;
	size_t i;

	wbuf_init(&a, 0);
	wbuf_init(&b, 0);
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		ck_assert_int_eq(wbuf_put_varint(&a, vals[i]), 0);
		start = p = wbuf_room(&b, VARINT_MAX);
		ck_assert_ptr_nonnull(p);
		p = varint_store(p, vals[i]);
		wbuf_advance(&b, (size_t)(p - start));
	}
	ck_assert_uint_eq(a.len, b.len);
	ck_assert(memcmp(a.data, b.data, a.len) == 0);
	wbuf_init(&small, 4);
	ck_assert_ptr_null(wbuf_room(&small, VARINT_MAX));
	ck_assert_int_eq(wbuf_status(&small), -EMSGSIZE);
	wbuf_advance(&small, 2);
	ck_assert_uint_eq(small.len, 0);
	wbuf_free(&a);
	wbuf_free(&b);
	wbuf_free(&small);
}
END_TEST

/* The bytes of LEB128, the plain way. */
static size_t
leb128(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v != 0);
	return n;
}

/* varint_store() writes LEB128 whatever the value's length: each side
 * of every power of two, and 200,000 values of random lengths; it
 * writes nothing past VARINT_MAX bytes, and reads back. */
START_TEST(varint_store_is_leb128)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned k, i;

	for (i = 0; i < 200000 + 3 * 65; i++) {
		uint8_t got[VARINT_MAX + 8], want[VARINT_MAX];
		uint64_t v, back = 0;
		size_t n, len;
		struct rbuf r;
		bool past = false;

		if (i < 3 * 65) {
			k = i / 3;
			v = (k == 64 ? 0 : (uint64_t)1 << k) + (i % 3) - 1;
		} else {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v = x >> (x % 64);
		}
		memset(got, 0xa5, sizeof(got));
		len = (size_t)(varint_store(got, v) - got);
		n = leb128(want, v);
		for (k = VARINT_MAX; k < sizeof(got); k++)
			past = past || got[k] != 0xa5;
		rbuf_init(&r, got, len);
		if (len != n || memcmp(got, want, n) != 0 || past ||
		    rbuf_get_varint(&r, &back) != 0 || back != v)
			ck_abort_msg("%llu: %zu bytes, not %zu, read back %llu",
			    (unsigned long long)v, len, n,
			    (unsigned long long)back);
	}
}
END_TEST

START_TEST(str8)
{
	char s255[256], s256[257], out[256], small[4];
	struct wbuf w;
	struct rbuf r;

	memset(s255, 'a', 255);
	s255[255] = '\0';
	memset(s256, 'b', 256);
	s256[256] = '\0';

	wbuf_init(&w, 0);
	ck_assert_int_eq(wbuf_put_str8(&w, ""), 0);
	ck_assert_int_eq(wbuf_put_str8(&w, "abc"), 0);
	ck_assert_int_eq(wbuf_put_str8(&w, s255), 0);
	ck_assert_uint_eq(w.len, 1 + 4 + 256);
	ck_assert_uint_eq(w.data[0], 0);
	ck_assert_uint_eq(w.data[1], 3);
	ck_assert_uint_eq(w.data[5], 255);

	rbuf_init(&r, w.data, w.len);
	ck_assert_int_eq(rbuf_get_str8(&r, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
	/* "abc" does not fit 3 bytes (no room for the NUL): not consumed. */
	ck_assert_int_eq(rbuf_get_str8(&r, small, 3), -1);
	ck_assert_uint_eq(r.len, 4 + 256);
	ck_assert_int_eq(rbuf_get_str8(&r, small, sizeof(small)), 0);
	ck_assert_str_eq(small, "abc");
	ck_assert_int_eq(rbuf_get_str8(&r, out, sizeof(out)), 0);
	ck_assert_str_eq(out, s255);
	ck_assert_uint_eq(r.len, 0);

	/* 256 bytes cannot be written with a u8 length. */
	ck_assert_int_lt(wbuf_put_str8(&w, s256), 0);
	ck_assert(w.failed);
	ck_assert_int_lt(wbuf_status(&w), 0);
	wbuf_free(&w);
}
END_TEST

struct bad_str8 {
	const char *what;
	size_t n;
	uint8_t bytes[8];
};

static const struct bad_str8 bad_str8s[] = {
    {"empty input", 0, {0}},
    {"length past the end", 3, {5, 'a', 'b'}},
    {"NUL inside", 4, {3, 'a', 0, 'b'}},
    {"NUL at the end", 3, {2, 'a', 0}},
    {"NUL only", 2, {1, 0}},
};

START_TEST(str8_bad)
{
	const struct bad_str8 *c = &bad_str8s[_i];
	char out[64];
	struct rbuf r;

	rbuf_init(&r, c->bytes, c->n);
	ck_assert_msg(rbuf_get_str8(&r, out, sizeof(out)) == -1, "%s accepted",
	    c->what);
	ck_assert_uint_eq(r.len, c->n);
	ck_assert_ptr_eq(r.p, c->bytes);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, fixed_width);
	tcase_add_test(tc, short_reads);
	tcase_add_loop_test(tc, varint_edges, 0,
	    sizeof(varint_cases) / sizeof(varint_cases[0]));
	tcase_add_loop_test(tc, zigzag_edges, 0,
	    sizeof(zigzag_cases) / sizeof(zigzag_cases[0]));
	tcase_add_loop_test(tc, varint_overlong, 0,
	    sizeof(bad_varints) / sizeof(bad_varints[0]));
	tcase_add_test(tc, varint_sequence);
	tcase_add_test(tc, max_limit);
	tcase_add_test(tc, reset_and_patch);
	tcase_add_test(tc, str8);
	tcase_add_test(tc, swap);
	tcase_add_test(tc, room_and_store);
	tcase_add_test(tc, varint_store_is_leb128);
	tcase_add_loop_test(tc, str8_bad, 0,
	    sizeof(bad_str8s) / sizeof(bad_str8s[0]));
	suite_add_tcase(s, tc);
	return tu_run(s);
}
