/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes the seed corpora of the protocol fuzz targets into
 * DIR/<target>/ (DIR is normally tests/fuzz/corpus).  Built only on
 * request: `cmake --build build --target gen_seeds`, then
 * `build/tests/gen_seeds tests/fuzz/corpus`.  The output is
 * deterministic (fixed nonces and keys), so re-running it changes
 * nothing unless the wire format did.
 */
#include <sys/stat.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "frame.h"
#include "gstate.h"
#include "gstate_int.h"
#include "gstate_journal.h"
#include "rstate.h"
#include "gtable.h"
#include "hmac.h"
#include "hostsum.h"
#include "hosttotals.h"
#include "keyfile.h"
#include "mdops.h"
#include "msg.h"
#include "outbox.h"
#include "session.h"
#include "wire.h"

/* Keep in step with fuzz_frame.c. */
#define FZ_KEYS                                                                \
	"fuzz-shared-secret-0123456789-abc\nfuzz-second-key-abcdefghijkl-0123\n"
#define FZ_LISTENER  "agg-fuzz"
#define FZ_MAX_FRAME 65536u

static const char *outdir;

static void
die(const char *what)
{
	(void)fprintf(stderr, "gen_seeds: %s\n", what);
	exit(1);
}

static void
put_file(const char *target, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	(void)snprintf(path, sizeof(path), "%s/%s", outdir, target);
	(void)mkdir(path, 0755);
	(void)snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0)
		die(path);
}

static void
put_wbuf(const char *target, const char *name, struct wbuf *w)
{
	if (wbuf_status(w) != 0)
		die(name);
	put_file(target, name, w->data, w->len);
	/* Both SWEEP decoders, compared by fuzz_sweep_stage, start from
	 * the same seeds. */
	if (strcmp(target, "sweep") == 0)
		put_file("sweep_stage", name, w->data, w->len);
	wbuf_reset(w);
}

static void
fill_hello(struct msg_hello *h, int full)
{
	size_t i;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < MSG_NONCE_LEN; i++)
		h->nonce[i] = (uint8_t)(i * 5 + 3);
	h->role = MSG_ROLE_GATHERER;
	(void)snprintf(h->software, sizeof(h->software), "lharvestd 0.1.0");
	h->time_ns = 1718000000500000000ull;
	h->interval = 10;
	h->caps = MSG_CAP_SWEEP;
	(void)snprintf(h->name, sizeof(h->name), "oss-fuzz");
	if (!full)
		return;
	h->nfs = 2;
	(void)snprintf(h->fs[0], MSG_FS_MAX, "scratch");
	(void)snprintf(h->fs[1], MSG_FS_MAX, "home");
	h->ntargets = 3;
	(void)snprintf(h->targets[0].name, MSG_TARGET_MAX, "scratch-OST0000");
	(void)snprintf(h->targets[1].name, MSG_TARGET_MAX, "scratch-MDT0000");
	(void)snprintf(h->targets[2].name, MSG_TARGET_MAX, "home-OST0001");
	h->targets[2].fs = 1;
}

static const char *const mixed_nids[] = {"10.1.2.3@o2ib", "10.1.2.4@o2ib",
    "10.1.2.9@o2ib", "10.2.0.1@o2ib2", "192.168.0.4@tcp102", "27@gni", "28@gni",
    "2001:db8:10::17@tcp", "010.1.2.3@o2ib", "0@lo"};
#define NMIXED (sizeof(mixed_nids) / sizeof(mixed_nids[0]))

