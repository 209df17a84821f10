/* SPDX-License-Identifier: BSD-2-Clause */
/* The gatherer's state file: round trip (MDT op counts included), every
 * damage refused, a file of the previous version (no op counts) read. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "gstate.h"
#include "gtable.h"
#include "obstate.h"
#include "hmac.h"
#include "mdops.h"
#include "outbox.h"
#include "testutil.h"
#include "wire.h"

#define S  1000000000ULL
#define T0 (1700000000ULL * S)

static struct delta_sample
sample(uint64_t rb, uint64_t snap_ns)
{
	struct delta_sample s;

	memset(&s, 0, sizeof(s));
	s.c.read_bytes = rb;
	s.c.oss_ops = rb / 100;
	s.samples = rb / 100;
	s.snap_ns = snap_ns;
	s.start_ns = T0 - 3600 * S;
	return s;
}

static int
to_outbox(void *arg, const struct gt_record *r)
{
	return outbox_add(arg, r->fs, r->nid, &r->d, r->ops, r->span_us,
	    r->cspan_us, T0 / S, r->start_ns);
}

/* The op counts of the MDT's export n at sweep k (some all zero). */
static struct mdops
mdt_ops(unsigned n, unsigned k)
{
	struct mdops m;

	memset(&m, 0, sizeof(m));
	if (n == 2)
		return m;
	m.v[MDOPS_OPEN] = 10ULL * (n + 1) * (k + 1);
	m.v[MDOPS_CLOSE] = 9ULL * (n + 1) * (k + 1);
	m.v[MDOPS_FALLOCATE] = k + n;
	return m;
}

/* Three sweeps over two targets, a peer and a stale export, the MDT's
 * op counts: the first sweep's batch (the baseline) acknowledged, the
 * second's in flight, the third's pending. */
static void
build(struct gtable *t, struct outbox *ob)
{
	static const char *nids[] = {"10.1.0.1@o2ib", "10.2.0.9@o2ib2",
	    "27@gni", "2001:db8::17@tcp", "10.0.0.1@o2ib"};
	struct gt_target *tg[2];
	struct gt_export *e;
	struct wbuf w;
	uint64_t batch, sw;
	unsigned k, i, n;
	int rc;

	gtable_init(t);
	outbox_init(ob, 40);
	for (k = 0; k < 3; k++) {
		gtable_sweep_begin(t, T0 + k * 20 * S, 20 * S);
		tg[0] = gtable_target(t, "scratch-OST0000", "scratch",
		    LH_TARGET_OST, 5, 10);
		tg[1] = gtable_target(t, "scratch-MDT0000", "scratch",
		    LH_TARGET_MDT, 5, 11);
		for (i = 0; i < 2; i++) {
			gtable_target_listed(tg[i]);
			for (n = 0; n < 5; n++) {
				struct delta_sample s =
				    sample(1000 * (n + 1) * (k + 1),
				        T0 + k * 20 * S);
				struct mdops ops = mdt_ops(n, k);

				e = gtable_export(t, tg[i], nids[n], 100 + n,
				    &rc);
				ck_assert_ptr_nonnull(e);
				if (gtable_needs_uuid(e, &s))
					gtable_classify(t, e,
					    n == 4     ? LTREE_PEER_SERVER :
					        n == 3 ? LTREE_PEER_STALE :
					                 LTREE_PEER_CLIENT);
				gtable_observe(t, tg[i], e, &s, &ops);
			}
		}
		ck_assert_int_eq(gtable_sweep_end(t, to_outbox, ob), 0);
		outbox_seal(ob);
		if (k < 2) {
			wbuf_init(&w, 0);
			ck_assert_int_eq(outbox_next(ob, &w, true, &batch, &sw),
			    0);
			ck_assert_uint_eq(batch, 41 + k);
			wbuf_free(&w);
		}
		if (k == 0)
			ck_assert_int_eq(outbox_acked(ob, 41), 0);
	}
}

static char *
tmpdir(void)
{
	char tmpl[] = "/tmp/test_gstate.XXXXXX";
	char *d = mkdtemp(tmpl);

	ck_assert_ptr_nonnull(d);
	return strdup(d);
}

static void
encode_outbox_ops(struct outbox *ob, bool ops, struct wbuf *w)
{
	uint64_t batch, sw;

	wbuf_init(w, 0);
	ck_assert_int_eq(outbox_next(ob, w, ops, &batch, &sw), 0);
}

