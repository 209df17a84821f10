/* SPDX-License-Identifier: BSD-2-Clause */
/* The Ganglia sink's (host, metric) table: metadata timing, coalescing,
 * bounds, expiry (gmetric/gcache.c). */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gcache.h"
#include "testutil.h"

#define S 1000000000ULL

static void
setup(struct gcache *c, uint64_t interval_s, uint64_t forget_s, size_t max)
{
	struct gcache_opts o = {
	    .meta_interval_ns = interval_s * S,
	    .forget_ns = forget_s * S,
	    .max_entries = max,
	};

	gcache_init(c, &o);
}

/* Pop everything queued at now; returns how many carried metadata. */
static unsigned
drain(struct gcache *c, uint64_t now)
{
	struct gcache_entry *e;
	unsigned meta = 0;

	while ((e = gcache_head(c)) != NULL) {
		bool due = gcache_meta_due(c, e, now);

		meta += due;
		gcache_pop(c, due ? GCACHE_META_SENT : GCACHE_META_NONE, now);
	}
	return meta;
}

/* Put hosts x 4 metrics at now. */
static void
sweep(struct gcache *c, unsigned hosts, uint64_t now)
{
	static const char *const metrics[] = {"fs_read_bytes", "fs_write_bytes",
	    "fs_oss_ops", "fs_mds_ops"};
	char spoof[GCACHE_SPOOF_MAX + 1], ip[32], host[32];
	unsigned i, j;

	for (i = 0; i < hosts; i++) {
		(void)snprintf(ip, sizeof(ip), "10.0.%u.%u", i / 250,
		    i % 250 + 1);
		(void)snprintf(host, sizeof(host), "n%u", i);
		ck_assert_int_eq(gcache_spoof(spoof, sizeof(spoof), ip, host),
		    0);
		for (j = 0; j < 4; j++)
			ck_assert_int_eq(gcache_put(c, spoof, metrics[j],
			                     j < 2 ? "bytes/sec" : "ops/sec", i,
			                     now),
			    0);
	}
}

START_TEST(texts)
{
	char buf[GCACHE_SPOOF_MAX + 1], longname[300];

	ck_assert_int_eq(gcache_spoof(buf, sizeof(buf), "10.1.2.3", "n1.x"), 0);
	ck_assert_str_eq(buf, "10.1.2.3:n1.x");
	/* gmond splits at the first ':'; XML attributes are not escaped. */
	ck_assert_int_eq(gcache_spoof(buf, sizeof(buf), "fe80::1", "n1"),
	    -EINVAL);
	ck_assert_int_eq(gcache_spoof(buf, sizeof(buf), "10.1.2.3", "a\"b"),
	    -EINVAL);
	ck_assert_int_eq(gcache_spoof(buf, sizeof(buf), "10.1.2.3", "a<b"),
	    -EINVAL);
	ck_assert_int_eq(gcache_spoof(buf, sizeof(buf), "", "n1"), -EINVAL);
	ck_assert_int_eq(gcache_spoof(buf, sizeof(buf), "10.1.2.3", ""),
	    -EINVAL);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_int_eq(gcache_spoof(buf, sizeof(buf), "10.1.2.3", longname),
	    -EINVAL);
	ck_assert_int_eq(gcache_spoof(buf, 8, "10.1.2.3", "n1"), -EINVAL);
	ck_assert(gcache_metric_ok("scratch_read_bytes"));
	ck_assert(!gcache_metric_ok(""));
	ck_assert(!gcache_metric_ok("a b"));
	ck_assert(gcache_units_ok("bytes/sec"));
	ck_assert(gcache_units_ok(""));
	ck_assert(!gcache_units_ok("a\"b"));
	ck_assert(!gcache_units_ok("a\nb"));
}
END_TEST

START_TEST(put_rejects)
{
	struct gcache c;

	setup(&c, 60, 600, 16);
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:n", "m", "u", NAN, 1),
	    -EINVAL);
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:n", "m", "u", INFINITY, 1),
	    -EINVAL);
	ck_assert_int_eq(gcache_put(&c, "no-colon", "m", "u", 1, 1), -EINVAL);
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:n", "m\"", "u", 1, 1),
	    -EINVAL);
	ck_assert_uint_eq(gcache_pending(&c), 0);
	gcache_free(&c);
}
END_TEST