/* A SWEEP payload of n records (n <= NMIXED, or n clients on o2ib). */
static void
make_sweep(struct wbuf *w, size_t n, int mixed)
{
	static char nids[256][24];
	struct msg_rec recs[256];
	struct msg_sweep h;
	size_t i;

	memset(&h, 0, sizeof(h));
	h.batch = 3;
	h.first_sweep = 1718000000;
	h.start_ns = 1717999990000000000ull;
	h.span_us = 10000000;
	h.nfs = 2;
	(void)snprintf(h.fs[0], MSG_FS_MAX, "scratch");
	(void)snprintf(h.fs[1], MSG_FS_MAX, "home");
	memset(recs, 0, sizeof(recs));
	for (i = 0; i < n; i++) {
		if (mixed) {
			recs[i].nid = mixed_nids[i];
		} else {
			(void)snprintf(nids[i], sizeof(nids[i]),
			    "10.1.%u.%u@o2ib", (unsigned)(i / 200),
			    (unsigned)(i % 200 + 1));
			recs[i].nid = nids[i];
		}
		recs[i].fs = (uint16_t)(mixed && i % 3 == 2 ? 1 : 0);
		recs[i].d.read_bytes = 1000003 * (i % 7);
		recs[i].d.write_bytes = 4096 * i;
		recs[i].d.read_ops = i % 5;
		recs[i].d.write_ops = i;
		recs[i].d.oss_ops = 1000 + i;
		recs[i].d.mds_ops = i % 2 == 0 ? 0 : UINT64_MAX - i;
		recs[i].span_us = i == 1 ? 9000000 : h.span_us;
	}
	if (msg_sweep_encode(w, &h, recs, n) != 0)
		die("sweep");
}

/* A SWEEP whose records carry counter spans (mask bit 7): targets read
 * at different times, with and without a record span of their own, a
 * counter that keeps the record's span, and spans near 2^63-1. */
static void
make_sweep_cspan(struct wbuf *w)
{
	static const char *const nids[] = {"10.1.2.3@o2ib", "10.1.2.4@o2ib",
	    "10.1.2.5@o2ib", "27@gni", "2001:db8:10::17@tcp"};
	struct msg_rec recs[5];
	struct msg_sweep h;
	size_t i;

	memset(&h, 0, sizeof(h));
	h.batch = 4;
	h.first_sweep = 1718000010;
	h.start_ns = 1718000000000000000ull;
	h.span_us = 10000000;
	h.nfs = 2;
	(void)snprintf(h.fs[0], MSG_FS_MAX, "scratch");
	(void)snprintf(h.fs[1], MSG_FS_MAX, "home");
	memset(recs, 0, sizeof(recs));
	for (i = 0; i < 5; i++) {
		recs[i].nid = nids[i];
		recs[i].fs = (uint16_t)(i == 4 ? 1 : 0);
		recs[i].d.read_bytes = 1048576 * (i + 1);
		recs[i].d.write_bytes = i % 2 == 0 ? 4096 * (i + 1) : 0;
		recs[i].d.read_ops = i + 1;
		recs[i].d.write_ops = i % 2 == 0 ? i + 1 : 0;
		recs[i].d.oss_ops = 2 * (i + 1) + 3;
		recs[i].d.mds_ops = i == 3 ? 0 : 7;
		recs[i].span_us = i == 1 ? 9999000 : h.span_us;
	}
	recs[0].cspan_us[0] = 10000250;
	recs[0].cspan_us[2] = 10000250;
	recs[0].cspan_us[5] = 9999800;
	recs[1].cspan_us[4] = 10000400;  /* and a record span of its own */
	recs[2].cspan_us[1] = h.span_us; /* the same: no bit 7 */
	recs[3].span_us = (uint64_t)INT64_MAX;
	recs[3].cspan_us[0] = 1;
	recs[3].cspan_us[4] = (uint64_t)INT64_MAX - 5;
	recs[4].cspan_us[5] = 20000000;
	if (msg_sweep_encode(w, &h, recs, 5) != 0)
		die("sweep with counter spans");
}

/* A SWEEP with a metadata-op section: records with and without op
 * counts, ops used by one record only, a count near 2^64. */
static void
make_sweep_mdops(struct wbuf *w)
{
	static const char *const nids[] = {"10.1.2.3@o2ib", "10.1.2.4@o2ib",
	    "27@gni", "2001:db8:10::17@tcp"};
	struct mdops ops[4];
	struct msg_rec recs[4];
	struct msg_sweep h;
	size_t i;

	memset(&h, 0, sizeof(h));
	h.batch = 5;
	h.first_sweep = 1718000020;
	h.start_ns = 1718000010000000000ull;
	h.span_us = 10000000;
	h.nfs = 2;
	(void)snprintf(h.fs[0], MSG_FS_MAX, "scratch");
	(void)snprintf(h.fs[1], MSG_FS_MAX, "home");
	h.ops = true;
	memset(recs, 0, sizeof(recs));
	memset(ops, 0, sizeof(ops));
	for (i = 0; i < 4; i++) {
		recs[i].nid = nids[i];
		recs[i].fs = (uint16_t)(i == 3 ? 1 : 0);
		recs[i].d.mds_ops = 100 * (i + 1);
		recs[i].span_us = h.span_us;
		ops[i].v[MDOPS_OPEN] = 40 * (i + 1);
		ops[i].v[MDOPS_CLOSE] = 40 * (i + 1);
		ops[i].v[MDOPS_GETATTR] = 20 * (i + 1);
		recs[i].ops = &ops[i];
	}
	recs[1].ops = NULL; /* an OSS-only client */
	ops[2].v[MDOPS_MKDIR] = 3;
	ops[2].v[MDOPS_FALLOCATE] = 1;
	ops[3].v[MDOPS_UNLINK] = UINT64_MAX - 1;
	recs[3].cspan_us[5] = 10000500; /* the ops' span too */
	if (msg_sweep_encode(w, &h, recs, 4) != 0)
		die("sweep with op counts");
}