static void
encode_outbox(struct outbox *ob, struct wbuf *w)
{
	encode_outbox_ops(ob, true, w);
}

/* The same targets and exports, counters and op memory. */
static void
assert_same_tables(const struct gtable *t, const struct gtable *t2)
{
	size_t i, j;

	ck_assert_uint_eq(t2->ntargets, t->ntargets);
	for (i = 0; i < t->ntargets; i++) {
		const struct gt_target *x = t->targets[i], *y = t2->targets[i];

		ck_assert_str_eq(y->name, x->name);
		ck_assert_uint_eq(y->ino, x->ino);
		ck_assert_uint_eq(y->nexp, x->nexp);
		ck_assert_int_eq(y->ops == NULL, x->ops == NULL);
		for (j = 0; j < x->nexp; j++) {
			const struct gt_export *a = &x->exp[j];
			const struct gt_export *b = &y->exp[j];
			struct delta_sample pa, pb;

			ck_assert_str_eq(gtable_client_nid(t2, b->client),
			    gtable_client_nid(t, a->client));
			ck_assert_uint_eq(b->cls, a->cls);
			ck_assert_uint_eq(b->ino, a->ino);
			gtable_export_prev(x, a, &pa);
			gtable_export_prev(y, b, &pb);
			ck_assert(memcmp(&pb, &pa, sizeof(pa)) == 0);
			ck_assert_int_eq(b->ops_unknown, a->ops_unknown);
			if (x->ops != NULL)
				ck_assert(memcmp(&y->ops[j], &x->ops[j],
				              sizeof(x->ops[j])) == 0);
		}
	}
	ck_assert_uint_eq(t2->nclients, t->nclients);
}

START_TEST(round_trip)
{
	struct gtable t, t2;
	struct outbox ob, ob2;
	struct lh_err err;
	struct wbuf w1, w2;
	uint64_t scope = 0;
	char *dir = tmpdir();
	char path[256];
	size_t i;

	(void)snprintf(path, sizeof(path), "%s/gatherer.state", dir);
	build(&t, &ob);
	ck_assert_int_eq(gstate_save(path, 77, &t, &ob, &err), 0);
	gtable_init(&t2);
	outbox_init(&ob2, 0);
	ck_assert_msg(gstate_load(path, &scope, &t2, &ob2, &err) == 0, "%s",
	    err.reason);
	ck_assert_uint_eq(scope, 77);
	ck_assert(t2.history);
	ck_assert_uint_eq(t2.last_sweep_ns, t.last_sweep_ns);
	ck_assert_uint_eq(t2.ntargets, 2);
	ck_assert_ptr_nonnull(t.targets[1]->ops); /* the MDT's */
	assert_same_tables(&t, &t2);
	/* Both batches have op sums. */
	ck_assert_uint_gt(outbox_batch_nops(&ob.inflight), 0);
	ck_assert_uint_gt(outbox_batch_nops(&ob.pending), 0);
	/* The peer is still a peer. */
	for (i = 0; i < t2.nclients; i++)
		ck_assert_int_eq(t2.clients[i].peer,
		    strcmp(gtable_client_nid(&t2, (uint32_t)i),
		        "10.0.0.1@o2ib") == 0);
	/* The outbox: same number, same bytes, in flight and pending. */
	ck_assert_uint_eq(ob2.last_batch, 42);
	ck_assert(ob2.have_inflight);
	encode_outbox(&ob, &w1);
	encode_outbox(&ob2, &w2);
	ck_assert_uint_eq(w1.len, w2.len);
	ck_assert(memcmp(w1.data, w2.data, w1.len) == 0);
	wbuf_free(&w1);
	wbuf_free(&w2);
	ck_assert_int_eq(outbox_acked(&ob, 42), 0);
	ck_assert_int_eq(outbox_acked(&ob2, 42), 0);
	outbox_seal(&ob);
	outbox_seal(&ob2);
	encode_outbox(&ob, &w1);
	encode_outbox(&ob2, &w2);
	ck_assert_uint_eq(w1.len, w2.len);
	ck_assert(memcmp(w1.data, w2.data, w1.len) == 0);
	wbuf_free(&w1);
	wbuf_free(&w2);

	gtable_free(&t);
	gtable_free(&t2);
	outbox_free(&ob);
	outbox_free(&ob2);
	(void)unlink(path);
	(void)rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(missing_is_enoent)
{
	struct gtable t;
	struct outbox ob;
	struct lh_err err;
	uint64_t scope;

	gtable_init(&t);
	outbox_init(&ob, 0);
	ck_assert_int_eq(gstate_load("/nonexistent/gatherer.state", &scope, &t,
	                     &ob, &err),
	    -ENOENT);
	gtable_free(&t);
	outbox_free(&ob);
}
END_TEST

static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(1 << 20);

	ck_assert_ptr_nonnull(f);
	*len = fread(buf, 1, 1 << 20, f);
	(void)fclose(f);
	return buf;
}

