/* SPDX-License-Identifier: BSD-2-Clause */
/* The rate-limited complaint helper (daemon/ratelog.c) in its four uses:
 * first line then a count by timer, a burst per window, one line per
 * period, one line per outage and one at recovery. */
#include <check.h>
#include <string.h>

#include "clock.h"
#include "ratelog.h"
#include "testutil.h"

#define S CLOCK_NS_PER_S

START_TEST(take_then_flush)
{
	struct ratelog rl;
	const uint64_t p = 10 * S;
	uint64_t t = 5000 * S;

	memset(&rl, 0, sizeof(rl));
	ck_assert(ratelog_take(&rl, t, p));
	ck_assert(!ratelog_take(&rl, t + 1, p));
	ck_assert(!ratelog_take(&rl, t + 2, p));
	ck_assert_uint_eq(ratelog_due(&rl), t + p);
	ck_assert_uint_eq(ratelog_flush(&rl, t + p - 1, p), 0);
	ck_assert_uint_eq(ratelog_flush(&rl, t + p, p), 2);
	ck_assert_uint_eq(ratelog_due(&rl), 0);
}
END_TEST

START_TEST(burst_per_window)
{
	struct ratelog rl;
	const uint64_t w = 60 * S;
	uint64_t t = 100 * S, held = 99;
	int i;

	memset(&rl, 0, sizeof(rl));
	for (i = 0; i < 3; i++) {
		ck_assert(ratelog_burst(&rl, t + (uint64_t)i, w, 3, &held));
		ck_assert_uint_eq(held, 0);
	}
	for (i = 0; i < 5; i++)
		ck_assert(
		    !ratelog_burst(&rl, t + 10 + (uint64_t)i, w, 3, &held));
	/* The next window: its first line, after the count held back. */
	ck_assert(ratelog_burst(&rl, t + w, w, 3, &held));
	ck_assert_uint_eq(held, 5);
	ck_assert(ratelog_burst(&rl, t + w + 1, w, 3, &held));
	ck_assert_uint_eq(held, 0);
	ck_assert(ratelog_burst(&rl, t + w + 2, w, 3, &held));
	ck_assert(!ratelog_burst(&rl, t + w + 3, w, 3, &held));
	/* Stopping: what is held is said once. */
	ck_assert_uint_eq(ratelog_drain(&rl), 1);
	ck_assert_uint_eq(ratelog_drain(&rl), 0);
}
END_TEST

START_TEST(one_line_per_period)
{
	struct ratelog rl;
	const uint64_t p = 60 * S;
	uint64_t t = 7 * S, skipped = 99;

	memset(&rl, 0, sizeof(rl));
	ck_assert(ratelog_every(&rl, t, p, &skipped));
	ck_assert_uint_eq(skipped, 0);
	ck_assert(!ratelog_every(&rl, t + S, p, &skipped));
	ck_assert(!ratelog_every(&rl, t + p - 1, p, NULL));
	ck_assert(ratelog_every(&rl, t + p, p, &skipped));
	ck_assert_uint_eq(skipped, 2);
	ck_assert(!ratelog_every(&rl, t + p + 1, p, &skipped));
	/* Long quiet: the next one passes, saying one was not logged. */
	ck_assert(ratelog_every(&rl, t + 10 * p, p, &skipped));
	ck_assert_uint_eq(skipped, 1);
}
END_TEST

START_TEST(once_per_outage)
{
	struct ratelog rl;

	memset(&rl, 0, sizeof(rl));
	ck_assert(!ratelog_recover(&rl)); /* no outage, nothing to say */
	ck_assert(ratelog_fail(&rl));
	ck_assert(!ratelog_fail(&rl));
	ck_assert(!ratelog_fail(&rl));
	ck_assert(ratelog_recover(&rl));
	ck_assert(!ratelog_recover(&rl));
	ck_assert(ratelog_fail(&rl)); /* the next outage: one line again */
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ratelog");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, take_then_flush);
	tcase_add_test(tc, burst_per_window);
	tcase_add_test(tc, one_line_per_period);
	tcase_add_test(tc, once_per_outage);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