/* Listener l and connector c through CHALLENGE, HELLO (also written as
 * the frame seed "seed-hello", and left in conn) and its ACK. */
static void
frames_handshake(struct session *l, struct session *c, struct wbuf *conn)
{
	struct msg_challenge ch;
	struct msg_hello *h = malloc(sizeof(*h));
	struct session_frame f;
	struct wbuf w, pl;
	struct lh_err err;
	size_t need, i;

	if (h == NULL)
		die("oom");
	memset(&ch, 0, sizeof(ch));
	for (i = 0; i < MSG_NONCE_LEN; i++)
		ch.nonce[i] = (uint8_t)(i * 13 + 7);
	ch.time_ns = 1718000000000000000ull;
	ch.caps = MSG_CAP_SWEEP;
	ch.role = MSG_ROLE_AGGREGATOR;
	(void)snprintf(ch.name, sizeof(ch.name), FZ_LISTENER);
	wbuf_init(&w, 0);
	wbuf_init(&pl, 0);
	if (session_challenge(l, &ch, &w) != 0 ||
	    session_input(c, w.data, w.len, &f, &need, &err) <= 0)
		die("challenge");
	wbuf_reset(&w);
	fill_hello(h, 1);
	if (session_hello(c, h, conn) != 0 ||
	    session_input(l, conn->data, conn->len, &f, &need, &err) <= 0)
		die("hello");
	put_file("frame", "seed-hello", conn->data, conn->len);
	{
		struct msg_ack a = {MSG_ACK_HELLO, f.hdr.seq, 0, 1};

		if (msg_ack_encode(&pl, &a) != 0 ||
		    session_send(l, FRAME_ACK, 0, 0, pl.data, pl.len, &w) !=
		        0 ||
		    session_input(c, w.data, w.len, &f, &need, &err) <= 0)
			die("ack");
	}
	wbuf_free(&w);
	wbuf_free(&pl);
	free(h);
}

/* A whole connection as the listener of fuzz_frame.c sees it. */
static void
make_frames(struct hmac_ctx *hm, const struct keyring *ring)
{
	struct session l, c;
	struct wbuf pl, conn;

	wbuf_init(&pl, 0);
	wbuf_init(&conn, 0);
	if (session_init(&l, SESSION_LISTENER, ring, hm, FZ_LISTENER,
	        FZ_MAX_FRAME) != 0 ||
	    session_init(&c, SESSION_CONNECTOR, ring, hm, "oss-fuzz",
	        FZ_MAX_FRAME) != 0)
		die("challenge");
	frames_handshake(&l, &c, &conn);
	/* Two SWEEPs, a later ignorable type, a BYE (an ACK from the
	 * connector would end it: only a listener acknowledges). */
	make_sweep(&pl, NMIXED, 1);
	(void)session_send(&c, FRAME_SWEEP, 0, 1718000000, pl.data, pl.len,
	    &conn);
	wbuf_reset(&pl);
	make_sweep(&pl, 0, 0);
	(void)session_send(&c, FRAME_SWEEP, 0, 1718000010, pl.data, pl.len,
	    &conn);
	wbuf_reset(&pl);
	(void)session_send(&c, 42, FRAME_F_IGNORABLE, 0,
	    (const uint8_t *)"later", 5, &conn);
	{
		struct msg_bye b = {0, "shutting down"};

		(void)msg_bye_encode(&pl, &b);
		(void)session_send(&c, FRAME_BYE, 0, 0, pl.data, pl.len, &conn);
		wbuf_reset(&pl);
	}
	put_wbuf("frame", "seed-session", &conn);
	session_clear(&l);
	session_clear(&c);
	wbuf_free(&pl);
	wbuf_free(&conn);
}

