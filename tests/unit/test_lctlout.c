/* SPDX-License-Identifier: BSD-2-Clause */
/* lctl get_param output splitting (quirks 19, 20, 24). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "lctlout.h"
#include "testutil.h"

static int
param_is(const struct lctl_block *b, const char *p)
{
	return b->param_len == strlen(p) &&
	    memcmp(b->param, p, b->param_len) == 0;
}

/* 20: "param=" then a newline, or the short value inline after '='. */
START_TEST(quirk20_inline_value)
{
	struct lctl_block b;
	size_t len, pos = 0;
	unsigned line = 0, n = 0, inl = 0;
	char *buf =
	    tu_read_file(tu_fixture("2.14/lctl-get_param-exports-stats.txt"),
	        &len);

	while (lctlout_next(buf, len, &pos, &line, &b, NULL) == 1) {
		n++;
		if (b.value_line == b.line) {
			inl++;
			ck_assert(param_is(&b,
			    "mdt.ai400x2-MDT0000.exports.0@lo.stats"));
			ck_assert(strncmp(b.value, "snapshot_time", 13) == 0);
		}
	}
	ck_assert_uint_eq(n, 63);
	ck_assert_uint_eq(inl, 1);
	free(buf);
}
END_TEST

/* 19: NIDs with dots, colons (IPv6), @netN, decimal addresses. */
START_TEST(quirk19_nid_params)
{
	struct lctl_block b;
	size_t len, pos = 0;
	unsigned line = 0;
	int v6 = 0, kfi = 0;
	char *buf =
	    tu_read_file(tu_fixture("2.16/lctl-get_param-exports-stats.txt"),
	        &len);

	while (lctlout_next(buf, len, &pos, &line, &b, NULL) == 1) {
		v6 += param_is(&b,
		    "obdfilter.scratch-OST0000.exports.2001:db8:10::17@tcp.stats");
		kfi += param_is(&b,
		    "obdfilter.scratch-OST0000.exports.27@kfi.stats");
	}
	ck_assert_int_eq(v6, 1);
	ck_assert_int_eq(kfi, 1);
	free(buf);
}
END_TEST

/* 24: no final newline; empty values; blank lines before the first block;
 * junk before it is an error. */
START_TEST(edges)
{
	const char *s = "\n\na.b=\nx 1 samples [reqs]\nc.d=v\ne.f=";
	struct lctl_block b;
	struct lh_err err;
	size_t pos = 0;
	unsigned line = 0;

	ck_assert_int_eq(lctlout_next(s, strlen(s), &pos, &line, &b, NULL), 1);
	ck_assert(param_is(&b, "a.b"));
	ck_assert_uint_eq(b.line, 3);
	ck_assert_uint_eq(b.value_len, strlen("x 1 samples [reqs]\n"));
	ck_assert_int_eq(lctlout_next(s, strlen(s), &pos, &line, &b, NULL), 1);
	ck_assert(param_is(&b, "c.d"));
	ck_assert_uint_eq(b.value_len, 2);
	ck_assert_int_eq(lctlout_next(s, strlen(s), &pos, &line, &b, NULL), 1);
	ck_assert(param_is(&b, "e.f"));
	ck_assert_uint_eq(b.value_len, 0);
	ck_assert_int_eq(lctlout_next(s, strlen(s), &pos, &line, &b, NULL), 0);
	pos = 0;
	line = 0;
	ck_assert_int_eq(lctlout_next("junk\na.b=1\n", 11, &pos, &line, &b,
	                     &err),
	    -EBADMSG);
	ck_assert_uint_eq(err.line, 1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("lctlout");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, quirk20_inline_value);
	tcase_add_test(tc, quirk19_nid_params);
	tcase_add_test(tc, edges);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
