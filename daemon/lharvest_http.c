/* SPDX-License-Identifier: BSD-2-Clause */
/* lharvest's requests: libcurl to the daemon, the envelope taken apart. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "lharvest.h"

/* An answer larger than this is not one of lharvestd's. */
#define LHC_BODY_MAX (64u << 20)

struct body {
	char *p;
	size_t n, cap;
	bool too_big;
};

static size_t
body_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct body *b = arg;
	size_t n = size * nmemb;

	if (n > LHC_BODY_MAX - b->n) {
		b->too_big = true;
		return 0;
	}
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 16384;
		char *p;

		while (cap < b->n + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (p == NULL)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, n);
	b->n += n;
	return n;
}

/* The reason a transfer failed, as the system says it when it can
 * ("Connection refused"). */
static void
transfer_error(CURL *h, CURLcode rc, char *msg, size_t msgsize,
    const char *where)
{
	long oserr = 0;
	const char *why = curl_easy_strerror(rc);

	if ((rc == CURLE_COULDNT_CONNECT || rc == CURLE_RECV_ERROR ||
	        rc == CURLE_SEND_ERROR) &&
	    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &oserr) == CURLE_OK &&
	    oserr != 0)
		why = strerror((int)oserr);
	(void)snprintf(msg, msgsize, "cannot reach lharvestd at %s: %s", where,
	    why);
}

static CURL *
handle(struct lhc *c)
{
	if (c->curl == NULL) {
		c->curl = curl_easy_init();
		if (c->curl == NULL)
			return NULL;
	}
	curl_easy_reset(c->curl);
	return c->curl;
}

/* Fetch path into b: 0, or -1 with msg. */
static int
fetch(struct lhc *c, const char *path, struct body *b, long *ret_status,
    char *msg, size_t msgsize)
{
	char url[LHC_ADDR_MAX + 1024];
	CURL *h = handle(c);
	CURLcode rc;

	if (h == NULL) {
		(void)snprintf(msg, msgsize, "out of memory");
		return -1;
	}
	(void)snprintf(url, sizeof(url), "%s%s", c->base, path);
	(void)curl_easy_setopt(h, CURLOPT_URL, url);
	if (c->socket[0] != '\0')
		(void)curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket);
	(void)curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	(void)curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
	(void)curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
	(void)curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	(void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_cb);
	(void)curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		if (b->too_big)
			(void)snprintf(msg, msgsize,
			    "lharvestd at %s: answer larger than %u bytes",
			    c->where, LHC_BODY_MAX);
		else
			transfer_error(h, rc, msg, msgsize, c->where);
		return -1;
	}
	(void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, ret_status);
	return 0;
}

int
lhc_get(struct lhc *c, const char *path, json_t **ret_data, char *msg,
    size_t msgsize)
{
	struct body b = {0};
	long status = 0;
	int ret;

	if (fetch(c, path, &b, &status, msg, msgsize) < 0) {
		free(b.p);
		return -1;
	}
	ret = lhc_envelope(b.p ? b.p : "", b.n, ret_data, msg, msgsize);
	free(b.p);
	if (ret == -2)
		(void)snprintf(msg, msgsize,
		    "lharvestd at %s: not an answer of its API (HTTP %ld)",
		    c->where, status);
	return ret < 0 ? -1 : 0;
}

void
lhc_close(struct lhc *c)
{
	if (c->curl != NULL)
		curl_easy_cleanup(c->curl);
	c->curl = NULL;
}
