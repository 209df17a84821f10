/* SPDX-License-Identifier: BSD-2-Clause */
/* The gatherer's tables: baselines, sums over targets, exact per-counter
 * spans, peers, exports and targets coming and going, restore, MDT op
 * counts. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gtable.h"
#include "hindex.h"
#include "outbox.h"
#include "testutil.h"

#define S  1000000000ULL /* ns */
#define T0 (1700000000ULL * S)

struct got {
	size_t n;
	struct gt_record r[64];
	char nid[64][NID_STR_MAX];
	char fs[64][LTREE_FS_MAX];
	struct mdops ops[64]; /* r[i].ops points here, or is NULL */
};

static int
collect(void *arg, const struct gt_record *r)
{
	struct got *g = arg;

	ck_assert_uint_lt(g->n, 64);
	g->r[g->n] = *r;
	if (r->ops != NULL) {
		g->ops[g->n] = *r->ops;
		g->r[g->n].ops = &g->ops[g->n];
	}
	(void)snprintf(g->nid[g->n], NID_STR_MAX, "%s", r->nid);
	(void)snprintf(g->fs[g->n], LTREE_FS_MAX, "%s", r->fs);
	g->n++;
	return 0;
}

static int
count(void *arg, const struct gt_record *r)
{
	(void)r;
	(*(size_t *)arg)++;
	return 0;
}

static const struct gt_record *
find(const struct got *g, const char *fs, const char *nid)
{
	size_t i;

	for (i = 0; i < g->n; i++) {
		if (strcmp(g->nid[i], nid) == 0 && strcmp(g->fs[i], fs) == 0)
			return &g->r[i];
	}
	return NULL;
}

static struct delta_sample
sample(uint64_t rb, uint64_t wb, uint64_t ops, uint64_t snap_ns)
{
	struct delta_sample s;

	memset(&s, 0, sizeof(s));
	s.c.read_bytes = rb;
	s.c.write_bytes = wb;
	s.c.oss_ops = ops;
	s.samples = ops;
	s.snap_ns = snap_ns;
	return s;
}

/* Read one export: list it, classify it if asked, count it. */
static void
see(struct gtable *t, struct gt_target *tg, const char *nid, uint64_t ino,
    enum ltree_peer cls, struct delta_sample s)
{
	struct gt_export *e;
	int rc;

	e = gtable_export(t, tg, nid, ino, &rc);
	ck_assert_ptr_nonnull(e);
	if (gtable_needs_uuid(e, &s))
		gtable_classify(t, e, cls);
	gtable_observe(t, tg, e, &s, NULL);
}

static struct gt_target *
target(struct gtable *t, const char *name, uint64_t ino)
{
	struct gt_target *tg;

	tg = gtable_target(t, name, "scratch",
	    strstr(name, "MDT") != NULL ? LH_TARGET_MDT : LH_TARGET_OST, 1,
	    ino);
	ck_assert_ptr_nonnull(tg);
	gtable_target_listed(tg);
	return tg;
}

START_TEST(baseline_then_deltas)
{
	struct gtable t;
	struct gt_target *a;
	struct got g;
	const struct gt_record *r;

	gtable_init(&t);
	gtable_sweep_begin(&t, T0, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(1000, 2000, 5, T0));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	ck_assert_uint_eq(g.n, 1);
	r = find(&g, "scratch", "10.1.0.1@o2ib");
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->d.read_bytes, 0); /* baseline */
	ck_assert_uint_eq(r->span_us, 20000000);

	gtable_sweep_begin(&t, T0 + 20 * S, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(1500, 2100, 9, T0 + 20 * S + 5000));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	r = find(&g, "scratch", "10.1.0.1@o2ib");
	ck_assert_uint_eq(r->d.read_bytes, 500);
	ck_assert_uint_eq(r->d.write_bytes, 100);
	ck_assert_uint_eq(r->d.oss_ops, 4);
	ck_assert_uint_eq(r->span_us, 20000005);
	ck_assert_uint_eq(r->start_ns, T0);
	gtable_free(&t);
}
END_TEST

/* Two targets with different spans: each counter's D / span equals the
 * sum of the targets' own rates. */
/* The records of a sweep into an outbox, as the gatherer adds them. */
static int
into_outbox(void *arg, const struct gt_record *r)
{
	return outbox_add(arg, r->fs, r->nid, &r->d, r->ops, r->span_us,
	    r->cspan_us, 7, r->start_ns);
}

/*
 * Two NID directories whose names differ only in form ("@o2ib" and
 * "@o2ib0": Lustre prints neither way twice, but a tree can hold both)
 * are two exports, each with its own counters, and one client on the
 * wire: both are reported under the canonical NID, the outbox sums them
 * into one record, and the SWEEP takes it.  Before, the SWEEP refused
 * the batch (the same (fs, NID) twice) at every seal: the gatherer sent
 * nothing again.  Still so after the clients are renumbered.
 */
START_TEST(aliased_nids_one_client)
{
	static const char *const dirs[] = {"10.1.0.1@o2ib", "10.1.0.1@o2ib0",
	    "10.1.0.1@o2ib0"};
	struct gtable t;
	struct gt_target *tg[3];
	struct outbox ob;
	struct got g;
	uint64_t sum;
	unsigned k, i;

	gtable_init(&t);
	for (k = 0; k < 5; k++) {
		gtable_sweep_begin(&t, T0 + k * 20 * S, 20 * S);
		tg[0] = tg[1] = target(&t, "scratch-OST0000", 10);
		tg[2] = target(&t, "scratch-OST0001", 11);
		/* A client listed first in the first two sweeps only: when
		 * it goes, the others are renumbered. */
		if (k < 2)
			see(&t, tg[0], "10.1.0.9@tcp", 99, LTREE_PEER_CLIENT,
			    sample(k, 0, k, T0 + k * 20 * S));
		for (i = 0; i < 3; i++)
			see(&t, tg[i], dirs[i], 100 + i, LTREE_PEER_CLIENT,
			    sample(k * 1000 * (i + 1), 0, k * (i + 1),
			        T0 + k * 20 * S));
		if (k == 4)
			break;
		memset(&g, 0, sizeof(g));
		ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
		sum = 0;
		for (i = 0; i < g.n; i++) {
			if (strcmp(g.nid[i], "10.1.0.9@tcp") == 0)
				continue;
			ck_assert_str_eq(g.nid[i], "10.1.0.1@o2ib");
			sum += g.r[i].d.read_bytes;
		}
		ck_assert_uint_eq(g.n, k < 2 ? 3 : 2);
		ck_assert_uint_eq(sum, k == 0 ? 0 : 1000 + 2000 + 3000);
	}
	/* The last sweep into an outbox that seals it. */
	outbox_init(&ob, 0);
	ck_assert_int_eq(gtable_sweep_end(&t, into_outbox, &ob), 0);
	ck_assert_uint_eq(ob.pending.n, 1);
	ck_assert_uint_eq(ob.pending.recs[0].d.read_bytes, 1000 + 2000 + 3000);
	ck_assert_int_eq(outbox_seal_within(&ob, 65536), 0);
	ck_assert(ob.have_inflight);
	outbox_free(&ob);
	gtable_free(&t);
}
END_TEST

