/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The export digest against the general way (lstats_parse() with
 * iocount_from_stats() and mdops_from_stats()): on every fixture, on the
 * lines it must decline, on repeated names and unwanted numbers, and on
 * thousands of damaged copies of real files.  Whatever the digest takes,
 * the general way must read the same; what it declines costs time only.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delta.h"
#include "digest_agree.h"
#include "err.h"
#include "iocount.h"
#include "mdops.h"
#include "statsdigest.h"
#include "statsparse.h"
#include "testutil.h"

/* The digest held to the general way (digest_agree.h); returns whether
 * the digest took the file. */
static bool
agree(const char *what, const char *buf, size_t len, enum lh_target_kind kind)
{
	bool taken;
	const char *why = digest_disagrees(buf, len, kind, &taken);

	ck_assert_msg(why == NULL, "%s: %s", what, why);
	return taken;
}

static bool
agree_both(const char *what, const char *buf, size_t len)
{
	bool ost = agree(what, buf, len, LH_TARGET_OST);
	bool mdt = agree(what, buf, len, LH_TARGET_MDT);

	ck_assert_msg(ost == mdt, "%s: taken for one kind only", what);
	return ost;
}

/* Every export stats file of the fixtures: those Lustre 2.10 and later
 * print are taken, and read as the general way reads them. */
START_TEST(fixtures)
{
	static const struct {
		const char *rel;
		bool taken;
	} files[] = {
	    {"2.5/ost-export-stats.txt", false}, /* secs.usecs */
	    {"2.5/mdt-export-stats.txt", false},
	    {"2.7/ost-export-stats.txt", false},
	    {"2.7/mdt-export-stats.txt", false},
	    {"2.10/ost-export-stats.txt", true},
	    {"2.10/ost-export-stats-mds-peer.txt", true},
	    {"2.10/mdt-export-stats.txt", true},
	    {"2.10/mdt-export-stats-header-only.txt", true},
	    {"2.12/ost-export-stats.txt", true},
	    {"2.12/mdt-export-stats.txt", true},
	    {"2.14/ost-export-stats.txt", true},
	    {"2.14/ost-export-stats-sumsq-wrapped.txt", true},
	    {"2.14/mdt-export-stats.txt", true},
	    {"2.15/ost-export-stats.txt", true},
	    {"2.15/ost-export-stats-2.15.0.txt", true},
	    {"2.15/mdt-export-stats.txt", true},
	    {"2.16/ost-export-stats.txt", true},
	    {"2.16/ost-export-stats-no-header.txt", true},
	    {"2.16/mdt-export-stats.txt", true},
	    {"2.10/ost-target-stats.txt", true},
	    {"2.15/ost-target-stats.txt", true},
	    {"2.15/mdt-md_stats.txt", true},
	    {"2.7/ost-target-stats-pre2.10.txt", false},
	    {"2.12/lctl-get_param-exports-stats.txt", false},
	    {"quirks/ost-export-stats-truncated-200B.txt", false},
	};
	unsigned i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t len;
		char *buf = tu_read_file(tu_fixture(files[i].rel), &len);

		ck_assert_msg(agree_both(files[i].rel, buf, len) ==
		        files[i].taken,
		    "%s: %s", files[i].rel,
		    files[i].taken ? "declined" : "taken");
		free(buf);
	}
}
END_TEST

/* What the digest must leave to the general way, each in an otherwise
 * ordinary file. */
START_TEST(declines)
{
	static const char *const cases[] = {
	    "", /* empty: the general way says so */
	    "\n",
	    "snapshot_time             1510782606.789671 secs.usecs\n",
	    "snapshot_time:            1510782606.789671326 secs.nsecs\n",
	    "snapshot_time             1510782606.789671326 secs.nsecs\n"
	    "snapshot_time             1510782607.789671326 secs.nsecs\n",
	    "punch                     57 samples [reqs]\r\n",
	    "punch\t57 samples [reqs]\n",
	    "punch                     57  samples [reqs]\n",
	    "punch                     -57 samples [reqs]\n",
	    "punch                     57 samples [reqs] 1 2\n",
	    "punch                     57 samples [reqs] 1 2 3 4 5\n",
	    "punch                     57 samples [reqs] 1 2 3 \n",
	    "punch                     57 samples [reqs]", /* no '\n' */
	    "punch                     57 samples []\n",
	    "punch                     57 samples [abcdefghijklmnop]\n",
	    "punch                     57 sample [reqs]\n",
	    "punch:                    57 samples [reqs]\n",
	    "punch                     57 samples [reqs]\n\n",
	    "hello world\n",
	    /* an overflow in a number nobody counts: the parser refuses
	     * the file, so the digest must not take it */
	    "getattr                   5 samples [usecs] 1 2 "
	    "18446744073709551616\n",
	    "getattr                   5 samples [usecs] 1 2 3 "
	    "99999999999999999999\n",
	    "read_bytes                5 samples [bytes] 1 2 "
	    "18446744073709551616\n",
	};
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lstats_digest d;

		ck_assert_msg(lstats_digest(&d, cases[i], strlen(cases[i]),
		                  LH_TARGET_OST) == -EAGAIN,
		    "case %u taken: '%s'", i, cases[i]);
	}
}
END_TEST