static int
seed_emit(void *arg, const struct gt_record *r)
{
	return outbox_add(arg, r->fs, r->nid, &r->d, r->ops, r->span_us,
	    r->cspan_us, 1718000020, r->start_ns);
}

/* Sweep k of make_gstate() on its target i: five exports, a client, a
 * peer and a stale one among them. */
static void
seed_exports(struct gtable *t, struct gt_target *tg, unsigned k, unsigned i)
{
	static const char *nids[] = {"10.1.0.1@o2ib", "10.2.0.9@o2ib2",
	    "27@gni", "2001:db8::17@tcp", "10.0.0.1@o2ib"};
	unsigned n;
	int rc;

	for (n = 0; n < 5; n++) {
		struct delta_sample s;
		struct mdops ops;
		struct gt_export *e;

		memset(&s, 0, sizeof(s));
		s.c.read_bytes = 4096ull * (n + 1) * (k + 1);
		s.c.oss_ops = 3ull * (k + 1);
		s.samples = s.c.oss_ops;
		s.snap_ns = (1718000000ull + k * 20 + i) * 1000000000ull;
		s.start_ns = 1717000000ull * 1000000000ull;
		memset(&ops, 0, sizeof(ops));
		ops.v[MDOPS_OPEN] = 2ull * (n + 1) * (k + 1);
		ops.v[MDOPS_GETATTR] = 1ull * (k + 1);
		e = gtable_export(t, tg, nids[n], 1000 + n, &rc);
		if (e == NULL)
			die("gtable_export");
		if (gtable_needs_uuid(e, &s))
			gtable_classify(t, e,
			    n == 4     ? LTREE_PEER_SERVER :
			        n == 3 ? LTREE_PEER_STALE :
			                 LTREE_PEER_CLIENT);
		gtable_observe(t, tg, e, &s, &ops);
	}
}

/* A gatherer state file (without its trailing SHA-256, which
 * fuzz_gstate.c appends): two targets, a peer, a stale export, the MDT's
 * op counts, a batch in flight and a pending one, both with op sums. */

/* Sweep k of a table of scratch-OST0000 and scratch-MDT0000 (t, ob) whose
 * exports read as in sweep reads (seed_exports()), into ob, sealed. */
static void
seed_sweep(struct gtable *t, struct outbox *ob, unsigned k, unsigned reads)
{
	unsigned i;

	gtable_sweep_begin(t, (1718000000ull + k * 20) * 1000000000ull,
	    20000000000ull);
	for (i = 0; i < 2; i++) {
		struct gt_target *tg = gtable_target(t,
		    i == 0 ? "scratch-OST0000" : "scratch-MDT0000", "scratch",
		    i == 0 ? LH_TARGET_OST : LH_TARGET_MDT, 2049, 100 + i);

		if (tg == NULL)
			die("gtable_target");
		gtable_target_listed(tg);
		seed_exports(t, tg, reads, i);
	}
	if (gtable_sweep_end(t, seed_emit, ob) != 0)
		die("gtable_sweep_end");
	outbox_seal(ob);
}
static void
make_gstate(void)
{
	char path[4096];
	struct gtable t;
	struct outbox ob;
	struct wbuf w;
	uint64_t batch, sweep;
	unsigned k;
	FILE *f;
	uint8_t buf[65536];
	size_t len;

	gtable_init(&t);
	outbox_init(&ob, 7);
	for (k = 0; k < 2; k++) {
		seed_sweep(&t, &ob, k, k);
		wbuf_init(&w, 0);
		(void)outbox_next(&ob, &w, true, &batch, &sweep);
		wbuf_free(&w);
	}
	(void)snprintf(path, sizeof(path), "%s/gstate", outdir);
	(void)mkdir(path, 0755);
	(void)snprintf(path, sizeof(path), "%s/gstate/seed-state.tmp", outdir);
	if (gstate_save(path, 1, &t, &ob, NULL) != 0)
		die("gstate_save");
	f = fopen(path, "rb");
	if (f == NULL)
		die(path);
	len = fread(buf, 1, sizeof(buf), f);
	(void)fclose(f);
	(void)unlink(path);
	if (len <= SHA256_LEN || len == sizeof(buf))
		die("state size");
	put_file("gstate", "seed-state", buf, len - SHA256_LEN);
	/* The same body as the older formats the loader still reads: as
	 * version 4 (counts kept whole) and 3 (start times whole, not
	 * tags), which the varints of this one also are. */
	buf[7] = 4;
	put_file("gstate", "seed-state-v4", buf, len - SHA256_LEN);
	buf[7] = 3;
	put_file("gstate", "seed-state-v3", buf, len - SHA256_LEN);
	gtable_free(&t);
	outbox_free(&ob);
}