START_TEST(exact_rates_over_targets)
{
	struct gtable t;
	struct gt_target *a, *b;
	struct got g;
	const struct gt_record *r;
	double want_rb, want_ops, got_rb, got_ops;
	uint64_t s_rb, s_ops;

	gtable_init(&t);
	gtable_sweep_begin(&t, T0, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	b = target(&t, "scratch-OST0001", 11);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(0, 0, 0, T0));
	see(&t, b, "10.1.0.1@o2ib", 101, LTREE_PEER_CLIENT,
	    sample(0, 0, 0, T0));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);

	/* a: 19 s, 1.9 GB, 100 ops; b: 21 s, 4.2 GB, 7000 ops. */
	gtable_sweep_begin(&t, T0 + 20 * S, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	b = target(&t, "scratch-OST0001", 11);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(1900000000, 0, 100, T0 + 19 * S));
	see(&t, b, "10.1.0.1@o2ib", 101, LTREE_PEER_CLIENT,
	    sample(4200000000, 0, 7000, T0 + 21 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	r = find(&g, "scratch", "10.1.0.1@o2ib");
	ck_assert_uint_eq(r->d.read_bytes, 6100000000ULL);
	ck_assert_uint_eq(r->d.oss_ops, 7100);
	s_rb = r->cspan_us[0] != 0 ? r->cspan_us[0] : r->span_us;
	s_ops = r->cspan_us[4] != 0 ? r->cspan_us[4] : r->span_us;
	want_rb = 1900000000.0 / 19e6 + 4200000000.0 / 21e6;
	want_ops = 100.0 / 19e6 + 7000.0 / 21e6;
	got_rb = (double)r->d.read_bytes / (double)s_rb;
	got_ops = (double)r->d.oss_ops / (double)s_ops;
	ck_assert_msg(fabs(got_rb - want_rb) / want_rb < 1e-6,
	    "bytes rate %g, want %g", got_rb, want_rb);
	ck_assert_msg(fabs(got_ops - want_ops) / want_ops < 1e-6,
	    "ops rate %g, want %g", got_ops, want_ops);
	/* The record span is the bytes' own: no separate span for them. */
	ck_assert_uint_eq(r->cspan_us[0], 0);
	ck_assert_uint_ne(r->cspan_us[4], 0);
	gtable_free(&t);
}
END_TEST

START_TEST(peers_never_reported)
{
	struct gtable t;
	struct gt_target *a, *m;
	struct got g;

	gtable_init(&t);
	gtable_sweep_begin(&t, T0, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	m = target(&t, "scratch-MDT0000", 12);
	/* The MDS's NID: a server on the OST (its OSP), stale on the MDT. */
	see(&t, a, "10.0.0.1@o2ib", 1, LTREE_PEER_SERVER, sample(0, 0, 50, T0));
	see(&t, m, "10.0.0.1@o2ib", 2, LTREE_PEER_STALE, sample(0, 0, 0, T0));
	see(&t, a, "10.1.0.7@o2ib", 3, LTREE_PEER_STALE, sample(0, 0, 3, T0));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_ptr_nonnull(find(&g, "scratch", "10.1.0.7@o2ib"));
	gtable_free(&t);
}
END_TEST

/* A first sweep (t initialised here) that finds export 10.1.0.7@o2ib of
 * OST0000 stale, read as s: its target into *ret_tg. */
static struct gt_export *
stale_export(struct gtable *t, const struct delta_sample *s,
    struct gt_target **ret_tg)
{
	struct gt_export *e;
	int rc;

	gtable_init(t);
	gtable_sweep_begin(t, T0, 20 * S);
	*ret_tg = target(t, "scratch-OST0000", 10);
	e = gtable_export(t, *ret_tg, "10.1.0.7@o2ib", 3, &rc);
	ck_assert_ptr_nonnull(e);
	ck_assert(gtable_needs_uuid(e, s));
	gtable_classify(t, e, LTREE_PEER_STALE);
	gtable_observe(t, *ret_tg, e, s, NULL);
	return e;
}

START_TEST(stale_export_rechecked_when_it_moves)
{
	struct gtable t;
	struct gt_target *a;
	struct delta_sample s = sample(10, 0, 3, T0);
	struct gt_export *e = stale_export(&t, &s, &a);

	ck_assert(!gtable_needs_uuid(e, &s)); /* still: no uuid read */
	s.samples++;
	ck_assert(gtable_needs_uuid(e, &s)); /* it moves: look again */
	gtable_classify(&t, e, LTREE_PEER_CLIENT);
	gtable_observe(&t, a, e, &s, NULL);
	s.samples++;
	ck_assert(!gtable_needs_uuid(e, &s)); /* a client, once and for all */
	gtable_free(&t);
}
END_TEST

/* A read where e stood still (it never looks), then one where it moved:
 * whether that spell's first read looks at e's uuid. */
static bool
spell_looks(struct gt_export *e, struct delta_sample *s)
{
	ck_assert(!gtable_needs_uuid(e, s));
	s->samples++;
	return gtable_needs_uuid(e, s);
}

/* A stale export that moves in spells while its uuid keeps saying stale
 * (a client that reconnects and idles out again between sweeps) is looked
 * at in its 1st, 3rd, 6th, 11th, 19th, 27th... spell of moving reads;
 * a look that finds a client ends it. */
START_TEST(stale_export_moving_backs_off)
{
	static const unsigned want[] = {1, 3, 6, 11, 19, 27};
	struct gtable t;
	struct gt_target *a;
	struct delta_sample s = sample(10, 0, 3, T0);
	struct gt_export *e = stale_export(&t, &s, &a);
	unsigned k, n = 0;

	for (k = 1; k <= 30; k++) {
		/* Still between two spells: no look, no count. */
		if (spell_looks(e, &s)) {
			ck_assert_uint_lt(n, sizeof(want) / sizeof(want[0]));
			ck_assert_uint_eq(k, want[n]);
			n++;
			gtable_classify(&t, e, LTREE_PEER_STALE);
		}
		gtable_observe(&t, a, e, &s, NULL);
	}
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	/* The 30th spell waited three of its 7: 4 more, then a look finds
	 * a client, and that is final. */
	for (k = 0; k < 4; k++) {
		ck_assert(!spell_looks(e, &s));
		gtable_observe(&t, a, e, &s, NULL);
	}
	ck_assert(spell_looks(e, &s));
	gtable_classify(&t, e, LTREE_PEER_CLIENT);
	gtable_observe(&t, a, e, &s, NULL);
	s.samples++;
	ck_assert(!gtable_needs_uuid(e, &s));
	ck_assert_uint_eq(e->uuid_skip, 0);
	gtable_free(&t);
}
END_TEST

/* A stale export that keeps moving from sweep to sweep is the same peer:
 * looked at on its first moving read only, until it stands still; a look
 * deferred (the stats reader had no uuid) is asked for again. */
START_TEST(stale_export_moving_looked_at_once)
{
	struct gtable t;
	struct gt_target *a;
	struct delta_sample s = sample(10, 0, 3, T0);
	struct gt_export *e = stale_export(&t, &s, &a);
	unsigned k;

	s.samples++; /* moves at once after its first read */
	ck_assert(gtable_needs_uuid(e, &s));
	ck_assert(gtable_needs_uuid(e, &s)); /* asked again: still */
	gtable_classify(&t, e, LTREE_PEER_STALE);
	gtable_observe(&t, a, e, &s, NULL);
	for (k = 0; k < 20; k++) {
		s.samples++;
		ck_assert(!gtable_needs_uuid(e, &s));
		gtable_observe(&t, a, e, &s, NULL);
	}
	/* Still once, then two spells: the first waits, the second looks. */
	ck_assert(!spell_looks(e, &s));
	gtable_observe(&t, a, e, &s, NULL);
	ck_assert(spell_looks(e, &s));
	gtable_free(&t);
}
END_TEST

/* An export not listed is forgotten; when it comes back its whole value
 * counts (it was created from zero since the previous sweep), over the
 * time since that sweep. */
START_TEST(export_gone_and_back)
{
	struct gtable t;
	struct gt_target *a;
	struct got g;
	const struct gt_record *r;

	gtable_init(&t);
	gtable_sweep_begin(&t, T0, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(1000, 0, 5, T0));
	see(&t, a, "10.1.0.2@o2ib", 101, LTREE_PEER_CLIENT,
	    sample(1000, 0, 5, T0));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);

	gtable_sweep_begin(&t, T0 + 20 * S, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(1100, 0, 6, T0 + 20 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	ck_assert_uint_eq(g.n, 1); /* .2 is gone, and so is its client */
	ck_assert_uint_eq(t.nclients, 1);

	gtable_sweep_begin(&t, T0 + 60 * S, 20 * S); /* one sweep skipped */
	a = target(&t, "scratch-OST0000", 10);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(1100, 0, 6, T0 + 60 * S));
	see(&t, a, "10.1.0.2@o2ib", 102, LTREE_PEER_CLIENT,
	    sample(300, 0, 2, T0 + 60 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	r = find(&g, "scratch", "10.1.0.2@o2ib");
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->d.read_bytes, 300);
	ck_assert_uint_eq(r->span_us, 40000000); /* since the last sweep */
	gtable_free(&t);
}
END_TEST

/* A NID directory re-created (another inode) is a new export even when
 * its counters are above the old ones. */
START_TEST(recreated_directory_is_new)
{
	struct gtable t;
	struct gt_target *a;
	struct got g;

	gtable_init(&t);
	gtable_sweep_begin(&t, T0, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(10, 0, 1, T0));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	gtable_sweep_begin(&t, T0 + 20 * S, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	see(&t, a, "10.1.0.1@o2ib", 200, LTREE_PEER_CLIENT,
	    sample(5000, 0, 9, T0 + 20 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	ck_assert_uint_eq(g.r[0].d.read_bytes, 5000);
	ck_assert_uint_eq(g.r[0].d.oss_ops, 9);
	gtable_free(&t);
}
END_TEST

/* A target re-created (failed over and back, remounted): every export of
 * it counts from zero. */
START_TEST(recreated_target_is_new)
{
	struct gtable t;
	struct gt_target *a;
	struct got g;

	gtable_init(&t);
	gtable_sweep_begin(&t, T0, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(10, 0, 1, T0));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	gtable_sweep_begin(&t, T0 + 20 * S, 20 * S);
	a = target(&t, "scratch-OST0000", 99);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(700, 0, 4, T0 + 20 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	ck_assert_uint_eq(g.r[0].d.read_bytes, 700);
	gtable_free(&t);
}
END_TEST

/* A listing that did not complete forgets nothing; a target not found
 * takes its exports, and clients left without exports, with it. */
START_TEST(partial_listing_and_target_gone)
{
	struct gtable t;
	struct gt_target *a, *b;
	struct got g;

	gtable_init(&t);
	gtable_sweep_begin(&t, T0, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	b = target(&t, "scratch-OST0001", 11);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(10, 0, 1, T0));
	see(&t, a, "10.1.0.2@o2ib", 101, LTREE_PEER_CLIENT,
	    sample(10, 0, 1, T0));
	see(&t, b, "10.1.0.3@o2ib", 102, LTREE_PEER_CLIENT,
	    sample(10, 0, 1, T0));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	ck_assert_uint_eq(g.n, 3);

	gtable_sweep_begin(&t, T0 + 20 * S, 20 * S);
	a = gtable_target(&t, "scratch-OST0000", "scratch", LH_TARGET_OST, 1,
	    10); /* listing failed half-way: not marked listed */
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(20, 0, 2, T0 + 20 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	ck_assert_uint_eq(g.n, 2); /* .1 and .2; OST0001 and .3 gone */
	ck_assert_ptr_nonnull(find(&g, "scratch", "10.1.0.2@o2ib"));
	ck_assert_ptr_null(find(&g, "scratch", "10.1.0.3@o2ib"));
	ck_assert_uint_eq(t.ntargets, 1);
	ck_assert_uint_eq(gtable_nexports(&t), 2);
	gtable_free(&t);
}
END_TEST

START_TEST(reset_counts_new_value)
{
	struct gtable t;
	struct gt_target *a;
	struct got g;

	gtable_init(&t);
	gtable_sweep_begin(&t, T0, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(100000, 0, 50, T0));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	gtable_sweep_begin(&t, T0 + 20 * S, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(300, 0, 2, T0 + 20 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	ck_assert_uint_eq(g.r[0].d.read_bytes, 300);
	ck_assert_uint_eq(g.r[0].span_us, 20000000);
	gtable_free(&t);
}
END_TEST

/* One sweep k of export 10.1.0.1@o2ib of OST0000 reading s: its record. */
static struct gt_record
step_sample(struct gtable *t, uint64_t k, struct delta_sample s)
{
	const struct gt_record *r;
	struct gt_target *a;
	struct got g;

	gtable_sweep_begin(t, T0 + k * 20 * S, 20 * S);
	a = target(t, "scratch-OST0000", 10);
	see(t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT, s);
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(t, collect, &g), 0);
	r = find(&g, "scratch", "10.1.0.1@o2ib");
	ck_assert_ptr_nonnull(r);
	return *r;
}

/* What an export keeps of the samples total (its low 32 bits) and of
 * start_time (a tag) decides as the whole values did: a total that
 * crosses 2^32 is no reset; one that goes down, or a start_time that
 * moves, is. */
static uint64_t
step_read_bytes(struct gtable *t, uint64_t k, uint64_t rb, uint64_t samples,
    uint64_t start_ns)
{
	struct delta_sample s = sample(rb, 0, 1, T0 + k * 20 * S);

	s.samples = samples;
	s.start_ns = start_ns;
	return step_sample(t, k, s).d.read_bytes;
}
START_TEST(packed_samples_and_start)
{
	const uint64_t two32 = (uint64_t)1 << 32, start = T0 - 3600 * S;
	struct gtable t;

	gtable_init(&t);
	(void)step_read_bytes(&t, 0, 1000, two32 - 10, start);
	/* Up across 2^32, up by 2^31 - 1 (the most a sweep can): deltas. */
	ck_assert_uint_eq(step_read_bytes(&t, 1, 1500, two32 + 5, start), 500);
	ck_assert_uint_eq(step_read_bytes(&t, 2, 1600,
	                      two32 + 5 + ((uint64_t)1 << 31) - 1, start),
	    100);
	/* Down by one: a reset, counting the current value. */
	ck_assert_uint_eq(step_read_bytes(&t, 3, 1700,
	                      two32 + 5 + ((uint64_t)1 << 31) - 2, start),
	    1700);
	/* Down from above 2^32 to below it. */
	ck_assert_uint_eq(step_read_bytes(&t, 4, 1800, 7, start), 1800);
	/* start_time moves, the rest climbs: a reset. */
	ck_assert_uint_eq(step_read_bytes(&t, 5, 1900, 8, start + 1), 1900);
	ck_assert_uint_eq(step_read_bytes(&t, 6, 2000, 9, start + 1), 100);
	/* start_time gone (2.15.0 prints 0), then back: no reset. */
	ck_assert_uint_eq(step_read_bytes(&t, 7, 2100, 10, 0), 100);
	ck_assert_uint_eq(step_read_bytes(&t, 8, 2200, 11, start + 1), 100);
	ck_assert_uint_ne(gtable_start_tag(start), gtable_start_tag(start + 1));
	ck_assert_uint_eq(gtable_start_tag(0), 0);
	ck_assert_uint_ne(gtable_start_tag(1), 0);
	gtable_free(&t);
}
END_TEST

/* read_ops and write_ops are kept as their low 32 bits (struct
 * gt_export), bytes and oss_ops whole: counts and bytes that cross 2^32
 * between two sweeps give their deltas, a count that goes down is a
 * reset, and an export restored from whole values (a version 4 state
 * file) above 2^32 counts on exactly. */
START_TEST(packed_counts_cross_2_32)
{
	const uint64_t two32 = (uint64_t)1 << 32;
	struct delta_sample s = sample(two32 - 7, 5, two32 - 3, T0);
	struct gtable t;
	struct gt_target *a;
	struct gt_record r;

	gtable_init(&t);
	s.c.read_ops = two32 - 2;
	s.c.write_ops = 3 * two32 + 1;
	(void)step_sample(&t, 0, s);
	s.snap_ns = T0 + 20 * S;
	s.c.read_bytes += two32 + 100; /* 4 GiB in a sweep: whole */
	s.c.read_ops += 9;
	s.c.write_ops += ((uint64_t)1 << 31) - 1;
	s.c.oss_ops += 40;
	s.samples += 40;
	r = step_sample(&t, 1, s);
	ck_assert_uint_eq(r.d.read_bytes, two32 + 100);
	ck_assert_uint_eq(r.d.read_ops, 9);
	ck_assert_uint_eq(r.d.write_ops, ((uint64_t)1 << 31) - 1);
	ck_assert_uint_eq(r.d.oss_ops, 40);
	ck_assert_uint_eq(r.d.write_bytes, 0);
	/* write_ops down by one, everything else up: a reset. */
	s.snap_ns = T0 + 40 * S;
	s.c.read_bytes += 10;
	s.c.write_ops -= 1;
	s.c.oss_ops += 1;
	s.samples += 1;
	r = step_sample(&t, 2, s);
	ck_assert_uint_eq(r.d.read_bytes, s.c.read_bytes);
	ck_assert_uint_eq(r.d.write_ops, s.c.write_ops);
	/* oss_ops is kept whole: cleared from above 2^32 to a value whose
	 * low 32 bits look higher, nothing else telling, it is a reset. */
	s.snap_ns = T0 + 60 * S;
	s.c.oss_ops = (s.c.oss_ops & 0xffffffffu) + 1000;
	s.samples += 1000;
	r = step_sample(&t, 3, s);
	ck_assert_uint_eq(r.d.oss_ops, s.c.oss_ops);
	ck_assert_uint_eq(r.d.read_bytes, s.c.read_bytes);
	gtable_free(&t);

	/* Restored from whole values above 2^32, then read again. */
	gtable_init(&t);
	a = gtable_restore_target(&t, "scratch-OST0000", "scratch",
	    LH_TARGET_OST, 1, 10);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(gtable_restore_export(&t, a, "10.1.0.1@o2ib", 100,
	                     LTREE_PEER_CLIENT, true, &s, NULL),
	    0);
	gtable_restored(&t, T0 + 60 * S);
	s.snap_ns = T0 + 80 * S;
	s.c.write_ops += 77;
	s.c.oss_ops += 78;
	s.samples += 78;
	r = step_sample(&t, 4, s);
	ck_assert_uint_eq(r.d.write_ops, 77);
	ck_assert_uint_eq(r.d.oss_ops, 78);
	ck_assert_uint_eq(r.d.read_bytes, 0);
	gtable_free(&t);
}
END_TEST

/* Many clients over several targets, some leaving: the indexes stay
 * right through growth and compaction. */
START_TEST(many_clients_churn)
{
	struct gtable t;
	struct gt_target *tg[3];
	size_t n;
	char nid[64];
	unsigned sw, c, i;

	gtable_init(&t);
	for (sw = 0; sw < 4; sw++) {
		gtable_sweep_begin(&t, T0 + sw * 20 * S, 20 * S);
		for (i = 0; i < 3; i++) {
			(void)snprintf(nid, sizeof(nid), "scratch-OST%04u", i);
			tg[i] = target(&t, nid, 10 + i);
		}
		for (c = 0; c < 3000; c++) {
			/* Every sweep drops the clients c % 4 == sw. */
			if (c % 4 == sw)
				continue;
			(void)snprintf(nid, sizeof(nid), "10.1.%u.%u@o2ib",
			    c / 256, c % 256);
			for (i = 0; i < 3; i++)
				see(&t, tg[i], nid, 1000 + c, LTREE_PEER_CLIENT,
				    sample(sw * 10ULL, 0, sw,
				        T0 + sw * 20 * S));
		}
		n = 0;
		ck_assert_int_eq(gtable_sweep_end(&t, count, &n), 0);
		ck_assert_uint_eq(n, 2250);
		ck_assert_uint_eq(t.nclients, 2250);
		ck_assert_uint_eq(gtable_nexports(&t), 3 * 2250);
	}
	gtable_free(&t);
}
END_TEST

START_TEST(restore_then_sweep)
{
	struct gtable t;
	struct gt_target *a;
	struct delta_sample prev = sample(1000, 0, 5, T0);
	struct got g;

	gtable_init(&t);
	a = gtable_restore_target(&t, "scratch-OST0000", "scratch",
	    LH_TARGET_OST, 1, 10);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(gtable_restore_target(&t, "scratch-OST0000",
	    "scratch", LH_TARGET_OST, 1, 10));
	ck_assert_int_eq(gtable_restore_export(&t, a, "10.1.0.1@o2ib", 100,
	                     LTREE_PEER_CLIENT, true, &prev, NULL),
	    0);
	ck_assert_int_lt(gtable_restore_export(&t, a, "10.1.0.1@o2ib", 100,
	                     LTREE_PEER_CLIENT, true, &prev, NULL),
	    0);
	gtable_restored(&t, T0);
	/* Restarted an hour later: the delta is the hour's. */
	gtable_sweep_begin(&t, T0 + 3600 * S, 20 * S);
	a = target(&t, "scratch-OST0000", 10);
	see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
	    sample(9000, 0, 50, T0 + 3600 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	ck_assert_uint_eq(g.r[0].d.read_bytes, 8000);
	ck_assert_uint_eq(g.r[0].span_us, 3600000000ULL);
	gtable_free(&t);
}
END_TEST

/* After a restart under a configuration that reads more, targets new to
 * the table were there all along: baselines, not a burst of new data.
 * Without that, a target new after a restart appeared meanwhile (failed
 * over here, mounted): its exports count whole. */
START_TEST(new_targets_after_restart)
{
	struct delta_sample prev = sample(1000, 0, 5, T0);
	unsigned widened;

	for (widened = 0; widened < 2; widened++) {
		struct gtable t;
		struct gt_target *a, *b;
		struct got g;
		const struct gt_record *r;

		gtable_init(&t);
		a = gtable_restore_target(&t, "scratch-OST0000", "scratch",
		    LH_TARGET_OST, 1, 10);
		ck_assert_int_eq(gtable_restore_export(&t, a, "10.1.0.1@o2ib",
		                     100, LTREE_PEER_CLIENT, true, &prev, NULL),
		    0);
		gtable_restored(&t, T0);
		t.new_targets_are_old = widened != 0;
		gtable_sweep_begin(&t, T0 + 20 * S, 20 * S);
		a = target(&t, "scratch-OST0000", 10);
		b = target(&t, "scratch-OST0001", 11);
		see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
		    sample(1500, 0, 6, T0 + 20 * S));
		see(&t, b, "10.1.0.1@o2ib", 200, LTREE_PEER_CLIENT,
		    sample(900000, 0, 60, T0 + 20 * S));
		memset(&g, 0, sizeof(g));
		ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
		r = find(&g, "scratch", "10.1.0.1@o2ib");
		ck_assert_uint_eq(r->d.read_bytes, widened ? 500 : 900500);

		/* The next sweep counts both normally. */
		gtable_sweep_begin(&t, T0 + 40 * S, 20 * S);
		a = target(&t, "scratch-OST0000", 10);
		b = target(&t, "scratch-OST0001", 11);
		see(&t, a, "10.1.0.1@o2ib", 100, LTREE_PEER_CLIENT,
		    sample(1600, 0, 7, T0 + 40 * S));
		see(&t, b, "10.1.0.1@o2ib", 200, LTREE_PEER_CLIENT,
		    sample(900010, 0, 61, T0 + 40 * S));
		memset(&g, 0, sizeof(g));
		ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
		ck_assert_uint_eq(g.r[0].d.read_bytes, 110);
		gtable_free(&t);
	}
}
END_TEST

/* ---- MDT op counts ---- */

/* Op counts: open, close, getattr; the rest zero. */
static struct mdops
mops(uint64_t open, uint64_t close, uint64_t getattr)
{
	struct mdops m;

	memset(&m, 0, sizeof(m));
	m.v[MDOPS_OPEN] = open;
	m.v[MDOPS_CLOSE] = close;
	m.v[MDOPS_GETATTR] = getattr;
	return m;
}

/* An MDT export's sample: mds_ops is the sum of its ops (and more). */
static struct delta_sample
msample(const struct mdops *m, uint64_t extra, uint64_t snap_ns)
{
	struct delta_sample s;
	unsigned i;

	memset(&s, 0, sizeof(s));
	s.c.mds_ops = extra;
	for (i = 0; i < MDOPS_N; i++)
		s.c.mds_ops += m->v[i];
	s.samples = s.c.mds_ops;
	s.snap_ns = snap_ns;
	return s;
}

static void
see_mdt(struct gtable *t, struct gt_target *tg, const char *nid, uint64_t ino,
    const struct mdops *m, struct delta_sample s)
{
	struct gt_export *e;
	int rc;

	e = gtable_export(t, tg, nid, ino, &rc);
	ck_assert_ptr_nonnull(e);
	if (gtable_needs_uuid(e, &s))
		gtable_classify(t, e, LTREE_PEER_CLIENT);
	gtable_observe(t, tg, e, &s, m);
}

static void
assert_ops(const struct gt_record *r, uint64_t open, uint64_t close,
    uint64_t getattr)
{
	struct mdops want = mops(open, close, getattr);
	unsigned i;

	ck_assert_ptr_nonnull(r);
	/* No op sums: none moved. */
	if (r->ops == NULL) {
		ck_assert(mdops_is_zero(&want));
		return;
	}
	for (i = 0; i < MDOPS_N; i++)
		ck_assert_msg(r->ops->v[i] == want.v[i],
		    "%s %s: %s is %llu, want %llu", r->fs, r->nid,
		    mdops_name(i), (unsigned long long)r->ops->v[i],
		    (unsigned long long)want.v[i]);
}

/* Baseline: no ops; then cur - prev per op (one that went down counts
 * its current value); then a reset of the counters: the current counts. */
START_TEST(ops_baseline_normal_reset)
{
	struct gtable t;
	struct gt_target *m;
	struct got g;
	struct mdops o;

	gtable_init(&t);
	gtable_sweep_begin(&t, T0, 20 * S);
	m = target(&t, "scratch-MDT0000", 12);
	o = mops(100, 90, 50);
	see_mdt(&t, m, "10.1.0.1@o2ib", 1, &o, msample(&o, 10, T0));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_ptr_null(g.r[0].ops); /* baseline */

	gtable_sweep_begin(&t, T0 + 20 * S, 20 * S);
	m = target(&t, "scratch-MDT0000", 12);
	o = mops(130, 95, 7); /* getattr down, the total still up */
	see_mdt(&t, m, "10.1.0.1@o2ib", 1, &o, msample(&o, 100, T0 + 20 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	assert_ops(&g.r[0], 30, 5, 7);

	gtable_sweep_begin(&t, T0 + 40 * S, 20 * S);
	m = target(&t, "scratch-MDT0000", 12);
	o = mops(4, 3, 2); /* cleared: everything went down */
	see_mdt(&t, m, "10.1.0.1@o2ib", 1, &o, msample(&o, 0, T0 + 40 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	assert_ops(&g.r[0], 4, 3, 2);

	/* Still: a record with ops, all zero. */
	gtable_sweep_begin(&t, T0 + 60 * S, 20 * S);
	m = target(&t, "scratch-MDT0000", 12);
	see_mdt(&t, m, "10.1.0.1@o2ib", 1, &o, msample(&o, 0, T0 + 60 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	assert_ops(&g.r[0], 0, 0, 0);
	gtable_free(&t);
}
END_TEST

/* An export new after the first sweep, and a re-created directory: all
 * of their counts. */
START_TEST(ops_new_export)
{
	struct gtable t;
	struct gt_target *m;
	struct got g;
	struct mdops o1 = mops(10, 10, 10), o2 = mops(7, 6, 5);

	gtable_init(&t);
	gtable_sweep_begin(&t, T0, 20 * S);
	m = target(&t, "scratch-MDT0000", 12);
	see_mdt(&t, m, "10.1.0.1@o2ib", 1, &o1, msample(&o1, 0, T0));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);

	gtable_sweep_begin(&t, T0 + 20 * S, 20 * S);
	m = target(&t, "scratch-MDT0000", 12);
	o1 = mops(20, 15, 10);
	see_mdt(&t, m, "10.1.0.1@o2ib", 9, &o1, msample(&o1, 0, T0 + 20 * S));
	see_mdt(&t, m, "10.1.0.2@o2ib", 2, &o2, msample(&o2, 0, T0 + 20 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	assert_ops(find(&g, "scratch", "10.1.0.1@o2ib"), 20, 15, 10);
	assert_ops(find(&g, "scratch", "10.1.0.2@o2ib"), 7, 6, 5);
	gtable_free(&t);
}
END_TEST

/* DNE: a client's ops on two MDTs are summed; a client seen on OSTs only
 * has none, and a table without an MDT keeps no op memory at all. */
START_TEST(ops_dne_sum_and_ost_only)
{
	struct gtable t, o;
	struct gt_target *a, *m0, *m1;
	struct got g;
	struct mdops x0 = mops(1, 1, 1), x1 = mops(2, 2, 2);
	unsigned k;

	gtable_init(&t);
	for (k = 0; k < 2; k++) {
		gtable_sweep_begin(&t, T0 + k * 20 * S, 20 * S);
		a = target(&t, "scratch-OST0000", 10);
		m0 = target(&t, "scratch-MDT0000", 12);
		m1 = target(&t, "scratch-MDT0001", 13);
		x0 = mops(1 + k * 10, 1 + k * 20, 1);
		x1 = mops(2 + k * 3, 2, 2 + k * 4);
		see(&t, a, "10.1.0.1@o2ib", 1, LTREE_PEER_CLIENT,
		    sample(k * 100, 0, k, T0 + k * 20 * S));
		see(&t, a, "10.1.0.9@o2ib", 9, LTREE_PEER_CLIENT,
		    sample(k * 100, 0, k, T0 + k * 20 * S));
		see_mdt(&t, m0, "10.1.0.1@o2ib", 2, &x0,
		    msample(&x0, 0, T0 + k * 20 * S));
		see_mdt(&t, m1, "10.1.0.1@o2ib", 3, &x1,
		    msample(&x1, 0, T0 + k * 20 * S));
		memset(&g, 0, sizeof(g));
		ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
		ck_assert_uint_eq(g.n, 2);
	}
	assert_ops(find(&g, "scratch", "10.1.0.1@o2ib"), 13, 20, 4);
	ck_assert_ptr_null(find(&g, "scratch", "10.1.0.9@o2ib")->ops);
	ck_assert_ptr_null(t.targets[0]->ops); /* the OST's exports */
	gtable_free(&t);

	gtable_init(&o);
	gtable_sweep_begin(&o, T0, 20 * S);
	a = target(&o, "scratch-OST0000", 10);
	see(&o, a, "10.1.0.1@o2ib", 1, LTREE_PEER_CLIENT, sample(0, 0, 0, T0));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&o, collect, &g), 0);
	ck_assert_ptr_null(o.cops);
	ck_assert_ptr_null(g.r[0].ops);
	gtable_free(&o);
}
END_TEST

/* Clients and exports that go away: the op memory of those that stay
 * moves with them. */
START_TEST(ops_survive_compaction)
{
	struct gtable t;
	struct gt_target *a, *m;
	struct got g;
	struct mdops o;
	char nid[32];
	unsigned k, c;

	gtable_init(&t);
	for (k = 0; k < 4; k++) {
		gtable_sweep_begin(&t, T0 + k * 20 * S, 20 * S);
		a = target(&t, "scratch-OST0000", 10);
		m = target(&t, "scratch-MDT0000", 12);
		for (c = 0; c < 6; c++) {
			/* Sweep 2 drops the even clients from the MDT and
			 * client 4 altogether. */
			(void)snprintf(nid, sizeof(nid), "10.1.0.%u@o2ib", c);
			if (k == 2 && c == 4)
				continue;
			see(&t, a, nid, 100 + c, LTREE_PEER_CLIENT,
			    sample(0, 0, 0, T0 + k * 20 * S));
			if (k == 2 && c % 2 == 0)
				continue;
			o = mops(1000 * c + 10 * k, 0, 0);
			see_mdt(&t, m, nid, 200 + c, &o,
			    msample(&o, 0, T0 + k * 20 * S));
		}
		memset(&g, 0, sizeof(g));
		ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
		if (k != 2)
			continue;
		/* Off the MDT this sweep: no ops. */
		ck_assert_uint_eq(g.n, 5);
		ck_assert_ptr_null(find(&g, "scratch", "10.1.0.0@o2ib")->ops);
		ck_assert_ptr_null(find(&g, "scratch", "10.1.0.2@o2ib")->ops);
		assert_ops(find(&g, "scratch", "10.1.0.3@o2ib"), 10, 0, 0);
		/* Moved down over client 4, its sums with it. */
		assert_ops(find(&g, "scratch", "10.1.0.5@o2ib"), 10, 0, 0);
		ck_assert_uint_eq(t.nclients, 5);
	}
	/* Odd clients: 10 per sweep; even ones (and 4) are new again on
	 * the MDT: all of their count. */
	for (c = 0; c < 6; c++) {
		(void)snprintf(nid, sizeof(nid), "10.1.0.%u@o2ib", c);
		assert_ops(find(&g, "scratch", nid),
		    c % 2 == 1 ? 10 : 1000 * c + 30, 0, 0);
	}
	gtable_free(&t);
}
END_TEST

/* Restored MDT exports: with their op counts, the next delta is exact;
 * without (an older state file), the next op delta is a baseline. */
START_TEST(ops_restore)
{
	struct gtable t;
	struct gt_target *m;
	struct got g;
	struct mdops p = mops(100, 100, 100), o = mops(150, 120, 100);
	struct delta_sample prev = msample(&p, 0, T0);

	gtable_init(&t);
	m = gtable_restore_target(&t, "scratch-MDT0000", "scratch",
	    LH_TARGET_MDT, 1, 12);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(gtable_restore_export(&t, m, "10.1.0.1@o2ib", 1,
	                     LTREE_PEER_CLIENT, true, &prev, &p),
	    0);
	ck_assert_int_eq(gtable_restore_export(&t, m, "10.1.0.2@o2ib", 2,
	                     LTREE_PEER_CLIENT, true, &prev, NULL),
	    0);
	gtable_restored(&t, T0);
	gtable_sweep_begin(&t, T0 + 20 * S, 20 * S);
	m = target(&t, "scratch-MDT0000", 12);
	see_mdt(&t, m, "10.1.0.1@o2ib", 1, &o, msample(&o, 0, T0 + 20 * S));
	see_mdt(&t, m, "10.1.0.2@o2ib", 2, &o, msample(&o, 0, T0 + 20 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	assert_ops(find(&g, "scratch", "10.1.0.1@o2ib"), 50, 20, 0);
	assert_ops(find(&g, "scratch", "10.1.0.2@o2ib"), 0, 0, 0);
	ck_assert_uint_eq(find(&g, "scratch", "10.1.0.2@o2ib")->d.mds_ops, 70);

	gtable_sweep_begin(&t, T0 + 40 * S, 20 * S);
	m = target(&t, "scratch-MDT0000", 12);
	o = mops(151, 121, 101);
	see_mdt(&t, m, "10.1.0.1@o2ib", 1, &o, msample(&o, 0, T0 + 40 * S));
	see_mdt(&t, m, "10.1.0.2@o2ib", 2, &o, msample(&o, 0, T0 + 40 * S));
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
	assert_ops(find(&g, "scratch", "10.1.0.1@o2ib"), 1, 1, 1);
	assert_ops(find(&g, "scratch", "10.1.0.2@o2ib"), 1, 1, 1);
	gtable_free(&t);
}
END_TEST

/* What an op sink was given: sums per NID (one filesystem), and whether
 * it should fail. */
struct sunk {
	char nid[8][NID_STR_MAX];
	struct mdops sum[8];
	size_t n, calls;
	bool fail;
};

static int
sink(void *arg, const char *fs, const char *nid, const struct mdops *d)
{
	struct sunk *k = arg;
	size_t i;

	ck_assert_str_eq(fs, "scratch");
	ck_assert(!mdops_is_zero(d));
	if (k->fail)
		return -ENOMEM;
	k->calls++;
	for (i = 0; i < k->n && strcmp(k->nid[i], nid) != 0; i++)
		;
	if (i == k->n) {
		ck_assert_uint_lt(k->n, 8);
		(void)snprintf(k->nid[k->n++], NID_STR_MAX, "%s", nid);
	}
	mdops_add(&k->sum[i], d);
	return 0;
}

static const struct mdops *
sunk_ops(const struct sunk *k, const char *nid)
{
	size_t i;

	for (i = 0; i < k->n; i++) {
		if (strcmp(k->nid[i], nid) == 0)
			return &k->sum[i];
	}
	return NULL;
}

/* With an op sink, each MDT export's op deltas go to it as they are
 * read (two MDTs: two calls for one client), the sums those the records
 * carry without one, and the records carry none; a baseline and a peer
 * send nothing; a sink out of memory leaves the read uncounted. */
START_TEST(ops_sink_instead_of_sums)
{
	struct gtable t;
	struct gt_target *m0, *m1;
	struct gt_export *e;
	struct sunk k;
	struct got g;
	struct mdops x0, x1;
	struct delta_sample s;
	unsigned sw;
	int rc;

	memset(&k, 0, sizeof(k));
	gtable_init(&t);
	gtable_set_ops_sink(&t, sink, &k);
	for (sw = 0; sw < 2; sw++) {
		gtable_sweep_begin(&t, T0 + sw * 20 * S, 20 * S);
		m0 = target(&t, "scratch-MDT0000", 12);
		m1 = target(&t, "scratch-MDT0001", 13);
		x0 = mops(1 + sw * 10, 1 + sw * 20, 1);
		x1 = mops(2 + sw * 3, 2, 2 + sw * 4);
		see_mdt(&t, m0, "10.1.0.1@o2ib", 2, &x0,
		    msample(&x0, 0, T0 + sw * 20 * S));
		see_mdt(&t, m1, "10.1.0.1@o2ib", 3, &x1,
		    msample(&x1, 0, T0 + sw * 20 * S));
		e = gtable_export(&t, m0, "10.9.0.1@o2ib", 4, &rc);
		ck_assert_ptr_nonnull(e);
		s = msample(&x1, 0, T0 + sw * 20 * S);
		if (gtable_needs_uuid(e, &s))
			gtable_classify(&t, e, LTREE_PEER_SERVER);
		ck_assert_int_eq(gtable_observe(&t, m0, e, &s, &x1), 0);
		ck_assert_uint_eq(k.calls, sw == 0 ? 0 : 2);
		memset(&g, 0, sizeof(g));
		ck_assert_int_eq(gtable_sweep_end(&t, collect, &g), 0);
		ck_assert_uint_eq(g.n, 1);
		ck_assert_ptr_null(g.r[0].ops);
	}
	ck_assert_uint_eq(k.n, 1);
	ck_assert_ptr_null(t.cops);
	g.r[0].ops = sunk_ops(&k, "10.1.0.1@o2ib");
	assert_ops(&g.r[0], 13, 20, 4);
	ck_assert_uint_eq(g.r[0].d.mds_ops, 13 + 20 + 4);

	/* Out of memory: -ENOMEM, and the same read counts in full later. */
	memset(&k.sum, 0, sizeof(k.sum));
	gtable_sweep_begin(&t, T0 + 40 * S, 20 * S);
	m0 = target(&t, "scratch-MDT0000", 12);
	e = gtable_export(&t, m0, "10.1.0.1@o2ib", 2, &rc);
	x0 = mops(20, 30, 40);
	s = msample(&x0, 0, T0 + 40 * S);
	k.fail = true;
	ck_assert_int_eq(gtable_observe(&t, m0, e, &s, &x0), -ENOMEM);
	k.fail = false;
	ck_assert_int_eq(gtable_observe(&t, m0, e, &s, &x0), 0);
	assert_ops(&(struct gt_record){.ops = sunk_ops(&k, "10.1.0.1@o2ib"),
	               .fs = "scratch",
	               .nid = "10.1.0.1@o2ib"},
	    9, 9, 39);
	gtable_set_ops_sink(&t, NULL, NULL);
	gtable_free(&t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gtable");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, baseline_then_deltas);
	tcase_add_test(tc, exact_rates_over_targets);
	tcase_add_test(tc, aliased_nids_one_client);
	tcase_add_test(tc, peers_never_reported);
	tcase_add_test(tc, stale_export_rechecked_when_it_moves);
	tcase_add_test(tc, stale_export_moving_backs_off);
	tcase_add_test(tc, stale_export_moving_looked_at_once);
	tcase_add_test(tc, export_gone_and_back);
	tcase_add_test(tc, recreated_directory_is_new);
	tcase_add_test(tc, recreated_target_is_new);
	tcase_add_test(tc, partial_listing_and_target_gone);
	tcase_add_test(tc, reset_counts_new_value);
	tcase_add_test(tc, packed_samples_and_start);
	tcase_add_test(tc, packed_counts_cross_2_32);
	tcase_add_test(tc, many_clients_churn);
	tcase_add_test(tc, restore_then_sweep);
	tcase_add_test(tc, new_targets_after_restart);
	tcase_add_test(tc, ops_baseline_normal_reset);
	tcase_add_test(tc, ops_new_export);
	tcase_add_test(tc, ops_dne_sum_and_ost_only);
	tcase_add_test(tc, ops_survive_compaction);
	tcase_add_test(tc, ops_restore);
	tcase_add_test(tc, ops_sink_instead_of_sums);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
