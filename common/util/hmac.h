/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * HMAC-SHA256 (OpenSSL 3 EVP_MAC), SHA-256, constant-time comparison and
 * random bytes: the only cryptography lharvestd uses.
 */
#ifndef LH_HMAC_H
#define LH_HMAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HMAC_LEN   32
#define SHA256_LEN 32

/* One piece of the message to authenticate. */
struct hmac_part {
	const void *p;
	size_t n;
};

/* A fetched HMAC implementation, reused for every frame. */
struct hmac_ctx;

struct hmac_ctx *hmac_new(void);
void hmac_free(struct hmac_ctx *h);

/* out = HMAC-SHA256(key, parts[0] || parts[1] || ...).  Returns 0 or
 * -EIO when OpenSSL fails. */
int hmac_sha256(struct hmac_ctx *h, const uint8_t *key, size_t keylen,
    const struct hmac_part *parts, size_t nparts, uint8_t out[HMAC_LEN]);

/* out = SHA-256(p). */
int sha256(const void *p, size_t n, uint8_t out[SHA256_LEN]);

/* SHA-256 of a stream (the gatherer's state file): begin, update as the
 * bytes go by, end (which frees).  NULL from begin: out of memory. */
struct sha256_ctx;
struct sha256_ctx *sha256_begin(void);
int sha256_update(struct sha256_ctx *c, const void *p, size_t n);
int sha256_end(struct sha256_ctx *c, uint8_t out[SHA256_LEN]);

/* Constant-time equality of two MACs. */
bool hmac_equal(const uint8_t *a, const uint8_t *b, size_t n);

/* n bytes from the system CSPRNG; -EIO on failure. */
int lh_random(void *out, size_t n);

/* OPENSSL_cleanse: wipe secrets before freeing them. */
void lh_cleanse(void *p, size_t n);

#endif
