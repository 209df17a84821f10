/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer's state journal (gstate_journal.h): sweeps saved as
 * records and replayed equal a full snapshot (idle exports but for their
 * snapshot time, within the bound); a torn last record cut at every byte
 * is dropped; a bad record in the middle refuses the state; a journal of
 * another base is ignored; compaction when due; a base alone (the previous
 * version's state_dir) loads unchanged.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "gstate.h"
#include "gstate_journal.h"
#include "gtable.h"
#include "mdops.h"
#include "outbox.h"
#include "testutil.h"
#include "wire.h"

#define S      1000000000ULL
#define T0     (1700000000ULL * S)
#define NEXP   40
#define NTG    4
#define SPREAD 1000 /* ns between two exports' snapshot times */

/* A gatherer without I/O: NTG targets (an MDT and OSTs), the same NEXP
 * clients on each, some moving each sweep, saving through a journal in
 * dir. */
struct sim {
	struct gtable t;
	struct outbox ob;
	struct gstate_journal j;
	char dir[64], base[128], jpath[128];
	unsigned k;      /* sweeps done */
	unsigned nexp;   /* exports listed */
	int skip;        /* an export listed but not read this sweep, or -1 */
	uint64_t spread; /* between exports' snapshot times */
	unsigned moved[NTG][NEXP]; /* how many times each export moved */
};

static void
sim_init(struct sim *s, uint64_t spread)
{
	char tmpl[] = "/tmp/test_gstate_journal.XXXXXX";

	memset(s, 0, sizeof(*s));
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	(void)snprintf(s->dir, sizeof(s->dir), "%s", tmpl);
	(void)snprintf(s->base, sizeof(s->base), "%s/gatherer.state", tmpl);
	(void)snprintf(s->jpath, sizeof(s->jpath), "%s/gatherer.journal", tmpl);
	gtable_init(&s->t);
	outbox_init(&s->ob, 100);
	ck_assert_int_eq(gstate_journal_init(&s->j, s->base, s->jpath), 0);
	s->nexp = NEXP - 2;
	s->skip = -1;
	s->spread = spread;
}

static void
sim_free(struct sim *s)
{
	char cmd[128];

	gstate_journal_close(&s->j);
	gtable_free(&s->t);
	outbox_free(&s->ob);
	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	ck_assert_int_eq(system(cmd), 0);
}

static int
to_outbox(void *arg, const struct gt_record *r)
{
	struct sim *s = arg;

	return outbox_add(&s->ob, r->fs, r->nid, &r->d, r->ops, r->span_us,
	    r->cspan_us, T0 / S + s->k * 20, r->start_ns);
}

/* Export n of target i at sweep k: one in five moves each sweep. */
static void
sim_read(struct sim *s, struct gt_target *tg, unsigned i, unsigned n)
{
	unsigned k = s->k;
	bool moves = (n + k) % 5 == 0 || k == 0;
	struct delta_sample cur;
	struct mdops ops;
	struct gt_export *e;
	char nid[32];
	int rc;

	(void)snprintf(nid, sizeof(nid), "10.0.0.%u@tcp", n);
	e = gtable_export(&s->t, tg, nid, 500 + n, &rc);
	ck_assert_ptr_nonnull(e);
	if ((int)n == s->skip)
		return;
	memset(&cur, 0, sizeof(cur));
	memset(&ops, 0, sizeof(ops));
	if (moves)
		s->moved[i][n]++;
	cur.c.read_bytes = 4096ULL * (n + 1) * s->moved[i][n];
	cur.c.write_ops = 3ULL * s->moved[i][n];
	cur.c.oss_ops = i != 0 ? 7ULL * s->moved[i][n] : 0;
	cur.c.mds_ops = i == 0 ? 5ULL * s->moved[i][n] : 0;
	cur.samples = 11ULL * s->moved[i][n];
	cur.snap_ns = T0 + k * 20 * S + n * s->spread;
	cur.start_ns = T0 - 3600 * S;
	ops.v[MDOPS_OPEN] = 2ULL * s->moved[i][n];
	if (gtable_needs_uuid(e, &cur))
		gtable_classify(&s->t, e,
		    n == 1 ? LTREE_PEER_STALE : LTREE_PEER_CLIENT);
	ck_assert_int_eq(gtable_observe(&s->t, tg, e, &cur, &ops), 0);
}

/* One sweep, its batch sealed (every other one acknowledged), and the
 * state saved. */
static void
sim_sweep(struct sim *s)
{
	static const char *names[] = {"fs-MDT0000", "fs-OST0000", "fs-OST0001",
	    "fs-OST0002"};
	struct lh_err err;
	struct wbuf w;
	uint64_t batch, sw;
	unsigned i, n;

	gtable_sweep_begin(&s->t, T0 + s->k * 20 * S, 20 * S);
	for (i = 0; i < NTG; i++) {
		struct gt_target *tg = gtable_target(&s->t, names[i], "fs",
		    i == 0 ? LH_TARGET_MDT : LH_TARGET_OST, 9, 20 + i);

		ck_assert_ptr_nonnull(tg);
		gtable_target_listed(tg);
		for (n = 0; n < s->nexp; n++)
			sim_read(s, tg, i, n);
	}
	ck_assert_int_eq(gtable_sweep_end(&s->t, to_outbox, s), 0);
	outbox_seal(&s->ob);
	if (s->k % 2 == 1 && outbox_ready(&s->ob)) {
		wbuf_init(&w, 0);
		ck_assert_int_eq(outbox_next(&s->ob, &w, true, &batch, &sw), 0);
		ck_assert_int_eq(outbox_acked(&s->ob, batch), 0);
		wbuf_free(&w);
	}
	ck_assert_msg(gstate_journal_save(&s->j, 7, &s->t, &s->ob, false,
	                  &err) == 0,
	    "%s", err.reason);
	s->k++;
}

static void
encode_ob(struct outbox *ob, struct wbuf *w)
{
	uint64_t batch, sw;

	wbuf_init(w, 0);
	if (ob->have_inflight)
		ck_assert_int_eq(outbox_next(ob, w, true, &batch, &sw), 0);
}

/* Loaded state (t2, ob2) against the live one: the same but for idle
 * exports' snapshot times, at most slack earlier. */
static void
assert_like(struct gtable *t, struct outbox *ob, struct gtable *t2,
    struct outbox *ob2, uint64_t slack)
{
	struct wbuf w1, w2;
	size_t i, j;

	ck_assert_uint_eq(t2->ntargets, t->ntargets);
	ck_assert_uint_eq(t2->last_sweep_ns, t->last_sweep_ns);
	for (i = 0; i < t->ntargets; i++) {
		const struct gt_target *x = t->targets[i], *y = t2->targets[i];

		ck_assert_str_eq(y->name, x->name);
		ck_assert_uint_eq(y->nexp, x->nexp);
		for (j = 0; j < x->nexp; j++) {
			const struct gt_export *a = &x->exp[j];
			const struct gt_export *b = &y->exp[j];
			struct delta_sample pa, pb;

			ck_assert_str_eq(gtable_client_nid(t2, b->client),
			    gtable_client_nid(t, a->client));
			ck_assert_uint_eq(b->cls, a->cls);
			ck_assert_uint_eq(b->classified, a->classified);
			ck_assert_uint_eq(b->have, a->have);
			ck_assert_uint_eq(b->ino, a->ino);
			gtable_export_prev(x, a, &pa);
			gtable_export_prev(y, b, &pb);
			ck_assert_uint_le(pb.snap_ns, pa.snap_ns);
			ck_assert_uint_le(pa.snap_ns - pb.snap_ns, slack);
			pb.snap_ns = pa.snap_ns;
			ck_assert(memcmp(&pb, &pa, sizeof(pa)) == 0);
			if (x->ops != NULL)
				ck_assert(memcmp(&y->ops[j], &x->ops[j],
				              sizeof(x->ops[j])) == 0);
		}
	}
	ck_assert_uint_eq(ob2->last_batch, ob->last_batch);
	ck_assert_int_eq(ob2->have_inflight, ob->have_inflight);
	ck_assert_uint_eq(ob2->pending.n, ob->pending.n);
	encode_ob(ob, &w1);
	encode_ob(ob2, &w2);
	ck_assert_uint_eq(w1.len, w2.len);
	ck_assert(w1.len == 0 || memcmp(w1.data, w2.data, w1.len) == 0);
	wbuf_free(&w1);
	wbuf_free(&w2);
}

/* Load s's files into a fresh state; returns gstate_journal_load()'s. */
static int
load(const char *base, const char *jpath, struct gtable *t, struct outbox *ob,
    struct gstate_jinfo *ji, struct lh_err *err)
{
	uint64_t scope = 0;
	int rc;

	gtable_init(t);
	outbox_init(ob, 0);
	rc = gstate_journal_load(base, jpath, &scope, t, ob, ji, err);
	if (rc == 0)
		ck_assert_uint_eq(scope, 7);
	return rc;
}

static uint64_t
file_size(const char *path)
{
	struct stat sb;

	ck_assert_int_eq(stat(path, &sb), 0);
	return (uint64_t)sb.st_size;
}

START_TEST(replay_equals_snapshot)
{
	struct sim s;
	struct gtable t2, t3;
	struct outbox ob2, ob3;
	struct gstate_jinfo ji;
	struct lh_err err;
	char snap[160];
	uint64_t scope;
	unsigned k, records = 0, appended = 0;

	sim_init(&s, _i == 0 ? 0 : SPREAD);
	sim_sweep(&s);
	ck_assert(s.j.compacted); /* the first save writes a base */
	for (k = 1; k < 12; k++) {
		s.nexp = k >= 3 ? NEXP : NEXP - 2; /* two exports appear */
		s.skip = k % 4 == 0 ? 5 : -1;      /* one is not read */
		sim_sweep(&s);
		if (s.j.compacted) {
			records = 0;
			continue;
		}
		records++;
		appended++;
		/* A sweep that missed an export writes every export. */
		if (s.skip < 0)
			ck_assert_uint_lt(s.j.written, file_size(s.base) / 2);
	}
	ck_assert_uint_ge(appended, 6);
	ck_assert_uint_gt(records, 0);
	ck_assert_msg(load(s.base, s.jpath, &t2, &ob2, &ji, &err) == 0, "%s",
	    err.reason);
	ck_assert_uint_eq(ji.records, records);
	ck_assert_uint_eq(ji.dropped, 0);
	/* Against the live state, and against a full snapshot of it. */
	assert_like(&s.t, &s.ob, &t2, &ob2, NEXP * s.spread);
	(void)snprintf(snap, sizeof(snap), "%s/snapshot", s.dir);
	ck_assert_int_eq(gstate_save(snap, 7, &s.t, &s.ob, &err), 0);
	gtable_init(&t3);
	outbox_init(&ob3, 0);
	ck_assert_int_eq(gstate_load(snap, &scope, &t3, &ob3, &err), 0);
	assert_like(&t3, &ob3, &t2, &ob2, NEXP * s.spread);
	if (s.spread == 0)
		assert_like(&t2, &ob2, &t3, &ob3, 0);
	gtable_free(&t2);
	gtable_free(&t3);
	outbox_free(&ob2);
	outbox_free(&ob3);
	sim_free(&s);
}
END_TEST

/* The replayed snapshot time of an idle export is the earliest one read
 * among its target's idle exports; an export not read keeps its own. */
START_TEST(idle_snapshot_bound)
{
	struct sim s;
	struct gtable t2;
	struct outbox ob2;
	struct gstate_jinfo ji;
	struct lh_err err;
	size_t j;

	sim_init(&s, SPREAD);
	sim_sweep(&s);
	sim_sweep(&s);
	sim_sweep(&s);
	ck_assert_int_eq(load(s.base, s.jpath, &t2, &ob2, &ji, &err), 0);
	for (j = 0; j < s.t.targets[0]->nexp; j++) {
		const struct gt_export *a = &s.t.targets[0]->exp[j];
		const struct gt_export *b = &t2.targets[0]->exp[j];
		uint64_t first = T0 + 2 * 20 * S; /* sweep 2's */

		ck_assert_uint_eq(a->prev_snap_ns, first + j * SPREAD);
		if ((j + 2) % 5 == 0) /* moved: written */
			ck_assert_uint_eq(b->prev_snap_ns, a->prev_snap_ns);
		else /* idle: export 0's, the earliest */
			ck_assert_uint_eq(b->prev_snap_ns, first);
	}
	gtable_free(&t2);
	outbox_free(&ob2);
	sim_free(&s);
}
END_TEST

static void
copy_file(const char *from, const char *to, uint64_t len)
{
	char *buf;
	size_t n;
	FILE *f;

	buf = tu_read_file(from, &n);
	ck_assert_uint_le(len, n);
	f = fopen(to, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, (size_t)len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	free(buf);
}

/* The last record cut at every byte: dropped, and the state is the one
 * of the save before it, exactly. */
START_TEST(torn_tail_every_offset)
{
	struct sim s;
	struct gtable tp, t2;
	struct outbox obp, ob2;
	struct gstate_jinfo ji;
	struct lh_err err;
	char jcut[160], prev[160];
	uint64_t l0, l1, cut;

	sim_init(&s, 0);
	sim_sweep(&s);
	sim_sweep(&s);
	l0 = file_size(s.jpath);
	(void)snprintf(prev, sizeof(prev), "%s/journal.prev", s.dir);
	copy_file(s.jpath, prev, l0);
	sim_sweep(&s);
	ck_assert(!s.j.compacted);
	l1 = file_size(s.jpath);
	ck_assert_uint_gt(l1, l0);
	ck_assert_int_eq(load(s.base, prev, &tp, &obp, &ji, &err), 0);
	(void)snprintf(jcut, sizeof(jcut), "%s/journal.cut", s.dir);
	for (cut = l0; cut < l1; cut++) {
		copy_file(s.jpath, jcut, cut);
		ck_assert_msg(load(s.base, jcut, &t2, &ob2, &ji, &err) == 0,
		    "cut at %llu: %s", (unsigned long long)cut, err.reason);
		ck_assert_uint_eq(ji.records, 1);
		ck_assert_uint_eq(ji.dropped, cut - l0);
		assert_like(&tp, &obp, &t2, &ob2, 0);
		gtable_free(&t2);
		outbox_free(&ob2);
	}
	gtable_free(&tp);
	outbox_free(&obp);
	sim_free(&s);
}
END_TEST

/* Bytes changed in the file at path, at off. */
static void
poke(const char *path, uint64_t off, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, p, n, (off_t)off), (ssize_t)n);
	ck_assert_int_eq(close(fd), 0);
}

