/* SPDX-License-Identifier: BSD-2-Clause */
/* Epoch logic as tables of counter sequences, and sweep boundaries. */
#include <check.h>
#include <string.h>

#include "clock.h"
#include "delta.h"
#include "statsparse.h"
#include "testutil.h"

#define S (1000000000ULL)

static const struct {
	const char *what;
	bool has_prev, first;
	struct delta_sample prev, cur;
	enum delta_kind kind;
	uint64_t rb, wb, ops, span;
} cases[] = {
    {"first sweep: baseline", false, true, {{0}, 0, 0, 0},
        {{100, 200, 0, 0, 5, 0}, 10, 50 * S, 0}, DELTA_BASELINE, 0, 0, 0, 0},
    {"appears later, start_time known: all of it, span left to the caller",
        false, false, {{0}, 0, 0, 0},
        {{100, 200, 0, 0, 5, 0}, 10, 50 * S, 45 * S}, DELTA_NEW, 100, 200, 5,
        0},
    {"appears later, no start_time: all of it, span unknown", false, false,
        {{0}, 0, 0, 0}, {{100, 0, 0, 0, 0, 0}, 1, 50 * S, 0}, DELTA_NEW, 100, 0,
        0, 0},
    {"same epoch", true, false, {{100, 200, 0, 0, 5, 0}, 10, 50 * S, 1 * S},
        {{150, 260, 0, 0, 9, 0}, 20, 70 * S, 1 * S}, DELTA_NORMAL, 50, 60, 4,
        20 * S},
    {"idle", true, false, {{100, 200, 0, 0, 5, 0}, 10, 50 * S, 0},
        {{100, 200, 0, 0, 5, 0}, 10, 70 * S, 0}, DELTA_NORMAL, 0, 0, 0, 20 * S},
    {"exports/clear: counters went down", true, false,
        {{1000, 2000, 0, 0, 50, 0}, 100, 50 * S, 0},
        {{30, 0, 0, 0, 2, 0}, 3, 70 * S, 0}, DELTA_RESET, 30, 0, 2, 20 * S},
    {"reset, then more than before: start_time moved", true, false,
        {{1000, 0, 0, 0, 10, 0}, 10, 50 * S, 1 * S},
        {{5000, 0, 0, 0, 12, 0}, 12, 70 * S, 60 * S}, DELTA_RESET, 5000, 0, 12,
        20 * S},
    {"reset, then more bytes, older Lustre: total samples went down", true,
        false, {{1000, 0, 0, 0, 10, 0}, 900, 50 * S, 0},
        {{5000, 0, 0, 0, 12, 0}, 14, 70 * S, 0}, DELTA_RESET, 5000, 0, 12,
        20 * S},
    {"2.15.0: start_time 0 says nothing", true, false,
        {{1000, 0, 0, 0, 10, 0}, 10, 50 * S, 0},
        {{1500, 0, 0, 0, 11, 0}, 11, 70 * S, 0}, DELTA_NORMAL, 500, 0, 1,
        20 * S},
    {"time went backwards: span unknown, delta still exact", true, false,
        {{1000, 0, 0, 0, 10, 0}, 10, 70 * S, 0},
        {{1500, 0, 0, 0, 11, 0}, 11, 50 * S, 0}, DELTA_NORMAL, 500, 0, 1, 0},
    {"counters near 2^64", true, false,
        {{UINT64_MAX - 10, 0, 0, 0, 0, 0}, 5, 1 * S, 0},
        {{UINT64_MAX, 0, 0, 0, 0, 0}, 6, 2 * S, 0}, DELTA_NORMAL, 10, 0, 0,
        1 * S},
};

START_TEST(delta_table)
{
	struct iocount d;
	uint64_t span;
	enum delta_kind k;

	k = delta_compute(cases[_i].has_prev ? &cases[_i].prev : NULL,
	    &cases[_i].cur, cases[_i].first, &d, &span);
	ck_assert_msg(k == cases[_i].kind, "%s: kind %d", cases[_i].what, k);
	ck_assert_msg(d.read_bytes == cases[_i].rb &&
	        d.write_bytes == cases[_i].wb && d.oss_ops == cases[_i].ops,
	    "%s: delta %llu %llu %llu", cases[_i].what,
	    (unsigned long long)d.read_bytes, (unsigned long long)d.write_bytes,
	    (unsigned long long)d.oss_ops);
	ck_assert_msg(span == cases[_i].span, "%s: span %llu", cases[_i].what,
	    (unsigned long long)span);
}
END_TEST

START_TEST(sample_from_stats)
{
	struct delta_sample s;
	struct iocount c;
	static struct lstats st;
	const char *txt = "snapshot_time 100.000000005 secs.nsecs\n"
	                  "start_time 0.000000000 secs.nsecs\n"
	                  "read_bytes 3 samples [bytes] 1 1 3 3\n"
	                  "ping 7 samples [reqs]\n";

	ck_assert_int_eq(lstats_parse(&st, txt, strlen(txt), 0, NULL), 0);
	iocount_from_stats(&c, &st, LH_TARGET_OST);
	delta_sample_from(&s, &st, &c);
	ck_assert_uint_eq(s.samples, 10);
	ck_assert_uint_eq(s.snap_ns, 100 * S + 5);
	ck_assert_uint_eq(s.start_ns, 0);
	ck_assert_uint_eq(s.c.read_bytes, 3);
}
END_TEST

START_TEST(boundaries)
{
	ck_assert_uint_eq(clock_next_boundary(0, 20), 20 * S);
	ck_assert_uint_eq(clock_next_boundary(19 * S + 999999999, 20), 20 * S);
	ck_assert_uint_eq(clock_next_boundary(20 * S, 20), 40 * S);
	ck_assert_uint_eq(clock_next_boundary(1700000001 * S, 20),
	    1700000020 * S);
	ck_assert_uint_eq(clock_sweep_id(1700000039 * S, 20), 1700000020);
	ck_assert_uint_eq(clock_sweep_id(1700000040 * S, 20), 1700000040);
	ck_assert_uint_eq(clock_next_boundary(5 * S + 1, 1), 6 * S);
	ck_assert(clock_realtime_ns() > 1700000000 * S);
	ck_assert(clock_monotonic_ns() > 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("delta");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, delta_table, 0,
	    sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, sample_from_stats);
	tcase_add_test(tc, boundaries);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