/* Every flipped byte and every truncation is refused whole. */
START_TEST(damage_refused)
{
	struct gtable t;
	struct outbox ob;
	struct lh_err err;
	char *dir = tmpdir();
	char path[256];
	uint8_t *buf;
	size_t len, i;
	uint64_t scope;

	(void)snprintf(path, sizeof(path), "%s/gatherer.state", dir);
	build(&t, &ob);
	ck_assert_int_eq(gstate_save(path, 77, &t, &ob, &err), 0);
	gtable_free(&t);
	outbox_free(&ob);
	buf = slurp(path, &len);
	ck_assert_uint_gt(len, 100);
	for (i = 0; i < len; i++) {
		buf[i] ^= 0x20;
		gtable_init(&t);
		outbox_init(&ob, 0);
		ck_assert_int_eq(gstate_decode(buf, len, &scope, &t, &ob, &err),
		    -EBADMSG);
		gtable_free(&t);
		outbox_free(&ob);
		buf[i] ^= 0x20;
	}
	for (i = 0; i < len; i += 7) {
		gtable_init(&t);
		outbox_init(&ob, 0);
		ck_assert_int_eq(gstate_decode(buf, i, &scope, &t, &ob, &err),
		    -EBADMSG);
		gtable_free(&t);
		outbox_free(&ob);
	}
	free(buf);
	(void)unlink(path);
	(void)rmdir(dir);
	free(dir);
}
END_TEST

/* ---- version 2: the layout before op counts, as gstate.c wrote it ---- */

static void
v2_counters(struct wbuf *w, const struct iocount *c)
{
	(void)wbuf_put_varint(w, c->read_bytes);
	(void)wbuf_put_varint(w, c->write_bytes);
	(void)wbuf_put_varint(w, c->read_ops);
	(void)wbuf_put_varint(w, c->write_ops);
	(void)wbuf_put_varint(w, c->oss_ops);
	(void)wbuf_put_varint(w, c->mds_ops);
}

static void
v2_target(struct wbuf *w, const struct gtable *t, const struct gt_target *tg,
    uint8_t extra_flags)
{
	size_t i;

	(void)wbuf_put_str8(w, tg->name);
	(void)wbuf_put_str8(w, tg->fs);
	(void)wbuf_put_u8(w, (uint8_t)tg->kind);
	(void)wbuf_put_varint(w, tg->dev);
	(void)wbuf_put_varint(w, tg->ino);
	(void)wbuf_put_varint(w, tg->nexp);
	for (i = 0; i < tg->nexp; i++) {
		const struct gt_export *e = &tg->exp[i];
		struct delta_sample prev;

		gtable_export_prev(tg, e, &prev);
		(void)wbuf_put_str8(w, gtable_client_nid(t, e->client));
		(void)wbuf_put_varint(w, e->ino);
		(void)wbuf_put_u8(w,
		    (uint8_t)((e->classified ? 1u : 0u) | (e->cls & 3u) << 1 |
		        (e->have ? 8u : 0u) | extra_flags));
		v2_counters(w, &prev.c);
		(void)wbuf_put_varint(w, prev.samples);
		(void)wbuf_put_varint(w, prev.snap_ns);
		/* Whole, as versions 2 and 3 kept it (the table keeps a tag
		 * of it): every sample() has the same start. */
		(void)wbuf_put_varint(w,
		    prev.start_ns != 0 ? T0 - 3600 * S : 0);
	}
}

/* with_ops: version 3's records, each followed by its op counts. */
static void
v2_batch(struct wbuf *w, const struct outbox_batch *b, bool with_ops)
{
	size_t i;
	unsigned c;

	(void)wbuf_put_varint(w, b->batch);
	(void)wbuf_put_varint(w, b->first_sweep);
	(void)wbuf_put_varint(w, b->last_sweep);
	(void)wbuf_put_varint(w, b->start_ns);
	(void)wbuf_put_varint(w, b->n);
	for (i = 0; i < b->n; i++) {
		const struct outbox_rec *r = &b->recs[i];
		uint64_t cspans[MSG_NCOUNTERS];
		struct mdops ops;

		(void)wbuf_put_str8(w, outbox_rec_fs(b, r));
		(void)wbuf_put_str8(w, outbox_rec_nid(b, r));
		v2_counters(w, &r->d);
		(void)wbuf_put_varint(w, r->span_us);
		outbox_rec_cspans(b, r, cspans);
		for (c = 0; c < MSG_NCOUNTERS; c++)
			(void)wbuf_put_varint(w, cspans[c]);
		if (with_ops)
			obstate_put_ops(w, outbox_rec_ops(b, r, &ops));
	}
}