/* A last record whole in size but bad, a header left pending, zeros
 * after the end: all a torn end.  The same damage to a record followed by
 * another: the state is refused. */
START_TEST(bad_records)
{
	static const uint8_t ff[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0xff};
	static const uint8_t zero[64];
	struct sim s;
	struct gtable t2;
	struct outbox ob2;
	struct gstate_jinfo ji;
	struct lh_err err;
	char work[160];
	uint64_t l0, l1, l2;
	uint8_t x = 0x5a;

	sim_init(&s, 0);
	sim_sweep(&s);
	sim_sweep(&s);
	l0 = file_size(s.jpath);
	sim_sweep(&s);
	l1 = file_size(s.jpath);
	sim_sweep(&s);
	ck_assert(!s.j.compacted);
	l2 = file_size(s.jpath);
	(void)snprintf(work, sizeof(work), "%s/journal.work", s.dir);

	/* The last record: a byte of its body, its header pending, zeros
	 * after it. */
	copy_file(s.jpath, work, l2);
	poke(work, l1 + 20, &x, 1);
	ck_assert_int_eq(load(s.base, work, &t2, &ob2, &ji, &err), 0);
	ck_assert_uint_eq(ji.records, 2);
	gtable_free(&t2);
	outbox_free(&ob2);
	copy_file(s.jpath, work, l2);
	poke(work, l1, ff, sizeof(ff));
	ck_assert_int_eq(load(s.base, work, &t2, &ob2, &ji, &err), 0);
	ck_assert_uint_eq(ji.records, 2);
	gtable_free(&t2);
	outbox_free(&ob2);
	copy_file(s.jpath, work, l2);
	poke(work, l2, zero, sizeof(zero));
	ck_assert_int_eq(load(s.base, work, &t2, &ob2, &ji, &err), 0);
	ck_assert_uint_eq(ji.records, 3);
	ck_assert_uint_eq(ji.dropped, sizeof(zero));
	gtable_free(&t2);
	outbox_free(&ob2);

	/* The middle record: its body, its length, its header zeroed. */
	copy_file(s.jpath, work, l2);
	poke(work, l0 + 20, &x, 1);
	ck_assert_int_eq(load(s.base, work, &t2, &ob2, &ji, &err), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err.reason, "journal damaged"));
	gtable_free(&t2);
	outbox_free(&ob2);
	copy_file(s.jpath, work, l2);
	poke(work, l0 + 3, &x, 1);
	ck_assert_int_eq(load(s.base, work, &t2, &ob2, &ji, &err), -EBADMSG);
	gtable_free(&t2);
	outbox_free(&ob2);
	copy_file(s.jpath, work, l2);
	poke(work, l0, zero, 8);
	ck_assert_int_eq(load(s.base, work, &t2, &ob2, &ji, &err), -EBADMSG);
	gtable_free(&t2);
	outbox_free(&ob2);
	/* The header of the journal itself. */
	copy_file(s.jpath, work, l2);
	poke(work, 9, &x, 1);
	ck_assert_int_eq(load(s.base, work, &t2, &ob2, &ji, &err), -EBADMSG);
	gtable_free(&t2);
	outbox_free(&ob2);
	sim_free(&s);
}
END_TEST

