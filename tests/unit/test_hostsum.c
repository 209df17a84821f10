/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-host sums (common/sweep/hostsum.c): the NIDs of a multi-rail host
 * summed per (host, filesystem), and one spoof address per host over all
 * its filesystems, the smallest IPv4 of all its NIDs, else its name.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "hostsum.h"
#include "nid.h"
#include "testutil.h"

static void
add(struct hostsum *s, const char *host, const char *fs, const char *nid,
    double read_rate)
{
	struct sweeps_client c;
	struct nid_parts p;

	memset(&c, 0, sizeof(c));
	c.fs = fs;
	c.nid = nid;
	c.rate[0] = read_rate;
	ck_assert_int_eq(nid_split(nid, &p), 0);
	ck_assert_int_eq(hostsum_add(s, host, &p, &c), 0);
}

static const struct hostsum_row *
row(const struct hostsum *s, const char *host, const char *fs)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (strcmp(s->rows[i].host, host) == 0 &&
		    strcmp(s->rows[i].fs, fs) == 0)
			return &s->rows[i];
	}
	ck_abort_msg("no row %s %s", host, fs);
	return NULL;
}

START_TEST(sums_and_addresses)
{
	struct hostsum s;

	hostsum_init(&s);
	/* node1: two rails in scratch, a third NID (the smallest address)
	 * only in home; node2: a Gemini NID only; node3: IPv4. */
	add(&s, "node1", "scratch", "10.0.0.9@o2ib", 100);
	add(&s, "node1", "scratch", "10.0.1.9@o2ib1", 50);
	add(&s, "node1", "home", "10.0.0.2@tcp", 7);
	add(&s, "node2", "scratch", "12@gni", 3);
	add(&s, "node3", "scratch", "192.168.1.1@tcp", 1);
	ck_assert_uint_eq(s.n, 4);
	ck_assert(row(&s, "node1", "scratch")->rate[0] == 150);
	ck_assert_str_eq(row(&s, "node1", "scratch")->ip, "10.0.0.9");
	ck_assert_int_eq(hostsum_finish(&s), 0);
	/* One address for node1 over both filesystems. */
	ck_assert_str_eq(hostsum_spoof_ip(row(&s, "node1", "scratch")),
	    "10.0.0.2");
	ck_assert_str_eq(hostsum_spoof_ip(row(&s, "node1", "home")),
	    "10.0.0.2");
	ck_assert_str_eq(hostsum_spoof_ip(row(&s, "node2", "scratch")),
	    "node2");
	ck_assert_str_eq(hostsum_spoof_ip(row(&s, "node3", "scratch")),
	    "192.168.1.1");
	/* A new sweep starts empty. */
	hostsum_clear(&s);
	ck_assert_uint_eq(s.n, 0);
	add(&s, "node1", "scratch", "10.0.0.9@o2ib", 1);
	ck_assert(row(&s, "node1", "scratch")->rate[0] == 1);
	hostsum_free(&s);
}
END_TEST

START_TEST(many_hosts)
{
	struct hostsum s;
	char host[32], nid[32];
	unsigned i;

	hostsum_init(&s);
	for (i = 0; i < 5000; i++) {
		(void)snprintf(host, sizeof(host), "n%u", i);
		(void)snprintf(nid, sizeof(nid), "10.%u.%u.1@o2ib", i / 250,
		    i % 250);
		add(&s, host, "fs", nid, i);
		add(&s, host, "fs", nid, 1);
	}
	ck_assert_uint_eq(s.n, 5000);
	ck_assert_int_eq(hostsum_finish(&s), 0);
	ck_assert(row(&s, "n4999", "fs")->rate[0] == 5000);
	hostsum_free(&s);
}
END_TEST

/* The deltas are summed like the rates: a host's counters are made of
 * them, exact. */
START_TEST(deltas)
{
	struct sweeps_client c;
	struct sweeps_ops ops;
	struct nid_parts p;
	struct hostsum s;

	hostsum_init(&s);
	memset(&c, 0, sizeof(c));
	memset(&ops, 0, sizeof(ops));
	c.fs = "scratch";
	c.nid = "10.1.0.5@o2ib";
	c.d.read_bytes = 1000;
	c.d.mds_ops = 7;
	ops.d.v[MDOPS_OPEN] = 4;
	ops.rate[MDOPS_OPEN] = 0.2;
	c.ops = &ops;
	ck_assert_int_eq(nid_split(c.nid, &p), 0);
	ck_assert_int_eq(hostsum_add(&s, "node05", &p, &c), 0);
	c.nid = "10.2.0.5@o2ib2";
	c.d.read_bytes = 24;
	c.ops = NULL; /* no op counts from this one */
	ck_assert_int_eq(nid_split(c.nid, &p), 0);
	ck_assert_int_eq(hostsum_add(&s, "node05", &p, &c), 0);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(row(&s, "node05", "scratch")->d.read_bytes, 1024);
	ck_assert_uint_eq(row(&s, "node05", "scratch")->d.mds_ops, 14);
	ck_assert_uint_eq(row(&s, "node05", "scratch")->dops.v[MDOPS_OPEN], 4);
	ck_assert(row(&s, "node05", "scratch")->oprate[MDOPS_OPEN] == 0.2);
	hostsum_free(&s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hostsum");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sums_and_addresses);
	tcase_add_test(tc, many_hosts);
	tcase_add_test(tc, deltas);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
