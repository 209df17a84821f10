/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The payload codecs: every message type through encode and decode, every
 * truncation and trailing byte refused, the SWEEP encoder's own checks,
 * and the size of a SWEEP for a 10,000-client cluster (the number the
 * wire format was designed for: under 24 bytes per record).
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "iocount.h"
#include "msg.h"
#include "testutil.h"
#include "wire.h"

/* ---- helpers ------------------------------------------------------ */

/* Every proper prefix of p, and p plus one trailing byte, must be refused
 * with -EBADMSG and a reason.  Each input is copied into a buffer of
 * exactly its size so that ASan sees any read past the end. */
static void
assert_strict(const char *what, const uint8_t *p, size_t n,
    int (*decode)(const uint8_t *p, size_t n, struct lh_err *err))
{
	struct lh_err err;
	uint8_t *buf;
	size_t cut;
	int rc;

	for (cut = 0; cut < n; cut++) {
		buf = malloc(cut > 0 ? cut : 1);
		ck_assert_ptr_nonnull(buf);
		memcpy(buf, p, cut);
		lh_err_clear(&err);
		rc = decode(buf, cut, (cut & 1) != 0 ? &err : NULL);
		ck_assert_msg(rc == -EBADMSG,
		    "%s cut to %zu of %zu bytes: %d, expected -EBADMSG", what,
		    cut, n, rc);
		if ((cut & 1) != 0)
			ck_assert_msg(err.reason[0] != '\0',
			    "%s cut to %zu bytes: no reason", what, cut);
		free(buf);
	}
	buf = malloc(n + 1);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, p, n);
	buf[n] = 0;
	lh_err_clear(&err);
	rc = decode(buf, n + 1, &err);
	ck_assert_msg(rc == -EBADMSG, "%s with a trailing byte: %d", what, rc);
	ck_assert_msg(err.reason[0] != '\0', "%s trailing: no reason", what);
	free(buf);
}

/* ---- CHALLENGE ---------------------------------------------------- */

static void
fill_challenge(struct msg_challenge *c, const char *name)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < MSG_NONCE_LEN; i++)
		c->nonce[i] = (uint8_t)(0xa0 + i);
	c->time_ns = 1718000000123456789ull;
	c->caps = MSG_CAP_SWEEP | 0x8000000000000000ull;
	c->role = MSG_ROLE_AGGREGATOR;
	(void)snprintf(c->name, sizeof(c->name), "%s", name);
}

static void
assert_challenge_eq(const struct msg_challenge *a,
    const struct msg_challenge *b)
{
	ck_assert(memcmp(a->nonce, b->nonce, MSG_NONCE_LEN) == 0);
	ck_assert_uint_eq(a->time_ns, b->time_ns);
	ck_assert_uint_eq(a->caps, b->caps);
	ck_assert_uint_eq(a->role, b->role);
	ck_assert_str_eq(a->name, b->name);
}

static int
challenge_decode_any(const uint8_t *p, size_t n, struct lh_err *err)
{
	struct msg_challenge m;

	return msg_challenge_decode(&m, p, n, err);
}

START_TEST(challenge)
{
	static const char *const names[] = {"head1",
	    "a-name-of-exactly-63-bytes.example.org.xxxxxxxxxxxxxxxxxxxxxxxx"};
	struct msg_challenge c, d;
	struct lh_err err;
	struct wbuf w;

	ck_assert_uint_eq(strlen(names[1]), MSG_NAME_MAX - 1);
	fill_challenge(&c, names[_i]);
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_challenge_encode(&w, &c), 0);
	memset(&d, 0x5a, sizeof(d));
	lh_err_clear(&err);
	ck_assert_msg(msg_challenge_decode(&d, w.data, w.len, &err) == 0, "%s",
	    err.reason);
	assert_challenge_eq(&c, &d);
	assert_strict("CHALLENGE", w.data, w.len, challenge_decode_any);
	wbuf_free(&w);
}
END_TEST

/* ---- HELLO -------------------------------------------------------- */

static void
fill_hello(struct msg_hello *h, bool full)
{
	static const char *const fss[] = {"scratch", "home", "proj"};
	static const char *const tgts[] = {"scratch-OST0000", "scratch-OST0001",
	    "scratch-MDT0000", "home-OST000a", "proj-MDT0003"};
	static const uint16_t tgt_fs[] = {0, 0, 0, 1, 2};
	size_t i;

	memset(h, 0, sizeof(*h));
	for (i = 0; i < MSG_NONCE_LEN; i++)
		h->nonce[i] = (uint8_t)(0x10 + 3 * i);
	h->role = MSG_ROLE_GATHERER;
	(void)snprintf(h->software, sizeof(h->software), "lharvestd 0.1.0");
	h->time_ns = 1718000001000000000ull;
	h->interval = 10;
	h->caps = MSG_CAP_SWEEP;
	(void)snprintf(h->name, sizeof(h->name), "oss1.example.org");
	if (!full) {
		h->nfs = 3;
		for (i = 0; i < h->nfs; i++)
			(void)snprintf(h->fs[i], MSG_FS_MAX, "%s", fss[i]);
		h->ntargets = 5;
		for (i = 0; i < h->ntargets; i++) {
			(void)snprintf(h->targets[i].name, MSG_TARGET_MAX, "%s",
			    tgts[i]);
			h->targets[i].fs = tgt_fs[i];
		}
		return;
	}
	/* Every limit at once. */
	h->interval = UINT32_MAX;
	h->time_ns = UINT64_MAX;
	h->caps = UINT64_MAX;
	memset(h->software, 's', MSG_SOFTWARE_MAX - 1);
	memset(h->name, 'n', MSG_NAME_MAX - 1);
	h->nfs = MSG_HELLO_FS_MAX;
	for (i = 0; i < h->nfs; i++)
		(void)snprintf(h->fs[i], MSG_FS_MAX, "fs%02u-%09u",
		    (unsigned)(i % 100), (unsigned)i);
	h->ntargets = MSG_HELLO_TGT_MAX;
	for (i = 0; i < h->ntargets; i++) {
		memset(h->targets[i].name, 't', MSG_TARGET_MAX - 1);
		(void)snprintf(h->targets[i].name, 16, "fs%02u-OST%04x",
		    (unsigned)(i % MSG_HELLO_FS_MAX), (unsigned)(i & 0xffff));
		h->targets[i].name[strlen(h->targets[i].name)] = 't';
		h->targets[i].fs = (uint16_t)(i % MSG_HELLO_FS_MAX);
	}
}

static void
assert_hello_eq(const struct msg_hello *a, const struct msg_hello *b)
{
	size_t i;

	ck_assert(memcmp(a->nonce, b->nonce, MSG_NONCE_LEN) == 0);
	ck_assert_uint_eq(a->role, b->role);
	ck_assert_str_eq(a->software, b->software);
	ck_assert_uint_eq(a->time_ns, b->time_ns);
	ck_assert_uint_eq(a->interval, b->interval);
	ck_assert_uint_eq(a->caps, b->caps);
	ck_assert_str_eq(a->name, b->name);
	ck_assert_uint_eq(a->nfs, b->nfs);
	for (i = 0; i < a->nfs; i++)
		ck_assert_str_eq(a->fs[i], b->fs[i]);
	ck_assert_uint_eq(a->ntargets, b->ntargets);
	for (i = 0; i < a->ntargets; i++) {
		ck_assert_str_eq(a->targets[i].name, b->targets[i].name);
		ck_assert_uint_eq(a->targets[i].fs, b->targets[i].fs);
	}
}

static int
hello_decode_any(const uint8_t *p, size_t n, struct lh_err *err)
{
	static struct msg_hello m;

	return msg_hello_decode(&m, p, n, err);
}

START_TEST(hello)
{
	struct msg_hello *h = malloc(sizeof(*h)), *d = malloc(sizeof(*d));
	struct lh_err err;
	struct wbuf w;

	ck_assert(h != NULL && d != NULL);
	fill_hello(h, _i == 1);
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_hello_encode(&w, h), 0);
	memset(d, 0x5a, sizeof(*d));
	lh_err_clear(&err);
	ck_assert_msg(msg_hello_decode(d, w.data, w.len, &err) == 0, "%s",
	    err.reason);
	assert_hello_eq(h, d);
	if (_i == 0) /* the full one: too many prefixes to try them all */
		assert_strict("HELLO", w.data, w.len, hello_decode_any);
	else
		(void)printf("HELLO with every limit: %zu bytes\n", w.len);
	wbuf_free(&w);
	free(h);
	free(d);
}
END_TEST

/* No filesystem or target at all is a valid HELLO (a server that has
 * none mounted yet). */
START_TEST(hello_empty)
{
	struct msg_hello *h = malloc(sizeof(*h)), *d = malloc(sizeof(*d));
	struct wbuf w;

	ck_assert(h != NULL && d != NULL);
	fill_hello(h, false);
	h->nfs = 0;
	h->ntargets = 0;
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_hello_encode(&w, h), 0);
	ck_assert_int_eq(msg_hello_decode(d, w.data, w.len, NULL), 0);
	assert_hello_eq(h, d);
	assert_strict("empty HELLO", w.data, w.len, hello_decode_any);
	wbuf_free(&w);
	free(h);
	free(d);
}
END_TEST

/* Names a peer sends end up in log lines: control characters (a forged
 * second line) are refused everywhere, blanks in names too; free text
 * (software, BYE) may have blanks. */
struct text_case {
	const char *what;
	int field; /* 0 name, 1 fs, 2 target, 3 software */
	const char *value;
	bool ok;
};

static const struct text_case text_cases[] = {
    {"name with newline", 0, "oss1\nfake log line", false},
    {"name with blank", 0, "oss 1", false},
    {"name with DEL", 0, "oss\x7f", false},
    {"name with high byte", 0, "oss\xc3\xa9", false},
    {"fs with newline", 1, "scr\natch", false},
    {"fs with tab", 1, "scr\tatch", false},
    {"target with newline", 2, "scratch-OST0000\n", false},
    {"target with escape", 2, "\x1b[31mscratch-OST0000", false},
    {"software with newline", 3, "lharvestd\n0.1", false},
    {"software with blank", 3, "lharvestd 0.1.0", true},
    {"plain name", 0, "oss-1.example.org", true},
};