/* A name printed twice counts once in the counters and the op counts, at
 * its first line, and twice in the samples total; the largest numbers
 * are read whole where they count and skipped where they do not. */
START_TEST(repeats_and_numbers)
{
	static const char text[] =
	    "snapshot_time             1510782606.789671326 secs.nsecs\n"
	    "start_time                1510000000.000000001 secs.nsecs\n"
	    "elapsed_time              782606.789671325 secs.nsecs\n"
	    "read_bytes                7 samples [bytes] 4096 4194304 "
	    "18446744073709551615 18446744073709551615\n"
	    "write_bytes               3 samples [bytes] 1 2 3\n"
	    "open                      11 samples [usecs] 1 2 3 4\n"
	    "open                      13 samples [usecs] 1 2 3 4\n"
	    "read_bytes                17 samples [bytes] 1 2 5\n"
	    "getattr                   19 samples [usecs] 0 "
	    "18446744073709551615 18446744073709551615 "
	    "18446744073709551615\n"
	    "samedir_rename            23 samples [usecs]\n"
	    "ping                      29 samples [reqs]\n"
	    "preprw                    31 samples [reqs]\n";
	struct lstats_digest d;

	ck_assert(agree_both("repeats", text, sizeof(text) - 1));
	ck_assert_int_eq(lstats_digest(&d, text, sizeof(text) - 1,
	                     LH_TARGET_MDT),
	    0);
	ck_assert_uint_eq(d.io.read_bytes, UINT64_MAX);
	ck_assert_uint_eq(d.io.read_ops, 7);
	ck_assert_uint_eq(d.io.write_bytes, 3);
	ck_assert_uint_eq(d.ops.v[MDOPS_OPEN], 11);
	ck_assert_uint_eq(d.ops.v[MDOPS_GETATTR], 19);
	ck_assert_uint_eq(d.samples, 7 + 3 + 11 + 13 + 17 + 19 + 23 + 29 + 31);
	/* MDT: open, getattr and preprw; not the rename breakdown, ping,
	 * nor the second open. */
	ck_assert_uint_eq(d.io.mds_ops, 11 + 19 + 31);
	ck_assert(d.start.present && d.start.nsec == 1);
}
END_TEST

/* The numbers after a unit, which the digest reads by masks
 * (fast_values_masked()): each tail on a line whose sum is counted and
 * on one whose numbers are not, as a file's last line (read from a copy)
 * and followed by another (read in place).  Taken or declined as given,
 * and read as the general way reads it. */
