/* SPDX-License-Identifier: BSD-2-Clause */
/* LNet network patterns and the relay's routing table. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "err.h"
#include "netroute.h"
#include "testutil.h"

static const struct {
	const char *text;
	const char *why; /* NULL: a pattern */
} patterns[] = {
    {"o2ib", NULL},
    {"o2ib0", NULL},
    {"o2ib2", NULL},
    {"tcp102", NULL},
    {"o2ib*", NULL},
    {"tcp[100-199]", NULL},
    {"o2ib[0,2,5-7]", NULL},
    {"gni", NULL},
    {"kfi4294967295", NULL},
    {"", "not 1-"},
    {"*", "not an LNet network pattern"},
    {"2ib", "not an LNet network pattern"},
    {"O2IB", "not an LNet network pattern"},
    {"o2ib-1", "not an LNet network pattern"},
    {"o2ib[]", "without numbers"},
    {"o2ib[1-3", "without numbers"},
    {"o2ib[3-1]", "goes down"},
    {"o2ib[1,]", "trailing"},
    {"o2ib[a]", "not a number"},
    {"o2ib4294967296", "too large"},
    {"o2ib[1-4294967296]", "not a number"},
    {"[1-3]", "not an LNet network pattern"},
    {"o2ib*2", "not an LNet network pattern"},
};

START_TEST(pattern_check)
{
	struct lh_err err;
	int rc;

	lh_err_clear(&err);
	rc = netroute_pattern_check(patterns[_i].text, &err);
	if (patterns[_i].why == NULL) {
		ck_assert_msg(rc == 0, "%s: %s", patterns[_i].text, err.reason);
		return;
	}
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_msg(strstr(err.reason, patterns[_i].why) != NULL,
	    "%s: '%s', want '%s'", patterns[_i].text, err.reason,
	    patterns[_i].why);
}
END_TEST

/* o2ib and o2ib0 are one network; o2ib never matches o2ib2. */
START_TEST(lookup)
{
	struct netroute *t = netroute_new();

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(netroute_add(t, 0, "o2ib", NULL), 0);
	ck_assert_int_eq(netroute_add(t, 0, "tcp", NULL), 0);
	ck_assert_int_eq(netroute_add(t, 1, "o2ib2", NULL), 0);
	ck_assert_int_eq(netroute_add(t, 2, "tcp[100-199]", NULL), 0);
	ck_assert_int_eq(netroute_add(t, 3, "gni*", NULL), 0);

	ck_assert_int_eq(netroute_lookup(t, "10.1.2.3@o2ib"), 0);
	ck_assert_int_eq(netroute_lookup(t, "10.1.2.3@o2ib0"), 0);
	ck_assert_int_eq(netroute_lookup(t, "o2ib"), 0);
	ck_assert_int_eq(netroute_lookup(t, "10.1.2.3@o2ib2"), 1);
	ck_assert_int_eq(netroute_lookup(t, "10.1.2.3@o2ib02"), 1);
	ck_assert_int_eq(netroute_lookup(t, "10.1.2.3@o2ib1"), -1);
	ck_assert_int_eq(netroute_lookup(t, "10.1.2.3@o2ib20"), -1);
	ck_assert_int_eq(netroute_lookup(t, "10.1.2.3@tcp"), 0);
	ck_assert_int_eq(netroute_lookup(t, "10.1.2.3@tcp1"), -1);
	ck_assert_int_eq(netroute_lookup(t, "10.1.2.3@tcp100"), 2);
	ck_assert_int_eq(netroute_lookup(t, "10.1.2.3@tcp199"), 2);
	ck_assert_int_eq(netroute_lookup(t, "10.1.2.3@tcp200"), -1);
	ck_assert_int_eq(netroute_lookup(t, "27@gni"), 3);
	ck_assert_int_eq(netroute_lookup(t, "27@gni4294967295"), 3);
	ck_assert_int_eq(netroute_lookup(t, "27@gni4294967296"), -1);
	ck_assert_int_eq(netroute_lookup(t, "27@kfi"), -1);
	ck_assert_int_eq(netroute_lookup(t, "2001:db8::1@tcp150"), 2);
	ck_assert_int_eq(netroute_lookup(t, "x@102"), -1);
	ck_assert_int_eq(netroute_lookup(t, ""), -1);
	ck_assert_int_eq(netroute_lookup(t, "x@"), -1);
	netroute_free(t);
}
END_TEST

/* Two routes may not claim one network; one route may repeat itself. */
START_TEST(overlaps)
{
	struct netroute *t = netroute_new();
	struct lh_err err;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(netroute_add(t, 0, "o2ib", NULL), 0);
	ck_assert_int_eq(netroute_add(t, 0, "o2ib0", NULL), 0);
	ck_assert_int_eq(netroute_add(t, 1, "o2ib[1-3]", NULL), 0);
	ck_assert_int_eq(netroute_add(t, 1, "tcp[5,7]", NULL), 0);
	lh_err_clear(&err);
	ck_assert_int_eq(netroute_add(t, 2, "o2ib0", &err), -EEXIST);
	ck_assert_str_eq(err.reason,
	    "'o2ib0' overlaps 'o2ib' of another route");
	ck_assert_int_eq(netroute_add(t, 2, "o2ib*", NULL), -EEXIST);
	ck_assert_int_eq(netroute_add(t, 2, "o2ib[3-9]", NULL), -EEXIST);
	ck_assert_int_eq(netroute_add(t, 2, "tcp[6,8-9]", NULL), 0);
	ck_assert_int_eq(netroute_add(t, 2, "o2ib[4-9]", NULL), 0);
	ck_assert_int_eq(netroute_add(t, 3, "tcp7", NULL), -EEXIST);
	ck_assert_int_eq(netroute_add(t, NETROUTE_MAX_ROUTES, "x", NULL),
	    -EINVAL);
	ck_assert_int_eq(netroute_add(t, 3, "bad-", NULL), -EINVAL);
	ck_assert_int_eq(netroute_lookup(t, "1@o2ib3"), 1);
	ck_assert_int_eq(netroute_lookup(t, "1@o2ib9"), 2);
	ck_assert_int_eq(netroute_lookup(t, "1@tcp8"), 2);
	netroute_free(t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("netroute");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, pattern_check, 0,
	    sizeof(patterns) / sizeof(patterns[0]));
	tcase_add_test(tc, lookup);
	tcase_add_test(tc, overlaps);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
