/* SPDX-License-Identifier: BSD-2-Clause */
/* HMAC-SHA256 through OpenSSL 3's EVP_MAC. */
#include <errno.h>
#include <stdlib.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "hmac.h"

struct hmac_ctx {
	EVP_MAC *mac;
	EVP_MAC_CTX *ctx;
};

/* Called before each first use of OpenSSL: nothing here prints its
 * error strings, and loading them (what the first call does by default)
 * costs each daemon half a megabyte of RSS (docs/performance.md).  Only
 * the first call does anything. */
static void
crypto_init(void)
{
	(void)OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS, NULL);
}

struct hmac_ctx *
hmac_new(void)
{
	struct hmac_ctx *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return NULL;
	crypto_init();
	h->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (h->mac != NULL)
		h->ctx = EVP_MAC_CTX_new(h->mac);
	if (h->ctx == NULL) {
		hmac_free(h);
		return NULL;
	}
	return h;
}

void
hmac_free(struct hmac_ctx *h)
{
	if (h == NULL)
		return;
	EVP_MAC_CTX_free(h->ctx);
	EVP_MAC_free(h->mac);
	free(h);
}

int
hmac_sha256(struct hmac_ctx *h, const uint8_t *key, size_t keylen,
    const struct hmac_part *parts, size_t nparts, uint8_t out[HMAC_LEN])
{
	char digest[] = "SHA256";
	OSSL_PARAM params[] = {
	    OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
	    OSSL_PARAM_construct_end(),
	};
	size_t outlen = 0, i;

	if (!EVP_MAC_init(h->ctx, key, keylen, params))
		return -EIO;
	for (i = 0; i < nparts; i++) {
		if (parts[i].n > 0 &&
		    !EVP_MAC_update(h->ctx, parts[i].p, parts[i].n))
			return -EIO;
	}
	if (!EVP_MAC_final(h->ctx, out, &outlen, HMAC_LEN) ||
	    outlen != HMAC_LEN)
		return -EIO;
	return 0;
}

int
sha256(const void *p, size_t n, uint8_t out[SHA256_LEN])
{
	unsigned int outlen = 0;

	crypto_init();
	if (!EVP_Digest(p, n, out, &outlen, EVP_sha256(), NULL) ||
	    outlen != SHA256_LEN)
		return -EIO;
	return 0;
}

struct sha256_ctx {
	EVP_MD_CTX *md;
	bool failed;
};

struct sha256_ctx *
sha256_begin(void)
{
	struct sha256_ctx *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	crypto_init();
	c->md = EVP_MD_CTX_new();
	if (c->md == NULL || !EVP_DigestInit_ex(c->md, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(c->md);
		free(c);
		return NULL;
	}
	return c;
}

int
sha256_update(struct sha256_ctx *c, const void *p, size_t n)
{
	if (!c->failed && n > 0 && !EVP_DigestUpdate(c->md, p, n))
		c->failed = true;
	return c->failed ? -EIO : 0;
}

int
sha256_end(struct sha256_ctx *c, uint8_t out[SHA256_LEN])
{
	unsigned int outlen = 0;
	int rc = 0;

	if (c == NULL)
		return -EIO;
	if (c->failed || !EVP_DigestFinal_ex(c->md, out, &outlen) ||
	    outlen != SHA256_LEN)
		rc = -EIO;
	EVP_MD_CTX_free(c->md);
	free(c);
	return rc;
}

bool
hmac_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

int
lh_random(void *out, size_t n)
{
	crypto_init();
	if (n > (size_t)INT32_MAX || RAND_bytes(out, (int)n) != 1)
		return -EIO;
	return 0;
}

void
lh_cleanse(void *p, size_t n)
{
	if (p != NULL)
		OPENSSL_cleanse(p, n);
}