/* A journal left behind a newer base (a compaction stopped between the
 * two) is ignored; a base alone (the previous version's state_dir) loads
 * as it is. */
START_TEST(other_base_and_upgrade)
{
	struct sim s;
	struct gtable t2;
	struct outbox ob2;
	struct gstate_jinfo ji;
	struct lh_err err;

	sim_init(&s, 0);
	sim_sweep(&s);
	sim_sweep(&s);
	sim_sweep(&s);
	ck_assert_int_eq(gstate_save(s.base, 7, &s.t, &s.ob, &err), 0);
	ck_assert_int_eq(load(s.base, s.jpath, &t2, &ob2, &ji, &err), 0);
	ck_assert(ji.other_base);
	ck_assert_uint_eq(ji.records, 0);
	assert_like(&s.t, &s.ob, &t2, &ob2, 0);
	gtable_free(&t2);
	outbox_free(&ob2);
	ck_assert_int_eq(unlink(s.jpath), 0);
	ck_assert_int_eq(load(s.base, s.jpath, &t2, &ob2, &ji, &err), 0);
	ck_assert(!ji.journal_found);
	assert_like(&s.t, &s.ob, &t2, &ob2, 0);
	gtable_free(&t2);
	outbox_free(&ob2);
	sim_free(&s);
}
END_TEST