/* The journal at path as fuzz_gjournal.c reads it: each record's body
 * behind a be16 length (its header and checksum are written there). */
static void
put_gjournal(const char *name, const char *path, uint8_t flags)
{
	uint8_t buf[65536], out[65536];
	size_t len, off = GSTATE_JSTART, n = 0;
	FILE *f = fopen(path, "rb");

	if (f == NULL)
		die(path);
	len = fread(buf, 1, sizeof(buf), f);
	(void)fclose(f);
	if (len < GSTATE_JSTART || len == sizeof(buf))
		die("journal size");
	out[n++] = flags;
	out[n++] = 9;
	while (off + GSTATE_JREC_HEAD + SHA256_LEN <= len) {
		uint32_t body = wire_be32(buf + off);

		if (body > 0xffff || off + GSTATE_JREC_HEAD + body > len ||
		    n + 2 + body > sizeof(out))
			die("journal record");
		out[n++] = (uint8_t)(body >> 8);
		out[n++] = (uint8_t)body;
		memcpy(out + n, buf + off + GSTATE_JREC_HEAD, body);
		n += body;
		off += GSTATE_JREC_HEAD + body + SHA256_LEN;
	}
	put_file("gjournal", name, out, n);
}

/* Journals of make_gstate()'s table: the sweeps after the first
 * appended, a new export and an idle one among them; whole, with its
 * last record torn, and cut after the first record (every export moved:
 * it replays after the fuzz target's empty base, down to its outbox). */
static void
make_gjournal(void)
{
	char dir[] = "/tmp/gen_seeds.XXXXXX", b[64], j[64];
	struct gstate_journal gj;
	struct gtable t;
	struct outbox ob;
	unsigned k;

	if (mkdtemp(dir) == NULL)
		die("mkdtemp");
	(void)snprintf(b, sizeof(b), "%s/gatherer.state", dir);
	(void)snprintf(j, sizeof(j), "%s/gatherer.journal", dir);
	if (gstate_journal_init(&gj, b, j) < 0)
		die("gstate_journal_init");
	gtable_init(&t);
	outbox_init(&ob, 7);
	/* Two records: a third would outgrow this small base. */
	for (k = 0; k < 3; k++) {
		/* Sweep 2 reads the same counters again: idle. */
		seed_sweep(&t, &ob, k, k == 2 ? 1 : k);
		if (gstate_journal_save(&gj, 1, &t, &ob, false, NULL) != 0)
			die("gstate_journal_save");
		if (k == 1)
			put_gjournal("seed-journal-moving", j, 0);
	}
	put_gjournal("seed-journal", j, 0);
	put_gjournal("seed-journal-torn", j, 1);
	gstate_journal_close(&gj);
	(void)unlink(b);
	(void)unlink(j);
	(void)rmdir(dir);
	gtable_free(&t);
	outbox_free(&ob);
}

/* A relay state of two routes: one with a batch in flight (op counts
 * included) and a pending one, one with nothing (its body: the checksum
 * is what fuzz_rstate.c appends). */