START_TEST(hello_text)
{
	const struct text_case *c = &text_cases[_i];
	struct msg_hello *h = malloc(sizeof(*h)), *d = malloc(sizeof(*d));
	struct lh_err err;
	struct wbuf w;
	char *dst;
	size_t size;

	ck_assert(h != NULL && d != NULL);
	fill_hello(h, false);
	switch (c->field) {
	case 0:
		dst = h->name;
		size = sizeof(h->name);
		break;
	case 1:
		dst = h->fs[1];
		size = sizeof(h->fs[1]);
		break;
	case 2:
		dst = h->targets[2].name;
		size = sizeof(h->targets[2].name);
		break;
	default:
		dst = h->software;
		size = sizeof(h->software);
		break;
	}
	(void)snprintf(dst, size, "%s", c->value);
	wbuf_init(&w, 0);
	/* The encoder may refuse it already; if not, the decoder must. */
	if (msg_hello_encode(&w, h) == 0) {
		lh_err_clear(&err);
		if (c->ok) {
			ck_assert_msg(msg_hello_decode(d, w.data, w.len,
			                  &err) == 0,
			    "%s: %s", c->what, err.reason);
			assert_hello_eq(h, d);
		} else {
			ck_assert_msg(msg_hello_decode(d, w.data, w.len,
			                  &err) == -EBADMSG,
			    "%s: accepted", c->what);
		}
	} else {
		ck_assert_msg(!c->ok, "%s: not encoded", c->what);
	}
	wbuf_free(&w);
	free(h);
	free(d);
}
END_TEST

START_TEST(bye_text)
{
	struct msg_bye b, d;
	struct wbuf w;

	memset(&b, 0, sizeof(b));
	(void)snprintf(b.text, sizeof(b.text), "bad MAC\nfake log line");
	wbuf_init(&w, 0);
	if (msg_bye_encode(&w, &b) == 0)
		ck_assert_int_eq(msg_bye_decode(&d, w.data, w.len, NULL),
		    -EBADMSG);
	wbuf_free(&w);
}
END_TEST

/* ---- ACK, BYE ----------------------------------------------------- */

static const struct msg_ack acks[] = {
    {MSG_ACK_HELLO, 1, 0, 1718000000000000000ull},
    {MSG_ACK_SWEEP, 2, 1, 1},
    {MSG_ACK_DUPLICATE, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {MSG_ACK_SWEEP, 0, 0, 0},
};

static int
ack_decode_any(const uint8_t *p, size_t n, struct lh_err *err)
{
	struct msg_ack m;

	return msg_ack_decode(&m, p, n, err);
}

START_TEST(ack)
{
	const struct msg_ack *a = &acks[_i];
	struct msg_ack d;
	struct lh_err err;
	struct wbuf w;

	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_ack_encode(&w, a), 0);
	memset(&d, 0x5a, sizeof(d));
	lh_err_clear(&err);
	ck_assert_msg(msg_ack_decode(&d, w.data, w.len, &err) == 0, "%s",
	    err.reason);
	ck_assert_uint_eq(d.kind, a->kind);
	ck_assert_uint_eq(d.seq, a->seq);
	ck_assert_uint_eq(d.batch, a->batch);
	ck_assert_uint_eq(d.time_ns, a->time_ns);
	assert_strict("ACK", w.data, w.len, ack_decode_any);
	wbuf_free(&w);
}
END_TEST

static int
bye_decode_any(const uint8_t *p, size_t n, struct lh_err *err)
{
	struct msg_bye m;

	return msg_bye_decode(&m, p, n, err);
}

START_TEST(bye)
{
	struct msg_bye b, d;
	struct lh_err err;
	struct wbuf w;

	memset(&b, 0, sizeof(b));
	b.reason = (uint8_t)_i;
	if (_i == 1)
		(void)snprintf(b.text, sizeof(b.text), "reloading");
	if (_i == 2)
		memset(b.text, 'x', MSG_BYE_TEXT_MAX - 1);
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_bye_encode(&w, &b), 0);
	memset(&d, 0x5a, sizeof(d));
	lh_err_clear(&err);
	ck_assert_msg(msg_bye_decode(&d, w.data, w.len, &err) == 0, "%s",
	    err.reason);
	ck_assert_uint_eq(d.reason, b.reason);
	ck_assert_str_eq(d.text, b.text);
	assert_strict("BYE", w.data, w.len, bye_decode_any);
	wbuf_free(&w);
}
END_TEST

/* ---- SWEEP -------------------------------------------------------- */

struct got_rec {
	uint16_t fs;
	char nid[NID_STR_MAX];
	struct iocount d;
	uint64_t span_us;
	uint64_t cspan_us[MSG_NCOUNTERS];
	bool has_cspan;
	struct mdops ops; /* zeros: none */
};

struct got {
	size_t n, cap;
	struct got_rec *r;
	int stop_at; /* return 99 at this record (1-based); 0 = never */
};

static int
collect_cb(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	struct got *g = arg;
	struct got_rec *gr;

	ck_assert_uint_lt(r->fs, h->nfs);
	ck_assert_ptr_nonnull(r->nid);
	ck_assert_uint_lt(strlen(r->nid), NID_STR_MAX);
	if (g->n == g->cap) {
		g->cap = g->cap > 0 ? 2 * g->cap : 64;
		g->r = realloc(g->r, g->cap * sizeof(*g->r));
		ck_assert_ptr_nonnull(g->r);
	}
	gr = &g->r[g->n++];
	gr->fs = r->fs;
	memcpy(gr->nid, r->nid, strlen(r->nid) + 1);
	gr->d = r->d;
	gr->span_us = r->span_us;
	memcpy(gr->cspan_us, r->cspan_us, sizeof(gr->cspan_us));
	gr->has_cspan = r->has_cspan;
	memset(&gr->ops, 0, sizeof(gr->ops));
	if (r->ops != NULL) {
		ck_assert(!mdops_is_zero(r->ops));
		gr->ops = *r->ops;
	}
	if (g->stop_at > 0 && (size_t)g->stop_at == g->n)
		return 99;
	return 0;
}

static int
got_cmp(const void *a, const void *b)
{
	const struct got_rec *x = a, *y = b;

	if (x->fs != y->fs)
		return x->fs < y->fs ? -1 : 1;
	return strcmp(x->nid, y->nid);
}

static void
iocount_array(const struct iocount *d, uint64_t v[MSG_NCOUNTERS])
{
	v[0] = d->read_bytes;
	v[1] = d->write_bytes;
	v[2] = d->read_ops;
	v[3] = d->write_ops;
	v[4] = d->oss_ops;
	v[5] = d->mds_ops;
}

/* What the decoder gives back for a record the encoder was handed: a
 * counter's own span when it is present and has one (0 is "the record's
 * span"), else the record's span; has_cspan when one of them differs. */
static void
expect_cspans(const struct msg_rec *r, struct got_rec *g)
{
	uint64_t v[MSG_NCOUNTERS];
	unsigned i;

	iocount_array(&r->d, v);
	g->has_cspan = false;
	for (i = 0; i < MSG_NCOUNTERS; i++) {
		g->cspan_us[i] = v[i] != 0 && r->cspan_us[i] != 0 ?
		    r->cspan_us[i] :
		    r->span_us;
		if (g->cspan_us[i] != r->span_us)
			g->has_cspan = true;
	}
}

static void
got_from_recs(struct got *g, const struct msg_rec *recs, size_t n,
    bool with_ops)
{
	size_t i;

	memset(g, 0, sizeof(*g));
	g->r = calloc(n > 0 ? n : 1, sizeof(*g->r));
	ck_assert_ptr_nonnull(g->r);
	for (i = 0; i < n; i++) {
		g->r[i].fs = recs[i].fs;
		(void)snprintf(g->r[i].nid, NID_STR_MAX, "%s", recs[i].nid);
		g->r[i].d = recs[i].d;
		g->r[i].span_us = recs[i].span_us;
		expect_cspans(&recs[i], &g->r[i]);
		if (recs[i].ops != NULL && with_ops)
			g->r[i].ops = *recs[i].ops;
	}
	g->n = g->cap = n;
}

/* The decoded records are the encoded ones, as a set. */
static void
assert_same_records(struct got *want, struct got *got)
{
	size_t i;

	ck_assert_uint_eq(got->n, want->n);
	if (want->n == 0)
		return;
	qsort(want->r, want->n, sizeof(*want->r), got_cmp);
	qsort(got->r, got->n, sizeof(*got->r), got_cmp);
	for (i = 0; i < want->n; i++) {
		const struct got_rec *a = &want->r[i], *b = &got->r[i];

		ck_assert_msg(a->fs == b->fs && strcmp(a->nid, b->nid) == 0,
		    "record %zu: fs %u %s, expected fs %u %s", i, b->fs, b->nid,
		    a->fs, a->nid);
		ck_assert_msg(memcmp(&a->d, &b->d, sizeof(a->d)) == 0,
		    "record %zu (%s): counters differ", i, a->nid);
		ck_assert_msg(a->span_us == b->span_us,
		    "record %zu (%s): span %llu, expected %llu", i, a->nid,
		    (unsigned long long)b->span_us,
		    (unsigned long long)a->span_us);
		ck_assert_msg(memcmp(&a->ops, &b->ops, sizeof(a->ops)) == 0,
		    "record %zu (%s): metadata ops differ", i, a->nid);
		ck_assert_msg(a->has_cspan == b->has_cspan,
		    "record %zu (%s): has_cspan %d, expected %d", i, a->nid,
		    b->has_cspan, a->has_cspan);
		for (unsigned c = 0; c < MSG_NCOUNTERS; c++)
			ck_assert_msg(a->cspan_us[c] == b->cspan_us[c],
			    "record %zu (%s): counter %u span %llu, "
			    "expected %llu",
			    i, a->nid, c, (unsigned long long)b->cspan_us[c],
			    (unsigned long long)a->cspan_us[c]);
	}
}

