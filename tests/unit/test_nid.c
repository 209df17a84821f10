/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * NIDs as Lustre prints them: split, format back byte for byte, and the
 * network a NID belongs to.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nid.h"
#include "testutil.h"

struct split_case {
	const char *nid;
	enum nid_kind kind;
	const char *addr;
	const char *net;
	uint32_t num; /* IPV4 and NUM only */
};

static const struct split_case split_cases[] = {
    {"10.1.2.3@o2ib", NID_KIND_IPV4, "10.1.2.3", "o2ib", 0x0a010203u},
    {"0@lo", NID_KIND_NUM, "0", "lo", 0},
    {"27@gni", NID_KIND_NUM, "27", "gni", 27},
    {"15@kfi", NID_KIND_NUM, "15", "kfi", 15},
    {"4294967295@gni", NID_KIND_NUM, "4294967295", "gni", UINT32_MAX},
    {"192.168.0.4@tcp102", NID_KIND_IPV4, "192.168.0.4", "tcp102", 0xc0a80004u},
    {"0.0.0.0@tcp", NID_KIND_IPV4, "0.0.0.0", "tcp", 0},
    {"255.255.255.255@o2ib2", NID_KIND_IPV4, "255.255.255.255", "o2ib2",
        UINT32_MAX},
    {"10.1.2.3@o2ib0", NID_KIND_IPV4, "10.1.2.3", "o2ib0", 0x0a010203u},
    {"2001:db8:10::17@tcp", NID_KIND_STRING, "2001:db8:10::17", "tcp", 0},
    {"::1@tcp", NID_KIND_STRING, "::1", "tcp", 0},
    /* Not canonical: only a string gives the same text back. */
    {"010.1.2.3@o2ib", NID_KIND_STRING, "010.1.2.3", "o2ib", 0},
    {"10.1.2.03@o2ib", NID_KIND_STRING, "10.1.2.03", "o2ib", 0},
    {"1.2.3.256@tcp", NID_KIND_STRING, "1.2.3.256", "tcp", 0},
    {"1.2.3@tcp", NID_KIND_STRING, "1.2.3", "tcp", 0},
    {"1.2.3.4.5@tcp", NID_KIND_STRING, "1.2.3.4.5", "tcp", 0},
    {"4294967296@gni", NID_KIND_STRING, "4294967296", "gni", 0},
    {"99999999999999999999@gni", NID_KIND_STRING, "99999999999999999999", "gni",
        0},
    {"007@gni", NID_KIND_STRING, "007", "gni", 0},
    {"+7@gni", NID_KIND_STRING, "+7", "gni", 0},
    {"-1@gni", NID_KIND_STRING, "-1", "gni", 0},
    {"0x1f@gni", NID_KIND_STRING, "0x1f", "gni", 0},
    {" 7@gni", NID_KIND_STRING, " 7", "gni", 0},
    {"0x0a010203@o2ib", NID_KIND_STRING, "0x0a010203", "o2ib", 0},
    {"weird<x>@<1:2>", NID_KIND_STRING, "weird<x>", "<1:2>", 0},
};

