/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hosts map: which NIDs an entry matches (an IP on every LNet, a full
 * NID only itself), which entry wins, the /etc/hosts syntax, every refusal
 * with its line, the rewrite rules, and a map of 100k entries.
 */
#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "hostmap.h"
#include "testutil.h"

/* A map with the given rules (NULL-terminated, may be NULL) and text. */
static struct hostmap *
map_with(const char *const *rules, const char *text)
{
	struct hostmap *m = NULL;
	struct lh_err err;

	ck_assert_int_eq(hostmap_new(&m), 0);
	ck_assert_ptr_nonnull(m);
	for (; rules != NULL && *rules != NULL; rules++) {
		lh_err_clear(&err);
		ck_assert_msg(hostmap_add_rewrite(m, *rules, &err) == 0,
		    "rule %s: %s", *rules, err.reason);
	}
	if (text != NULL) {
		lh_err_clear(&err);
		ck_assert_msg(hostmap_load_text(m, text, strlen(text), &err) ==
		        0,
		    "load: %s", err.reason);
	}
	return m;
}

/* nid maps to host (NULL: to nothing). */
static void
expect(const struct hostmap *m, const char *nid, const char *host)
{
	char out[HOSTMAP_NAME_MAX + 1];
	int rc;

	memcpy(out, "untouched", sizeof("untouched"));
	rc = hostmap_lookup(m, nid, out, sizeof(out));
	if (host == NULL) {
		ck_assert_msg(rc == -ENOENT, "%s: %d (%s), expected -ENOENT",
		    nid, rc, rc == 0 ? out : "");
		ck_assert_str_eq(out, "untouched");
		return;
	}
	ck_assert_msg(rc == 0, "%s: %d, expected %s", nid, rc, host);
	ck_assert_msg(strcmp(out, host) == 0, "%s: %s, expected %s", nid, out,
	    host);
}

/* ---- what an entry matches ----------------------------------------- */

START_TEST(ipv4_every_lnet)
{
	struct hostmap *m = map_with(NULL,
	    "10.1.2.3 node3\n"
	    "192.168.0.4 oss4\n");

	expect(m, "10.1.2.3@o2ib", "node3");
	expect(m, "10.1.2.3@o2ib0", "node3");
	expect(m, "10.1.2.3@o2ib2", "node3");
	expect(m, "10.1.2.3@tcp", "node3");
	expect(m, "10.1.2.3@tcp5", "node3");
	expect(m, "10.1.2.3@tcp102", "node3");
	expect(m, "192.168.0.4@tcp", "oss4");
	expect(m, "10.1.2.4@o2ib", NULL);
	expect(m, "10.1.2.30@o2ib", NULL);
	expect(m, "110.1.2.3@o2ib", NULL);
	/* Not how Lustre writes an address: no match, no guess. */
	expect(m, "010.1.2.3@o2ib", NULL);
	expect(m, "3@gni", NULL);
	ck_assert_uint_eq(hostmap_count(m), 2);
	hostmap_free(m);
}
END_TEST

START_TEST(full_nid_only_itself)
{
	struct hostmap *m = map_with(NULL,
	    "10.1.2.3@o2ib2 node3-rail2\n"
	    "10.1.2.5@o2ib0 node5\n"
	    "10.1.2.6@o2ib node6\n"
	    "10.1.2.7@tcp node7\n");

	expect(m, "10.1.2.3@o2ib2", "node3-rail2");
	expect(m, "10.1.2.3@o2ib", NULL);
	expect(m, "10.1.2.3@o2ib1", NULL);
	expect(m, "10.1.2.3@o2ib20", NULL);
	expect(m, "10.1.2.3@tcp2", NULL);
	/* o2ib0 is o2ib, whichever side writes the 0. */
	expect(m, "10.1.2.5@o2ib", "node5");
	expect(m, "10.1.2.5@o2ib0", "node5");
	expect(m, "10.1.2.6@o2ib0", "node6");
	expect(m, "10.1.2.6@o2ib", "node6");
	expect(m, "10.1.2.7@tcp0", "node7");
	expect(m, "10.1.2.7@tcp1", NULL);
	expect(m, "10.1.2.7@o2ib", NULL);
	hostmap_free(m);
}
END_TEST

START_TEST(gni_numbers)
{
	struct hostmap *m = map_with(NULL,
	    "27@gni nid00027\n"
	    "27@gni1 nid00027-second\n"
	    "0@kfi kfi-zero\n"
	    "4294967295@gni biggest\n");

	expect(m, "27@gni", "nid00027");
	expect(m, "27@gni0", "nid00027");
	expect(m, "27@gni1", "nid00027-second");
	expect(m, "28@gni", NULL);
	expect(m, "270@gni", NULL);
	expect(m, "27@kfi", NULL);
	expect(m, "0@kfi", "kfi-zero");
	expect(m, "4294967295@gni", "biggest");
	/* A number is no IP address: it never matches on another LNet. */
	expect(m, "27@tcp", NULL);
	hostmap_free(m);
}
END_TEST