/* The records of st, as msg_sweep_decode() would hand them out, into g. */
static void
stage_collect(const struct msg_sweep *h, const struct msg_stage *st,
    struct got *g)
{
	size_t k, i;

	for (k = 0; k < st->ngroups; k++) {
		const struct msg_sgroup *gr = &st->groups[k];

		ck_assert_uint_gt(gr->n, 0);
		ck_assert(gr->dropped == ((h->fs_dropped >> gr->fs & 1) != 0));
		for (i = gr->first;
		     i < (size_t)gr->first + gr->n && !gr->dropped; i++) {
			char nid[NID_STR_MAX];
			struct msg_rec rec;
			struct mdops ops;

			msg_stage_rec(st, gr, i, &rec, nid, &ops);
			ck_assert_int_eq(collect_cb(g, h, &rec), 0);
		}
	}
}

/*
 * msg_sweep_stage(), the one-pass decoder, gives what msg_sweep_decode()
 * does: the same return and reason, the same header and counts, the
 * same records in the same order.  Called wherever these tests decode.
 */
static void
stage_agrees(const uint8_t *p, size_t n)
{
	struct msg_sweep a, b;
	struct lh_err ea, eb;
	struct msg_stage st;
	struct got ga, gb;
	size_t i;
	int ra;

	memset(&ga, 0, sizeof(ga));
	memset(&gb, 0, sizeof(gb));
	memset(&st, 0, sizeof(st));
	lh_err_clear(&ea);
	lh_err_clear(&eb);
	ra = msg_sweep_decode(&a, p, n, collect_cb, &ga, &ea);
	ck_assert_int_eq(msg_sweep_stage(&b, p, n, &st, &eb), ra);
	ck_assert_str_eq(eb.reason, ea.reason);
	if (ra == 0) {
		ck_assert(a.batch == b.batch &&
		    a.first_sweep == b.first_sweep &&
		    a.start_ns == b.start_ns && a.span_us == b.span_us);
		ck_assert(
		    a.nfs == b.nfs && a.ops == b.ops && a.nrecs == b.nrecs);
		for (i = 0; i < a.nfs; i++)
			ck_assert_str_eq(a.fs[i], b.fs[i]);
		ck_assert(a.fs_dropped == b.fs_dropped &&
		    a.ndropped == b.ndropped &&
		    a.nops_dropped == b.nops_dropped);
		ck_assert_uint_eq(st.nrecs, a.nrecs);
		stage_collect(&b, &st, &gb);
		ck_assert_uint_eq(gb.n, ga.n);
		for (i = 0; i < ga.n; i++)
			ck_assert_msg(ga.r[i].fs == gb.r[i].fs &&
			        strcmp(ga.r[i].nid, gb.r[i].nid) == 0,
			    "record %zu: %s, staged %s", i, ga.r[i].nid,
			    gb.r[i].nid);
		assert_same_records(&ga, &gb);
	}
	free(ga.r);
	free(gb.r);
	msg_stage_free(&st);
}

static void
fill_sweep_hdr(struct msg_sweep *h, size_t nfs)
{
	static const char *const fss[] = {"scratch", "home", "proj",
	    "fifteen-chars-x"};
	size_t i;

	memset(h, 0, sizeof(*h));
	h->batch = 7;
	h->first_sweep = 1718000000;
	h->start_ns = 1717999990000000000ull;
	h->span_us = 10000000;
	h->nfs = (uint16_t)nfs;
	for (i = 0; i < nfs; i++)
		(void)snprintf(h->fs[i], MSG_FS_MAX, "%s", fss[i]);
}

/* Records over several filesystems and networks. */
static const struct msg_rec mixed_recs[] = {
    {0, "10.1.2.3@o2ib", {104857600, 52428800, 100, 50, 1150, 0}, 0, {0}, false,
        NULL},
    {0, "10.1.2.4@o2ib", {1, 2, 3, 4, 5, 6}, 0, {0}, false, NULL},
    {0, "10.1.2.200@o2ib", {0, 0, 0, 0, 0, 0}, 0, {0}, false, NULL},
    {0, "10.2.0.1@o2ib2", {0, 4096, 0, 1, 1, 0}, 0, {0}, false, NULL},
    {0, "192.168.0.4@tcp102", {10, 20, 30, 40, 50, 60}, 0, {0}, false, NULL},
    {0, "27@gni",
        {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
            UINT64_MAX},
        0, {0}, false, NULL},
    {0, "4294967295@gni", {1, 0, 1, 0, 1, 0}, 0, {0}, false, NULL},
    {0, "0@gni", {0, 1, 0, 1, 0, 1}, 0, {0}, false, NULL},
    {0, "2001:db8:10::17@tcp", {7, 7, 7, 7, 7, 7}, 0, {0}, false, NULL},
    {0, "::1@tcp", {8, 8, 8, 8, 8, 8}, 0, {0}, false, NULL},
    {0, "010.1.2.3@o2ib", {9, 9, 9, 9, 9, 9}, 0, {0}, false, NULL},
    {0, "weird<x>@<1:2>", {1, 1, 1, 1, 1, 1}, 0, {0}, false, NULL},
    {1, "10.1.2.3@o2ib", {5, 6, 7, 8, 9, 10}, 4000000, {0}, false, NULL},
    {1, "10.1.2.4@o2ib", {0, 0, 0, 0, 0, 0}, UINT32_MAX, {0}, false, NULL},
    {1, "27@gni", {1ull << 63, 1ull << 62, 1, 2, 3, 4}, 1, {0}, false, NULL},
    {2, "192.168.0.4@tcp102", {0, 0, 0, 0, 0, 1}, 0, {0}, false, NULL},
    {2, "2001:db8:10::17@tcp", {UINT64_MAX, 0, 0, 0, 0, 0}, 20000000, {0},
        false, NULL},
    {3, "10.1.2.3@o2ib", {3, 3, 3, 3, 3, 3}, 0, {0}, false, NULL},
    /* The decoder prints IPv4 and numbered NIDs itself: the extremes. */
    {3, "0.0.0.0@o2ib", {1, 0, 0, 0, 0, 0}, 0, {0}, false, NULL},
    {3, "255.255.255.255@o2ib", {0, 1, 0, 0, 0, 0}, 0, {0}, false, NULL},
    {3, "100.20.3.99@tcp", {0, 0, 1, 0, 0, 0}, 0, {0}, false, NULL},
};

/* Encode recs (a copy: the encoder sorts), decode, compare. */
static void
sweep_round_trip(const char *what, const struct msg_sweep *h,
    const struct msg_rec *src, size_t n, struct wbuf *w)
{
	struct msg_rec *recs = calloc(n > 0 ? n : 1, sizeof(*recs));
	struct got want, got;
	struct msg_sweep d;
	struct lh_err err;
	size_t i;

	ck_assert_ptr_nonnull(recs);
	if (n > 0)
		memcpy(recs, src, n * sizeof(*recs));
	got_from_recs(&want, src, n, h->ops);
	ck_assert_msg(msg_sweep_encode(w, h, recs, n) == 0, "%s: encode", what);
	stage_agrees(w->data, w->len);
	memset(&got, 0, sizeof(got));
	memset(&d, 0x5a, sizeof(d));
	lh_err_clear(&err);
	ck_assert_msg(msg_sweep_decode(&d, w->data, w->len, collect_cb, &got,
	                  &err) == 0,
	    "%s: %s", what, err.reason);
	ck_assert_uint_eq(d.batch, h->batch);
	ck_assert_uint_eq(d.first_sweep, h->first_sweep);
	ck_assert_uint_eq(d.start_ns, h->start_ns);
	ck_assert_uint_eq(d.span_us, h->span_us);
	ck_assert_uint_eq(d.nfs, h->nfs);
	for (i = 0; i < h->nfs; i++)
		ck_assert_str_eq(d.fs[i], h->fs[i]);
	ck_assert_uint_eq(d.nrecs, n);
	assert_same_records(&want, &got);
	free(want.r);
	free(got.r);
	free(recs);
}

/* A span of 0 in the table means "the default": fill it in. */
static struct msg_rec *
mixed_with_spans(const struct msg_sweep *h, size_t *ret_n)
{
	size_t n = sizeof(mixed_recs) / sizeof(mixed_recs[0]), i;
	struct msg_rec *r = malloc(sizeof(mixed_recs));

	ck_assert_ptr_nonnull(r);
	memcpy(r, mixed_recs, sizeof(mixed_recs));
	for (i = 0; i < n; i++)
		if (r[i].span_us == 0)
			r[i].span_us = h->span_us;
	*ret_n = n;
	return r;
}

static int
sweep_decode_any(const uint8_t *p, size_t n, struct lh_err *err)
{
	struct got g;
	struct msg_sweep h;
	int rc;

	stage_agrees(p, n);
	memset(&g, 0, sizeof(g));
	rc = msg_sweep_decode(&h, p, n, collect_cb, &g, err);
	free(g.r);
	return rc;
}

START_TEST(sweep_mixed)
{
	struct msg_sweep h;
	struct msg_rec *recs;
	struct wbuf w;
	size_t n;

	fill_sweep_hdr(&h, 4);
	recs = mixed_with_spans(&h, &n);
	wbuf_init(&w, 0);
	sweep_round_trip("mixed", &h, recs, n, &w);
	assert_strict("SWEEP", w.data, w.len, sweep_decode_any);
	(void)printf("mixed SWEEP: %zu records in %zu bytes\n", n, w.len);

	/* Extreme header values. */
	wbuf_reset(&w);
	h.batch = UINT64_MAX;
	h.first_sweep = UINT64_MAX;
	h.start_ns = UINT64_MAX;
	h.span_us = INT64_MAX;
	sweep_round_trip("extreme header", &h, recs, n, &w);
	wbuf_reset(&w);
	h.batch = 1;
	h.first_sweep = 0;
	h.start_ns = 0;
	h.span_us = 0;
	sweep_round_trip("zero header", &h, recs, n, &w);
	wbuf_free(&w);
	free(recs);
}
END_TEST

