/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * HMAC-SHA256 against the RFC 4231 test vectors (cases 1-7), with the
 * message given whole and split into parts at every offset; SHA-256
 * against FIPS 180-2's "abc"; the constant-time comparison.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmac.h"
#include "testutil.h"

struct rfc4231_case {
	int tc;
	const char *key;  /* hex */
	const char *data; /* hex, or text when data_text */
	int data_text;
	const char *mac; /* hex; test case 5 compares 16 bytes only */
};

#define AA20  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define AA131 AA20 AA20 AA20 AA20 AA20 AA20 "aaaaaaaaaaaaaaaaaaaaaa"

static const struct rfc4231_case cases[] = {
    {1, "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "Hi There", 1,
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
    {2, "4a656665", "what do ya want for nothing?", 1,
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
    {3, AA20,
        "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
        "dddddddddddddddddddddddddddddddddddd",
        0, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
    {4, "0102030405060708090a0b0c0d0e0f10111213141516171819",
        "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
        "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
        0, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
    {5, "0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c", "Test With Truncation", 1,
        "a3b6167473100ee06e0c796c2955552b"},
    {6, AA131, "Test Using Larger Than Block-Size Key - Hash Key First", 1,
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
    {7, AA131,
        "This is a test using a larger than block-size key and a larger "
        "than block-size data. The key needs to be hashed before being "
        "used by the HMAC algorithm.",
        1, "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
};

static unsigned
nibble(char c)
{
	const char *digits = "0123456789abcdef";
	const char *p = strchr(digits, c);

	ck_assert_msg(c != '\0' && p != NULL, "bad hex digit %c", c);
	return (unsigned)(p - digits);
}

static size_t
unhex(const char *hex, uint8_t *out, size_t size)
{
	size_t n = strlen(hex) / 2, i;

	ck_assert_uint_le(n, size);
	for (i = 0; i < n; i++)
		out[i] =
		    (uint8_t)(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
	return n;
}

static void
assert_mac(int tc, const char *how, const uint8_t *got, const uint8_t *want,
    size_t n)
{
	char g[2 * HMAC_LEN + 1];
	size_t i;

	for (i = 0; i < n; i++)
		(void)snprintf(g + 2 * i, 3, "%02x", got[i]);
	ck_assert_msg(memcmp(got, want, n) == 0,
	    "RFC 4231 case %d (%s): got %s", tc, how, g);
}

START_TEST(rfc4231)
{
	const struct rfc4231_case *c = &cases[_i];
	uint8_t key[256], data[256], want[HMAC_LEN], out[HMAC_LEN];
	size_t keylen, datalen, wantlen, a, b;
	struct hmac_ctx *h = hmac_new();
	struct hmac_part parts[4];

	ck_assert_ptr_nonnull(h);
	keylen = unhex(c->key, key, sizeof(key));
	if (c->data_text) {
		datalen = strlen(c->data);
		memcpy(data, c->data, datalen);
	} else {
		datalen = unhex(c->data, data, sizeof(data));
	}
	wantlen = unhex(c->mac, want, sizeof(want));

	/* Whole. */
	parts[0].p = data;
	parts[0].n = datalen;
	ck_assert_int_eq(hmac_sha256(h, key, keylen, parts, 1, out), 0);
	assert_mac(c->tc, "one part", out, want, wantlen);

	/* In two parts, cut at every offset (empty parts included). */
	for (a = 0; a <= datalen; a++) {
		parts[0].p = data;
		parts[0].n = a;
		parts[1].p = data + a;
		parts[1].n = datalen - a;
		memset(out, 0, sizeof(out));
		ck_assert_int_eq(hmac_sha256(h, key, keylen, parts, 2, out), 0);
		assert_mac(c->tc, "two parts", out, want, wantlen);
	}

	/* In four parts. */
	for (a = 0; a <= datalen; a += 7) {
		for (b = a; b <= datalen; b += 5) {
			parts[0].p = data;
			parts[0].n = a / 2;
			parts[1].p = data + a / 2;
			parts[1].n = a - a / 2;
			parts[2].p = data + a;
			parts[2].n = b - a;
			parts[3].p = data + b;
			parts[3].n = datalen - b;
			memset(out, 0, sizeof(out));
			ck_assert_int_eq(hmac_sha256(h, key, keylen, parts, 4,
			                     out),
			    0);
			assert_mac(c->tc, "four parts", out, want, wantlen);
		}
	}
	hmac_free(h);
}
END_TEST

/* The context is reusable and keys do not leak from one call into the
 * next (case 1 after case 7, then case 7 again). */
START_TEST(reuse)
{
	struct hmac_ctx *h = hmac_new();
	uint8_t k1[20], k7[131], w1[HMAC_LEN], w7[HMAC_LEN], out[HMAC_LEN];
	struct hmac_part p1 = {"Hi There", 8};
	struct hmac_part p7 = {cases[6].data, strlen(cases[6].data)};
	int i;

	memset(k1, 0x0b, sizeof(k1));
	memset(k7, 0xaa, sizeof(k7));
	(void)unhex(cases[0].mac, w1, sizeof(w1));
	(void)unhex(cases[6].mac, w7, sizeof(w7));
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(hmac_sha256(h, k7, sizeof(k7), &p7, 1, out),
		    0);
		assert_mac(7, "reuse", out, w7, HMAC_LEN);
		ck_assert_int_eq(hmac_sha256(h, k1, sizeof(k1), &p1, 1, out),
		    0);
		assert_mac(1, "reuse", out, w1, HMAC_LEN);
	}
	/* No parts at all is the empty message. */
	{
		struct hmac_part empty = {"", 0};
		uint8_t a[HMAC_LEN], b[HMAC_LEN];

		ck_assert_int_eq(hmac_sha256(h, k1, sizeof(k1), &empty, 0, a),
		    0);
		ck_assert_int_eq(hmac_sha256(h, k1, sizeof(k1), &empty, 1, b),
		    0);
		ck_assert(memcmp(a, b, HMAC_LEN) == 0);
	}
	hmac_free(h);
	hmac_free(NULL);
}
END_TEST

START_TEST(sha256_vectors)
{
	uint8_t want[SHA256_LEN], out[SHA256_LEN];

	(void)unhex("ba7816bf8f01cfea414140de5dae2223"
	            "b00361a396177a9cb410ff61f20015ad",
	    want, sizeof(want));
	ck_assert_int_eq(sha256("abc", 3, out), 0);
	assert_mac(0, "sha256 abc", out, want, SHA256_LEN);
	(void)unhex("e3b0c44298fc1c149afbf4c8996fb924"
	            "27ae41e4649b934ca495991b7852b855",
	    want, sizeof(want));
	ck_assert_int_eq(sha256("", 0, out), 0);
	assert_mac(0, "sha256 empty", out, want, SHA256_LEN);
}
END_TEST

START_TEST(equal)
{
	uint8_t a[HMAC_LEN], b[HMAC_LEN];
	size_t i;
	int bit;

	for (i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 37 + 1);
	memcpy(b, a, sizeof(a));
	ck_assert(hmac_equal(a, b, sizeof(a)));
	ck_assert(hmac_equal(a, b, 0));
	for (i = 0; i < sizeof(a); i++) {
		for (bit = 0; bit < 8; bit++) {
			b[i] ^= (uint8_t)(1u << bit);
			ck_assert_msg(!hmac_equal(a, b, sizeof(a)),
			    "byte %zu bit %d flipped, still equal", i, bit);
			b[i] ^= (uint8_t)(1u << bit);
		}
	}
	ck_assert(hmac_equal(a, b, sizeof(a)));
	/* Only the first n bytes count. */
	b[HMAC_LEN - 1] ^= 1;
	ck_assert(hmac_equal(a, b, HMAC_LEN - 1));
	ck_assert(!hmac_equal(a, b, HMAC_LEN));
}
END_TEST

START_TEST(random_bytes)
{
	uint8_t a[32], b[32], zero[32] = {0};

	ck_assert_int_eq(lh_random(a, sizeof(a)), 0);
	ck_assert_int_eq(lh_random(b, sizeof(b)), 0);
	ck_assert(memcmp(a, b, sizeof(a)) != 0);
	ck_assert(memcmp(a, zero, sizeof(a)) != 0);
	lh_cleanse(a, sizeof(a));
	ck_assert(memcmp(a, zero, sizeof(a)) == 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hmac");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, rfc4231, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, reuse);
	tcase_add_test(tc, sha256_vectors);
	tcase_add_test(tc, equal);
	tcase_add_test(tc, random_bytes);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