START_TEST(ipv6_forms)
{
	struct hostmap *m = map_with(NULL,
	    "2001:db8::17 v6host\n"
	    "2001:0DB8:0000:0000:0000:0000:0000:0042 v6long\n"
	    "2001:db8:10::18@tcp v6nid\n"
	    "::1 loopback6\n"
	    "::ffff:10.9.9.9 mapped\n");

	expect(m, "2001:db8::17@tcp", "v6host");
	expect(m, "2001:db8::17@tcp3", "v6host");
	expect(m, "2001:db8::17@o2ib", "v6host");
	expect(m, "2001:db8:0:0:0:0:0:17@tcp", "v6host");
	expect(m, "2001:DB8::17@tcp", "v6host");
	expect(m, "2001:0db8:0000::0017@tcp", "v6host");
	expect(m, "2001:db8::42@tcp", "v6long");
	expect(m, "2001:db8::18@tcp", NULL);
	expect(m, "2001:db8:10::18@tcp", "v6nid");
	expect(m, "2001:db8:10:0::018@tcp0", "v6nid");
	expect(m, "2001:db8:10::18@tcp1", NULL);
	expect(m, "::1@tcp", "loopback6");
	expect(m, "0:0:0:0:0:0:0:1@tcp", "loopback6");
	expect(m, "::ffff:10.9.9.9@tcp", "mapped");
	/* An IPv4-mapped address is not the IPv4 address. */
	expect(m, "10.9.9.9@tcp", NULL);
	hostmap_free(m);
}
END_TEST

/* ---- precedence and duplicates ------------------------------------- */

START_TEST(nid_beats_ip)
{
	static const char *const texts[] = {
	    "10.1.2.3 node3\n10.1.2.3@o2ib2 node3-rail2\n",
	    "10.1.2.3@o2ib2 node3-rail2\n10.1.2.3 node3\n",
	};
	struct hostmap_stats st;
	size_t i;

	for (i = 0; i < 2; i++) {
		struct hostmap *m = map_with(NULL, texts[i]);

		expect(m, "10.1.2.3@o2ib2", "node3-rail2");
		expect(m, "10.1.2.3@o2ib", "node3");
		expect(m, "10.1.2.3@tcp", "node3");
		ck_assert_uint_eq(hostmap_count(m), 2);
		hostmap_stats(m, &st);
		ck_assert_uint_eq(st.ip_entries, 1);
		ck_assert_uint_eq(st.nid_entries, 1);
		ck_assert_uint_eq(st.duplicates, 0);
		ck_assert_uint_eq(st.first_duplicate_line, 0);
		hostmap_free(m);
	}
}
END_TEST

START_TEST(first_wins)
{
	struct hostmap *m = map_with(NULL,
	    "# two entries for one address: /etc/hosts takes the first\n"
	    "10.1.2.3 first\n"
	    "10.1.2.4 other\n"
	    "10.1.2.3 second\n"      /* line 4: conflict */
	    "10.1.2.3 first alias\n" /* line 5: same host */
	    "27@gni one\n"
	    "27@gni0 two\n" /* line 7: same NID */
	    "2001:db8::1 six\n"
	    "2001:0db8:0::1 six-again\n" /* line 9: same address */
	    "10.1.2.3@o2ib rail\n");

	struct hostmap_stats st;

	expect(m, "10.1.2.3@tcp", "first");
	expect(m, "10.1.2.3@o2ib", "rail");
	expect(m, "27@gni", "one");
	expect(m, "2001:db8::1@tcp", "six");
	ck_assert_uint_eq(hostmap_count(m), 5);
	hostmap_stats(m, &st);
	ck_assert_uint_eq(st.ip_entries, 3);
	ck_assert_uint_eq(st.nid_entries, 2);
	ck_assert_uint_eq(st.duplicates, 4);
	ck_assert_uint_eq(st.conflicts, 3);
	ck_assert_uint_eq(st.first_duplicate_line, 4);
	hostmap_free(m);
}
END_TEST

/* ---- syntax -------------------------------------------------------- */

START_TEST(syntax)
{
	struct hostmap *m = map_with(NULL,
	    "# /etc/hosts style\n"
	    "\n"
	    "   \t\n"
	    "127.0.0.1\tlocalhost localhost.localdomain\n"
	    "10.1.2.3\t\tnode3   node3.cluster   node3-ib # rail 1\n"
	    "  10.1.2.4 node4#no blank before the comment\n"
	    "10.1.2.5 node5 \t \r\n"
	    "10.1.2.6\tnode6\r\n"
	    "# 10.1.2.7 commented-out\n"
	    "#\n"
	    "10.1.2.8 node8"); /* no final newline */

	expect(m, "127.0.0.1@tcp", "localhost");
	expect(m, "10.1.2.3@o2ib", "node3");
	expect(m, "10.1.2.4@o2ib", "node4");
	expect(m, "10.1.2.5@o2ib", "node5");
	expect(m, "10.1.2.6@o2ib", "node6");
	expect(m, "10.1.2.7@o2ib", NULL);
	expect(m, "10.1.2.8@o2ib", "node8");
	ck_assert_uint_eq(hostmap_count(m), 6);
	hostmap_free(m);

	/* Nothing at all is a valid (empty) map. */
	m = map_with(NULL, "");
	ck_assert_uint_eq(hostmap_count(m), 0);
	expect(m, "10.1.2.3@o2ib", NULL);
	hostmap_free(m);
	m = map_with(NULL, "# nothing yet\n\n");
	ck_assert_uint_eq(hostmap_count(m), 0);
	hostmap_free(m);
}
END_TEST