START_TEST(split_format)
{
	const struct split_case *c = &split_cases[_i];
	struct nid_parts p;
	char buf[NID_STR_MAX];

	memset(&p, 0x5a, sizeof(p));
	ck_assert_msg(nid_split(c->nid, &p) == 0, "%s refused", c->nid);
	ck_assert_msg(p.kind == c->kind, "%s: kind %d, expected %d", c->nid,
	    (int)p.kind, (int)c->kind);
	ck_assert_str_eq(p.addr, c->addr);
	ck_assert_str_eq(p.net, c->net);
	if (c->kind != NID_KIND_STRING)
		ck_assert_msg(p.num == c->num, "%s: num %u, expected %u",
		    c->nid, p.num, c->num);
	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(nid_format(&p, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, c->nid);

	/* Exactly the right size, and one byte short. */
	ck_assert_int_eq(nid_format(&p, buf, strlen(c->nid) + 1), 0);
	ck_assert_str_eq(buf, c->nid);
	ck_assert_int_eq(nid_format(&p, buf, strlen(c->nid)), -ENAMETOOLONG);
}
END_TEST

/* IPV4 and NUM are formatted from num, not from addr. */
START_TEST(format_from_num)
{
	struct nid_parts p;
	char buf[NID_STR_MAX];

	memset(&p, 0, sizeof(p));
	p.kind = NID_KIND_IPV4;
	p.num = 0x0a0b0c0du;
	memcpy(p.net, "o2ib3", 6);
	ck_assert_int_eq(nid_format(&p, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "10.11.12.13@o2ib3");
	p.kind = NID_KIND_NUM;
	p.num = 4000000000u;
	memcpy(p.net, "gni", 4);
	ck_assert_int_eq(nid_format(&p, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "4000000000@gni");
}
END_TEST

static const char *const split_bads[] = {
    "", "noat", "@o2ib", "1.2.3.4@", "@",
    NULL, /* an address longer than NID_STR_MAX */
    NULL, /* a net longer than NID_NET_MAX */
};

START_TEST(split_rejects)
{
	char nid[512];
	const char *s = split_bads[_i];
	struct nid_parts p, before;

	if (s == NULL) {
		size_t i = (size_t)_i;

		if (i == sizeof(split_bads) / sizeof(split_bads[0]) - 2) {
			memset(nid, '1', NID_STR_MAX + 10);
			memcpy(nid + NID_STR_MAX + 10, "@tcp", 5);
		} else {
			memcpy(nid, "1@", 2);
			memset(nid + 2, 'o', NID_NET_MAX + 5);
			nid[2 + NID_NET_MAX + 5] = '\0';
		}
		s = nid;
	}
	memset(&p, 0x5a, sizeof(p));
	before = p;
	ck_assert_msg(nid_split(s, &p) == -EINVAL, "\"%s\" accepted", s);
	ck_assert_msg(memcmp(&p, &before, sizeof(p)) == 0,
	    "\"%s\": ret clobbered on failure", s);
}
END_TEST

/* The longest NID that fits is accepted, and goes back out unchanged. */
START_TEST(split_longest)
{
	char nid[NID_STR_MAX], buf[NID_STR_MAX];
	struct nid_parts p;
	size_t alen = NID_STR_MAX - 1 - 4; /* "@tcp" and the NUL */

	memset(nid, 'a', alen);
	memcpy(nid + alen, "@tcp", 5);
	ck_assert_uint_eq(strlen(nid), NID_STR_MAX - 1);
	ck_assert_int_eq(nid_split(nid, &p), 0);
	ck_assert_int_eq(p.kind, NID_KIND_STRING);
	ck_assert_int_eq(nid_format(&p, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, nid);
}
END_TEST

struct net_case {
	const char *nid;
	const char *net;
};

static const struct net_case net_cases[] = {
    {"10.1.2.3@o2ib0", "o2ib"},
    {"10.1.2.3@o2ib", "o2ib"},
    {"10.1.2.3@o2ib2", "o2ib2"},
    {"10.1.2.3@o2ib10", "o2ib10"},
    {"10.1.2.3@o2ib20", "o2ib20"},
    {"192.168.0.4@tcp102", "tcp102"},
    {"192.168.0.4@tcp0", "tcp"},
    {"192.168.0.4@tcp100", "tcp100"},
    {"192.168.0.4@tcp", "tcp"},
    {"27@gni", "gni"},
    {"27@gni0", "gni"},
    {"0@lo", "lo"},
    {"2001:db8:10::17@tcp0", "tcp"},
    {"2001:db8:10::17@tcp3", "tcp3"},
};

START_TEST(net)
{
	const struct net_case *c = &net_cases[_i];
	char buf[NID_NET_MAX];

	memset(buf, 0x5a, sizeof(buf));
	ck_assert_msg(nid_net(c->nid, buf, sizeof(buf)) == 0, "%s refused",
	    c->nid);
	ck_assert_msg(strcmp(buf, c->net) == 0, "net of %s is %s, expected %s",
	    c->nid, buf, c->net);
}
END_TEST

/* Whatever the normalisation, different networks stay different. */
START_TEST(net_distinct)
{
	static const char *const nets[] = {"o2ib", "o2ib2", "o2ib10", "o2ib20",
	    "o2ib1", "tcp", "tcp1", "tcp10", "tcp102", "gni", "gni1"};
	size_t n = sizeof(nets) / sizeof(nets[0]), i, j;
	char a[NID_NET_MAX], b[NID_NET_MAX], nid[64];

	for (i = 0; i < n; i++) {
		(void)snprintf(nid, sizeof(nid), "1.2.3.4@%s", nets[i]);
		ck_assert_int_eq(nid_net(nid, a, sizeof(a)), 0);
		for (j = 0; j < n; j++) {
			if (i == j)
				continue;
			(void)snprintf(nid, sizeof(nid), "1.2.3.4@%s", nets[j]);
			ck_assert_int_eq(nid_net(nid, b, sizeof(b)), 0);
			ck_assert_msg(strcmp(a, b) != 0,
			    "%s and %s are the same network (%s)", nets[i],
			    nets[j], a);
		}
	}
}
END_TEST

START_TEST(net_rejects)
{
	char buf[NID_NET_MAX];

	ck_assert_int_eq(nid_net("noat", buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(nid_net("1.2.3.4@", buf, sizeof(buf)), -EINVAL);
	/* A NID without an address is no NID, for nid_net() either. */
	ck_assert_int_eq(nid_net("@o2ib", buf, sizeof(buf)), -EINVAL);
	/* "o2ib" needs 5 bytes. */
	ck_assert_int_lt(nid_net("1.2.3.4@o2ib", buf, 4), 0);
	ck_assert_int_eq(nid_net("1.2.3.4@o2ib", buf, 5), 0);
	ck_assert_str_eq(buf, "o2ib");
}
END_TEST

/* One client, one text (issue 15, item 12): the network without a number
 * 0, an IPv6 address in RFC 5952 form; everything else as it was. */
static const char *const canons[][2] = {
    {"10.9.0.9@o2ib0", "10.9.0.9@o2ib"},
    {"10.9.0.9@o2ib", "10.9.0.9@o2ib"},
    {"10.9.0.9@o2ib10", "10.9.0.9@o2ib10"},
    {"10.9.0.9@tcp102", "10.9.0.9@tcp102"},
    {"27@gni0", "27@gni"},
    {"2001:DB8::17@tcp", "2001:db8::17@tcp"},
    {"2001:db8:0:0::17@tcp0", "2001:db8::17@tcp"},
    {"2001:0db8:0000::0017@tcp", "2001:db8::17@tcp"},
    {"2001:db8::17@tcp", "2001:db8::17@tcp"},
    {"::ffff:10.1.2.3@tcp", "::ffff:10.1.2.3@tcp"},
    {"fe80::1%eth0@tcp", "fe80::1%eth0@tcp"},
    {"010.1.2.3@o2ib", "010.1.2.3@o2ib"},
    {"not:an:address@tcp", "not:an:address@tcp"},
};

START_TEST(canon)
{
	char buf[NID_STR_MAX];

	ck_assert_int_eq(nid_canon(canons[_i][0], buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, canons[_i][1]);
	/* Canonical text is a fixed point. */
	ck_assert_int_eq(nid_canon(canons[_i][1], buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, canons[_i][1]);
}
END_TEST

START_TEST(canon_rejects)
{
	char buf[NID_STR_MAX];

	ck_assert_int_eq(nid_canon("10.1.2.3", buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(nid_canon("@o2ib", buf, sizeof(buf)), -EINVAL);
	ck_assert_int_lt(nid_canon("10.1.2.3@o2ib", buf, 5), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("nid");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, split_format, 0,
	    sizeof(split_cases) / sizeof(split_cases[0]));
	tcase_add_test(tc, format_from_num);
	tcase_add_loop_test(tc, split_rejects, 0,
	    sizeof(split_bads) / sizeof(split_bads[0]));
	tcase_add_test(tc, split_longest);
	tcase_add_loop_test(tc, net, 0,
	    sizeof(net_cases) / sizeof(net_cases[0]));
	tcase_add_test(tc, net_distinct);
	tcase_add_test(tc, net_rejects);
	tcase_add_loop_test(tc, canon, 0, sizeof(canons) / sizeof(canons[0]));
	tcase_add_test(tc, canon_rejects);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
