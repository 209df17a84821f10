/* SPDX-License-Identifier: BSD-2-Clause */
/* The listener's allow list: networks parsed, addresses matched. */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <check.h>
#include <errno.h>
#include <string.h>

#include "cidr.h"
#include "err.h"
#include "testutil.h"

static const struct {
	const char *net;
	const char *addr;
	int match; /* 1, 0; -1: net refused, why names the reason */
	const char *why;
} cases[] = {
    {"10.0.0.0/8", "10.200.3.4", 1, NULL},
    {"10.0.0.0/8", "11.0.0.1", 0, NULL},
    {"10.1.2.3/8", "10.9.9.9", 1, NULL}, /* host bits cleared */
    {"10.0.0.0/8", "::ffff:10.1.1.1", 1, NULL},
    {"192.0.2.7", "192.0.2.7", 1, NULL},
    {"192.0.2.7", "192.0.2.8", 0, NULL},
    {"192.0.2.0/25", "192.0.2.127", 1, NULL},
    {"192.0.2.0/25", "192.0.2.128", 0, NULL},
    {"0.0.0.0/0", "203.0.113.9", 1, NULL},
    {"0.0.0.0/0", "2001:db8::1", 0, NULL}, /* families apart */
    {"2001:db8::/32", "2001:db8:ffff::1", 1, NULL},
    {"2001:db8::/32", "2001:db9::1", 0, NULL},
    {"2001:db8::/33", "2001:db8:8000::1", 0, NULL},
    {"::1", "::1", 1, NULL},
    {"::1", "127.0.0.1", 0, NULL},
    {"::/0", "::ffff:10.0.0.1", 0, NULL},         /* a mapped address is IPv4 */
    {"::ffff:10.0.0.0/104", "10.1.2.3", 1, NULL}, /* is 10.0.0.0/8 */
    {"::ffff:10.0.0.0/104", "11.1.2.3", 0, NULL},
    {"10.0.0.0/33", NULL, -1, "prefix length is not a number from 0 to 32"},
    {"::/129", NULL, -1, "prefix length is not a number from 0 to 128"},
    {"10.0.0.0/", NULL, -1, "prefix length"},
    {"10.0.0.0/8x", NULL, -1, "prefix length"},
    {"10.0.0.0/+8", NULL, -1, "prefix length"},
    {"/8", NULL, -1, "not an address or network"},
    {"", NULL, -1, "not an address or network"},
    {"oss1", NULL, -1, "not an IPv4 or IPv6 address"},
    {"10.0.0", NULL, -1, "not an IPv4 or IPv6 address"},
};

static void
to_sockaddr(const char *a, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(a, ':') == NULL) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		ck_assert_int_eq(inet_pton(AF_INET, a, &sin->sin_addr), 1);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		ck_assert_int_eq(inet_pton(AF_INET6, a, &sin6->sin6_addr), 1);
	}
}

START_TEST(parse_and_match)
{
	struct cidr c;
	struct lh_err err;
	struct sockaddr_storage ss;
	int rc;

	memset(&c, 0xa5, sizeof(c));
	lh_err_clear(&err);
	rc = cidr_parse(cases[_i].net, &c, &err);
	if (cases[_i].match < 0) {
		ck_assert_int_eq(rc, -EINVAL);
		ck_assert_msg(strstr(err.reason, cases[_i].why) != NULL,
		    "%s: '%s'", cases[_i].net, err.reason);
		ck_assert_uint_eq(c.bits, 0xa5a5a5a5u); /* untouched */
		return;
	}
	ck_assert_msg(rc == 0, "%s: %s", cases[_i].net, err.reason);
	to_sockaddr(cases[_i].addr, &ss);
	ck_assert_msg(cidr_match(&c, (struct sockaddr *)&ss) ==
	        (cases[_i].match == 1),
	    "%s against %s", cases[_i].addr, cases[_i].net);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cidr");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, parse_and_match, 0,
	    sizeof(cases) / sizeof(cases[0]));
	suite_add_tcase(s, tc);
	return tu_run(s);
}