/* Compaction: when asked, when the journal outgrows the base, when an
 * export is forgotten, when the journal is moved away; and after it the
 * journal is empty and the state whole. */
START_TEST(compaction)
{
	struct sim s;
	struct gtable t2;
	struct outbox ob2;
	struct gstate_jinfo ji;
	struct lh_err err;
	char moved[160];
	unsigned k;

	sim_init(&s, 0);
	sim_sweep(&s);
	for (k = 0; k < 40 && !s.j.compacted; k++)
		sim_sweep(&s);
	ck_assert_msg(s.j.compacted, "the journal never outgrew its base");
	ck_assert_uint_eq(file_size(s.jpath), 72);
	sim_sweep(&s);
	ck_assert(!s.j.compacted);
	s.nexp--; /* an export no longer listed */
	sim_sweep(&s);
	ck_assert(s.j.compacted);
	sim_sweep(&s);
	ck_assert(!s.j.compacted);
	/* As many records as a replay may have to walk. */
	ck_assert_uint_eq(s.j.records, 1);
	s.j.records = GSTATE_JRECORDS_MAX;
	sim_sweep(&s);
	ck_assert(s.j.compacted);
	ck_assert_uint_eq(s.j.records, 0);
	sim_sweep(&s);
	ck_assert(!s.j.compacted);
	(void)snprintf(moved, sizeof(moved), "%s/moved", s.dir);
	ck_assert_int_eq(rename(s.jpath, moved), 0);
	sim_sweep(&s);
	ck_assert(s.j.compacted);
	/* Another scope (a reload read other filesystems). */
	ck_assert_int_eq(gstate_journal_save(&s.j, 8, &s.t, &s.ob, false, &err),
	    0);
	ck_assert(s.j.compacted);
	ck_assert_int_eq(gstate_journal_save(&s.j, 7, &s.t, &s.ob, false, &err),
	    0);
	ck_assert(s.j.compacted);
	/* A new base saved but no journal after it (its temporary name
	 * taken): the save holds, and the next one writes a base again. */
	(void)snprintf(moved, sizeof(moved), "%s.tmp", s.jpath);
	ck_assert_int_eq(mkdir(moved, 0700), 0);
	ck_assert_int_eq(gstate_journal_save(&s.j, 7, &s.t, &s.ob, true, &err),
	    0);
	ck_assert_int_lt(s.j.fd, 0);
	ck_assert_int_eq(load(s.base, s.jpath, &t2, &ob2, &ji, &err), 0);
	ck_assert(ji.other_base);
	assert_like(&s.t, &s.ob, &t2, &ob2, 0);
	gtable_free(&t2);
	outbox_free(&ob2);
	ck_assert_int_eq(rmdir(moved), 0);
	sim_sweep(&s);
	ck_assert(s.j.compacted);
	ck_assert_int_ge(s.j.fd, 0);
	sim_sweep(&s);
	ck_assert(!s.j.compacted);
	ck_assert_int_eq(gstate_journal_save(&s.j, 7, &s.t, &s.ob, true, &err),
	    0);
	ck_assert(s.j.compacted);
	ck_assert_uint_eq(file_size(s.jpath), 72);
	ck_assert_int_eq(load(s.base, s.jpath, &t2, &ob2, &ji, &err), 0);
	ck_assert(ji.journal_found);
	ck_assert_uint_eq(ji.records, 0);
	assert_like(&s.t, &s.ob, &t2, &ob2, 0);
	gtable_free(&t2);
	outbox_free(&ob2);
	sim_free(&s);
}
END_TEST