static void
make_rstate(void)
{
	const struct rstate_ledger l[2] = {{"oss1", 41}, {"mds1", 7}};
	struct outbox a, b;
	const struct rstate_route r[2] = {{"alpha", &a}, {"beta", &b}};
	struct iocount d = {4096, 0, 1, 0, 1, 5};
	struct mdops ops;
	char path[512];
	uint8_t buf[4096];
	size_t len;
	FILE *f;

	memset(&ops, 0, sizeof(ops));
	ops.v[MDOPS_OPEN] = 3;
	ops.v[MDOPS_GETATTR] = 2;
	outbox_init(&a, 900);
	outbox_init(&b, 12);
	(void)outbox_add(&a, "site", "10.1.0.1@o2ib", &d, &ops, 20000000, NULL,
	    1700000000, 1699999980000000000ULL);
	(void)outbox_add(&a, "site", "10.2.0.1@o2ib2", &d, NULL, 20000000, NULL,
	    1700000000, 1699999980000000000ULL);
	outbox_seal(&a);
	(void)outbox_add(&a, "site", "27@gni", &d, &ops, 19000000, NULL,
	    1700000020, 1700000000000000000ULL);
	(void)snprintf(path, sizeof(path), "%s/rstate", outdir);
	(void)mkdir(path, 0755);
	(void)snprintf(path, sizeof(path), "%s/rstate/seed-state.tmp", outdir);
	if (rstate_save(path, l, 2, r, 2, NULL) != 0)
		die("rstate_save");
	f = fopen(path, "rb");
	if (f == NULL)
		die(path);
	len = fread(buf, 1, sizeof(buf), f);
	(void)fclose(f);
	(void)unlink(path);
	if (len <= SHA256_LEN || len == sizeof(buf))
		die("state size");
	put_file("rstate", "seed-state", buf, len - SHA256_LEN);
	outbox_free(&a);
	outbox_free(&b);
}

/* A counters file: marks, two filesystems, rows with and without op
 * counters (its body: the checksum is what fuzz_hosttotals.c appends). */
static void
make_hosttotals(void)
{
	struct hosttotals *t;
	struct hostsum_row r;
	struct sweeps_fs_total ft;
	char path[512];
	uint8_t buf[4096];
	size_t len;
	FILE *f;

	if (hosttotals_new(0, &t) < 0)
		die("setup");
	memset(&r, 0, sizeof(r));
	(void)snprintf(r.host, sizeof(r.host), "node01");
	(void)snprintf(r.fs, sizeof(r.fs), "scratch");
	r.d.read_bytes = 1 << 20;
	r.d.mds_ops = 9;
	r.dops.v[MDOPS_OPEN] = 5;
	r.dops.v[MDOPS_GETATTR] = 4;
	(void)hosttotals_add(t, 1700000000, &r);
	(void)snprintf(r.fs, sizeof(r.fs), "home");
	memset(&r.dops, 0, sizeof(r.dops));
	(void)hosttotals_add(t, 1700000020, &r);
	(void)snprintf(r.host, sizeof(r.host), "node02");
	(void)hosttotals_add(t, 1700000020, &r);
	memset(&ft, 0, sizeof(ft));
	ft.fs = "scratch";
	ft.d.write_bytes = 77;
	ft.nclients = 3;
	(void)hosttotals_add_fs(t, 1700000020, &ft);
	ft.fs = "home";
	(void)hosttotals_add_fs(t, 1700000000, &ft);
	(void)hosttotals_mark(t, "oss1", 41);
	(void)hosttotals_mark(t, "mds1", 7);
	(void)snprintf(path, sizeof(path), "%s/hosttotals", outdir);
	(void)mkdir(path, 0755);
	(void)snprintf(path, sizeof(path), "%s/hosttotals/seed-totals.tmp",
	    outdir);
	if (hosttotals_save(t, path, NULL) != 0)
		die("hosttotals_save");
	f = fopen(path, "rb");
	if (f == NULL)
		die(path);
	len = fread(buf, 1, sizeof(buf), f);
	(void)fclose(f);
	(void)unlink(path);
	if (len <= SHA256_LEN || len == sizeof(buf))
		die("totals size");
	put_file("hosttotals", "seed-totals", buf, len - SHA256_LEN);
	hosttotals_free(t);
}

