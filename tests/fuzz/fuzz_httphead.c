/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: any bytes as a request head, line by line, judged by
 * common/web/httphead.c.  A request line let through must be exactly
 * "GET|HEAD SP target SP HTTP/1.x" without control characters; a 405 the
 * same with another upper-case method; a header line let through must be
 * "name: value" or a continuation not first, without control
 * characters. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "httphead.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
clean(const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)b[i];

		if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
			return 0;
	}
	return 1;
}

static size_t
spaces(const char *b, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += b[i] == ' ';
	return k;
}

static void
check_request(const char *b, size_t n)
{
	int rc = httphead_request_line(b, n);
	const char *sp;

	if (rc != 0 && rc != 400 && rc != 405)
		abort();
	if (rc == 400)
		return;
	sp = memchr(b, ' ', n);
	if (sp == NULL || !clean(b, n) || n < 10 ||
	    (memcmp(b + n - 9, " HTTP/1.0", 9) != 0 &&
	        memcmp(b + n - 9, " HTTP/1.1", 9) != 0))
		abort();
	/* The target may hold spaces only if evhttp would split it the
	 * same way: never. */
	if (spaces(b, n) != 2)
		abort();
	if (rc == 0 && !(sp - b == 3 && memcmp(b, "GET", 3) == 0) &&
	    !(sp - b == 4 && memcmp(b, "HEAD", 4) == 0))
		abort();
	for (const char *p = b; p < sp; p++) {
		if (*p < 'A' || *p > 'Z')
			abort();
	}
}

static void
check_header(const char *b, size_t n, int first)
{
	if (!httphead_header_line(b, n, first))
		return;
	if (n == 0 || !clean(b, n))
		abort();
	if (b[0] == ' ' || b[0] == '\t') {
		if (first)
			abort();
	} else if (memchr(b, ':', n) == NULL) {
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	unsigned line = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl != NULL ? nl : end) - p);

		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (line == 0)
			check_request(p, n);
		else
			check_header(p, n, line == 1);
		line++;
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	return 0;
}
