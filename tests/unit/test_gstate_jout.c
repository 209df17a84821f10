/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The outbox in a journal record (gstate_jout.h): written and read back
 * it is the outbox that was saved, field by field: idle records in runs,
 * moving ones with their own counter spans and op counts, a client not in
 * the table (by name), two filesystems, records in another order than the
 * table's, and a batch in flight with a pending one whose records were
 * added twice.  A table that numbers its clients otherwise is refused.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "gstate_jout.h"
#include "gtable.h"
#include "mdops.h"
#include "outbox.h"
#include "statefile.h"
#include "testutil.h"
#include "wire.h"

#define NCL 300

static char path[64];

static void
nid_of(unsigned n, char *buf, size_t size)
{
	(void)snprintf(buf, size, "10.1.%u.%u@o2ib", n / 200, n % 200);
}

/* Targets of two filesystems: "aa" (an MDT, an OST) and "bb" (an OST),
 * the clients of each in the order given by step. */
static void
table_make(struct gtable *t, unsigned step)
{
	static const char *names[] = {"aa-MDT0000", "aa-OST0000", "bb-OST0000"};
	unsigned i, n;
	char nid[32];

	gtable_init(t);
	for (i = 0; i < 3; i++) {
		struct gt_target *tg =
		    gtable_restore_target(t, names[i], i < 2 ? "aa" : "bb",
		        i == 0 ? LH_TARGET_MDT : LH_TARGET_OST, 9, 20 + i);

		ck_assert_ptr_nonnull(tg);
		for (n = 0; n < NCL; n++) {
			nid_of((n * step) % NCL, nid, sizeof(nid));
			ck_assert_int_eq(gtable_restore_export(t, tg, nid,
			                     100 + n, LTREE_PEER_CLIENT, true,
			                     NULL, NULL),
			    0);
		}
	}
}

/* Record n: idle mostly, moving for one in seven (its spans apart for
 * one in three of those, op counts on "aa"). */
static void
add(struct outbox *ob, const char *fs, unsigned n, uint64_t sweep,
    uint64_t span)
{
	struct iocount d;
	struct mdops ops;
	uint64_t cspan[MSG_NCOUNTERS];
	char nid[32];
	bool moving = n % 7 == 3;

	nid_of(n, nid, sizeof(nid));
	memset(&d, 0, sizeof(d));
	memset(&ops, 0, sizeof(ops));
	memset(cspan, 0, sizeof(cspan));
	if (moving) {
		d.read_bytes = 4096ULL * n;
		d.write_ops = n;
		d.mds_ops = 2 * n + 1;
		ops.v[MDOPS_OPEN] = n + 1;
		ops.v[MDOPS_UNLINK] = 1ULL << 40;
		if (n % 3 == 0) {
			cspan[0] = span + 17;
			cspan[3] = span - 5;
		}
	}
	ck_assert_int_eq(outbox_add(ob, fs, nid, &d,
	                     moving && fs[0] == 'a' ? &ops : NULL,
	                     span + (n % 50 == 0 ? n : 0), cspan, sweep,
	                     sweep * 1000),
	    0);
}

/* In flight: every client of "aa" and some of "bb", two not in the
 * table; pending: two sweeps folded together, in another order. */
static void
outbox_make(struct outbox *ob)
{
	unsigned n;

	outbox_init(ob, 500);
	for (n = 0; n < NCL; n++)
		add(ob, "aa", n, 10, 20000000);
	for (n = 0; n < NCL; n += 3)
		add(ob, "bb", n, 10, 20000000);
	add(ob, "aa", NCL + 5, 10, 20000000);
	add(ob, "zz", 4, 10, 19999999);
	outbox_seal(ob);
	ck_assert(ob->have_inflight);
	for (n = NCL; n-- > 0;)
		add(ob, n % 2 ? "aa" : "bb", n, 11, 20000123);
	for (n = 0; n < NCL; n += 5)
		add(ob, "bb", n, 12, 19999876);
	add(ob, "cc", 1, 12, 5);
}