/* A server with no client: no records, with and without filesystems. */
START_TEST(sweep_empty)
{
	struct msg_sweep h;
	struct wbuf w;

	fill_sweep_hdr(&h, (size_t)_i);
	wbuf_init(&w, 0);
	sweep_round_trip("empty", &h, NULL, 0, &w);
	assert_strict("empty SWEEP", w.data, w.len, sweep_decode_any);
	wbuf_free(&w);
}
END_TEST

/* The most filesystems, each with one record. */
START_TEST(sweep_many_fs)
{
	struct msg_rec recs[MSG_SWEEP_FS_MAX];
	struct msg_sweep h;
	struct wbuf w;
	size_t i;

	memset(&h, 0, sizeof(h));
	h.batch = 1;
	h.span_us = 1000000;
	h.nfs = MSG_SWEEP_FS_MAX;
	memset(recs, 0, sizeof(recs));
	for (i = 0; i < MSG_SWEEP_FS_MAX; i++) {
		(void)snprintf(h.fs[i], MSG_FS_MAX, "fs%02u-%010u",
		    (unsigned)(i % 100), (unsigned)i);
		recs[i].fs = (uint16_t)(MSG_SWEEP_FS_MAX - 1 - i);
		recs[i].nid = "10.0.0.1@o2ib";
		recs[i].d.read_bytes = i;
		recs[i].span_us = h.span_us;
	}
	wbuf_init(&w, 0);
	sweep_round_trip("64 filesystems", &h, recs, MSG_SWEEP_FS_MAX, &w);
	wbuf_free(&w);
}
END_TEST

struct enc_bad {
	const char *what;
	uint16_t fs[2];
	const char *nid[2];
	size_t n;
};

static const struct enc_bad enc_bads[] = {
    {"duplicate", {0, 0}, {"10.1.2.3@o2ib", "10.1.2.3@o2ib"}, 2},
    {"duplicate IPv6", {1, 1}, {"::1@tcp", "::1@tcp"}, 2},
    {"duplicate gni", {1, 1}, {"27@gni", "27@gni"}, 2},
    {"duplicate string", {0, 0}, {"weird<x>@<1:2>", "weird<x>@<1:2>"}, 2},
    {"fs out of range", {0, 2}, {"10.1.2.3@o2ib", "10.1.2.4@o2ib"}, 2},
    {"fs far out of range", {65535, 0}, {"10.1.2.3@o2ib", "1@gni"}, 2},
    {"NID without @", {0, 0}, {"10.1.2.3", "10.1.2.4@o2ib"}, 2},
    {"NID without net", {0, 0}, {"10.1.2.4@o2ib", "10.1.2.3@"}, 2},
};

START_TEST(sweep_encode_rejects)
{
	const struct enc_bad *c = &enc_bads[_i];
	struct msg_rec recs[2];
	struct msg_sweep h;
	struct wbuf w;
	size_t i;

	fill_sweep_hdr(&h, 2);
	memset(recs, 0, sizeof(recs));
	for (i = 0; i < c->n; i++) {
		recs[i].fs = c->fs[i];
		recs[i].nid = c->nid[i];
		recs[i].d.read_bytes = i + 1;
		recs[i].span_us = h.span_us;
	}
	wbuf_init(&w, 0);
	ck_assert_msg(msg_sweep_encode(&w, &h, recs, c->n) == -EINVAL,
	    "%s: not refused with -EINVAL", c->what);
	wbuf_free(&w);
}
END_TEST

/* A callback that says stop ends the decoding with its value. */
START_TEST(sweep_cb_stop)
{
	struct msg_sweep h, d;
	struct msg_rec *recs;
	struct got got;
	struct wbuf w;
	size_t n;

	fill_sweep_hdr(&h, 4);
	recs = mixed_with_spans(&h, &n);
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_sweep_encode(&w, &h, recs, n), 0);
	memset(&got, 0, sizeof(got));
	got.stop_at = 2;
	ck_assert_int_eq(msg_sweep_decode(&d, w.data, w.len, collect_cb, &got,
	                     NULL),
	    99);
	ck_assert_uint_eq(got.n, 2);
	free(got.r);
	wbuf_free(&w);
	free(recs);
}
END_TEST

/* ---- SWEEP counter spans (mask bit 7) ----------------------------- */

#define I64MAX ((uint64_t)INT64_MAX)

/* A span of 0 for the record means "the header's"; a counter span of 0
 * means "the record's" (as for an encoder's caller). */
static const struct msg_rec cspan_recs[] = {
    /* every counter, adjustments up, down, none (0 and explicit), to 1
     * and to 2^63-1 */
    {0, "10.1.2.3@o2ib", {104857600, 52428800, 100, 50, 1150, 7}, 0,
        {10000100, 9999900, 0, 10000000, 1, I64MAX}, false, NULL},
    /* absent counters' spans are ignored, present ones differ */
    {0, "10.1.2.4@o2ib", {0, 4096, 0, 1, 1, 0}, 0, {5, 9000000, 7, 0, 0, 8},
        false, NULL},
    /* every span equal to the record's (its own, not the header's) */
    {0, "10.1.2.5@o2ib", {1, 1, 1, 1, 1, 1}, 20000000,
        {20000000, 20000000, 20000000, 20000000, 20000000, 20000000}, false,
        NULL},
    /* only an absent counter differs: no bit 7 */
    {0, "10.1.2.6@o2ib", {1, 0, 0, 0, 0, 0}, 0, {0, 3, 3, 3, 3, 3}, false,
        NULL},
    /* huge record span, huge negative adjustments */
    {0, "27@gni",
        {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
            UINT64_MAX},
        I64MAX, {1, 0, I64MAX - 1, I64MAX, 2, 3}, false, NULL},
    /* tiny record span, the largest positive adjustment */
    {0, "28@gni", {0, 0, 0, 0, 0, 7}, 1, {0, 0, 0, 0, 0, I64MAX}, false, NULL},
    /* idle: nothing to carry a span */
    {0, "29@gni", {0, 0, 0, 0, 0, 0}, 0, {1, 2, 3, 4, 5, 6}, false, NULL},
    {1, "2001:db8::1@tcp", {1, 2, 3, 0, 0, 0}, 0, {0, 0, 20000000, 0, 0, 0},
        false, NULL},
    {1, "10.1.2.3@o2ib", {0, 0, 0, 0, 9, 0}, 4000000, {0, 0, 0, 0, 0, 0}, false,
        NULL},
};
#define NCSPAN (sizeof(cspan_recs) / sizeof(cspan_recs[0]))

static struct msg_rec *
cspan_with_spans(const struct msg_sweep *h)
{
	struct msg_rec *r = malloc(sizeof(cspan_recs));
	size_t i;

	ck_assert_ptr_nonnull(r);
	memcpy(r, cspan_recs, sizeof(cspan_recs));
	for (i = 0; i < NCSPAN; i++)
		if (r[i].span_us == 0)
			r[i].span_us = h->span_us;
	return r;
}

START_TEST(sweep_cspans)
{
	static const uint64_t hspans[] = {10000000, I64MAX, 0, 1};
	struct msg_sweep h;
	struct msg_rec *recs;
	struct got want;
	struct wbuf w;
	size_t i, with = 0;

	fill_sweep_hdr(&h, 2);
	h.span_us = hspans[_i];
	recs = cspan_with_spans(&h);
	got_from_recs(&want, recs, NCSPAN, false);
	for (i = 0; i < NCSPAN; i++)
		with += want.r[i].has_cspan ? 1 : 0;
	free(want.r);
	/* With the usual header: records 1, 2, 5, 6 and 8 carry spans. */
	if (_i == 0)
		ck_assert_uint_eq(with, 5);
	ck_assert_uint_gt(with, 0);
	wbuf_init(&w, 0);
	sweep_round_trip("counter spans", &h, recs, NCSPAN, &w);
	assert_strict("SWEEP with counter spans", w.data, w.len,
	    sweep_decode_any);
	(void)printf("SWEEP with counter spans (header span %llu): %zu "
	             "records, %zu with spans, %zu bytes\n",
	    (unsigned long long)h.span_us, NCSPAN, with, w.len);
	wbuf_free(&w);
	free(recs);
}
END_TEST

/* The bytes of bit 7, worked out by hand: 1@gni reads 5 bytes and writes
 * 3 times; read_bytes over 10,000,100 us, write_ops over the default
 * 10,000,000.  Record: gap 01, mask 89 (read_bytes, write_ops, counter
 * spans), 05, 03, zigzag(+100) = c8 01, zigzag(0) = 00. */
START_TEST(sweep_cspan_bytes)
{
	static const uint8_t tail[] = {0x00, 0x03, 'g', 'n', 'i', 0x02, 0x01,
	    0x01, 0x89, 0x05, 0x03, 0xc8, 0x01, 0x00};
	struct msg_rec rec;
	struct msg_sweep h;
	struct wbuf w;

	fill_sweep_hdr(&h, 1);
	memset(&rec, 0, sizeof(rec));
	rec.nid = "1@gni";
	rec.d.read_bytes = 5;
	rec.d.write_ops = 3;
	rec.span_us = h.span_us;
	rec.cspan_us[0] = 10000100;
	rec.has_cspan = false; /* the encoder ignores it */
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_sweep_encode(&w, &h, &rec, 1), 0);
	ck_assert_uint_ge(w.len, sizeof(tail));
	ck_assert(
	    memcmp(w.data + w.len - sizeof(tail), tail, sizeof(tail)) == 0);
	wbuf_free(&w);
}
END_TEST