START_TEST(host_name_limits)
{
	char text[256];
	struct hostmap *m;
	char name[HOSTMAP_NAME_MAX + 1];

	memset(name, 'n', HOSTMAP_NAME_MAX);
	name[HOSTMAP_NAME_MAX] = '\0';
	(void)snprintf(text, sizeof(text),
	    "10.0.0.1 %s\n10.0.0.2 a\n"
	    "10.0.0.3 under_score.and-dash.Mixed.Case\n10.0.0.4 x!y$z~%%\n",
	    name);
	m = map_with(NULL, text);
	expect(m, "10.0.0.1@tcp", name);
	expect(m, "10.0.0.2@tcp", "a");
	expect(m, "10.0.0.3@tcp", "under_score.and-dash.Mixed.Case");
	expect(m, "10.0.0.4@tcp", "x!y$z~%");
	hostmap_free(m);
}
END_TEST

START_TEST(lookup_edges)
{
	struct hostmap *m = map_with(NULL, "10.1.2.3 node3\n");
	char out[8] = "keep";

	/* Not a NID. */
	ck_assert_int_eq(hostmap_lookup(m, "10.1.2.3", out, sizeof(out)),
	    -EINVAL);
	ck_assert_int_eq(hostmap_lookup(m, "@o2ib", out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(hostmap_lookup(m, "10.1.2.3@", out, sizeof(out)),
	    -EINVAL);
	ck_assert_int_eq(hostmap_lookup(m, "", out, sizeof(out)), -EINVAL);
	/* Too small for "node3" and its NUL; untouched. */
	ck_assert_int_eq(hostmap_lookup(m, "10.1.2.3@o2ib", out, 5),
	    -ENAMETOOLONG);
	ck_assert_str_eq(out, "keep");
	ck_assert_int_eq(hostmap_lookup(m, "10.1.2.3@o2ib", out, 6), 0);
	ck_assert_str_eq(out, "node3");
	hostmap_free(m);

	/* A map without a file knows nothing. */
	m = map_with(NULL, NULL);
	expect(m, "10.1.2.3@o2ib", NULL);
	ck_assert_uint_eq(hostmap_count(m), 0);
	hostmap_free(m);
	hostmap_free(NULL);
}
END_TEST

/* ---- refusals ------------------------------------------------------ */

struct bad_text {
	const char *text;
	size_t len; /* 0: strlen(text) */
	unsigned line;
	const char *why; /* a part of the reason */
};

static const struct bad_text bad_texts[] = {
    {"node3 10.1.2.3\n", 0, 1, "neither an IP address nor a NID"},
    {"10.1.2.3 ok\n10.1.2.256 bad\n", 0, 2, "\"10.1.2.256\""},
    {"10.1.2.3 ok\n\n010.1.2.4 bad\n", 0, 3, "neither"},
    {"1.2.3 short\n", 0, 1, "neither"},
    {"27 gni-without-net\n", 0, 1, "neither"},
    {"fe80::1%eth0 zoned\n", 0, 1, "neither"},
    {"10.1.2.3@ nonet\n", 0, 1, "neither"},
    {"@o2ib noaddr\n", 0, 1, "neither"},
    {"1@2@tcp twoats\n", 0, 1, "neither"},
    {"10.1.2.3@tcp-1 badnet\n", 0, 1, "neither"},
    {"10.1.2.3@2tcp badnet\n", 0, 1, "neither"},
    {"10.1.2.3\n", 0, 1, "no host name"},
    {"10.1.2.3 # only a comment\n", 0, 1, "no host name"},
    {"# header\n10.1.2.3\tnode3\n10.1.2.4\t\r\n", 0, 3, "no host name"},
    {"10.1.2.3 "
     "a234567890123456789012345678901234567890123456789012345678901234\n",
        0, 1, "longer than 63"},
    {"10.1.2.3 node<3>\n", 0, 1, "Ganglia cannot carry"},
    {"10.1.2.3 node\"3\n", 0, 1, "Ganglia cannot carry"},
    {"10.1.2.3 rack/node3\n", 0, 1, "Ganglia cannot carry"},
    {"10.1.2.3 node:3\n", 0, 1, "Ganglia cannot carry"},
    {"10.1.2.3 n&3\n", 0, 1, "Ganglia cannot carry"},
    {"10.1.2.3 n\xc3\xa9ud\n", 0, 1, "not printable ASCII"},
    {"10.1.2.3 node\x01\n", 0, 1, "not printable ASCII"},
    {"10.1.2.3 ok\n10.1.2.4 n\0de\n",
        sizeof("10.1.2.3 ok\n10.1.2.4 n\0de\n") - 1, 2, "NUL byte"},
    {"10.1.2.3 ok\n10.1.2.4\vok2\n10.1.2.5\x1b[31m red\n", 0, 3, "neither"},
};

START_TEST(refusals)
{
	const struct bad_text *c = &bad_texts[_i];
	size_t len = c->len != 0 ? c->len : strlen(c->text);
	struct hostmap *m = map_with(NULL, NULL);
	struct hostmap_stats st;
	struct lh_err err;
	char prefix[32];

	lh_err_clear(&err);
	ck_assert_msg(hostmap_load_text(m, c->text, len, &err) == -EINVAL,
	    "case %d accepted", _i);
	ck_assert_msg(err.line == c->line, "case %d: line %u, expected %u", _i,
	    err.line, c->line);
	(void)snprintf(prefix, sizeof(prefix), "line %u: ", c->line);
	ck_assert_msg(strncmp(err.reason, prefix, strlen(prefix)) == 0,
	    "case %d: reason \"%s\" does not start with \"%s\"", _i, err.reason,
	    prefix);
	ck_assert_msg(strstr(err.reason, c->why) != NULL,
	    "case %d: reason \"%s\" does not say \"%s\"", _i, err.reason,
	    c->why);
	ck_assert_msg(strchr(err.reason, '\n') == NULL &&
	        strchr(err.reason, '\x1b') == NULL,
	    "case %d: control characters in the reason", _i);
	/* Nothing is kept from a refused file. */
	ck_assert_uint_eq(hostmap_count(m), 0);
	hostmap_stats(m, &st);
	ck_assert_uint_eq(st.ip_entries + st.nid_entries + st.duplicates, 0);
	expect(m, "10.1.2.3@o2ib", NULL);
	hostmap_free(m);
}
END_TEST

START_TEST(long_address_quoted_short)
{
	char text[400];
	struct hostmap *m = map_with(NULL, NULL);
	struct lh_err err;

	memset(text, '7', 300);
	memcpy(text + 300, "@gni x\n", 8);
	lh_err_clear(&err);
	ck_assert_int_eq(hostmap_load_text(m, text, strlen(text), &err),
	    -EINVAL);
	ck_assert_uint_eq(err.line, 1);
	ck_assert_msg(strstr(err.reason, "longer than 127") != NULL, "%s",
	    err.reason);
	ck_assert_msg(strstr(err.reason, "...") != NULL, "%s", err.reason);
	hostmap_free(m);
}
END_TEST

START_TEST(load_once)
{
	struct hostmap *m = map_with(NULL, "10.1.2.3 node3\n");
	struct lh_err err;

	lh_err_clear(&err);
	ck_assert_int_eq(hostmap_load_text(m, "10.1.2.4 n4\n", 12, &err),
	    -EBUSY);
	ck_assert(err.reason[0] != '\0');
	expect(m, "10.1.2.3@tcp", "node3");
	expect(m, "10.1.2.4@tcp", NULL);
	/* Rules rewrite the file's names as they are loaded: too late. */
	lh_err_clear(&err);
	ck_assert_int_eq(hostmap_add_rewrite(m, "s/node/n/", &err), -EBUSY);
	ck_assert(err.reason[0] != '\0');
	expect(m, "10.1.2.3@tcp", "node3");
	hostmap_free(m);

	/* A refused load leaves an empty map that can be loaded again. */
	m = map_with(NULL, NULL);
	ck_assert_int_eq(hostmap_load_text(m, "bad line\n", 9, NULL), -EINVAL);
	ck_assert_int_eq(hostmap_load_text(m, "10.1.2.3 node3\n", 15, NULL), 0);
	expect(m, "10.1.2.3@o2ib", "node3");
	hostmap_free(m);
}
END_TEST

/* ---- rewrite rules ------------------------------------------------- */

struct rewrite_case {
	const char *rules[4];
	const char *in;
	const char *out; /* NULL: refused */
};

static const struct rewrite_case rewrite_cases[] = {
    /* Strip an -ib suffix. */
    {{"s/-ib$//"}, "node17-ib", "node17"},
    {{"s/-ib$//"}, "node17-ib.", "node17"},
    {{"s/-ib$//"}, "node17-ibx", "node17-ibx"},
    {{"s/-ib$//"}, "node17", "node17"},
    {{"s/-ib$//"}, "node17-IB", "node17-IB"},
    {{"s/-ib$//i"}, "node17-IB", "node17"},
    {{"s/-ib(\\.|$)/\\1/"}, "node17-ib.cluster.example.com.",
        "node17.cluster.example.com"},
    /* Map a domain. */
    {{"s/\\.ib\\.example\\.com$/.example.com/"}, "node3.ib.example.com",
        "node3.example.com"},
    {{"s|\\.cluster\\.example\\.com$||"}, "node3.cluster.example.com.",
        "node3"},
    /* Capture groups and &. */
    {{"s/^([a-z]+)([0-9]+)$/\\2-\\1/"}, "node42", "42-node"},
    {{"s/^(cn)0*([0-9]+)-(opa|ib)$/\\1\\2/"}, "cn0007-opa", "cn7"},
    {{"s/[0-9]+/<&>/"}, "node42", NULL}, /* '<' is refused */
    {{"s/[0-9]+/[&]/"}, "node42x7", "node[42]x7"},
    /* \& is a literal & (then replaced: Ganglia cannot carry it). */
    {{"s/[0-9]+/\\&&/", "s/&/-/"}, "node42", "node-42"},
    {{"s/[0-9]+/\\&/"}, "node42", NULL},
    {{"s/^(a)?b/x\\1y/"}, "bc", "xyc"}, /* a group that did not match */
    /* First match, or every one with g. */
    {{"s/_/-/"}, "a_b_c", "a-b_c"},
    {{"s/_/-/g"}, "a_b_c", "a-b-c"},
    {{"s/X/y/gi"}, "xXx", "yyy"},
    {{"s/x*/-/g"}, "abc", "-a-b-c-"},
    {{"s/b*/-/g"}, "abc", "-a-c-"},
    {{"s/^n/N/g"}, "nnn", "Nnn"},
    /* Case is kept without a rule. */
    {{NULL}, "Node17.Example.COM.", "Node17.Example.COM"},
    /* Rules apply in order. */
    {{"s/-ib$//", "s/^node/n/"}, "node5-ib", "n5"},
    {{"s/^node/n/", "s/^n5$/five/"}, "node5", "five"},
    {{"s/^n5$/five/", "s/^node/n/"}, "node5", "n5"},
    /* The delimiter, escaped, is itself. */
    {{"s|a\\|b|X|"}, "ca|bd", "cXd"},
    {{"s/a\\/b/c/"}, "xa/by", "xcy"},
    {{"s,\\.,-,g"}, "a.b.c", "a-b-c"},
    /* Repetitions within the complexity limit. */
    {{"s/^([a-z]{1,8})([0-9]{1,5})(-(ib|opa|eth)[0-9]?)+$/\\1\\2/"},
        "node00042-ib0-ib1", "node00042"},
    {{"s/^(x|y){1,20}[[:digit:]]{3,}$/n/"}, "xyx1234", "n"},
    {{"s/[]{+}]+/-/g"}, "a{b}+c]d", "a-b-c-d"},
    {{"s/(a*b){3}/x/"}, "baabb", "x"},
    {{"s/(-ib)?$//"}, "node1-ib", "node1"},
    {{"s/^((n|m)[0-9]{2,3}[a-z]*)+-x$/\\1/"}, "n01m222ab-x", "m222ab"},
    {{"s&x&\\&&", "s/&/+/"}, "axb", "a+b"},
    {{"s/^n{0,1000}1$/x/"}, "nnn1", "x"}, /* 1,000 optional copies */
    /* Names that do not survive. */
    {{"s/.*//"}, "node17", NULL},
    {{"s/-ib$//"}, "-ib", NULL},
    {{NULL}, ".", NULL},
    {{NULL}, "", NULL},
    {{"s/$/ x/"}, "node1", NULL},
    {{"s/e/eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee/g"},
        "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
        NULL},
    /* Long DNS names are fine when a rule shortens them. */
    {{"s/\\..*//"},
        "node1.a-very-long-subdomain-of-the-cluster.site-with-a-long-name."
        "example.com.",
        "node1"},
    {{NULL},
        "node1.a-very-long-subdomain-of-the-cluster.site-with-a-long-name."
        "example.com.",
        NULL},
};

START_TEST(rewrites)
{
	const struct rewrite_case *c = &rewrite_cases[_i];
	struct hostmap *m = map_with(c->rules, NULL);
	char out[HOSTMAP_NAME_MAX + 1] = "untouched";
	int rc;

	rc = hostmap_rewrite(m, c->in, out, sizeof(out));
	if (c->out == NULL) {
		ck_assert_msg(rc == -EINVAL, "case %d: %s -> %d \"%s\"", _i,
		    c->in, rc, out);
		ck_assert_str_eq(out, "untouched");
	} else {
		ck_assert_msg(rc == 0, "case %d: %s refused", _i, c->in);
		ck_assert_msg(strcmp(out, c->out) == 0,
		    "case %d: %s -> %s, expected %s", _i, c->in, out, c->out);
		/* Exactly the size, and one short. */
		ck_assert_int_eq(hostmap_rewrite(m, c->in, out,
		                     strlen(c->out) + 1),
		    0);
		ck_assert_int_eq(hostmap_rewrite(m, c->in, out, strlen(c->out)),
		    -ENAMETOOLONG);
	}
	hostmap_free(m);
}
END_TEST

/* The file's names go through the rules too, when they are loaded. */
START_TEST(rewrites_file_names)
{
	static const char *const rules[] = {"s/-ib$//", "s/-IB$//i", NULL};
	struct hostmap *m = map_with(rules,
	    "10.1.2.3 node3-ib\n"
	    "10.1.2.4 NODE4-IB\n"
	    "27@gni nid00027\n"
	    "10.1.2.5 node5-ib.\n");
	struct lh_err err;
	const char *p;

	expect(m, "10.1.2.3@o2ib", "node3");
	expect(m, "10.1.2.4@o2ib", "NODE4");
	expect(m, "27@gni", "nid00027");
	/* A trailing dot is only dropped from DNS names. */
	expect(m, "10.1.2.5@o2ib", "node5-ib.");
	hostmap_free(m);

	/* A rule that leaves nothing of a name refuses the file, with the
	 * line and both names. */
	m = map_with((const char *const[]){"s/-ib$//", NULL}, NULL);
	lh_err_clear(&err);
	p = "10.1.2.3 node3-ib\n# the switch\n10.1.2.9 -ib\n";
	ck_assert_int_eq(hostmap_load_text(m, p, strlen(p), &err), -EINVAL);
	ck_assert_uint_eq(err.line, 3);
	ck_assert_msg(strstr(err.reason, "line 3: ") == err.reason &&
	        strstr(err.reason, "\"-ib\" rewritten to \"\"") != NULL &&
	        strstr(err.reason, "empty") != NULL,
	    "%s", err.reason);
	ck_assert_uint_eq(hostmap_count(m), 0);
	hostmap_free(m);

	/* A name too long for Ganglia is fine when a rule shortens it. */
	m = map_with((const char *const[]){"s/\\..*//", NULL},
	    "10.1.2.3 node3.a-rather-long-subdomain.of-the-cluster-network."
	    "example.com node3\n");
	expect(m, "10.1.2.3@tcp", "node3");
	hostmap_free(m);
}
END_TEST

struct bad_rule {
	const char *rule;
	const char *why;
};

static const struct bad_rule bad_rules[] = {
    {"", "s/REGEX/REPLACEMENT/"},
    {"x/a/b/", "s/REGEX/REPLACEMENT/"},
    {"S/a/b/", "s/REGEX/REPLACEMENT/"},
    {"s", "delimiter"},
    {"sa/b/c", "delimiter"},
    {"s1a1b1", "delimiter"},
    {"s\\a\\b\\", "delimiter"},
    {"s a b ", "delimiter"},
    {"s/a/b", "unterminated"},
    {"s/a", "unterminated"},
    {"s/a\\/b/", "unterminated"},
    {"s/a/b\\/", "unterminated"},
    {"s//x/", "empty regex"},
    {"s/a/b/x", "unknown or repeated flag 'x'"},
    {"s/a/b/ii", "unknown or repeated flag 'i'"},
    {"s/a/b/ g", "flag ' '"},
    {"s/a/b//", "flag '/'"},
    {"s/a/b/\x01", "flag '?'"},
    {"s/(/x/", "bad regex"},
    {"s/a{2,1}/x/", "bad regex"},
    {"s/[a/x/", "bad regex"},
    {"s/a/\\1/", "\\1 but the regex has 0 groups"},
    {"s/(a)/\\2/", "\\2 but the regex has 1 group"},
    {"s/a/\\0/", "unknown escape"},
    {"s/a/\\n/", "unknown escape"},
    /* What would take glibc's regcomp() gigabytes or seconds. */
    {"s/-++++++++++++++++++++ib$//", "two repetition operators in a row"},
    {"s/-?+//", "two repetition operators in a row"},
    {"s/a{0,3}+//", "two repetition operators in a row"},
    {"s/a**//", "two repetition operators in a row"},
    {"s/((a?)+){500}//", "repeats what can match nothing"},
    {"s/((a*)*){1000}//", "repeats what can match nothing"},
    {"s/(a|)+//", "repeats what can match nothing"},
    {"s/(^)+//", "repeats what can match nothing"},
    {"s/(a{0,2}b?){3}//", "repeats what can match nothing"},
    {"s/((((a{1,99}){1,99}){1,99}))//", "too complex"},
    {"s/(((((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)//", "too complex"},
    {"s/x{5000}y{5001}//", "too complex"},
    /* Optional copies: memory grows with their square (fuzz_ptrname). */
    {"s/^t_ioi{18,4474}P//", "too many optional copies"},
    {"s/(xi{0,255}){0,39}//", "too many optional copies"},
    {"s/(ab){0,600}//", "too many optional copies"},
    {"s/((ab?){20}x){60}//", "too many optional copies"},
    {"s/(.*)(.*)(.*)(.*)(.*)\\5\\4\\3\\2\\1x//", "back-references"},
    /* glibc's regexec() loops for good on these (fuzz_ptrname). */
    {"s/(^||)*$//", "repetition of an anchor"},
    {"s/(1|^|||||||||||)*$/\\1-/", "repetition of an anchor"},
    {"s/(^|^|^)*$//", "repetition of an anchor"},
    {"s/((a|^)b)?//", "repetition of an anchor"},
    {"s/x$*//", "repetition of an anchor"},
    {"s/(\\B||)*$//", "repetition of an anchor"},
    {"s/(a|\\`||)*//", "repetition of an anchor"},
    {"s/^(a)\\1$/b/", "back-references"},
    /* 33 nested groups */
    {"s/((((((((((((((((((((((((((((((((("
     "a)))))))))))))))))))))))))))))))))//",
        "nested too deep"},
};

START_TEST(rule_refusals)
{
	const struct bad_rule *c = &bad_rules[_i];
	struct hostmap *m = map_with(NULL, NULL);
	struct lh_err err;
	char out[HOSTMAP_NAME_MAX + 1];

	lh_err_clear(&err);
	ck_assert_msg(hostmap_add_rewrite(m, c->rule, &err) == -EINVAL,
	    "rule %d accepted", _i);
	ck_assert_msg(strstr(err.reason, c->why) != NULL,
	    "rule %d: reason \"%s\" does not say \"%s\"", _i, err.reason,
	    c->why);
	ck_assert_uint_eq(err.line, 0);
	/* No rule was added. */
	ck_assert_int_eq(hostmap_rewrite(m, "a-node", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "a-node");
	hostmap_free(m);
}
END_TEST

START_TEST(rule_limits)
{
	struct hostmap *m = map_with(NULL, NULL);
	struct lh_err err;
	char rule[HOSTMAP_RULE_MAX + 2];
	char out[HOSTMAP_NAME_MAX + 1];
	int i;

	for (i = 0; i < HOSTMAP_RULES_MAX; i++)
		ck_assert_int_eq(hostmap_add_rewrite(m, "s/^x//", &err), 0);
	lh_err_clear(&err);
	ck_assert_int_eq(hostmap_add_rewrite(m, "s/^x//", &err), -EINVAL);
	ck_assert_msg(strstr(err.reason, "more than 32") != NULL, "%s",
	    err.reason);
	/* 32 rules, each taking one x. */
	ck_assert_int_eq(hostmap_rewrite(m,
	                     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxnode", out,
	                     sizeof(out)),
	    0);
	ck_assert_str_eq(out, "xnode");
	hostmap_free(m);

	/* "s/aaa.../b/", exactly the longest, then one longer. */
	m = map_with(NULL, NULL);
	(void)snprintf(rule, sizeof(rule), "s/%0*d/b/", HOSTMAP_RULE_MAX - 5,
	    0);
	ck_assert_uint_eq(strlen(rule), HOSTMAP_RULE_MAX);
	ck_assert_int_eq(hostmap_add_rewrite(m, rule, &err), 0);
	(void)snprintf(rule, sizeof(rule), "s/%0*d/b/", HOSTMAP_RULE_MAX - 4,
	    0);
	ck_assert_uint_eq(strlen(rule), HOSTMAP_RULE_MAX + 1);
	lh_err_clear(&err);
	ck_assert_int_eq(hostmap_add_rewrite(m, rule, &err), -EINVAL);
	ck_assert_msg(strstr(err.reason, "longer than") != NULL, "%s",
	    err.reason);
	hostmap_free(m);
}
END_TEST

/* ---- files --------------------------------------------------------- */

static char tmpdir[64];

static void
tmp_setup(void)
{
	(void)snprintf(tmpdir, sizeof(tmpdir), "/tmp/lh_hostmap.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static int
rm_cb(const char *path, const struct stat *sb, int type, struct FTW *f)
{
	(void)sb;
	(void)type;
	(void)f;
	return remove(path);
}

static void
tmp_teardown(void)
{
	(void)nftw(tmpdir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
}

static const char *
write_file(const char *name, const char *text)
{
	static char path[128];
	FILE *f;

	(void)snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

START_TEST(file_ok)
{
	const char *path = write_file("hosts",
	    "# lustre clients\n"
	    "10.1.2.3 node3\n"
	    "27@gni nid00027\n");
	struct hostmap *m = map_with(NULL, NULL);
	struct lh_err err;

	lh_err_clear(&err);
	ck_assert_msg(hostmap_load_file(m, path, &err) == 0, "%s", err.reason);
	expect(m, "10.1.2.3@o2ib", "node3");
	expect(m, "27@gni", "nid00027");
	hostmap_free(m);

	/* An empty file is an empty map. */
	path = write_file("empty", "");
	m = map_with(NULL, NULL);
	ck_assert_int_eq(hostmap_load_file(m, path, NULL), 0);
	ck_assert_uint_eq(hostmap_count(m), 0);
	hostmap_free(m);
}
END_TEST

START_TEST(file_errors)
{
	char path[128], want[160];
	const char *p;
	struct hostmap *m = map_with(NULL, NULL);
	struct lh_err err;

	(void)snprintf(path, sizeof(path), "%s/no-such-file", tmpdir);
	lh_err_clear(&err);
	ck_assert_int_eq(hostmap_load_file(m, path, &err), -ENOENT);
	(void)snprintf(want, sizeof(want), "%s: No such file", path);
	ck_assert_msg(strstr(err.reason, want) == err.reason, "%s", err.reason);

	lh_err_clear(&err);
	ck_assert_int_eq(hostmap_load_file(m, tmpdir, &err), -EINVAL);
	ck_assert_msg(strstr(err.reason, "not a regular file") != NULL, "%s",
	    err.reason);

	p = write_file("bad", "10.1.2.3 node3\n\n10.1.2.4\n");
	lh_err_clear(&err);
	ck_assert_int_eq(hostmap_load_file(m, p, &err), -EINVAL);
	ck_assert_uint_eq(err.line, 3);
	(void)snprintf(want, sizeof(want), "%s:3: no host name", p);
	ck_assert_msg(strstr(err.reason, want) == err.reason, "%s, expected %s",
	    err.reason, want);
	ck_assert_uint_eq(hostmap_count(m), 0);
	hostmap_free(m);
}
END_TEST

START_TEST(file_too_big)
{
	char path[128];
	struct hostmap *m = map_with(NULL, NULL);
	struct lh_err err;
	FILE *f;

	/* Sparse: one byte over the limit without writing 64 MiB. */
	(void)snprintf(path, sizeof(path), "%s/big", tmpdir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ftruncate(fileno(f), (off_t)HOSTMAP_FILE_MAX + 1), 0);
	ck_assert_int_eq(fclose(f), 0);
	lh_err_clear(&err);
	ck_assert_int_eq(hostmap_load_file(m, path, &err), -EFBIG);
	ck_assert_msg(strstr(err.reason, "larger than") != NULL, "%s",
	    err.reason);
	hostmap_free(m);
}
END_TEST

/* ---- scale --------------------------------------------------------- */

/* 100k clients: 98k by IP, 2k Cray by NID, as a big site's file. */
START_TEST(many_entries)
{
	enum { NIP = 98000, NGNI = 2000 };
	size_t cap = (size_t)(NIP + NGNI) * 40, len = 0;
	char *text = malloc(cap);
	char nid[64], host[32], out[HOSTMAP_NAME_MAX + 1];
	struct hostmap *m =
	    map_with((const char *const[]){"s/-ib$//", NULL}, NULL);
	struct lh_err err;
	unsigned i;

	ck_assert_ptr_nonnull(text);
	for (i = 0; i < NIP; i++)
		len += (size_t)snprintf(text + len, cap - len,
		    "10.%u.%u.%u\tcn%05u-ib cn%05u\n", i >> 16, (i >> 8) & 0xff,
		    i & 0xff, i, i);
	for (i = 0; i < NGNI; i++)
		len += (size_t)snprintf(text + len, cap - len,
		    "%u@gni nid%05u\n", i, i);
	ck_assert_uint_lt(len, cap);
	lh_err_clear(&err);
	ck_assert_msg(hostmap_load_text(m, text, len, &err) == 0, "%s",
	    err.reason);
	ck_assert_uint_eq(hostmap_count(m), NIP + NGNI);
	for (i = 0; i < NIP; i++) {
		(void)snprintf(nid, sizeof(nid), "10.%u.%u.%u@o2ib%u", i >> 16,
		    (i >> 8) & 0xff, i & 0xff, i % 3);
		(void)snprintf(host, sizeof(host), "cn%05u", i);
		ck_assert_int_eq(hostmap_lookup(m, nid, out, sizeof(out)), 0);
		ck_assert_str_eq(out, host);
	}
	for (i = 0; i < NGNI; i++) {
		(void)snprintf(nid, sizeof(nid), "%u@gni", i);
		(void)snprintf(host, sizeof(host), "nid%05u", i);
		ck_assert_int_eq(hostmap_lookup(m, nid, out, sizeof(out)), 0);
		ck_assert_str_eq(out, host);
	}
	expect(m, "10.200.0.0@o2ib", NULL);
	expect(m, "2000@gni", NULL);
	hostmap_free(m);
	free(text);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hostmap");
	TCase *tm = tcase_create("match");
	TCase *tr = tcase_create("rewrite");
	TCase *tf = tcase_create("files");

	tcase_add_test(tm, ipv4_every_lnet);
	tcase_add_test(tm, full_nid_only_itself);
	tcase_add_test(tm, gni_numbers);
	tcase_add_test(tm, ipv6_forms);
	tcase_add_test(tm, nid_beats_ip);
	tcase_add_test(tm, first_wins);
	tcase_add_test(tm, syntax);
	tcase_add_test(tm, host_name_limits);
	tcase_add_test(tm, lookup_edges);
	tcase_add_loop_test(tm, refusals, 0,
	    sizeof(bad_texts) / sizeof(bad_texts[0]));
	tcase_add_test(tm, long_address_quoted_short);
	tcase_add_test(tm, load_once);
	tcase_add_test(tm, many_entries);
	suite_add_tcase(s, tm);

	tcase_add_loop_test(tr, rewrites, 0,
	    sizeof(rewrite_cases) / sizeof(rewrite_cases[0]));
	tcase_add_test(tr, rewrites_file_names);
	tcase_add_loop_test(tr, rule_refusals, 0,
	    sizeof(bad_rules) / sizeof(bad_rules[0]));
	tcase_add_test(tr, rule_limits);
	suite_add_tcase(s, tr);

	tcase_add_checked_fixture(tf, tmp_setup, tmp_teardown);
	tcase_add_test(tf, file_ok);
	tcase_add_test(tf, file_errors);
	tcase_add_test(tf, file_too_big);
	suite_add_tcase(s, tf);
	return tu_run(s);
}