/* An append that fails half-way (the file size limit: EFBIG), and the new
 * base that cannot be written either: the save fails, what is on disk
 * loads as the previous save (the torn record dropped), and the next
 * save, once writes work again, writes a new base. */
START_TEST(failed_append)
{
	struct sim s;
	struct gtable tp, t2;
	struct outbox obp, ob2;
	struct gstate_jinfo ji;
	struct lh_err err;
	struct rlimit rl, small;
	char prev[160];
	uint64_t l0;

	sim_init(&s, 0);
	sim_sweep(&s);
	sim_sweep(&s);
	l0 = file_size(s.jpath);
	(void)snprintf(prev, sizeof(prev), "%s/journal.prev", s.dir);
	copy_file(s.jpath, prev, l0);
	ck_assert_int_eq(load(s.base, prev, &tp, &obp, &ji, &err), 0);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
	(void)signal(SIGXFSZ, SIG_IGN);
	small = rl;
	small.rlim_cur = (rlim_t)l0 + 100;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	gtable_sweep_begin(&s.t, T0 + s.k * 20 * S, 20 * S);
	ck_assert_int_lt(gstate_journal_save(&s.j, 7, &s.t, &s.ob, false, &err),
	    0);
	ck_assert_int_lt(s.j.fd, 0);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	ck_assert_uint_eq(file_size(s.jpath), l0 + 100);
	ck_assert_int_eq(load(s.base, s.jpath, &t2, &ob2, &ji, &err), 0);
	ck_assert_uint_eq(ji.records, 1);
	ck_assert_uint_eq(ji.dropped, 100);
	assert_like(&tp, &obp, &t2, &ob2, 0);
	gtable_free(&t2);
	outbox_free(&ob2);
	sim_sweep(&s);
	ck_assert(s.j.compacted);
	ck_assert_int_eq(load(s.base, s.jpath, &t2, &ob2, &ji, &err), 0);
	assert_like(&s.t, &s.ob, &t2, &ob2, 0);
	gtable_free(&t2);
	outbox_free(&ob2);
	gtable_free(&tp);
	outbox_free(&obp);
	sim_free(&s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gstate_journal");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, replay_equals_snapshot, 0, 2);
	tcase_add_test(tc, idle_snapshot_bound);
	tcase_add_test(tc, torn_tail_every_offset);
	tcase_add_test(tc, bad_records);
	tcase_add_test(tc, other_base_and_upgrade);
	tcase_add_test(tc, compaction);
	tcase_add_test(tc, failed_append);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