/* The encoder refuses a present counter's span above 2^63-1, and does
 * not look at an absent counter's. */
START_TEST(sweep_cspan_encode_range)
{
	struct msg_rec rec;
	struct msg_sweep h;
	struct wbuf w;

	fill_sweep_hdr(&h, 1);
	memset(&rec, 0, sizeof(rec));
	rec.nid = "1@gni";
	rec.d.write_bytes = 5;
	rec.span_us = h.span_us;
	rec.cspan_us[1] = I64MAX + 1;
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_sweep_encode(&w, &h, &rec, 1), -EINVAL);
	rec.cspan_us[1] = UINT64_MAX;
	ck_assert_int_eq(msg_sweep_encode(&w, &h, &rec, 1), -EINVAL);
	rec.cspan_us[1] = 0;
	rec.cspan_us[0] = UINT64_MAX; /* read_bytes is absent */
	ck_assert_int_eq(msg_sweep_encode(&w, &h, &rec, 1), 0);
	wbuf_free(&w);
}
END_TEST

/* One record, 27@gni on "scratch", written by hand: mask, counters, then
 * the zigzags (the record's span adjustment first when bit 6 is set). */
struct raw_rec {
	const char *what;
	uint64_t hspan; /* the header's default span */
	uint8_t mask;
	size_t nv;
	uint64_t v[MSG_NCOUNTERS];
	size_t nz;
	int64_t z[MSG_NCOUNTERS + 1];
	bool ok;
	uint64_t want[MSG_NCOUNTERS]; /* decoded counter spans when ok */
};

static const struct raw_rec raw_recs[] = {
    {"bit 7 alone", 10, 0x80, 0, {0}, 0, {0}, false, {0}},
    {"bit 7 alone, an adjustment after it", 10, 0x80, 0, {0}, 1, {5}, false,
        {0}},
    {"bits 6 and 7 without a counter", 10, 0xc0, 0, {0}, 1, {5}, false, {0}},
    {"bits 6 and 7 without a counter, two adjustments", 10, 0xc0, 0, {0}, 2,
        {5, 1}, false, {0}},
    {"one counter, adjustment 0", 10, 0x81, 1, {5}, 1, {0}, false, {0}},
    {"two counters, adjustments 0", 10, 0x83, 2, {5, 6}, 2, {0, 0}, false, {0}},
    {"all six, adjustments 0", 10, 0xbf, 6, {1, 2, 3, 4, 5, 6}, 6,
        {0, 0, 0, 0, 0, 0}, false, {0}},
    {"bits 6 and 7, counter adjustment 0", 10, 0xc1, 1, {5}, 2, {4, 0}, false,
        {0}},
    {"counter span below 0", 10, 0x81, 1, {5}, 1, {-11}, false, {0}},
    {"counter adjustment INT64_MIN", 10, 0x81, 1, {5}, 1, {INT64_MIN}, false,
        {0}},
    {"counter span above 2^63-1", I64MAX, 0x81, 1, {5}, 1, {1}, false, {0}},
    {"counter span above 2^63-1 from 1", 1, 0x81, 1, {5}, 1, {INT64_MAX}, false,
        {0}},
    {"counter span below 0 from the record's span", 10, 0xc1, 1, {5}, 2,
        {-5, -6}, false, {0}},
    {"counter span above 2^63-1 from the record's span", 1, 0xc1, 1, {5}, 2,
        {INT64_MAX - 1, 1}, false, {0}},
    {"a counter span missing", 10, 0x83, 2, {5, 6}, 1, {3}, false, {0}},
    {"counter span 0 from the record's span", 10, 0xc1, 1, {5}, 2, {-5, -5},
        false, {0}},
    {"counter span 0 from 2^63-1", I64MAX, 0x81, 1, {5}, 1, {-INT64_MAX}, false,
        {0}},
    {"counter span 0 beside one that differs", 10, 0x83, 2, {5, 6}, 2, {3, -10},
        false, {0}},
    {"counter span 1 from the record's span", 10, 0xc1, 1, {5}, 2, {-5, -4},
        true, {1, 5, 5, 5, 5, 5}},
    {"counter span 0 as the record's span 0", 0, 0x83, 2, {5, 6}, 2, {0, 5},
        true, {0, 5, 0, 0, 0, 0}},
    {"record span 0, counter span 1", 10, 0xc3, 2, {5, 6}, 3, {-10, 0, 1}, true,
        {0, 1, 0, 0, 0, 0}},
    {"counter span 2^63-1", 1, 0x81, 1, {5}, 1, {INT64_MAX - 1}, true,
        {I64MAX, 1, 1, 1, 1, 1}},
    {"counter span 1 from 2^63-1", I64MAX, 0x81, 1, {5}, 1, {-INT64_MAX + 1},
        true, {1, I64MAX, I64MAX, I64MAX, I64MAX, I64MAX}},
    {"one of two adjusted", 10, 0x83, 2, {5, 6}, 2, {0, 3}, true,
        {10, 13, 10, 10, 10, 10}},
    {"mds_ops alone", 10, 0xa0, 1, {9}, 1, {-9}, true, {10, 10, 10, 10, 10, 1}},
    {"oss_ops and mds_ops, bit 6", 10, 0xf0, 2, {9, 9}, 3, {90, -1, 1}, true,
        {100, 100, 100, 100, 99, 101}},
};

static void
raw_sweep(struct wbuf *w, const struct raw_rec *c)
{
	size_t i;

	(void)wbuf_put_be64(w, 1);
	(void)wbuf_put_be64(w, 2);
	(void)wbuf_put_be64(w, 3);
	(void)wbuf_put_be64(w, c->hspan);
	(void)wbuf_put_varint(w, 1);
	(void)wbuf_put_str8(w, "scratch");
	(void)wbuf_put_varint(w, 1);
	(void)wbuf_put_varint(w, 0);
	(void)wbuf_put_str8(w, "gni");
	(void)wbuf_put_u8(w, 2);
	(void)wbuf_put_varint(w, 1);
	(void)wbuf_put_varint(w, 27);
	(void)wbuf_put_u8(w, c->mask);
	for (i = 0; i < c->nv; i++)
		(void)wbuf_put_varint(w, c->v[i]);
	for (i = 0; i < c->nz; i++)
		(void)wbuf_put_zigzag(w, c->z[i]);
	ck_assert_int_eq(wbuf_status(w), 0);
}

START_TEST(sweep_cspan_decode)
{
	const struct raw_rec *c = &raw_recs[_i];
	struct msg_sweep h;
	struct msg_rec rec;
	struct lh_err err;
	struct got got;
	struct wbuf w, w2;
	int rc;

	wbuf_init(&w, 0);
	raw_sweep(&w, c);
	stage_agrees(w.data, w.len);
	memset(&got, 0, sizeof(got));
	lh_err_clear(&err);
	rc = msg_sweep_decode(&h, w.data, w.len, collect_cb, &got, &err);
	if (!c->ok) {
		ck_assert_msg(rc == -EBADMSG, "%s: %d, expected -EBADMSG",
		    c->what, rc);
		ck_assert_msg(err.reason[0] != '\0', "%s: no reason", c->what);
		ck_assert_msg(got.n == 0, "%s: a callback before the refusal",
		    c->what);
		goto out;
	}
	ck_assert_msg(rc == 0, "%s: %s", c->what, err.reason);
	ck_assert_uint_eq(got.n, 1);
	ck_assert(got.r[0].has_cspan);
	for (unsigned i = 0; i < MSG_NCOUNTERS; i++)
		ck_assert_msg(got.r[0].cspan_us[i] == c->want[i],
		    "%s: counter %u span %llu, expected %llu", c->what, i,
		    (unsigned long long)got.r[0].cspan_us[i],
		    (unsigned long long)c->want[i]);
	assert_strict(c->what, w.data, w.len, sweep_decode_any);
	/* Canonical: what was decoded encodes to the same bytes. */
	memset(&rec, 0, sizeof(rec));
	rec.nid = got.r[0].nid;
	rec.d = got.r[0].d;
	rec.span_us = got.r[0].span_us;
	memcpy(rec.cspan_us, got.r[0].cspan_us, sizeof(rec.cspan_us));
	wbuf_init(&w2, 0);
	ck_assert_int_eq(msg_sweep_encode(&w2, &h, &rec, 1), 0);
	ck_assert_msg(w2.len == w.len && memcmp(w2.data, w.data, w.len) == 0,
	    "%s: encoded again differently", c->what);
	wbuf_free(&w2);
out:
	free(got.r);
	wbuf_free(&w);
}
END_TEST

/* ---- SWEEP size --------------------------------------------------- */

#define CLUSTER_CLIENTS 10000

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* 10,000 clients 10.1.x.y@o2ib on one filesystem; busy: about 100 MB
 * read and written per interval and thousands of operations. */
