/* SPDX-License-Identifier: BSD-2-Clause */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "names.h"
#include "testutil.h"

START_TEST(legacy_names)
{
	char buf[NAMES_METRIC_MAX];

	ck_assert_int_eq(names_metric(buf, sizeof(buf), "vu_short",
	                     NAMES_READ_BYTES),
	    0);
	ck_assert_str_eq(buf, "vu_short_read_bytes");
	ck_assert_int_eq(names_metric(buf, sizeof(buf), "scratch",
	                     NAMES_MDS_OPS),
	    0);
	ck_assert_str_eq(buf, "scratch_mds_ops");
	ck_assert_str_eq(names_units(NAMES_WRITE_BYTES), "bytes/sec");
	ck_assert_str_eq(names_units(NAMES_OSS_OPS), "ops/sec");
	ck_assert_int_eq(names_metric(buf, sizeof(buf), "a\"b", NAMES_OSS_OPS),
	    -EINVAL);
	ck_assert_int_eq(names_metric(buf, sizeof(buf), "", NAMES_OSS_OPS),
	    -EINVAL);
	ck_assert_int_eq(names_metric(buf, 8, "scratch", NAMES_OSS_OPS),
	    -EINVAL);
	ck_assert(!names_prefix_ok("has space"));
}
END_TEST

/* The metadata_ops metrics: the longest prefix the configuration takes
 * with the longest op still fits the sink. */
START_TEST(mds_op_names)
{
	char buf[NAMES_METRIC_MAX + 1];
	char prefix[49];

	ck_assert_int_eq(names_mds_op(buf, sizeof(buf), "scratch", "open"), 0);
	ck_assert_str_eq(buf, "scratch_mds_open");
	memset(prefix, 'p', 48);
	prefix[48] = '\0';
	ck_assert_int_eq(names_mds_op(buf, sizeof(buf), prefix, "fallocate"),
	    0);
	ck_assert_uint_eq(strlen(buf), 62);
	ck_assert_int_eq(names_mds_op(buf, sizeof(buf), "a b", "open"),
	    -EINVAL);
	ck_assert_int_eq(names_mds_op(buf, sizeof(buf), "scratch", ""),
	    -EINVAL);
	ck_assert_int_eq(names_mds_op(buf, 10, "scratch", "open"), -EINVAL);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("names");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, legacy_names);
	tcase_add_test(tc, mds_op_names);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
