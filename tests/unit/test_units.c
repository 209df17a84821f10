/* SPDX-License-Identifier: BSD-2-Clause */
/* lharvest's human units (daemon/lharvest_units.c): binary prefixes for
 * bytes, k/M for counts, three significant digits, nothing negative. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "lharvest.h"
#include "testutil.h"

static const struct {
	double v;
	const char *rate, *bytes, *count;
} cases[] = {
    {0, "0 B/s", "0 B", "0"},
    {-5, "0 B/s", "0 B", "0"},
    {1023, "1023 B/s", "1023 B", "1.02k"},
    {1024, "1.00 KiB/s", "1.00 KiB", "1.02k"},
    {1536, "1.50 KiB/s", "1.50 KiB", "1.54k"},
    {999, "999 B/s", "999 B", "999"},
    {131e6, "125 MiB/s", "125 MiB", "131M"},
    {41e6, "39.1 MiB/s", "39.1 MiB", "41.0M"},
    {5.5e9, "5.12 GiB/s", "5.12 GiB", "5.50G"},
    {2.5e15, "2274 TiB/s", "2.22 PiB", "2.50P"},
};

START_TEST(table)
{
	char buf[32];

	units_rate(buf, sizeof(buf), cases[_i].v);
	ck_assert_str_eq(buf, cases[_i].rate);
	units_bytes(buf, sizeof(buf), cases[_i].v);
	ck_assert_str_eq(buf, cases[_i].bytes);
	units_count(buf, sizeof(buf), cases[_i].v);
	ck_assert_str_eq(buf, cases[_i].count);
}
END_TEST

START_TEST(not_a_number)
{
	char buf[32];

	units_rate(buf, sizeof(buf), NAN);
	ck_assert_str_eq(buf, "0 B/s");
	units_count(buf, sizeof(buf), INFINITY);
	ck_assert_str_eq(buf, "0");
	units_time(buf, sizeof(buf), 0);
	ck_assert_str_eq(buf, "-");
}
END_TEST

START_TEST(fits)
{
	char buf[12];

	/* The widest a column of lharvest top gets: 11 characters. */
	units_rate(buf, sizeof(buf), 1023.9 * 1024 * 1024 * 1024);
	ck_assert_uint_le(strlen(buf), 11);
	ck_assert_str_eq(buf, "1024 GiB/s");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("units");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, table, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, not_a_number);
	tcase_add_test(tc, fits);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