static double
cluster_sweep(bool busy)
{
	static char nids[CLUSTER_CLIENTS][20];
	struct msg_rec *recs = calloc(CLUSTER_CLIENTS, sizeof(*recs));
	uint64_t seed = 0x2545f4914f6cdd1dull;
	struct msg_sweep h;
	struct wbuf w;
	double per_rec;
	size_t i;

	ck_assert_ptr_nonnull(recs);
	fill_sweep_hdr(&h, 1);
	for (i = 0; i < CLUSTER_CLIENTS; i++) {
		struct iocount *d = &recs[i].d;

		(void)snprintf(nids[i], sizeof(nids[i]), "10.1.%u.%u@o2ib",
		    (unsigned)(i / 250) & 0xff, (unsigned)(i % 250 + 1));
		recs[i].fs = 0;
		recs[i].nid = nids[i];
		recs[i].span_us = h.span_us;
		if (!busy)
			continue;
		d->read_bytes = 50000000 + xorshift(&seed) % 100000000;
		d->write_bytes = 50000000 + xorshift(&seed) % 100000000;
		d->read_ops = d->read_bytes >> 20;
		d->write_ops = d->write_bytes >> 20;
		d->oss_ops =
		    d->read_ops + d->write_ops + xorshift(&seed) % 3000;
		d->mds_ops = 500 + xorshift(&seed) % 5000;
	}
	/* Shuffle: the encoder must not depend on the order it is given. */
	for (i = CLUSTER_CLIENTS - 1; i > 0; i--) {
		size_t j = (size_t)(xorshift(&seed) % (i + 1));
		struct msg_rec t = recs[i];

		recs[i] = recs[j];
		recs[j] = t;
	}
	wbuf_init(&w, 0);
	sweep_round_trip(busy ? "busy cluster" : "idle cluster", &h, recs,
	    CLUSTER_CLIENTS, &w);
	per_rec = (double)w.len / CLUSTER_CLIENTS;
	(void)printf("SWEEP of %d clients, %s: %zu bytes, %.2f bytes/record\n",
	    CLUSTER_CLIENTS, busy ? "busy" : "idle", w.len, per_rec);
	wbuf_free(&w);
	free(recs);
	return per_rec;
}

START_TEST(sweep_size)
{
	double busy = cluster_sweep(true);
	double idle = cluster_sweep(false);

	ck_assert_msg(busy < 24.0, "busy SWEEP: %.2f bytes/record", busy);
	ck_assert_msg(idle <= busy, "idle SWEEP: %.2f bytes/record", idle);
}
END_TEST

/* ---- SWEEP metadata-op section ------------------------------------- */

/* Records with metadata op counts: every op, large counts, the first
 * and the last record of the encoding, and one whose counts are all 0
 * (sent as none). */
START_TEST(sweep_ops)
{
	static struct mdops all, some, zero;
	struct msg_sweep h, d;
	struct msg_rec *recs;
	struct lh_err err;
	struct wbuf w, plain;
	struct got got;
	size_t n, cut, i;
	int rc;

	for (i = 0; i < MDOPS_N; i++)
		all.v[i] = i == MDOPS_GETATTR ? UINT64_MAX : 1000 + i;
	some.v[MDOPS_OPEN] = 17;
	some.v[MDOPS_CLOSE] = 16;
	some.v[MDOPS_FALLOCATE] = 1;
	fill_sweep_hdr(&h, 4);
	recs = mixed_with_spans(&h, &n);
	recs[0].ops = &some;    /* 10.1.2.3@o2ib of fs 0: first */
	recs[5].ops = &all;     /* 27@gni */
	recs[2].ops = &zero;    /* all zero: no op record */
	recs[n - 1].ops = &all; /* fs 3: last */
	recs[n - 2].ops = &some;
	/* The counts are part of mds_ops, never above it (a receiver drops
	 * them otherwise): give these records room for them. */
	recs[0].d.mds_ops = recs[5].d.mds_ops = UINT64_MAX;
	recs[n - 1].d.mds_ops = recs[n - 2].d.mds_ops = UINT64_MAX;
	wbuf_init(&plain, 0);
	ck_assert_int_eq(msg_sweep_encode(&plain, &h, recs, n), 0);
	wbuf_init(&w, 0);
	h.ops = true;
	sweep_round_trip("metadata ops", &h, recs, n, &w);
	ck_assert_uint_gt(w.len, plain.len);
	ck_assert_mem_eq(w.data, plain.data, plain.len);
	(void)printf("SWEEP with metadata ops: %zu bytes, %zu without\n", w.len,
	    plain.len);

	/* Every cut fails but the one where the section starts: a SWEEP
	 * without it (the frame's MAC covers the payload's length). */
	for (cut = 0; cut <= w.len; cut++) {
		uint8_t *buf = malloc(cut + 1);

		ck_assert_ptr_nonnull(buf);
		memcpy(buf, w.data, cut);
		buf[cut] = 0;
		lh_err_clear(&err);
		stage_agrees(buf, cut == w.len ? cut + 1 : cut);
		rc = msg_sweep_decode(&d, buf, cut == w.len ? cut + 1 : cut,
		    NULL, NULL, &err);
		if (cut == plain.len) {
			ck_assert_int_eq(rc, 0);
			ck_assert(!d.ops);
		} else {
			ck_assert_msg(rc == -EBADMSG, "cut to %zu of %zu: %d",
			    cut, w.len, rc);
			ck_assert(err.reason[0] != '\0');
		}
		free(buf);
	}
	ck_assert_int_eq(msg_sweep_decode(&d, w.data, w.len, NULL, NULL, NULL),
	    0);
	ck_assert(d.ops);

	/* No section when no record has counts. */
	recs[0].ops = recs[5].ops = recs[n - 1].ops = recs[n - 2].ops = &zero;
	wbuf_reset(&w);
	ck_assert_int_eq(msg_sweep_encode(&w, &h, recs, n), 0);
	ck_assert_uint_eq(w.len, plain.len);
	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(msg_sweep_decode(&d, w.data, w.len, collect_cb, &got,
	                     NULL),
	    0);
	ck_assert(!d.ops);
	free(got.r);
	wbuf_free(&w);
	wbuf_free(&plain);
	free(recs);
}
END_TEST

/* Hand-made op sections after a SWEEP of three records. */
struct raw_ops {
	const char *what;
	bool ok;
	size_t nb;
	uint8_t b[48];
	uint64_t want_open[3]; /* decoded "open" count per record */
};

static const struct raw_ops raw_ops[] = {
    {"one op, one record", true, 10, {1, 4, 'o', 'p', 'e', 'n', 1, 0, 1, 4},
        {4, 0, 0}},
    {"record 2", true, 10, {1, 4, 'o', 'p', 'e', 'n', 1, 2, 1, 9}, {0, 0, 9}},
    {"two records", true, 13, {1, 4, 'o', 'p', 'e', 'n', 2, 0, 1, 5, 2, 1, 6},
        {5, 0, 6}},
    {"an unknown op is skipped", true, 15,
        {2, 3, 'f', 'o', 'o', 4, 'o', 'p', 'e', 'n', 1, 1, 3, 7, 8}, {0, 8, 0}},
    {"no names", false, 3, {0, 1, 0}, {0}},
    {"65 names", false, 1, {65}, {0}},
    {"empty name", false, 5, {1, 0, 1, 0, 1}, {0}},
    {"name with blank", false, 10, {1, 4, 'o', 'p', ' ', 'n', 1, 0, 1, 1}, {0}},
    {"repeated name", false, 15,
        {2, 4, 'o', 'p', 'e', 'n', 4, 'o', 'p', 'e', 'n', 1, 0, 1, 1}, {0}},
    {"no op records", false, 7, {1, 4, 'o', 'p', 'e', 'n', 0}, {0}},
    {"more op records than records", false, 7, {1, 4, 'o', 'p', 'e', 'n', 4},
        {0}},
    {"index past the records", false, 10,
        {1, 4, 'o', 'p', 'e', 'n', 1, 3, 1, 1}, {0}},
    {"gap 0", false, 13, {1, 4, 'o', 'p', 'e', 'n', 2, 1, 1, 1, 0, 1, 1}, {0}},
    {"gap past the records", false, 13,
        {1, 4, 'o', 'p', 'e', 'n', 2, 1, 1, 1, 2, 1, 1}, {0}},
    {"mask 0", false, 9, {1, 4, 'o', 'p', 'e', 'n', 1, 0, 0}, {0}},
    {"mask beyond the names", false, 10, {1, 4, 'o', 'p', 'e', 'n', 1, 0, 3, 1},
        {0}},
    {"count 0", false, 10, {1, 4, 'o', 'p', 'e', 'n', 1, 0, 1, 0}, {0}},
    {"truncated count", false, 9, {1, 4, 'o', 'p', 'e', 'n', 1, 0, 1}, {0}},
    {"fewer op records than said", false, 10,
        {1, 4, 'o', 'p', 'e', 'n', 2, 0, 1, 5}, {0}},
    {"trailing byte", false, 11, {1, 4, 'o', 'p', 'e', 'n', 1, 0, 1, 5, 0},
        {0}},
};

START_TEST(sweep_ops_decode)
{
	const struct raw_ops *c = &raw_ops[_i];
	static const struct msg_rec three[3] = {
	    {0, "10.0.0.1@o2ib", {0, 0, 0, 0, 0, 20}, 0, {0}, false, NULL},
	    {0, "10.0.0.2@o2ib", {0, 0, 0, 0, 0, 20}, 0, {0}, false, NULL},
	    {0, "10.0.0.3@o2ib", {0, 0, 0, 0, 0, 20}, 0, {0}, false, NULL},
	};
	struct msg_rec recs[3];
	struct msg_sweep h;
	struct lh_err err;
	struct got got;
	struct wbuf w;
	size_t i;
	int rc;

	memcpy(recs, three, sizeof(recs));
	fill_sweep_hdr(&h, 1);
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_sweep_encode(&w, &h, recs, 3), 0);
	(void)wbuf_put(&w, c->b, c->nb);
	stage_agrees(w.data, w.len);
	memset(&got, 0, sizeof(got));
	lh_err_clear(&err);
	rc = msg_sweep_decode(&h, w.data, w.len, collect_cb, &got, &err);
	if (!c->ok) {
		ck_assert_msg(rc == -EBADMSG, "%s: %d", c->what, rc);
		ck_assert_msg(err.reason[0] != '\0', "%s: no reason", c->what);
		ck_assert_uint_eq(got.n, 0);
	} else {
		ck_assert_msg(rc == 0, "%s: %s", c->what, err.reason);
		ck_assert(h.ops);
		ck_assert_uint_eq(got.n, 3);
		for (i = 0; i < 3; i++)
			ck_assert_msg(got.r[i].ops.v[MDOPS_OPEN] ==
			        c->want_open[i],
			    "%s: record %zu", c->what, i);
	}
	free(got.r);
	wbuf_free(&w);
}
END_TEST