/* Metadata with the first two values, then again about every interval,
 * never with every value. */
START_TEST(metadata_first_then_interval)
{
	struct gcache c;
	uint64_t t = 1000 * S;
	unsigned k, meta = 0;

	setup(&c, 60, 600, 100000);
	sweep(&c, 100, t);
	ck_assert_uint_eq(gcache_pending(&c), 400);
	ck_assert_uint_eq(drain(&c, t), 400);
	/* 20 s sweeps: the next carries it again (one lost packet must not
	 * hide a metric for a minute), the one after none (the first repeat
	 * is due [30, 60) s after the second). */
	sweep(&c, 100, t + 20 * S);
	ck_assert_uint_eq(drain(&c, t + 20 * S), 400);
	sweep(&c, 100, t + 40 * S);
	ck_assert_uint_eq(drain(&c, t + 40 * S), 0);
	/* Over 10 minutes every entry is resent about every 60 s: 10 times
	 * each, give or take the first (spread) repeat. */
	for (k = 3; k <= 31; k++) {
		uint64_t now = t + (uint64_t)k * 20 * S;

		sweep(&c, 100, now);
		meta += drain(&c, now);
	}
	ck_assert_uint_ge(meta, 3600);
	ck_assert_uint_le(meta, 4400);
	gcache_free(&c);
}
END_TEST

/* The first repeat is spread over sweeps, not all in one. */
START_TEST(first_repeat_spread)
{
	struct gcache c;
	uint64_t t = 1000 * S;
	unsigned m1, m2;

	setup(&c, 60, 600, 100000);
	sweep(&c, 1000, t);
	(void)drain(&c, t);
	sweep(&c, 1000, t + 20 * S);
	ck_assert_uint_eq(drain(&c, t + 20 * S), 4000);
	sweep(&c, 1000, t + 60 * S);
	m1 = drain(&c, t + 60 * S);
	sweep(&c, 1000, t + 80 * S);
	m2 = drain(&c, t + 80 * S);
	/* Due [30, 60) s after the second: a share by 60 s, all by 80 s. */
	ck_assert_uint_gt(m1, 400);
	ck_assert_uint_lt(m1, 3600);
	ck_assert_uint_eq(m1 + m2, 4000);
	gcache_free(&c);
}
END_TEST

START_TEST(interval_zero_every_value)
{
	struct gcache c;

	setup(&c, 0, 600, 100);
	sweep(&c, 2, 5 * S);
	ck_assert_uint_eq(drain(&c, 5 * S), 8);
	sweep(&c, 2, 6 * S);
	ck_assert_uint_eq(drain(&c, 6 * S), 8);
	gcache_free(&c);
}
END_TEST

/* A newer value replaces the one waiting; each entry is queued once. */
START_TEST(coalesce)
{
	struct gcache c;
	struct gcache_entry *e;

	setup(&c, 60, 600, 100);
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:a", "m", "u", 1, S), 0);
	ck_assert_int_eq(gcache_put(&c, "10.0.0.2:b", "m", "u", 2, S), 0);
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:a", "m", "u", 3, S), 0);
	ck_assert_uint_eq(gcache_pending(&c), 2);
	ck_assert_uint_eq(c.coalesced, 1);
	e = gcache_head(&c);
	ck_assert_str_eq(gcache_entry_spoof(e), "10.0.0.1:a");
	ck_assert_str_eq(gcache_entry_metric(e), "m");
	ck_assert_str_eq(gcache_entry_units(e), "u");
	ck_assert(e->value == 3.0);
	gcache_pop(&c, GCACHE_META_SENT, S);
	e = gcache_head(&c);
	ck_assert_str_eq(gcache_entry_spoof(e), "10.0.0.2:b");
	gcache_pop(&c, GCACHE_META_SENT, S);
	ck_assert_ptr_null(gcache_head(&c));
	gcache_free(&c);
}
END_TEST

