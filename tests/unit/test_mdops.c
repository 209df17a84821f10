/* SPDX-License-Identifier: BSD-2-Clause */
/* Per-op metadata counts: the name table, lookups (including every
 * one-byte change of every name) and counts from a parsed MDT file. */
#include <check.h>
#include <string.h>

#include "mdops.h"
#include "statsparse.h"
#include "testutil.h"

static struct lstats st;

/* The plain way: the op whose name is s, or -1. */
static int
lookup_slowly(const char *s)
{
	unsigned op;

	for (op = 0; op < MDOPS_N; op++) {
		if (strcmp(mdops_name(op), s) == 0)
			return (int)op;
	}
	return -1;
}

START_TEST(names_round_trip)
{
	unsigned op;

	for (op = 0; op < MDOPS_N; op++) {
		ck_assert_ptr_nonnull(mdops_name(op));
		ck_assert_int_eq(mdops_lookup(mdops_name(op)), (int)op);
	}
	ck_assert_ptr_null(mdops_name(MDOPS_N));
	ck_assert_str_eq(mdops_name(MDOPS_OPEN), "open");
	ck_assert_str_eq(mdops_name(MDOPS_FALLOCATE), "fallocate");
}
END_TEST

START_TEST(near_misses)
{
	static const char *const others[] = {"", "o", "ope", "openx", "Open",
	    "open ", "getattrs", "fallocat", "statf", "syncs", "read_bytes",
	    "rename_trylocks", "samedir_rename", "ping", "\xff"};
	static const char repl[] = {'a', 'z', 'A', '_', '0', '\x80'};
	char name[32];
	unsigned op, i, k;

	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		ck_assert_int_eq(mdops_lookup(others[i]), -1);
	/* Every one-byte change of every name: -1, or the op it became. */
	for (op = 0; op < MDOPS_N; op++) {
		size_t n = strlen(mdops_name(op));

		for (i = 0; i < n; i++) {
			for (k = 0; k < sizeof(repl); k++) {
				memcpy(name, mdops_name(op), n + 1);
				name[i] = repl[k];
				ck_assert_int_eq(mdops_lookup(name),
				    lookup_slowly(name));
			}
		}
	}
}
END_TEST

START_TEST(from_stats)
{
	static const char text[] =
	    "snapshot_time 5.000000000 secs.nsecs\n"
	    "open                      7 samples [usecs] 1 2 3\n"
	    "getxattr                  -2 samples [usecs] 1 2 3\n"
	    "setattr 4 samples [reqs]\n"
	    "opens                     5 samples [usecs] 1 2 3\n"
	    "open                      9 samples [usecs] 1 2 3\n"
	    "fallocate 11 samples [reqs]\n";
	struct mdops m;

	ck_assert_int_eq(lstats_parse(&st, text, sizeof(text) - 1, 0, NULL), 0);
	mdops_from_stats(&m, &st);
	ck_assert_uint_eq(m.v[MDOPS_OPEN], 7);     /* the first line counts */
	ck_assert_uint_eq(m.v[MDOPS_GETXATTR], 0); /* negative: 0 */
	ck_assert_uint_eq(m.v[MDOPS_SETATTR], 4);
	ck_assert_uint_eq(m.v[MDOPS_FALLOCATE], 11);
	ck_assert_uint_eq(m.v[MDOPS_CLOSE], 0);
	ck_assert(!mdops_is_zero(&m));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("mdops");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, names_round_trip);
	tcase_add_test(tc, near_misses);
	tcase_add_test(tc, from_stats);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
