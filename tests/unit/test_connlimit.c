/* SPDX-License-Identifier: BSD-2-Clause */
/* The listener's admission arithmetic (daemon/connlimit.c) and its
 * rate-limited lines (daemon/ratelog.c): token bucket, per-source key,
 * descriptor room, one line a period. */
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <check.h>
#include <string.h>

#include "clock.h"
#include "connlimit.h"
#include "ratelog.h"
#include "testutil.h"

#define S CLOCK_NS_PER_S

START_TEST(bucket_burst_then_rate)
{
	struct connlimit_bucket b;
	uint64_t t = 1000 * S;

	connlimit_bucket_init(&b, 100, 5, t);
	for (int i = 0; i < 5; i++) {
		ck_assert_uint_eq(connlimit_bucket_wait(&b, t), 0);
		connlimit_bucket_take(&b, t);
	}
	/* Empty: the next token in 1/100 s, never a refusal. */
	ck_assert_uint_gt(connlimit_bucket_wait(&b, t), 0);
	ck_assert_uint_le(connlimit_bucket_wait(&b, t), S / 100 + 1);
	ck_assert_uint_eq(connlimit_bucket_wait(&b, t + S / 100 + 1), 0);
	/* Refilled to the burst and no further. */
	t += 60 * S;
	for (int i = 0; i < 5; i++)
		connlimit_bucket_take(&b, t);
	ck_assert_uint_gt(connlimit_bucket_wait(&b, t), 0);
	/* A clock that does not move adds nothing. */
	ck_assert_uint_gt(connlimit_bucket_wait(&b, t - S), 0);
}
END_TEST

static void
src_of(const char *a, struct connlimit_src *ret)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (strchr(a, ':') == NULL) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		ck_assert_int_eq(inet_pton(AF_INET, a, &sin->sin_addr), 1);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		ck_assert_int_eq(inet_pton(AF_INET6, a, &sin6->sin6_addr), 1);
	}
	connlimit_src_of((struct sockaddr *)&ss, ret);
}

static const struct {
	const char *a, *b;
	bool same;
} srcs[] = {
    {"10.0.0.1", "10.0.0.1", true},
    {"10.0.0.1", "10.0.0.2", false},
    {"10.0.0.1", "::ffff:10.0.0.1", true}, /* IPv4 on an IPv6 socket */
    {"2001:db8:1:2::1", "2001:db8:1:2:ffff::9", true}, /* one /64 */
    {"2001:db8:1:2::1", "2001:db8:1:3::1", false},
    {"::ffff:10.0.0.1", "::ffff:10.0.0.2", false},
};

START_TEST(source_key)
{
	struct connlimit_src a, b;

	src_of(srcs[_i].a, &a);
	src_of(srcs[_i].b, &b);
	ck_assert_msg(connlimit_src_equal(&a, &b) == srcs[_i].same, "%s %s",
	    srcs[_i].a, srcs[_i].b);
}
END_TEST

START_TEST(nofile_room)
{
	struct rlimit saved, low;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &saved), 0);
	/* Within the limit: as asked. */
	ck_assert_uint_eq(connlimit_nofile(10), 10);
	/* A hard limit of 200 (Check runs each test in a process of its
	 * own): what it leaves beside the reserve. */
	low.rlim_cur = 200;
	low.rlim_max = 200;
	if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 200)
		return;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	ck_assert_uint_eq(connlimit_nofile(1024), 200 - CONNLIMIT_FD_RESERVE);
	ck_assert_uint_eq(connlimit_nofile(100), 100);
}
END_TEST

START_TEST(nofile_raised)
{
	struct rlimit rl;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 1000)
		return; /* no room to raise it here */
	rl.rlim_cur = 100;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	/* The soft limit is raised towards the hard one, not the count
	 * lowered. */
	ck_assert_uint_eq(connlimit_nofile(500), 500);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_uint_ge(rl.rlim_cur, 500 + CONNLIMIT_FD_RESERVE);
}
END_TEST

START_TEST(one_line_a_period)
{
	struct ratelog rl;
	const uint64_t p = 10 * S;
	uint64_t t = 5000 * S;

	memset(&rl, 0, sizeof(rl));
	ck_assert(ratelog_take(&rl, t, p)); /* the first: in full */
	for (int i = 0; i < 29; i++)
		ck_assert(!ratelog_take(&rl, t + (uint64_t)i * S / 10, p));
	ck_assert_uint_eq(ratelog_due(&rl), t + p);
	ck_assert_uint_eq(ratelog_flush(&rl, t + p - 1, p), 0); /* not yet */
	ck_assert_uint_eq(ratelog_flush(&rl, t + p, p), 29);
	/* A steady flood: one count a period, no full line in between. */
	ck_assert(!ratelog_take(&rl, t + p + 1, p));
	ck_assert_uint_eq(ratelog_flush(&rl, t + 2 * p, p), 1);
	/* Quiet for a period: the next is logged in full again. */
	ck_assert_uint_eq(ratelog_due(&rl), 0);
	ck_assert(ratelog_take(&rl, t + 4 * p, p));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("connlimit");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, bucket_burst_then_rate);
	tcase_add_loop_test(tc, source_key, 0, sizeof(srcs) / sizeof(srcs[0]));
	tcase_add_test(tc, nofile_raised);
	tcase_add_test(tc, nofile_room);
	tcase_add_test(tc, one_line_a_period);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