START_TEST(tails)
{
	static const struct {
		const char *tail;
		bool taken;
	} cases[] = {
	    {"", true},
	    {" 1 2 3", true},
	    {" 1 2 3 4", true},
	    {" 4096 65536 118433714176 7535577381470208", true},
	    {" 1 2 18446744073709551615 18446744073709551615", true},
	    {" 1 2 3 000000000000000000000000000004", true},
	    {" 1 2 18446744073709551614 09999999999999999999", true},
	    {" 1 2 000000000000000000001 18446744073709551615", true},
	    {" 1 2 0000000000000000000000000000000000000000005 6", true},
	    {" 1", false},
	    {" 1 2", false},
	    {" 1 2 3 4 5", false},
	    {"  1 2 3", false},
	    {" 1  2 3", false},
	    {" 1 2  3 4", false},
	    {" 1 2 3 ", false},
	    {" 1 2 3 4 ", false},
	    {" 1 2 3\t4", false},
	    {" 1 2 3 4\r", false},
	    {" 1 2 3x", false},
	    {" 1 2 -3", false},
	    {" 1 2 3 18446744073709551616", false},
	    {" 1 2 18446744073709551616 4", false},
	    {" 1 2 99999999999999999999999 4", false},
	    {" 1 2 184467440737095516150 4", false},
	    {" 1 2 100000000000000000000 4", false},
	    {" 1 2 3 18446744073709551625", false},
	};
	static const char *const names[] = {"read_bytes", "getattr"};
	char text[512], what[600];
	unsigned i, k, after;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (k = 0; k < 2; k++) {
			for (after = 0; after < 2; after++) {
				struct lstats_digest d;
				int n = snprintf(text, sizeof(text),
				    "%-25s 5 samples [bytes]%s\n%s", names[k],
				    cases[i].tail,
				    after ? "getattr                   7 "
				            "samples [usecs] 1 2 3 4\n" :
				            "");

				ck_assert(n > 0 && (size_t)n < sizeof(text));
				(void)snprintf(what, sizeof(what),
				    "'%s' (%s, %s)", cases[i].tail, names[k],
				    after ? "a line after" : "last line");
				ck_assert_msg(agree_both(what, text,
				                  (size_t)n) == cases[i].taken,
				    "%s: %s", what,
				    cases[i].taken ? "declined" : "taken");
				if (cases[i].taken && k == 0)
					ck_assert_msg(lstats_digest(&d, text,
					                  (size_t)n,
					                  LH_TARGET_OST) == 0 &&
					        (cases[i].tail[0] == '\0' ||
					            d.io.read_bytes != 0),
					    "%s: no bytes read", what);
			}
		}
	}
}
END_TEST

/* More counters than the parser keeps: declined, so that the general way
 * reports it. */
START_TEST(too_many_counters)
{
	const size_t cap = 200 * 64;
	char *text = malloc(cap);
	struct lstats_digest d;
	size_t len = 0;
	unsigned i;

	ck_assert_ptr_nonnull(text);
	for (i = 0; i <= LSTATS_COUNTERS_MAX; i++)
		len += (size_t)snprintf(text + len, cap - len,
		    "c%-24u %u samples [reqs]\n", i, i + 1);
	ck_assert_int_eq(lstats_digest(&d, text, len, LH_TARGET_OST), -EAGAIN);
	/* One fewer is taken. */
	len = (size_t)(strrchr(text, 'c') - text);
	ck_assert(agree_both("128 counters", text, len));
	free(text);
}
END_TEST

/* Copies of real files with one to three bytes changed (a digit, a
 * blank, a control byte, a letter), or cut short: whatever the digest
 * takes, the general way reads the same. */
START_TEST(damaged_copies)
{
	static const char *const rel[] = {"2.15/ost-export-stats.txt",
	    "2.15/mdt-export-stats.txt", "2.10/ost-export-stats.txt",
	    "2.14/ost-export-stats-sumsq-wrapped.txt"};
	static const char bytes[] = "0123456789 \n\t\r:-[]x\0";
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	unsigned f, i, k, taken = 0;

	for (f = 0; f < sizeof(rel) / sizeof(rel[0]); f++) {
		size_t len;
		char *orig = tu_read_file(tu_fixture(rel[f]), &len);
		char *buf = malloc(len);

		ck_assert_ptr_nonnull(buf);
		for (i = 0; i < 3000; i++) {
			size_t n = len;

			memcpy(buf, orig, len);
			for (k = 0; k < 1 + i % 3; k++) {
				seed = seed * 6364136223846793005ULL +
				    1442695040888963407ULL;
				buf[(seed >> 33) % len] =
				    bytes[(seed >> 17) % (sizeof(bytes) - 1)];
			}
			if (i % 10 == 9)
				n = (size_t)(seed >> 40) % len;
			taken += agree_both(rel[f], buf, n) ? 1 : 0;
		}
		free(buf);
		free(orig);
	}
	/* Some damage leaves a file Lustre could have printed. */
	ck_assert_uint_gt(taken, 100);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("statsdigest");
	TCase *tc = tcase_create("digest");

	tcase_add_test(tc, fixtures);
	tcase_add_test(tc, declines);
	tcase_add_test(tc, repeats_and_numbers);
	tcase_add_test(tc, tails);
	tcase_add_test(tc, too_many_counters);
	tcase_add_test(tc, damaged_copies);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
