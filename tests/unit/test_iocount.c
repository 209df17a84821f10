/* SPDX-License-Identifier: BSD-2-Clause */
/* Counter semantics on fixtures of several Lustre lines; the expected
 * numbers were added up by hand from the fixture files. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iocount.h"
#include "statsparse.h"
#include "testutil.h"

static struct lstats st;

static struct iocount
count_fixture(const char *rel, enum lh_target_kind kind)
{
	struct iocount io;
	size_t len;
	char *buf = tu_read_file(tu_fixture(rel), &len);

	ck_assert_int_eq(lstats_parse(&st, buf, len, 0, NULL), 0);
	iocount_from_stats(&io, &st, kind);
	free(buf);
	return io;
}

/* 2.5 OST: obd-op counters; preprw/commitrw/ping do not count. */
START_TEST(ost_25)
{
	struct iocount io =
	    count_fixture("2.5/ost-export-stats.txt", LH_TARGET_OST);

	ck_assert_uint_eq(io.read_bytes, 176312373248ULL);
	ck_assert_uint_eq(io.write_bytes, 380270596096ULL);
	ck_assert_uint_eq(io.read_ops, 49412);
	ck_assert_uint_eq(io.write_ops, 92820);
	/* get_info 3 + set_info_async 6 + disconnect 1 + setattr 6 +
	 * punch 22 + sync 33, plus the bulk RPCs. */
	ck_assert_uint_eq(io.oss_ops, 71 + 49412 + 92820);
	ck_assert_uint_eq(io.mds_ops, 0);
}
END_TEST

/* 2.15 OST: read/write latency lines duplicate the bulk RPCs. */
START_TEST(ost_215)
{
	struct iocount io =
	    count_fixture("2.15/ost-export-stats.txt", LH_TARGET_OST);

	ck_assert_uint_eq(io.read_ops, 49412);
	ck_assert_uint_eq(io.write_ops, 92820);
	/* setattr 6 + punch 22 + sync 33 + statfs 3 + set_info 6 */
	ck_assert_uint_eq(io.oss_ops, 70 + 49412 + 92820);
}
END_TEST

/* 2.16 MDT: the rename breakdown lines are already in rename. */
START_TEST(mdt_216)
{
	struct iocount io =
	    count_fixture("2.16/mdt-export-stats.txt", LH_TARGET_MDT);

	ck_assert_uint_eq(io.mds_ops, 136736);
	ck_assert_uint_eq(io.oss_ops, 0);
	ck_assert_uint_eq(io.read_bytes, 0);
}
END_TEST

/* 2.10 MDT (count-only lines) and a header-only file. */
START_TEST(mdt_210)
{
	struct iocount io =
	    count_fixture("2.10/mdt-export-stats.txt", LH_TARGET_MDT);

	ck_assert_uint_eq(io.mds_ops, 10 + 9 + 1 + 16 + 57 + 2 + 1);
	io = count_fixture("2.10/mdt-export-stats-header-only.txt",
	    LH_TARGET_MDT);
	ck_assert_uint_eq(io.mds_ops, 0);
}
END_TEST

START_TEST(negative_and_add)
{
	const char *s = "read_bytes -4 samples [bytes] 1 2 -3\n"
	                "getattr 5 samples [reqs]\n";
	struct iocount a, b;

	ck_assert_int_eq(lstats_parse(&st, s, strlen(s), 0, NULL), 0);
	iocount_from_stats(&a, &st, LH_TARGET_OST);
	ck_assert_uint_eq(a.read_bytes, 0);
	ck_assert_uint_eq(a.read_ops, 0);
	ck_assert_uint_eq(a.oss_ops, 5);
	b = a;
	iocount_add(&a, &b);
	ck_assert_uint_eq(a.oss_ops, 10);
}
END_TEST
/* Every name that is not an op, on the kinds it is not one, and names
 * of the same length that differ by one byte (an op on both kinds). */
START_TEST(names_by_kind)
{
	static const struct {
		const char *name;
		int ost; /* counted in oss_ops */
		int mdt; /* counted in mds_ops */
	} cases[] = {
	    {"ping", 0, 0},
	    {"pinG", 1, 1},
	    {"read", 0, 0},
	    {"reaD", 1, 1},
	    {"write", 0, 0},
	    {"wrote", 1, 1},
	    {"preprw", 0, 1},
	    {"prepro", 1, 1},
	    {"commitrw", 0, 1},
	    {"commitrx", 1, 1},
	    {"samedir_rename", 1, 0},
	    {"samedir_renamE", 1, 1},
	    {"crossdir_rename", 1, 0},
	    {"rename_trylocks", 1, 0},
	    {"crossdir_renamE", 1, 1},
	    {"rename_trylockS", 1, 1},
	    {"parallel_rename_dir", 1, 0},
	    {"parallel_rename_diR", 1, 1},
	    {"parallel_rename_file", 1, 0},
	    {"parallel_rename_filE", 1, 1},
	    {"read_byteS", 1, 1},
	    {"write_byteS", 1, 1},
	    {"rename", 1, 1},
	    {"getattr", 1, 1},
	    {"p", 1, 1},
	    {"parallel_rename_files", 1, 1},
	};
	char buf[128];
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iocount o, m;
		int n = snprintf(buf, sizeof(buf),
		    "%s 7 samples [bytes] 1 2 3\n", cases[i].name);

		ck_assert_int_eq(lstats_parse(&st, buf, (size_t)n, 0, NULL), 0);
		iocount_from_stats(&o, &st, LH_TARGET_OST);
		iocount_from_stats(&m, &st, LH_TARGET_MDT);
		ck_assert_msg(o.oss_ops == (cases[i].ost ? 7u : 0u) &&
		        m.mds_ops == (cases[i].mdt ? 7u : 0u),
		    "%s: oss_ops %llu, mds_ops %llu", cases[i].name,
		    (unsigned long long)o.oss_ops,
		    (unsigned long long)m.mds_ops);
		ck_assert_uint_eq(o.read_bytes | o.write_bytes | m.read_bytes |
		        m.write_bytes,
		    0);
	}
	ck_assert_int_eq(lstats_parse(&st,
	                     "read_bytes 2 samples [bytes] 1 2 3\n"
	                     "write_bytes 4 samples [bytes] 1 2 5\n",
	                     71, 0, NULL),
	    0);
	for (i = 0; i < 2; i++) {
		struct iocount io;

		iocount_from_stats(&io, &st,
		    i == 0 ? LH_TARGET_OST : LH_TARGET_MDT);
		ck_assert_uint_eq(io.read_bytes, 3);
		ck_assert_uint_eq(io.read_ops, 2);
		ck_assert_uint_eq(io.write_bytes, 5);
		ck_assert_uint_eq(io.write_ops, 4);
		ck_assert_uint_eq(io.oss_ops, i == 0 ? 6 : 0);
		ck_assert_uint_eq(io.mds_ops, 0);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("iocount");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, ost_25);
	tcase_add_test(tc, ost_215);
	tcase_add_test(tc, mdt_216);
	tcase_add_test(tc, mdt_210);
	tcase_add_test(tc, negative_and_add);
	tcase_add_test(tc, names_by_kind);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