/* Failed metadata stays due; changed units make it due. */
START_TEST(meta_failed_and_units)
{
	struct gcache c;
	struct gcache_entry *e;

	setup(&c, 60, 600, 100);
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:a", "m", "u", 1, S), 0);
	e = gcache_head(&c);
	ck_assert(gcache_meta_due(&c, e, S));
	gcache_pop(&c, GCACHE_META_FAILED, S);
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:a", "m", "u", 1, 2 * S), 0);
	e = gcache_head(&c);
	ck_assert(gcache_meta_due(&c, e, 2 * S));
	gcache_pop(&c, GCACHE_META_SENT, 2 * S);
	/* The second value carries it again, the third not. */
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:a", "m", "u", 1, 3 * S), 0);
	e = gcache_head(&c);
	ck_assert(gcache_meta_due(&c, e, 3 * S));
	gcache_pop(&c, GCACHE_META_SENT, 3 * S);
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:a", "m", "u", 1, 4 * S), 0);
	e = gcache_head(&c);
	ck_assert(!gcache_meta_due(&c, e, 4 * S));
	gcache_pop(&c, GCACHE_META_NONE, 4 * S);
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:a", "m", "v", 1, 5 * S), 0);
	e = gcache_head(&c);
	ck_assert(gcache_meta_due(&c, e, 5 * S));
	ck_assert_str_eq(gcache_entry_units(e), "v");
	gcache_pop(&c, GCACHE_META_SENT, 5 * S);
	ck_assert_uint_eq(c.n, 1);
	gcache_free(&c);
}
END_TEST

/* Forcing makes every entry due, at most once per interval. */
START_TEST(force)
{
	struct gcache c;
	uint64_t t = 100 * S;

	setup(&c, 60, 600, 1000);
	sweep(&c, 10, t);
	(void)drain(&c, t);
	sweep(&c, 10, t + 20 * S);
	ck_assert_uint_eq(drain(&c, t + 20 * S), 40);
	ck_assert(gcache_force_meta(&c, t + 21 * S));
	/* Twice, as for new entries, then not until the spread repeat. */
	sweep(&c, 10, t + 40 * S);
	ck_assert_uint_eq(drain(&c, t + 40 * S), 40);
	ck_assert(!gcache_force_meta(&c, t + 50 * S));
	sweep(&c, 10, t + 60 * S);
	ck_assert_uint_eq(drain(&c, t + 60 * S), 40);
	sweep(&c, 10, t + 80 * S);
	ck_assert_uint_eq(drain(&c, t + 80 * S), 0);
	ck_assert(gcache_force_meta(&c, t + 82 * S));
	gcache_free(&c);
}
END_TEST

/* Bounded: a full table refuses new pairs, still takes known ones. */
START_TEST(bounded)
{
	struct gcache c;

	setup(&c, 60, 600, 8);
	sweep(&c, 2, S);
	ck_assert_int_eq(gcache_put(&c, "10.9.9.9:z", "m", "u", 1, S), -ENOSPC);
	ck_assert_uint_eq(c.refused, 1);
	sweep(&c, 2, 2 * S);
	ck_assert_uint_eq(gcache_pending(&c), 8);
	gcache_free(&c);
}
END_TEST

/* Idle entries are forgotten (only when nothing waits), and one idle for
 * longer than forget_ns is new again: metadata first. */
START_TEST(expire_and_forget)
{
	struct gcache c;
	struct gcache_entry *e;

	setup(&c, 60, 300, 1000);
	sweep(&c, 10, 10 * S);
	ck_assert_uint_eq(gcache_expire(&c, 1000 * S), 0); /* queued */
	(void)drain(&c, 10 * S);
	sweep(&c, 5, 200 * S); /* hosts 0-4 stay in use */
	(void)drain(&c, 200 * S);
	ck_assert_uint_eq(gcache_expire(&c, 400 * S), 20);
	ck_assert_uint_eq(c.n, 20);
	ck_assert_uint_eq(c.forgotten, 20);
	/* Still found after the compaction. */
	sweep(&c, 5, 410 * S);
	ck_assert_uint_eq(c.n, 20);
	ck_assert_uint_eq(gcache_pending(&c), 20);
	(void)drain(&c, 410 * S);
	/* Idle 390 s > 300 s: metadata again, though not expired. */
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:n0", "fs_read_bytes",
	                     "bytes/sec", 1, 800 * S),
	    0);
	e = gcache_head(&c);
	ck_assert(gcache_meta_due(&c, e, 800 * S));
	gcache_pop(&c, GCACHE_META_SENT, 800 * S);
	gcache_free(&c);
}
END_TEST

