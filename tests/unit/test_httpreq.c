/* SPDX-License-Identifier: BSD-2-Clause */
/* Request targets: paths and query strings decoded, and what no honest
 * client sends refused with its reason (common/web/httpreq.c). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "httphead.h"
#include "httpreq.h"
#include "testutil.h"

/* A target, and what it parses to: the normalised path and the
 * parameters as "k=v&k=v" (decoded); or why it is refused. */
static const struct {
	const char *target;
	const char *path;
	size_t nseg;
	const char *params;
	const char *why; /* NULL: accepted */
} cases[] = {
    {"/", "/", 0, "", NULL},
    {"/metrics", "/metrics", 1, "", NULL},
    {"/v1/hosts/", "/v1/hosts", 2, "", NULL},
    {"//v1//hosts", "/v1/hosts", 2, "", NULL},
    {"/v1/hosts/node%2D1", "/v1/hosts/node-1", 3, "", NULL},
    {"/v1/hosts?fs=scratch&sort=write&limit=20", "/v1/hosts", 2,
        "fs=scratch&sort=write&limit=20", NULL},
    {"/v1/hosts?fs=a+b%21", "/v1/hosts", 2, "fs=a b!", NULL},
    {"/a+b", "/a+b", 1, "", NULL}, /* '+' is a space in a query only */
    {"/x?flag", "/x", 1, "flag=", NULL},
    {"/x?flag=", "/x", 1, "flag=", NULL},
    {"/x?a=1&&b=2&", "/x", 1, "a=1&b=2", NULL},
    {"/x?", "/x", 1, "", NULL},
    {"/x?a=b=c", "/x", 1, "a=b=c", NULL},
    {"/%C3%A9t%C3%A9", "/\xc3\xa9t\xc3\xa9", 1, "", NULL},
    {"", NULL, 0, NULL, "the path is not absolute"},
    {"v1/hosts", NULL, 0, NULL, "the path is not absolute"},
    {"http://h/x", NULL, 0, NULL, "the path is not absolute"},
    {"/a/../b", NULL, 0, NULL, "'.' or '..' in the path"},
    {"/a/./b", NULL, 0, NULL, "'.' or '..' in the path"},
    {"/a/%2e%2E/b", NULL, 0, NULL, "'.' or '..' in the path"},
    {"/a%2Fb", NULL, 0, NULL, "an escaped '/' in the path"},
    {"/a%00b", NULL, 0, NULL, "a control character or NUL"},
    {"/a%0ab", NULL, 0, NULL, "a control character or NUL"},
    {"/a%7F", NULL, 0, NULL, "a control character or NUL"},
    {"/x?a=%00", NULL, 0, NULL, "a control character or NUL"},
    {"/a%", NULL, 0, NULL, "malformed percent escape"},
    {"/a%4", NULL, 0, NULL, "malformed percent escape"},
    {"/a%zz", NULL, 0, NULL, "malformed percent escape"},
    {"/x?a=%G1", NULL, 0, NULL, "malformed percent escape"},
    {"/x#frag", NULL, 0, NULL, "a fragment in the target"},
    {"/1/2/3/4/5/6/7/8/9", NULL, 0, NULL, "more than 8 path segments"},
    {"/x?a=1&a=2", NULL, 0, NULL, "query parameter 'a' given twice"},
    {"/x?=1", NULL, 0, NULL, "a query parameter without a name"},
    {"/x?a&b&c&d&e&f&g&h&i&j&k&l&m&n&o&p&q", NULL, 0, NULL,
        "more than 16 query parameters"},
};

static void
params_of(const struct httpreq *r, char *buf, size_t size)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < r->nparam; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s=%s",
		    i > 0 ? "&" : "", r->param[i].key, r->param[i].value);
}

START_TEST(targets)
{
	static struct httpreq r;
	struct lh_err err;
	char params[512];
	int rc;

	lh_err_clear(&err);
	rc =
	    httpreq_parse(cases[_i].target, strlen(cases[_i].target), &r, &err);
	if (cases[_i].why != NULL) {
		ck_assert_msg(rc == -EINVAL, "%s: accepted", cases[_i].target);
		ck_assert_str_eq(err.reason, cases[_i].why);
		ck_assert_uint_eq(r.nseg, 0);
		ck_assert_uint_eq(r.nparam, 0);
		return;
	}
	ck_assert_msg(rc == 0, "%s: %s", cases[_i].target, err.reason);
	ck_assert_str_eq(r.path, cases[_i].path);
	ck_assert_uint_eq(r.nseg, cases[_i].nseg);
	params_of(&r, params, sizeof(params));
	ck_assert_str_eq(params, cases[_i].params);
}
END_TEST

