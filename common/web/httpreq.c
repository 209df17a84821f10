/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A request target into decoded path segments and query parameters
 * (httpreq.h).  Every decoded string is at most as long as the text it
 * came from, and takes one byte more for its NUL, paid for by the '/',
 * '&' or '=' before it: so everything fits in buf, and the checks below
 * are there for safety, not for size.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "err.h"
#include "httpreq.h"

/* Where decoded strings go. */
struct out {
	char *p, *end;
};

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decode s[0..n) into o, with a NUL; plus: '+' is a space (a query).
 * Returns the string, or NULL with err set: a malformed escape, a NUL,
 * '/' (in a segment) or a control character, raw or escaped.
 */
static const char *
decode(const char *s, size_t n, bool query, struct out *o, struct lh_err *err)
{
	char *start = o->p;
	size_t i;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			int hi = i + 1 < n ? hexval(s[i + 1]) : -1;
			int lo = i + 2 < n ? hexval(s[i + 2]) : -1;

			if (hi < 0 || lo < 0) {
				(void)lh_err_set(err, 0, -EINVAL,
				    "malformed percent escape");
				return NULL;
			}
			c = hi * 16 + lo;
			i += 2;
			if (c == '/' && !query) {
				(void)lh_err_set(err, 0, -EINVAL,
				    "an escaped '/' in the path");
				return NULL;
			}
		} else if (c == '+' && query) {
			c = ' ';
		}
		if (c < 0x20 || c == 0x7f) {
			(void)lh_err_set(err, 0, -EINVAL,
			    "a control character or NUL");
			return NULL;
		}
		if (o->p >= o->end) {
			(void)lh_err_set(err, 0, -EINVAL, "target too long");
			return NULL;
		}
		*o->p++ = (char)c;
	}
	if (o->p >= o->end) {
		(void)lh_err_set(err, 0, -EINVAL, "target too long");
		return NULL;
	}
	*o->p++ = '\0';
	return start;
}

static int
add_segment(struct httpreq *r, const char *s, size_t n, struct out *o,
    struct lh_err *err)
{
	const char *seg;

	if (n == 0)
		return 0; /* "//" and a trailing '/' */
	if (r->nseg == HTTPREQ_SEG_MAX)
		return lh_err_set(err, 0, -EINVAL, "more than %d path segments",
		    HTTPREQ_SEG_MAX);
	seg = decode(s, n, false, o, err);
	if (seg == NULL)
		return -EINVAL;
	if (strcmp(seg, ".") == 0 || strcmp(seg, "..") == 0)
		return lh_err_set(err, 0, -EINVAL, "'.' or '..' in the path");
	r->seg[r->nseg++] = seg;
	return 0;
}

static int
parse_path(struct httpreq *r, const char *s, size_t n, struct out *o,
    struct lh_err *err)
{
	size_t i, start = 1, len = 0;

	if (n == 0 || s[0] != '/')
		return lh_err_set(err, 0, -EINVAL, "the path is not absolute");
	for (i = 1; i <= n; i++) {
		if (i < n && s[i] != '/')
			continue;
		if (add_segment(r, s + start, i - start, o, err) < 0)
			return -EINVAL;
		start = i + 1;
	}
	/* The normalised path: decoded segments never hold a '/'. */
	r->path[len++] = '/';
	for (i = 0; i < r->nseg; i++) {
		size_t sl = strlen(r->seg[i]);

		if (len + (i > 0 ? 1 : 0) + sl >= sizeof(r->path))
			return lh_err_set(err, 0, -EINVAL, "target too long");
		if (i > 0)
			r->path[len++] = '/';
		memcpy(r->path + len, r->seg[i], sl);
		len += sl;
	}
	r->path[len] = '\0';
	return 0;
}

static int
add_param(struct httpreq *r, const char *s, size_t n, struct out *o,
    struct lh_err *err)
{
	const char *eq = memchr(s, '=', n);
	size_t kn = eq != NULL ? (size_t)(eq - s) : n;
	const char *key, *value = "";

	if (n == 0)
		return 0; /* "a=1&&b=2" */
	if (r->nparam == HTTPREQ_PARAM_MAX)
		return lh_err_set(err, 0, -EINVAL,
		    "more than %d query parameters", HTTPREQ_PARAM_MAX);
	key = decode(s, kn, true, o, err);
	if (key == NULL)
		return -EINVAL;
	if (key[0] == '\0')
		return lh_err_set(err, 0, -EINVAL,
		    "a query parameter without a name");
	if (httpreq_param(r, key) != NULL)
		return lh_err_set(err, 0, -EINVAL,
		    "query parameter '%.40s' given twice", key);
	if (eq != NULL && n - kn > 1) {
		value = decode(eq + 1, n - kn - 1, true, o, err);
		if (value == NULL)
			return -EINVAL;
	}
	r->param[r->nparam].key = key;
	r->param[r->nparam].value = value;
	r->nparam++;
	return 0;
}

static int
parse_query(struct httpreq *r, const char *s, size_t n, struct out *o,
    struct lh_err *err)
{
	size_t i, start = 0;

	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '&')
			continue;
		if (add_param(r, s + start, i - start, o, err) < 0)
			return -EINVAL;
		start = i + 1;
	}
	return 0;
}

int
httpreq_parse(const char *target, size_t n, struct httpreq *ret,
    struct lh_err *err)
{
	const char *q;
	struct out o;
	size_t pn;

	memset(ret, 0, sizeof(*ret));
	o.p = ret->buf;
	o.end = ret->buf + sizeof(ret->buf);
	if (n > HTTPREQ_TARGET_MAX)
		return lh_err_set(err, 0, -EINVAL,
		    "target longer than %d bytes", HTTPREQ_TARGET_MAX);
	if (memchr(target, '#', n) != NULL)
		return lh_err_set(err, 0, -EINVAL, "a fragment in the target");
	q = memchr(target, '?', n);
	pn = q != NULL ? (size_t)(q - target) : n;
	if (parse_path(ret, target, pn, &o, err) < 0 ||
	    (q != NULL && parse_query(ret, q + 1, n - pn - 1, &o, err) < 0)) {
		memset(ret, 0, sizeof(*ret));
		return -EINVAL;
	}
	return 0;
}

const char *
httpreq_param(const struct httpreq *r, const char *key)
{
	size_t i;

	for (i = 0; i < r->nparam; i++) {
		if (strcmp(r->param[i].key, key) == 0)
			return r->param[i].value;
	}
	return NULL;
}

const char *
httpreq_unknown(const struct httpreq *r, const char *const *known)
{
	size_t i, j;

	for (i = 0; i < r->nparam; i++) {
		for (j = 0; known[j] != NULL; j++) {
			if (strcmp(r->param[i].key, known[j]) == 0)
				break;
		}
		if (known[j] == NULL)
			return r->param[i].key;
	}
	return NULL;
}
