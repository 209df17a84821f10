/* SPDX-License-Identifier: BSD-2-Clause */
/* Strings end to end, named by offset: growth keeps offsets, truncate
 * takes back the last adds, clear keeps the storage. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "strpool.h"
#include "testutil.h"

START_TEST(offsets_survive_growth)
{
	struct strpool p;
	uint32_t off[3000];
	char s[32];
	unsigned i;

	strpool_init(&p);
	for (i = 0; i < 3000; i++) {
		(void)snprintf(s, sizeof(s), "10.%u.%u.1@o2ib", i / 256,
		    i % 256);
		ck_assert_int_eq(strpool_add(&p, s, &off[i]), 0);
	}
	ck_assert_uint_gt(p.cap, 4096); /* it grew, several times */
	for (i = 0; i < 3000; i++) {
		(void)snprintf(s, sizeof(s), "10.%u.%u.1@o2ib", i / 256,
		    i % 256);
		ck_assert_str_eq(strpool_get(&p, off[i]), s);
	}
	strpool_free(&p);
}
END_TEST

START_TEST(truncate_and_clear)
{
	struct strpool p;
	uint32_t a, b, c;

	strpool_init(&p);
	ck_assert_int_eq(strpool_add(&p, "27@gni", &a), 0);
	ck_assert_int_eq(strpool_add(&p, "", &b), 0);
	ck_assert_uint_eq(b, 7);
	ck_assert_str_eq(strpool_get(&p, b), "");
	strpool_truncate(&p, b);
	ck_assert_int_eq(strpool_add(&p, "10.0.0.1@tcp", &c), 0);
	ck_assert_uint_eq(c, b);
	ck_assert_str_eq(strpool_get(&p, a), "27@gni");
	ck_assert_str_eq(strpool_get(&p, c), "10.0.0.1@tcp");
	strpool_truncate(&p, 1000); /* beyond the end: nothing */
	ck_assert_uint_eq(p.n, 7 + 13);
	strpool_clear(&p);
	ck_assert_uint_eq(p.n, 0);
	ck_assert_uint_eq(p.cap, 4096);
	ck_assert_int_eq(strpool_add(&p, "x", &a), 0);
	ck_assert_uint_eq(a, 0);
	strpool_free(&p);
	ck_assert_ptr_null(p.v);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("strpool");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, offsets_survive_growth);
	tcase_add_test(tc, truncate_and_clear);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