/* A state file of t and ob in the version 2 layout (version: what its
 * header says; extra_flags: or-ed into every export's flags), checksum
 * included. */
static void
v2_encode(struct wbuf *w, const struct gtable *t, const struct outbox *ob,
    uint32_t version, uint8_t extra_flags)
{
	uint8_t sum[SHA256_LEN];
	size_t i;

	wbuf_init(w, 0);
	(void)wbuf_put(w, "LHGS", 4);
	(void)wbuf_put_be32(w, version);
	(void)wbuf_put_be64(w, T0 + 45 * S);
	(void)wbuf_put_be64(w, t->last_sweep_ns);
	(void)wbuf_put_be64(w, ob->last_batch);
	(void)wbuf_put_be64(w, 77);
	(void)wbuf_put_varint(w, t->ntargets);
	for (i = 0; i < t->ntargets; i++)
		v2_target(w, t, t->targets[i], extra_flags);
	(void)wbuf_put_u8(w, ob->have_inflight ? 1 : 0);
	if (ob->have_inflight)
		v2_batch(w, &ob->inflight, version >= 3);
	v2_batch(w, &ob->pending, version >= 3);
	ck_assert_int_eq(sha256(w->data, w->len, sum), 0);
	(void)wbuf_put(w, sum, sizeof(sum));
	ck_assert_int_eq(wbuf_status(w), 0);
}

/* An upgrade keeps what was saved: a version 2 file is read, without op
 * counts.  The MDT exports' op counts are then unknown: their next op
 * delta is a baseline, not all they ever counted; a save keeps that. */
START_TEST(version2_read)
{
	struct gtable t, t2, t3;
	struct outbox ob, ob2, ob3;
	struct lh_err err;
	struct wbuf f, w1, w2;
	struct gt_target *tg;
	struct gt_export *e;
	uint64_t scope = 0;
	char *dir = tmpdir();
	char path[256];
	size_t i, n_ops = 0;
	int rc;

	build(&t, &ob);
	v2_encode(&f, &t, &ob, 2, 0);
	gtable_init(&t2);
	outbox_init(&ob2, 0);
	ck_assert_msg(gstate_decode(f.data, f.len, &scope, &t2, &ob2, &err) ==
	        0,
	    "%s", err.reason);
	ck_assert_uint_eq(scope, 77);
	ck_assert_uint_eq(ob2.last_batch, 42);
	ck_assert(ob2.have_inflight);
	ck_assert_uint_eq(outbox_batch_nops(&ob2.inflight), 0);
	ck_assert_uint_eq(outbox_batch_nops(&ob2.pending), 0);
	/* The batches: the same records, without their op counts. */
	encode_outbox_ops(&ob, false, &w1);
	encode_outbox_ops(&ob2, true, &w2);
	ck_assert_uint_eq(w1.len, w2.len);
	ck_assert(memcmp(w1.data, w2.data, w1.len) == 0);
	wbuf_free(&w1);
	wbuf_free(&w2);
	/* The tables: the same, but for the MDT's op counts. */
	tg = t.targets[1];
	for (i = 0; i < tg->nexp; i++) {
		tg->exp[i].ops_unknown = tg->exp[i].have;
		memset(&tg->ops[i], 0, sizeof(tg->ops[i]));
	}
	assert_same_tables(&t, &t2);

	/* Saved again (version 4) before any sweep: still unknown. */
	(void)snprintf(path, sizeof(path), "%s/gatherer.state", dir);
	ck_assert_int_eq(gstate_save(path, 77, &t2, &ob2, &err), 0);
	gtable_init(&t3);
	outbox_init(&ob3, 0);
	ck_assert_msg(gstate_load(path, &scope, &t3, &ob3, &err) == 0, "%s",
	    err.reason);
	assert_same_tables(&t2, &t3);

	/* The next sweep: counters exact, op counts a baseline. */
	gtable_sweep_begin(&t3, T0 + 60 * S, 20 * S);
	tg = gtable_target(&t3, "scratch-MDT0000", "scratch", LH_TARGET_MDT, 5,
	    11);
	ck_assert_ptr_nonnull(tg);
	gtable_target_listed(tg);
	for (i = 0; i < 3; i++) {
		static const char *nids[] = {"10.1.0.1@o2ib", "10.2.0.9@o2ib2",
		    "27@gni"};
		struct delta_sample s = sample(1000 * (i + 1) * 4, T0 + 60 * S);
		struct mdops o = mdt_ops((unsigned)i, 3);

		e = gtable_export(&t3, tg, nids[i], 100 + i, &rc);
		ck_assert_ptr_nonnull(e);
		ck_assert(e->ops_unknown);
		gtable_observe(&t3, tg, e, &s, &o);
		ck_assert(!e->ops_unknown);
	}
	ck_assert_int_eq(gtable_sweep_end(&t3, to_outbox, &ob3), 0);
	for (i = 0; i < ob3.pending.n; i++) {
		const struct outbox_rec *r = &ob3.pending.recs[i];
		const char *nid = outbox_rec_nid(&ob3.pending, r);

		/* Added to the pending batch: two targets' deltas of the
		 * third sweep, then the MDT's of this one. */
		n_ops += r->ops != OUTBOX_NO_OPS;
		if (strcmp(nid, "10.1.0.1@o2ib") == 0)
			ck_assert_uint_eq(r->d.read_bytes, 3 * 1000);
		if (strcmp(nid, "27@gni") == 0)
			ck_assert_uint_eq(r->d.read_bytes, 3 * 3000);
	}
	ck_assert_uint_eq(n_ops, 0);
	ck_assert_uint_eq(outbox_batch_nops(&ob3.pending), 0);

	wbuf_free(&f);
	gtable_free(&t);
	gtable_free(&t2);
	gtable_free(&t3);
	outbox_free(&ob);
	outbox_free(&ob2);
	outbox_free(&ob3);
	(void)unlink(path);
	(void)rmdir(dir);
	free(dir);
}
END_TEST