/* The example of docs/protocol.md, "Metadata-op section". */
START_TEST(sweep_ops_doc_example)
{
	static const uint8_t tail[] = {0x02, 0x04, 'o', 'p', 'e', 'n', 0x07,
	    'g', 'e', 't', 'a', 't', 't', 'r', 0x02, 0x00, 0x03, 0x03, 0x0c,
	    0x02, 0x01, 0x01};
	struct mdops first, third;
	struct msg_rec recs[3];
	struct msg_sweep h;
	struct wbuf w;

	memset(&first, 0, sizeof(first));
	memset(&third, 0, sizeof(third));
	first.v[MDOPS_OPEN] = 3;
	first.v[MDOPS_GETATTR] = 12;
	third.v[MDOPS_OPEN] = 1;
	memset(recs, 0, sizeof(recs));
	recs[0].nid = "10.0.0.1@o2ib";
	recs[0].d.mds_ops = 15;
	recs[0].ops = &first;
	recs[1].nid = "10.0.0.2@o2ib";
	recs[2].nid = "10.0.0.3@o2ib";
	recs[2].d.mds_ops = 1;
	recs[2].ops = &third;
	fill_sweep_hdr(&h, 1);
	h.ops = true;
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_sweep_encode(&w, &h, recs, 3), 0);
	ck_assert_uint_gt(w.len, sizeof(tail));
	ck_assert_mem_eq(w.data + w.len - sizeof(tail), tail, sizeof(tail));
	wbuf_free(&w);
}
END_TEST

/* ---- strictness (issue 15, items 9, 12 and 14) -------------------- */

/* Roles other than 1-3 are refused, in HELLO and CHALLENGE. */
START_TEST(bad_roles)
{
	static const uint8_t roles[] = {0, 4, 9, 255};
	static struct msg_hello h, hd;
	struct msg_challenge c, cd;
	struct lh_err err;
	struct wbuf w;
	size_t i;

	wbuf_init(&w, 0);
	for (i = 0; i < sizeof(roles); i++) {
		fill_hello(&h, false);
		h.role = roles[i];
		wbuf_reset(&w);
		ck_assert_int_eq(msg_hello_encode(&w, &h), 0);
		lh_err_clear(&err);
		ck_assert_int_eq(msg_hello_decode(&hd, w.data, w.len, &err),
		    -EBADMSG);
		ck_assert_msg(strstr(err.reason, "role") != NULL, "%s",
		    err.reason);
		fill_challenge(&c, "head1");
		c.role = roles[i];
		wbuf_reset(&w);
		ck_assert_int_eq(msg_challenge_encode(&w, &c), 0);
		lh_err_clear(&err);
		ck_assert_int_eq(msg_challenge_decode(&cd, w.data, w.len, &err),
		    -EBADMSG);
		ck_assert_msg(strstr(err.reason, "role") != NULL, "%s",
		    err.reason);
	}
	wbuf_free(&w);
}
END_TEST

/* Filesystem names that cannot be Ganglia metric names, and names given
 * twice, in a HELLO: refused with the name. */
START_TEST(hello_fs_names)
{
	static const char *const bad[] = {"a<b", "a>b", "a\"b", "a&b", "a/b",
	    "a:b", "a'b", "a+b"};
	static struct msg_hello h, d;
	struct lh_err err;
	struct wbuf w;
	size_t i;

	wbuf_init(&w, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert(!msg_fs_name_ok(bad[i]));
		fill_hello(&h, false);
		(void)snprintf(h.fs[1], MSG_FS_MAX, "%s", bad[i]);
		wbuf_reset(&w);
		ck_assert_int_eq(msg_hello_encode(&w, &h), 0);
		lh_err_clear(&err);
		ck_assert_int_eq(msg_hello_decode(&d, w.data, w.len, &err),
		    -EBADMSG);
		ck_assert_msg(strstr(err.reason, bad[i]) != NULL, "%s",
		    err.reason);
	}
	ck_assert(msg_fs_name_ok("scratch_2.a-b"));
	fill_hello(&h, false);
	(void)snprintf(h.fs[2], MSG_FS_MAX, "%s", h.fs[0]);
	wbuf_reset(&w);
	ck_assert_int_eq(msg_hello_encode(&w, &h), 0);
	lh_err_clear(&err);
	ck_assert_int_eq(msg_hello_decode(&d, w.data, w.len, &err), -EBADMSG);
	ck_assert_msg(strstr(err.reason, "named twice") != NULL, "%s",
	    err.reason);
	wbuf_free(&w);
}
END_TEST

/* A SWEEP written by hand: what a hostile or foreign encoder may send. */
struct hand {
	struct wbuf w;
};

static void
hand_begin(struct hand *hd, size_t nfs, const char *const *fs, size_t ngroups)
{
	size_t i;

	wbuf_init(&hd->w, 0);
	(void)wbuf_put_be64(&hd->w, 7);                      /* batch */
	(void)wbuf_put_be64(&hd->w, 1718000000);             /* first sweep */
	(void)wbuf_put_be64(&hd->w, 1717999990000000000ull); /* start */
	(void)wbuf_put_be64(&hd->w, 10000000);               /* span */
	(void)wbuf_put_varint(&hd->w, nfs);
	for (i = 0; i < nfs; i++)
		(void)wbuf_put_str8(&hd->w, fs[i]);
	(void)wbuf_put_varint(&hd->w, ngroups);
}

/* A group of n IPv4 (kind 1) records, addresses given as gaps, each with
 * read_bytes rb. */
static void
hand_group4(struct hand *hd, unsigned fs, const char *net, size_t n,
    const uint32_t *gaps, uint64_t rb)
{
	size_t i;

	(void)wbuf_put_varint(&hd->w, fs);
	(void)wbuf_put_str8(&hd->w, net);
	(void)wbuf_put_u8(&hd->w, NID_KIND_IPV4);
	(void)wbuf_put_varint(&hd->w, n);
	for (i = 0; i < n; i++) {
		(void)wbuf_put_varint(&hd->w, gaps[i]);
		(void)wbuf_put_u8(&hd->w, 0x01);
		(void)wbuf_put_varint(&hd->w, rb);
	}
}

static int
hand_decode(struct hand *hd, struct msg_sweep *h, struct got *got,
    struct lh_err *err)
{
	int rc;

	ck_assert_int_eq(wbuf_status(&hd->w), 0);
	stage_agrees(hd->w.data, hd->w.len);
	memset(got, 0, sizeof(*got));
	lh_err_clear(err);
	rc = msg_sweep_decode(h, hd->w.data, hd->w.len, collect_cb, got, err);
	wbuf_free(&hd->w);
	return rc;
}

/* 10.9.0.9@o2ib and 10.9.0.9@o2ib0 are one client: in two groups, the
 * SWEEP names it twice and is refused; alone, o2ib0 comes out as o2ib. */
START_TEST(sweep_net_zero)
{
	static const char *const fs[] = {"scratch"};
	static const uint32_t one[] = {0x0a090009};
	struct msg_sweep h;
	struct lh_err err;
	struct hand hd;
	struct got got;

	hand_begin(&hd, 1, fs, 2);
	hand_group4(&hd, 0, "o2ib", 1, one, 1000);
	hand_group4(&hd, 0, "o2ib0", 1, one, 1000);
	ck_assert_int_eq(hand_decode(&hd, &h, &got, &err), -EBADMSG);
	ck_assert_uint_eq(got.n, 0);
	free(got.r);

	hand_begin(&hd, 1, fs, 1);
	hand_group4(&hd, 0, "o2ib0", 1, one, 1000);
	ck_assert_int_eq(hand_decode(&hd, &h, &got, &err), 0);
	ck_assert_uint_eq(got.n, 1);
	ck_assert_str_eq(got.r[0].nid, "10.9.0.9@o2ib");
	free(got.r);

	/* o2ib10 and tcp0x keep their names. */
	hand_begin(&hd, 1, fs, 2);
	hand_group4(&hd, 0, "o2ib", 1, one, 1000);
	hand_group4(&hd, 0, "o2ib10", 1, one, 1000);
	ck_assert_int_eq(hand_decode(&hd, &h, &got, &err), 0);
	ck_assert_uint_eq(got.n, 2);
	free(got.r);
}
END_TEST

/* Two spellings of one IPv6 address in one group: one client twice. */
START_TEST(sweep_ipv6_spellings)
{
	static const char *const fs[] = {"scratch"};
	static const char *const pairs[][2] = {
	    {"2001:DB8::17", "2001:db8::17"},
	    {"2001:db8:0:0::17", "2001:db8::17"},
	    {"2001:0db8::0017", "2001:db8::17"},
	};
	struct msg_sweep h;
	struct lh_err err;
	struct hand hd;
	struct got got;
	size_t i, k;

	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		/* Either order of the two spellings. */
		for (k = 0; k < 2; k++) {
			hand_begin(&hd, 1, fs, 1);
			(void)wbuf_put_varint(&hd.w, 0);
			(void)wbuf_put_str8(&hd.w, "tcp");
			(void)wbuf_put_u8(&hd.w, NID_KIND_STRING);
			(void)wbuf_put_varint(&hd.w, 2);
			(void)wbuf_put_str8(&hd.w, pairs[i][k]);
			(void)wbuf_put_u8(&hd.w, 0x01);
			(void)wbuf_put_varint(&hd.w, 1000);
			(void)wbuf_put_str8(&hd.w, pairs[i][1 - k]);
			(void)wbuf_put_u8(&hd.w, 0x01);
			(void)wbuf_put_varint(&hd.w, 1000);
			ck_assert_msg(hand_decode(&hd, &h, &got, &err) ==
			        -EBADMSG,
			    "%s and %s taken as two clients", pairs[i][k],
			    pairs[i][1 - k]);
			free(got.r);
		}
		/* One of them alone: the canonical text comes out. */
		hand_begin(&hd, 1, fs, 1);
		(void)wbuf_put_varint(&hd.w, 0);
		(void)wbuf_put_str8(&hd.w, "tcp");
		(void)wbuf_put_u8(&hd.w, NID_KIND_STRING);
		(void)wbuf_put_varint(&hd.w, 1);
		(void)wbuf_put_str8(&hd.w, pairs[i][0]);
		(void)wbuf_put_u8(&hd.w, 0x00);
		ck_assert_int_eq(hand_decode(&hd, &h, &got, &err), 0);
		ck_assert_uint_eq(got.n, 1);
		ck_assert_str_eq(got.r[0].nid, "2001:db8::17@tcp");
		free(got.r);
	}
}
END_TEST