/* The target's length, not a NUL, ends it; and the longest is taken. */
START_TEST(lengths)
{
	static struct httpreq r;
	static char big[HTTPREQ_TARGET_MAX + 2];
	struct lh_err err;

	ck_assert_int_eq(httpreq_parse("/metricsXXX", 8, &r, &err), 0);
	ck_assert_str_eq(r.path, "/metrics");
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	ck_assert_int_eq(httpreq_parse(big, HTTPREQ_TARGET_MAX, &r, &err), 0);
	ck_assert_uint_eq(strlen(r.path), HTTPREQ_TARGET_MAX);
	ck_assert_int_eq(httpreq_parse(big, HTTPREQ_TARGET_MAX + 1, &r, &err),
	    -EINVAL);
	ck_assert_str_eq(err.reason, "target longer than 2048 bytes");
	/* The most a buffer can take: a full target of escapes. */
	for (size_t i = 1; i + 3 <= HTTPREQ_TARGET_MAX; i += 3)
		memcpy(big + i, "%41", 3);
	ck_assert_int_eq(httpreq_parse(big, HTTPREQ_TARGET_MAX, &r, &err), 0);
}
END_TEST

START_TEST(lookups)
{
	static struct httpreq r;
	static const char *const known[] = {"fs", "sort", "limit", NULL};
	static const char *const few[] = {"fs", NULL};
	const char *t = "/v1/hosts?fs=scratch&sort=&limit=5";
	struct lh_err err;

	ck_assert_int_eq(httpreq_parse(t, strlen(t), &r, &err), 0);
	ck_assert_str_eq(httpreq_param(&r, "fs"), "scratch");
	ck_assert_str_eq(httpreq_param(&r, "sort"), "");
	ck_assert_ptr_null(httpreq_param(&r, "host"));
	ck_assert_ptr_null(httpreq_unknown(&r, known));
	ck_assert_str_eq(httpreq_unknown(&r, few), "sort");
	ck_assert_str_eq(r.seg[0], "v1");
	ck_assert_str_eq(r.seg[1], "hosts");
}
END_TEST

/* Request-head lines (httphead.c): what evhttp would refuse with a page
 * of its own, refused first. */
static const struct {
	const char *line;
	int status;
} request_lines[] = {
    {"GET /metrics HTTP/1.1", 0},
    {"HEAD / HTTP/1.0", 0},
    {"GET /?a=b HTTP/1.1", 0},
    {"POST / HTTP/1.1", 405},
    {"DELETE /v1/hosts HTTP/1.0", 405},
    {"get / HTTP/1.1", 400},
    {"GET / HTTP/2.0", 400},
    {"GET / HTTP/1.1 x", 400},
    {"GET /a b HTTP/1.1", 400},
    {"GET /", 400},
    {"GET", 400},
    {"", 400},
    {" GET / HTTP/1.1", 400},
    {"GET\t/ HTTP/1.1", 400},
    {"GET /\x01 HTTP/1.1", 400},
    {"ABCDEFGHIJKLMNOPQ / HTTP/1.1", 400},
    {"ABCDEFGHIJKLMNOP / HTTP/1.1", 405},
};

START_TEST(request_line)
{
	const char *line = request_lines[_i].line;

	ck_assert_int_eq(httphead_request_line(line, strlen(line)),
	    request_lines[_i].status);
}
END_TEST

START_TEST(header_lines)
{
	ck_assert(httphead_header_line("Host: x", 7, true));
	ck_assert(httphead_header_line("X-Empty:", 8, true));
	ck_assert(httphead_header_line(" folded", 7, false));
	ck_assert(httphead_header_line("\tfolded", 7, false));
	ck_assert(!httphead_header_line(" folded", 7, true));
	ck_assert(!httphead_header_line("No colon", 8, false));
	ck_assert(!httphead_header_line("A: b\rc", 6, false));
	ck_assert(!httphead_header_line("A: \x7f", 4, false));
	ck_assert(!httphead_header_line("", 0, false));
	ck_assert(httphead_header_line("A:\tb", 4, false));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("httpreq");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, targets, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, lengths);
	tcase_add_test(tc, lookups);
	tcase_add_loop_test(tc, request_line, 0,
	    sizeof(request_lines) / sizeof(request_lines[0]));
	tcase_add_test(tc, header_lines);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