/* The CHALLENGE, HELLO, ACK and BYE seeds, encoded through w. */
static void
make_messages(struct wbuf *w)
{
	struct msg_hello *h = malloc(sizeof(*h));

	if (h == NULL)
		die("setup");
	{
		struct msg_challenge c;
		size_t i;

		memset(&c, 0, sizeof(c));
		for (i = 0; i < MSG_NONCE_LEN; i++)
			c.nonce[i] = (uint8_t)i;
		c.time_ns = 1718000000000000000ull;
		c.caps = MSG_CAP_SWEEP;
		c.role = MSG_ROLE_AGGREGATOR;
		(void)snprintf(c.name, sizeof(c.name), "head1.example.org");
		(void)msg_challenge_encode(w, &c);
		put_wbuf("challenge", "seed-challenge", w);
	}

	fill_hello(h, 1);
	(void)msg_hello_encode(w, h);
	put_wbuf("hello", "seed-hello", w);
	fill_hello(h, 0);
	(void)msg_hello_encode(w, h);
	put_wbuf("hello", "seed-hello-empty", w);

	{
		struct msg_ack a1 = {MSG_ACK_HELLO, 1, 0,
		    1718000000000000000ull};
		struct msg_ack a2 = {MSG_ACK_DUPLICATE, 12345, 678, 1};

		(void)msg_ack_encode(w, &a1);
		put_wbuf("ack", "seed-ack-hello", w);
		(void)msg_ack_encode(w, &a2);
		put_wbuf("ack", "seed-ack-duplicate", w);
	}
	{
		struct msg_bye b1 = {0, ""};
		struct msg_bye b2 = {2, "protocol error: bad MAC"};

		(void)msg_bye_encode(w, &b1);
		put_wbuf("bye", "seed-bye-empty", w);
		(void)msg_bye_encode(w, &b2);
		put_wbuf("bye", "seed-bye-text", w);
	}
	free(h);
}

/* The key file and NID seeds: text. */
static void
make_texts(void)
{
	{
		static const char k1[] = "# lharvestd key\n"
		                         "fuzz-shared-secret-0123456789-abc\n";
		static const char k2[] =
		    "  new-key-2024-rotation-0123456789ab \r\n\n"
		    "# old one\nold-key-2019-original-0123456789ab\n";
		static const char k3[] = "short\n";

		put_file("keyring", "seed-one", k1, sizeof(k1) - 1);
		put_file("keyring", "seed-two", k2, sizeof(k2) - 1);
		put_file("keyring", "seed-short", k3, sizeof(k3) - 1);
	}
	{
		static const char *const nids[] = {"10.1.2.3@o2ib", "0@lo",
		    "27@gni", "192.168.0.4@tcp102", "2001:db8:10::17@tcp",
		    "010.1.2.3@o2ib", "4294967296@gni", "weird<x>@<1:2>",
		    "10.9.0.9@o2ib0", "2001:DB8:0:0::17@tcp0"};
		size_t i;

		for (i = 0; i < sizeof(nids) / sizeof(nids[0]); i++) {
			char name[32];

			(void)snprintf(name, sizeof(name), "seed-%zu", i);
			put_file("nid", name, nids[i], strlen(nids[i]));
		}
	}
}

int
main(int argc, char **argv)
{
	struct hmac_ctx *hm = hmac_new();
	struct keyring ring;
	struct wbuf w;

	if (argc != 2)
		die("usage: gen_seeds DIR");
	outdir = argv[1];
	memset(&ring, 0, sizeof(ring));
	if (hm == NULL ||
	    keyring_parse(&ring, FZ_KEYS, strlen(FZ_KEYS), NULL) != 0)
		die("setup");
	wbuf_init(&w, 0);
	make_messages(&w);
	make_sweep(&w, NMIXED, 1);
	put_wbuf("sweep", "seed-sweep-mixed", &w);
	make_sweep(&w, 0, 0);
	put_wbuf("sweep", "seed-sweep-empty", &w);
	make_sweep(&w, 256, 0);
	put_wbuf("sweep", "seed-sweep-256", &w);
	make_sweep_cspan(&w);
	put_wbuf("sweep", "seed-sweep-cspan", &w);
	make_sweep_mdops(&w);
	put_wbuf("sweep", "seed-sweep-mdops", &w);
	/* The same with the second filesystem renamed to what cannot be a
	 * metric name ("home" -> "h<me"): its records are dropped. */
	make_sweep_mdops(&w);
	if (w.len < 48 || memcmp(w.data + 41, "\x04home", 5) != 0)
		die("sweep layout");
	w.data[43] = '<';
	put_wbuf("sweep", "seed-sweep-dropped-fs", &w);
	make_gstate();
	make_gjournal();
	make_rstate();
	make_hosttotals();
	make_texts();
	make_frames(hm, &ring);
	wbuf_free(&w);
	keyring_clear(&ring);
	hmac_free(hm);
	return 0;
}
