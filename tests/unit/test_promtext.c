/* SPDX-License-Identifier: BSD-2-Clause */
/* The Prometheus text format writer: numbers, escaping, families,
 * samples and the failure path. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "promtext.h"
#include "testutil.h"

static char *
u64s(uint64_t v)
{
	static char s[PROMTEXT_U64_MAX + 1];

	s[promtext_fmt_u64(s, v)] = '\0';
	return s;
}

static char *
dbls(double v)
{
	static char s[PROMTEXT_DOUBLE_MAX + 1];

	s[promtext_fmt_double(s, v)] = '\0';
	return s;
}

START_TEST(integers)
{
	static const uint64_t v[] = {0, 1, 9, 10, 11, 99, 100, 101, 999, 1000,
	    12345, 4294967295u, 10000000000000000000u, UINT64_MAX};
	char want[32];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		(void)snprintf(want, sizeof(want), "%llu",
		    (unsigned long long)v[i]);
		ck_assert_str_eq(u64s(v[i]), want);
	}
}
END_TEST

START_TEST(floats)
{
	ck_assert_str_eq(dbls(0), "0");
	ck_assert_str_eq(dbls(-0.0), "0");
	ck_assert_str_eq(dbls(-3), "-3");
	ck_assert_str_eq(dbls(1.5), "1.5");
	ck_assert_str_eq(dbls(0.1), "0.1");
	ck_assert_str_eq(dbls(1764320430.25), "1764320430.25");
	ck_assert_str_eq(dbls(9007199254740991.0), "9007199254740991");
	ck_assert_str_eq(dbls(1e300), "1e+300");
	ck_assert_str_eq(dbls(NAN), "NaN");
	ck_assert_str_eq(dbls(INFINITY), "+Inf");
	ck_assert_str_eq(dbls(-INFINITY), "-Inf");
}
END_TEST

/* Every double comes back exactly (what rate() and @ rely on). */
START_TEST(floats_round_trip)
{
	uint64_t x = 88172645463325252u;

	for (int i = 0; i < 100000; i++) {
		double v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&v, &x, sizeof(v));
		if (isnan(v))
			continue;
		ck_assert_msg(strtod(dbls(v), NULL) == v, "%a: %s", v, dbls(v));
		v = (double)(x >> 11) / 1024.0;
		ck_assert_msg(strtod(dbls(v), NULL) == v, "%a: %s", v, dbls(v));
	}
}
END_TEST

static char *
page_of(struct promtext *p)
{
	size_t n;
	char *s = promtext_take(p, &n);

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(strlen(s), n);
	return s;
}

START_TEST(escaping)
{
	static const char *const k[] = {"host", "fs"};
	static const char *const v[] = {"a\\b\"c\nd", "scratch"};
	struct promtext p;
	char *s;

	promtext_init(&p);
	promtext_family(&p, "x_total", "counter", "back\\slash\nnewline \"q\"");
	promtext_gauge(&p, "x_total", k, v, 2, 5);
	promtext_gauge(&p, "x_total", NULL, NULL, 0, 0.5);
	s = page_of(&p);
	ck_assert_str_eq(s,
	    "# HELP x_total back\\\\slash\\nnewline \"q\"\n"
	    "# TYPE x_total counter\n"
	    "x_total{host=\"a\\\\b\\\"c\\nd\",fs=\"scratch\"} 5\n"
	    "x_total 0.5\n");
	free(s);
	promtext_free(&p);
}
END_TEST

START_TEST(samples)
{
	static const char *const k[] = {"host", "fs"};
	static const char *const v[] = {"node07", "scratch"};
	struct promtext lab, p;
	char *s;

	promtext_init(&lab);
	promtext_init(&p);
	promtext_labels(&lab, k, v, 2);
	promtext_sample_u64(&p, "a_total", 7, lab.buf, lab.len, UINT64_MAX);
	promtext_sample_double(&p, "b", 1, "", 0, 0.25);
	promtext_sample_u64(&p, "c", 1, NULL, 0, 0);
	s = page_of(&p);
	ck_assert_str_eq(s,
	    "a_total{host=\"node07\",fs=\"scratch\"} 18446744073709551615\n"
	    "b 0.25\n"
	    "c 0\n");
	free(s);
	/* Taken: p is empty and usable again. */
	ck_assert_uint_eq(p.len, 0);
	promtext_str(&p, "again");
	ck_assert_uint_eq(p.len, 5);
	promtext_clear(&p);
	ck_assert_uint_eq(p.len, 0);
	promtext_free(&p);
	promtext_free(&lab);
}
END_TEST

/* A failed page stays failed and is not handed out. */
START_TEST(failure)
{
	struct promtext p;
	size_t n = 1;

	promtext_init(&p);
	promtext_str(&p, "abc");
	ck_assert_int_eq(promtext_reserve(&p, SIZE_MAX - 1), -ENOMEM);
	ck_assert(p.failed);
	promtext_str(&p, "def");
	ck_assert_ptr_null(promtext_take(&p, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert(!p.failed);
	promtext_free(&p);
}
END_TEST

/* A big page grows without losing a byte. */
START_TEST(growth)
{
	struct promtext p;
	char *s;
	size_t n;

	promtext_init(&p);
	for (int i = 0; i < 100000; i++)
		promtext_sample_u64(&p, "m", 1, "{a=\"b\"}", 7, (uint64_t)i);
	s = promtext_take(&p, &n);
	ck_assert_ptr_nonnull(s);
	ck_assert(strncmp(s, "m{a=\"b\"} 0\nm{a=\"b\"} 1\n", 22) == 0);
	ck_assert_str_eq(s + n - 15, "m{a=\"b\"} 99999\n");
	free(s);
}
END_TEST

START_TEST(names)
{
	ck_assert(promtext_name_ok("lustre_client_read_bytes_total"));
	ck_assert(promtext_name_ok("a:b_c9"));
	ck_assert(promtext_name_ok("_x"));
	ck_assert(!promtext_name_ok(""));
	ck_assert(!promtext_name_ok("9a"));
	ck_assert(!promtext_name_ok("a-b"));
	ck_assert(!promtext_name_ok("a b"));
	ck_assert(promtext_label_name_ok("host"));
	ck_assert(!promtext_label_name_ok("a:b"));
	ck_assert(!promtext_label_name_ok("__name__"));
	ck_assert(!promtext_label_name_ok("0fs"));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("promtext");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, integers);
	tcase_add_test(tc, floats);
	tcase_add_test(tc, floats_round_trip);
	tcase_add_test(tc, escaping);
	tcase_add_test(tc, samples);
	tcase_add_test(tc, failure);
	tcase_add_test(tc, growth);
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
