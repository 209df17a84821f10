/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Request-head lines (httphead.h).  What libevent 2.1.12's http.c
 * refuses, mirrored: a request line not of three words
 * (evhttp_parse_request_line()), a header line without ':' or a
 * continuation first (evhttp_parse_headers_()), a CR in a name
 * (evhttp_add_header()); stricter where it costs honest clients
 * nothing: HTTP/1.0 and 1.1 only, no control characters.
 */
#include <string.h>

#include "httphead.h"

#define METHOD_MAX 16

static bool
clean(const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)b[i];

		if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
			return false;
	}
	return true;
}

int
httphead_request_line(const char *b, size_t n)
{
	const char *sp1 = n > 0 ? memchr(b, ' ', n) : NULL, *sp2, *v;
	size_t i, mn = sp1 != NULL ? (size_t)(sp1 - b) : 0, vn;

	if (sp1 == NULL || mn == 0 || mn > METHOD_MAX || !clean(b, n))
		return 400;
	for (i = 0; i < mn; i++) {
		if (b[i] < 'A' || b[i] > 'Z')
			return 400;
	}
	sp2 = memchr(sp1 + 1, ' ', n - mn - 1);
	if (sp2 == NULL)
		return 400;
	v = sp2 + 1;
	vn = n - (size_t)(v - b);
	if (vn != 8 ||
	    (memcmp(v, "HTTP/1.0", 8) != 0 && memcmp(v, "HTTP/1.1", 8) != 0))
		return 400;
	if ((mn == 3 && memcmp(b, "GET", 3) == 0) ||
	    (mn == 4 && memcmp(b, "HEAD", 4) == 0))
		return 0;
	return 405;
}

bool
httphead_header_line(const char *b, size_t n, bool first)
{
	if (n == 0 || !clean(b, n))
		return false;
	if (b[0] == ' ' || b[0] == '\t')
		return !first;
	return memchr(b, ':', n) != NULL;
}