/* The packets the sink keeps in an entry: a copy, kept while the key
 * stays, dropped when the units change (they carry them), and freed with
 * the entry (ASan's leak check) or the table. */
START_TEST(packets_kept_until_key_changes)
{
	static const char meta[] = "META", prefix[] = "prefix";
	struct gcache c;
	struct gcache_entry *e;

	setup(&c, 60, 300, 1000);
	sweep(&c, 3, 10 * S);
	e = gcache_head(&c);
	ck_assert_ptr_null(e->pkt);
	ck_assert_int_eq(gcache_set_packets(e, meta, 4, prefix, 6), 0);
	ck_assert_uint_eq(e->pkt_meta_len, 4);
	ck_assert_uint_eq(e->pkt_prefix_len, 6);
	ck_assert_mem_eq(e->pkt, "METAprefix", 10);
	ck_assert_int_eq(gcache_set_packets(e, meta, 70000, prefix, 6),
	    -EMSGSIZE);
	ck_assert_mem_eq(e->pkt, "METAprefix", 10);
	(void)drain(&c, 10 * S);
	ck_assert_int_eq(gcache_put(&c, gcache_entry_spoof(e),
	                     gcache_entry_metric(e), gcache_entry_units(e), 2,
	                     20 * S),
	    0);
	ck_assert_ptr_eq(gcache_head(&c), e);
	ck_assert_ptr_nonnull(e->pkt); /* same key: kept */
	ck_assert_int_eq(gcache_put(&c, "10.0.0.1:n0", "fs_read_bytes", "B/s",
	                     3, 20 * S),
	    0);
	ck_assert_ptr_null(e->pkt); /* other units: built again */
	ck_assert_int_eq(gcache_set_packets(e, meta, 4, prefix, 6), 0);
	(void)drain(&c, 20 * S);
	ck_assert_int_eq(gcache_set_packets(&c.e[1], meta, 4, prefix, 0), 0);
	ck_assert_uint_eq(gcache_expire(&c, 1000 * S), 12); /* frees them */
	sweep(&c, 1, 1010 * S);
	ck_assert_ptr_null(gcache_head(&c)->pkt);
	ck_assert_int_eq(gcache_set_packets(gcache_head(&c), meta, 4, prefix,
	                     6),
	    0);
	gcache_free(&c);
}
END_TEST

/* Many entries: the FIFO and the index grow with the table. */
START_TEST(many)
{
	struct gcache c;

	setup(&c, 60, 600, 1u << 20);
	sweep(&c, 20000, S);
	ck_assert_uint_eq(gcache_pending(&c), 80000);
	ck_assert_uint_eq(drain(&c, S), 80000);
	sweep(&c, 20000, 21 * S);
	ck_assert_uint_eq(c.n, 80000);
	ck_assert_uint_eq(drain(&c, 21 * S), 80000);
	sweep(&c, 20000, 41 * S);
	ck_assert_uint_eq(drain(&c, 41 * S), 0);
	gcache_free(&c);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gcache");
	TCase *tc = tcase_create("core");

	/* "many" puts 240,000 values: well under a second alone, but
	 * Check's default 4 s is no guard on a machine kept busy
	 * (LH_TEST_STRESS); CTest's own timeout still catches a hang. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, texts);
	tcase_add_test(tc, put_rejects);
	tcase_add_test(tc, metadata_first_then_interval);
	tcase_add_test(tc, first_repeat_spread);
	tcase_add_test(tc, interval_zero_every_value);
	tcase_add_test(tc, coalesce);
	tcase_add_test(tc, meta_failed_and_units);
	tcase_add_test(tc, force);
	tcase_add_test(tc, bounded);
	tcase_add_test(tc, expire_and_forget);
	tcase_add_test(tc, many);
	tcase_add_test(tc, packets_kept_until_key_changes);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