static void
batch_eq(const struct outbox_batch *a, const struct outbox_batch *b)
{
	uint64_t ca[MSG_NCOUNTERS], cb[MSG_NCOUNTERS];
	struct mdops oa, ob;
	size_t i;

	ck_assert_uint_eq(b->batch, a->batch);
	ck_assert_uint_eq(b->first_sweep, a->first_sweep);
	ck_assert_uint_eq(b->last_sweep, a->last_sweep);
	ck_assert_uint_eq(b->start_ns, a->start_ns);
	ck_assert_uint_eq(b->n, a->n);
	for (i = 0; i < a->n; i++) {
		const struct outbox_rec *x = &a->recs[i], *y = &b->recs[i];

		ck_assert_str_eq(outbox_rec_fs(b, y), outbox_rec_fs(a, x));
		ck_assert_str_eq(outbox_rec_nid(b, y), outbox_rec_nid(a, x));
		ck_assert(memcmp(&y->d, &x->d, sizeof(x->d)) == 0);
		ck_assert_uint_eq(y->span_us, x->span_us);
		outbox_rec_cspans(a, x, ca);
		outbox_rec_cspans(b, y, cb);
		ck_assert(memcmp(ca, cb, sizeof(ca)) == 0);
		ck_assert_int_eq(y->ops == OUTBOX_NO_OPS,
		    x->ops == OUTBOX_NO_OPS);
		if (x->ops != OUTBOX_NO_OPS)
			ck_assert(memcmp(outbox_rec_ops(b, y, &ob),
			              outbox_rec_ops(a, x, &oa),
			              sizeof(struct mdops)) == 0);
	}
}

/* ob written after t, read back after t2 into ob2;
 * returns the reader's verdict and the bytes written. */
static int
round_trip(const struct gtable *t, const struct outbox *ob,
    const struct gtable *t2, struct outbox *ob2, size_t *ret_len,
    struct lh_err *err)
{
	struct statefile_out *o;
	struct statefile_in *in;
	struct statefile_src src;
	int fd, rc;

	(void)snprintf(path, sizeof(path), "/tmp/test_gstate_jout.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	(void)close(fd);
	ck_assert_int_eq(statefile_create(path, &o, err), 0);
	ck_assert_int_eq(gstate_jout_put(o, t, ob), 0);
	ck_assert_int_eq(statefile_commit(o, err), 0);
	ck_assert_int_eq(statefile_open(path, 0, &in, err), 0);
	src.r = statefile_in_rbuf(in);
	src.in = in;
	*ret_len = (size_t)statefile_in_left(in);
	outbox_init(ob2, ob->last_batch);
	rc = gstate_jout_get(&src, t2, ob2, err);
	if (rc == 0)
		ck_assert_uint_eq(statefile_in_left(in), 0);
	statefile_in_close(in);
	(void)unlink(path);
	return rc;
}

START_TEST(outbox_round_trip)
{
	struct gtable t;
	struct outbox ob, ob2;
	struct lh_err err;
	size_t len;

	table_make(&t, _i == 0 ? 1 : 7);
	outbox_make(&ob);
	ck_assert_msg(round_trip(&t, &ob, &t, &ob2, &len, &err) == 0, "%s",
	    err.reason);
	ck_assert_uint_eq(ob2.last_batch, ob.last_batch);
	ck_assert_int_eq(ob2.have_inflight, ob.have_inflight);
	batch_eq(&ob.inflight, &ob2.inflight);
	batch_eq(&ob.pending, &ob2.pending);
	/* 1,152 records in all, most of them idle (the base's form: 40 KB). */
	ck_assert_uint_lt(len, _i == 0 ? 4000 : 6000);
	outbox_free(&ob);
	outbox_free(&ob2);
	gtable_free(&t);
}
END_TEST

/* Idle, in the table's order: a run, a few bytes for all of it. */
START_TEST(idle_run)
{
	struct gtable t;
	struct outbox ob, ob2;
	struct lh_err err;
	struct iocount d;
	char nid[32];
	unsigned n;
	size_t len;

	table_make(&t, 1);
	outbox_init(&ob, 500);
	memset(&d, 0, sizeof(d));
	for (n = 0; n < NCL; n++) {
		nid_of(n, nid, sizeof(nid));
		ck_assert_int_eq(outbox_add(&ob, "aa", nid, &d, NULL, 20000000,
		                     NULL, 10, 5),
		    0);
	}
	outbox_seal(&ob);
	ck_assert_int_eq(round_trip(&t, &ob, &t, &ob2, &len, &err), 0);
	batch_eq(&ob.inflight, &ob2.inflight);
	ck_assert_uint_lt(len, 40);
	outbox_free(&ob);
	outbox_free(&ob2);
	gtable_free(&t);
}
END_TEST

/* Read after a table whose clients come in another order: refused, not
 * counted to other clients. */
START_TEST(other_table_refused)
{
	struct gtable t, t2;
	struct outbox ob, ob2;
	struct lh_err err;
	size_t len;

	table_make(&t, 1);
	table_make(&t2, 7);
	outbox_make(&ob);
	ck_assert_int_eq(round_trip(&t, &ob, &t2, &ob2, &len, &err), -EBADMSG);
	ck_assert_str_eq(err.reason,
	    "damaged: clients differ from the writer's");
	outbox_free(&ob);
	outbox_free(&ob2);
	gtable_free(&t);
	gtable_free(&t2);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("gstate_jout");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, outbox_round_trip, 0, 2);
	tcase_add_test(tc, idle_run);
	tcase_add_test(tc, other_table_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(suite());
}