/* A state larger than the reader's window (64 KiB) many times over, its
 * records straddling window boundaries: read back exactly, and refused
 * whole when one byte in the middle changes. */
START_TEST(big_state_read_in_windows)
{
	struct gtable t, t2;
	struct outbox ob, ob2;
	struct lh_err err;
	uint64_t scope = 0;
	char *dir = tmpdir();
	char path[256], nid[64];
	struct gt_target *tg[2];
	struct gt_export *e;
	unsigned k, i, n;
	FILE *f;
	long size;
	int rc, c;

	gtable_init(&t);
	outbox_init(&ob, 7);
	for (k = 0; k < 2; k++) {
		gtable_sweep_begin(&t, T0 + k * 20 * S, 20 * S);
		tg[0] = gtable_target(&t, "scratch-OST0000", "scratch",
		    LH_TARGET_OST, 5, 10);
		tg[1] = gtable_target(&t, "scratch-MDT0000", "scratch",
		    LH_TARGET_MDT, 5, 11);
		for (i = 0; i < 2; i++) {
			gtable_target_listed(tg[i]);
			for (n = 0; n < 4000; n++) {
				struct delta_sample s =
				    sample(1000003ULL * n * (k + 1),
				        T0 + k * 20 * S);
				struct mdops ops = mdt_ops(n % 5, k);

				/* Lengths vary, so records fall anywhere
				 * in a window. */
				(void)snprintf(nid, sizeof(nid), "%u%.*s@gni",
				    n, (int)(n % 23), "0000000000000000000000");
				e = gtable_export(&t, tg[i], nid, 100 + n, &rc);
				ck_assert_ptr_nonnull(e);
				if (gtable_needs_uuid(e, &s))
					gtable_classify(&t, e,
					    LTREE_PEER_CLIENT);
				ck_assert_int_eq(gtable_observe(&t, tg[i], e,
				                     &s, &ops),
				    0);
			}
		}
		ck_assert_int_eq(gtable_sweep_end(&t, to_outbox, &ob), 0);
	}
	(void)snprintf(path, sizeof(path), "%s/gatherer.state", dir);
	ck_assert_int_eq(gstate_save(path, 5, &t, &ob, &err), 0);
	f = fopen(path, "r+");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	ck_assert_int_gt(size, 8 * 64 * 1024);

	gtable_init(&t2);
	outbox_init(&ob2, 0);
	ck_assert_msg(gstate_load(path, &scope, &t2, &ob2, &err) == 0, "%s",
	    err.reason);
	ck_assert_uint_eq(scope, 5);
	assert_same_tables(&t, &t2);
	ck_assert_uint_eq(ob2.pending.n, ob.pending.n);
	gtable_free(&t2);
	outbox_free(&ob2);

	/* One byte flipped half-way: the checksum refuses the file. */
	ck_assert_int_eq(fseek(f, size / 2, SEEK_SET), 0);
	c = fgetc(f);
	ck_assert_int_eq(fseek(f, size / 2, SEEK_SET), 0);
	ck_assert_int_eq(fputc(c ^ 1, f), c ^ 1);
	ck_assert_int_eq(fclose(f), 0);
	gtable_init(&t2);
	outbox_init(&ob2, 0);
	ck_assert_int_eq(gstate_load(path, &scope, &t2, &ob2, &err), -EBADMSG);
	ck_assert_str_eq(err.reason, "damaged: checksum mismatch");
	gtable_free(&t2);
	outbox_free(&ob2);
	gtable_free(&t);
	outbox_free(&ob);
	(void)unlink(path);
	(void)rmdir(dir);
	free(dir);
}
END_TEST