/* The encoder sends NIDs in canonical form, and refuses two spellings of
 * one client (it would otherwise send a SWEEP every receiver refuses). */
START_TEST(sweep_encode_canonical)
{
	struct msg_rec r[2];
	struct msg_sweep h, d;
	struct wbuf w;
	struct got got;

	fill_sweep_hdr(&h, 1);
	memset(r, 0, sizeof(r));
	r[0].nid = "10.9.0.9@o2ib0";
	r[0].d.read_bytes = 5;
	r[1].nid = "2001:DB8::17@tcp0";
	r[1].d.read_bytes = 7;
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_sweep_encode(&w, &h, r, 2), 0);
	stage_agrees(w.data, w.len);
	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(msg_sweep_decode(&d, w.data, w.len, collect_cb, &got,
	                     NULL),
	    0);
	ck_assert_uint_eq(got.n, 2);
	ck_assert_str_eq(got.r[0].nid, "10.9.0.9@o2ib");
	ck_assert_str_eq(got.r[1].nid, "2001:db8::17@tcp");
	free(got.r);
	r[1].nid = "10.9.0.9@o2ib";
	wbuf_reset(&w);
	ck_assert_int_eq(msg_sweep_encode(&w, &h, r, 2), -EINVAL);
	ck_assert_int_eq(msg_rec_check("scratch", "10.9.0.9@o2ib0"), 0);
	ck_assert_int_eq(msg_rec_check("a:b", "10.9.0.9@o2ib"), -EINVAL);
	wbuf_free(&w);
}
END_TEST

/* A SWEEP naming a filesystem twice is refused whole. */
START_TEST(sweep_fs_twice)
{
	static const char *const fs[] = {"scratch", "scratch"};
	static const uint32_t one[] = {0x0a090009};
	struct msg_sweep h;
	struct lh_err err;
	struct hand hd;
	struct got got;

	hand_begin(&hd, 2, fs, 2);
	hand_group4(&hd, 0, "o2ib", 1, one, 1000);
	hand_group4(&hd, 1, "o2ib", 1, one, 1000);
	ck_assert_int_eq(hand_decode(&hd, &h, &got, &err), -EBADMSG);
	ck_assert_msg(strstr(err.reason, "'scratch' named twice") != NULL, "%s",
	    err.reason);
	ck_assert_uint_eq(got.n, 0);
	free(got.r);
	fill_sweep_hdr(&h, 2);
	(void)snprintf(h.fs[1], MSG_FS_MAX, "scratch");
	{
		struct wbuf w;

		wbuf_init(&w, 0);
		ck_assert_int_eq(msg_sweep_encode(&w, &h, NULL, 0), -EINVAL);
		wbuf_free(&w);
	}
}
END_TEST

/* A filesystem whose name cannot reach Ganglia: its records are dropped
 * and counted, the others are counted (item 9: never the whole SWEEP). */
START_TEST(sweep_bad_fs_dropped)
{
	static const char *const fs[] = {"scr<atch", "home", "a:b"};
	static const uint32_t gaps[] = {0x0a000001, 1, 1};
	struct msg_sweep h;
	struct lh_err err;
	struct hand hd;
	struct got got;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		hand_begin(&hd, 3, fs, 3);
		hand_group4(&hd, 0, "o2ib", 3, gaps, 1000);
		hand_group4(&hd, 1, "o2ib", 2, gaps, 2000);
		hand_group4(&hd, 2, "tcp", 1, gaps, 3000);
		if (pass == 0) {
			ck_assert_int_eq(hand_decode(&hd, &h, &got, &err), 0);
			ck_assert_uint_eq(got.n, 2);
			ck_assert_uint_eq(got.r[0].fs, 1);
			ck_assert_uint_eq(got.r[1].fs, 1);
			ck_assert_uint_eq(got.r[0].d.read_bytes, 2000);
			free(got.r);
		} else {
			/* Without a callback, the same account. */
			ck_assert_int_eq(msg_sweep_decode(&h, hd.w.data,
			                     hd.w.len, NULL, NULL, NULL),
			    0);
			wbuf_free(&hd.w);
		}
		ck_assert_uint_eq(h.nrecs, 6);
		ck_assert_uint_eq(h.ndropped, 4);
		ck_assert_uint_eq(h.fs_dropped, 0x5);
		ck_assert_str_eq(h.fs[0], "scr<atch");
	}
}
END_TEST

/* Op counts above the record's mds_ops: the record is counted, its op
 * breakdown dropped and counted. */
START_TEST(sweep_ops_above_mds)
{
	struct mdops big, ok;
	struct msg_rec r[2];
	struct msg_sweep h, d;
	struct wbuf w;
	struct got got;

	memset(&big, 0, sizeof(big));
	memset(&ok, 0, sizeof(ok));
	big.v[MDOPS_OPEN] = 500000;
	ok.v[MDOPS_OPEN] = 3;
	ok.v[MDOPS_CLOSE] = 2;
	fill_sweep_hdr(&h, 1);
	h.ops = true;
	memset(r, 0, sizeof(r));
	r[0].nid = "10.0.0.1@o2ib";
	r[0].d.mds_ops = 5;
	r[0].ops = &big;
	r[1].nid = "10.0.0.2@o2ib";
	r[1].d.mds_ops = 5;
	r[1].ops = &ok;
	wbuf_init(&w, 0);
	ck_assert_int_eq(msg_sweep_encode(&w, &h, r, 2), 0);
	stage_agrees(w.data, w.len);
	memset(&got, 0, sizeof(got));
	ck_assert_int_eq(msg_sweep_decode(&d, w.data, w.len, collect_cb, &got,
	                     NULL),
	    0);
	ck_assert_uint_eq(got.n, 2);
	ck_assert_uint_eq(d.nops_dropped, 1);
	ck_assert_uint_eq(d.ndropped, 0);
	ck_assert_uint_eq(got.r[0].d.mds_ops, 5);
	ck_assert_uint_eq(got.r[0].ops.v[MDOPS_OPEN], 0);
	ck_assert_uint_eq(got.r[1].ops.v[MDOPS_OPEN], 3);
	ck_assert_uint_eq(got.r[1].ops.v[MDOPS_CLOSE], 2);
	free(got.r);
	wbuf_free(&w);
}
END_TEST

/* A non-minimal varint anywhere in a SWEEP refuses it: here the record
 * count, 1 as 81 00. */
START_TEST(sweep_varint_overlong)
{
	static const char *const fs[] = {"scratch"};
	struct msg_sweep h;
	struct lh_err err;
	struct hand hd;
	struct got got;

	hand_begin(&hd, 1, fs, 1);
	(void)wbuf_put_varint(&hd.w, 0);
	(void)wbuf_put_str8(&hd.w, "o2ib");
	(void)wbuf_put_u8(&hd.w, NID_KIND_IPV4);
	(void)wbuf_put_u8(&hd.w, 0x81);
	(void)wbuf_put_u8(&hd.w, 0x00);
	(void)wbuf_put_varint(&hd.w, 0x0a000001);
	(void)wbuf_put_u8(&hd.w, 0x00);
	ck_assert_int_eq(hand_decode(&hd, &h, &got, &err), -EBADMSG);
	free(got.r);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("msg");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, challenge, 0, 2);
	tcase_add_loop_test(tc, hello, 0, 2);
	tcase_add_test(tc, hello_empty);
	tcase_add_loop_test(tc, hello_text, 0,
	    sizeof(text_cases) / sizeof(text_cases[0]));
	tcase_add_test(tc, bye_text);
	tcase_add_loop_test(tc, ack, 0, sizeof(acks) / sizeof(acks[0]));
	tcase_add_loop_test(tc, bye, 0, 3);
	tcase_add_test(tc, sweep_mixed);
	tcase_add_loop_test(tc, sweep_empty, 0, 2);
	tcase_add_test(tc, sweep_many_fs);
	tcase_add_loop_test(tc, sweep_encode_rejects, 0,
	    sizeof(enc_bads) / sizeof(enc_bads[0]));
	tcase_add_test(tc, sweep_cb_stop);
	tcase_add_loop_test(tc, sweep_cspans, 0, 4);
	tcase_add_test(tc, sweep_cspan_bytes);
	tcase_add_test(tc, sweep_cspan_encode_range);
	tcase_add_loop_test(tc, sweep_cspan_decode, 0,
	    sizeof(raw_recs) / sizeof(raw_recs[0]));
	tcase_add_test(tc, sweep_size);
	tcase_add_test(tc, sweep_ops);
	tcase_add_test(tc, sweep_ops_doc_example);
	tcase_add_loop_test(tc, sweep_ops_decode, 0,
	    sizeof(raw_ops) / sizeof(raw_ops[0]));
	tcase_add_test(tc, bad_roles);
	tcase_add_test(tc, hello_fs_names);
	tcase_add_test(tc, sweep_net_zero);
	tcase_add_test(tc, sweep_ipv6_spellings);
	tcase_add_test(tc, sweep_encode_canonical);
	tcase_add_test(tc, sweep_fs_twice);
	tcase_add_test(tc, sweep_bad_fs_dropped);
	tcase_add_test(tc, sweep_ops_above_mds);
	tcase_add_test(tc, sweep_varint_overlong);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