/* Version 3 (samples and start whole): read, and the tables are those
 * saved, the MDT's op counts unknown (none written here). */
START_TEST(version3_read)
{
	struct gtable t, t2;
	struct outbox ob, ob2;
	struct lh_err err;
	struct wbuf f;
	uint64_t scope = 0;
	size_t i, j;

	build(&t, &ob);
	v2_encode(&f, &t, &ob, 3, 0);
	gtable_init(&t2);
	outbox_init(&ob2, 0);
	ck_assert_msg(gstate_decode(f.data, f.len, &scope, &t2, &ob2, &err) ==
	        0,
	    "%s", err.reason);
	ck_assert_uint_eq(t2.ntargets, t.ntargets);
	for (i = 0; i < t.ntargets; i++) {
		const struct gt_target *x = t.targets[i], *y = t2.targets[i];

		ck_assert_uint_eq(y->nexp, x->nexp);
		for (j = 0; j < x->nexp; j++) {
			struct delta_sample pa, pb;

			gtable_export_prev(x, &x->exp[j], &pa);
			gtable_export_prev(y, &y->exp[j], &pb);
			ck_assert(memcmp(&pb, &pa, sizeof(pa)) == 0);
		}
	}
	gtable_free(&t);
	gtable_free(&t2);
	outbox_free(&ob);
	outbox_free(&ob2);
	wbuf_free(&f);
}
END_TEST

/* Version 2 cannot hold op counts, nor versions 1 and 5 be read. */
START_TEST(other_versions_refused)
{
	static const uint32_t bad[] = {1, 6, 0xffffffffu};
	struct gtable t, t2;
	struct outbox ob, ob2;
	struct lh_err err;
	struct wbuf f;
	uint64_t scope;
	size_t i;

	build(&t, &ob);
	v2_encode(&f, &t, &ob, 2, 16);
	gtable_init(&t2);
	outbox_init(&ob2, 0);
	ck_assert_int_eq(gstate_decode(f.data, f.len, &scope, &t2, &ob2, &err),
	    -EBADMSG);
	ck_assert_str_eq(err.reason, "damaged: export");
	gtable_free(&t2);
	outbox_free(&ob2);
	wbuf_free(&f);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v2_encode(&f, &t, &ob, bad[i], 0);
		gtable_init(&t2);
		outbox_init(&ob2, 0);
		ck_assert_int_eq(gstate_decode(f.data, f.len, &scope, &t2, &ob2,
		                     &err),
		    -EBADMSG);
		ck_assert_ptr_nonnull(strstr(err.reason, "reads 2 to 5"));
		/* A downgrade: said as such (the file is set aside). */
		ck_assert_int_eq(strstr(err.reason, "newer") != NULL,
		    bad[i] > 5);
		gtable_free(&t2);
		outbox_free(&ob2);
		wbuf_free(&f);
	}
	gtable_free(&t);
	outbox_free(&ob);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gstate");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, missing_is_enoent);
	tcase_add_test(tc, damage_refused);
	tcase_add_test(tc, version2_read);
	tcase_add_test(tc, big_state_read_in_windows);
	tcase_add_test(tc, version3_read);
	tcase_add_test(tc, other_versions_refused);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
