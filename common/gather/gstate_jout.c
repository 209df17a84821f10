/* SPDX-License-Identifier: BSD-2-Clause */
/* The outbox in a state journal's record, compact (gstate_jout.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gstate_jout.h"
#include "gtable.h"
#include "iocount.h"
#include "mdops.h"
#include "obstate.h"
#include "outbox.h"
#include "statefile.h"
#include "wire.h"

#define F_KEY    3u
#define F_NEXT   0u
#define F_NUMBER 1u
#define F_NAME   2u
#define F_SPAN   4u
#define F_DELTAS 8u
#define F_CSPANS 16u
#define F_OPS    32u
#define F_RUN    64u
#define F_PLAIN  (F_DELTAS | F_CSPANS | F_OPS)

#define BAD(err, what) lh_err_set((err), 0, -EBADMSG, "damaged: %s", (what))

/* The clients of a table numbered in walk order (gstate_jout.h). */
struct jkeys {
	uint32_t *num;    /* by client index: its number, or HINDEX_NONE */
	uint32_t *client; /* by number: the client index (replay only) */
	size_t n;
	uint64_t digest;
};

static void
keys_free(struct jkeys *k)
{
	free(k->num);
	free(k->client);
}

static int
keys_build(const struct gtable *t, bool by_number, struct jkeys *k)
{
	size_t i, j, nc = t->nclients > 0 ? t->nclients : 1;

	memset(k, 0, sizeof(*k));
	k->num = malloc(nc * sizeof(*k->num));
	if (by_number)
		k->client = malloc(nc * sizeof(*k->client));
	if (k->num == NULL || (by_number && k->client == NULL)) {
		keys_free(k);
		return -ENOMEM;
	}
	memset(k->num, 0xff, nc * sizeof(*k->num));
	for (i = 0; i < t->ntargets; i++) {
		const struct gt_target *tg = t->targets[i];

		for (j = 0; j < tg->nexp; j++) {
			uint32_t c = tg->exp[j].client;
			const char *fs = gtable_client_fs(t, c);

			if (k->num[c] != HINDEX_NONE)
				continue;
			if (by_number)
				k->client[k->n] = c;
			k->num[c] = (uint32_t)k->n++;
			k->digest =
			    (k->digest ^ strlen(fs) ^
			        hindex_hash_pair(fs, gtable_client_nid(t, c))) *
			    0x100000001b3ULL;
		}
	}
	return 0;
}

struct ckey {
	const char *fs;
	const char *nid;
};

static bool
client_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct gtable *t = ctx;
	const struct ckey *k = key;

	return strcmp(gtable_client_nid(t, idx), k->nid) == 0 &&
	    strcmp(gtable_client_fs(t, idx), k->fs) == 0;
}

/* The number of the client of record r, or HINDEX_NONE: not in the table.
 * *hint: the client index of the record before; records are added in
 * client order, so the next one is tried first. */
static uint32_t
rec_number(const struct gtable *t, const struct jkeys *k,
    const struct outbox_batch *b, const struct outbox_rec *r, uint32_t *hint)
{
	struct ckey key = {outbox_rec_fs(b, r), outbox_rec_nid(b, r)};
	uint32_t c = *hint + 1;

	if (c >= t->nclients || !client_is(t, c, &key))
		c = hindex_find(&t->cindex, hindex_hash_pair(key.fs, key.nid),
		    client_is, t, &key);
	if (c == HINDEX_NONE)
		return HINDEX_NONE;
	*hint = c;
	return k->num[c];
}

/* The writer's place in a batch. */
struct jput {
	struct wbuf *w;
	int64_t prev;      /* the last client number written */
	uint64_t span;     /* the last span written */
	uint32_t hint;     /* the last client index found */
	bool open;         /* a run is open: */
	uint32_t run_num;  /* its first client */
	uint64_t run_span; /* its span */
	uint64_t run_more; /* records after its first */
};

/* flags, the client (by number, or by name: fs and nid, NULL when by
 * number), the span. */
static void
put_key_span(struct jput *p, uint8_t flags, uint32_t num, uint64_t span,
    const char *fs, const char *nid)
{
	if (num != HINDEX_NONE && (int64_t)num != p->prev + 1)
		flags |= F_NUMBER;
	if (span != p->span)
		flags |= F_SPAN;
	(void)wbuf_put_u8(p->w, flags);
	if ((flags & F_KEY) == F_NUMBER)
		(void)wbuf_put_zigzag(p->w, (int64_t)num - (p->prev + 1));
	if (fs != NULL && nid != NULL) {
		(void)wbuf_put_str8(p->w, fs);
		(void)wbuf_put_str8(p->w, nid);
	}
	if ((flags & F_SPAN) != 0)
		(void)wbuf_put_zigzag(p->w, (int64_t)(span - p->span));
	if (num != HINDEX_NONE)
		p->prev = num;
	p->span = span;
}

static void
run_close(struct jput *p)
{
	if (!p->open)
		return;
	put_key_span(p, p->run_more > 0 ? F_RUN : 0, p->run_num, p->run_span,
	    NULL, NULL);
	if (p->run_more > 0)
		(void)wbuf_put_varint(p->w, p->run_more);
	p->prev += (int64_t)p->run_more;
	p->open = false;
}

/* A record with more than a client and a span. */
static void
put_full(struct jput *p, const struct outbox_batch *b,
    const struct outbox_rec *r, uint32_t num, const uint64_t cspans[])
{
	uint64_t d[IOCOUNT_N];
	uint8_t flags = num == HINDEX_NONE ? F_NAME : 0, dm = 0, cm = 0;
	unsigned c;

	iocount_to_array(&r->d, d);
	for (c = 0; c < IOCOUNT_N; c++) {
		dm |= d[c] != 0 ? (uint8_t)(1u << c) : 0;
		cm |= cspans[c] != r->span_us ? (uint8_t)(1u << c) : 0;
	}
	flags |= (dm != 0 ? F_DELTAS : 0) | (cm != 0 ? F_CSPANS : 0) |
	    (r->ops != OUTBOX_NO_OPS ? F_OPS : 0);
	put_key_span(p, flags, num, r->span_us,
	    num == HINDEX_NONE ? outbox_rec_fs(b, r) : NULL,
	    num == HINDEX_NONE ? outbox_rec_nid(b, r) : NULL);
	if (dm != 0)
		(void)wbuf_put_u8(p->w, dm);
	for (c = 0; c < IOCOUNT_N; c++)
		if ((dm >> c & 1u) != 0)
			(void)wbuf_put_varint(p->w, d[c]);
	if (cm != 0)
		(void)wbuf_put_u8(p->w, cm);
	for (c = 0; c < IOCOUNT_N; c++)
		if ((cm >> c & 1u) != 0)
			(void)wbuf_put_varint(p->w, cspans[c]);
	if (r->ops != OUTBOX_NO_OPS) {
		struct mdops ops;

		obstate_put_ops(p->w, outbox_rec_ops(b, r, &ops));
	}
}

static void
put_rec(struct jput *p, const struct gtable *t, const struct jkeys *k,
    const struct outbox_batch *b, const struct outbox_rec *r)
{
	uint32_t num = rec_number(t, k, b, r, &p->hint);
	uint64_t cspans[MSG_NCOUNTERS];
	bool plain = num != HINDEX_NONE && iocount_is_zero(&r->d) &&
	    r->cspan == OUTBOX_NO_OPS && r->ops == OUTBOX_NO_OPS;

	if (p->open && plain && r->span_us == p->run_span &&
	    (uint64_t)num == (uint64_t)p->run_num + p->run_more + 1) {
		p->run_more++;
		return;
	}
	run_close(p);
	if (plain) {
		p->open = true;
		p->run_num = num;
		p->run_span = r->span_us;
		p->run_more = 0;
		return;
	}
	outbox_rec_cspans(b, r, cspans);
	put_full(p, b, r, num, cspans);
}

static void
put_batch(struct statefile_out *o, const struct gtable *t,
    const struct jkeys *k, const struct outbox_batch *b)
{
	struct jput p = {statefile_buf(o), -1, 0, UINT32_MAX, false, 0, 0, 0};
	size_t i;

	(void)wbuf_put_varint(p.w, b->batch);
	(void)wbuf_put_varint(p.w, b->first_sweep);
	(void)wbuf_put_varint(p.w, b->last_sweep);
	(void)wbuf_put_varint(p.w, b->start_ns);
	(void)wbuf_put_varint(p.w, b->n);
	for (i = 0; i < b->n; i++) {
		put_rec(&p, t, k, b, &b->recs[i]);
		statefile_maybe_flush(o);
	}
	run_close(&p);
}

int
gstate_jout_put(struct statefile_out *o, const struct gtable *t,
    const struct outbox *ob)
{
	struct wbuf *w = statefile_buf(o);
	struct jkeys k;

	if (keys_build(t, false, &k) < 0)
		return -ENOMEM;
	(void)wbuf_put_varint(w, k.n);
	(void)wbuf_put_be64(w, k.digest);
	(void)wbuf_put_u8(w, ob->have_inflight ? 1 : 0);
	if (ob->have_inflight)
		put_batch(o, t, &k, &ob->inflight);
	put_batch(o, t, &k, &ob->pending);
	keys_free(&k);
	return 0;
}

/* The reader's place in a batch, and the record being read. */
struct jget {
	struct statefile_src *src;
	const struct gtable *t;
	const struct jkeys *k;
	struct outbox *ob;
	int64_t prev;
	uint64_t span;
	uint64_t last, start; /* the batch's last sweep and start */
	char fs[MSG_FS_MAX], nid[NID_STR_MAX];
	struct iocount d;
	uint64_t cspan[MSG_NCOUNTERS];
	struct mdops ops;
	bool any;
};

/* The client and span after flags: 0, or -1 (damaged). */
static int
get_key_span(struct jget *g, uint8_t flags)
{
	struct rbuf *r = g->src->r;
	int64_t v = 0;

	if ((flags & F_KEY) == F_NAME) {
		if (rbuf_get_str8(r, g->fs, sizeof(g->fs)) < 0 ||
		    rbuf_get_str8(r, g->nid, sizeof(g->nid)) < 0)
			return -1;
	} else {
		if ((flags & F_KEY) == F_NUMBER &&
		    (rbuf_get_zigzag(r, &v) < 0 || v == 0))
			return -1;
		if (v < -g->prev - 1 || v > (int64_t)g->k->n - g->prev - 2)
			return -1;
		g->prev += 1 + v;
	}
	if ((flags & F_SPAN) != 0) {
		if (rbuf_get_zigzag(r, &v) < 0 || v == 0)
			return -1;
		g->span += (uint64_t)v;
	}
	return 0;
}

/* n values, one for each bit of a mask read first (none zero), into v;
 * no: the value no counter span may have (its record's). */
static int
get_masked(struct rbuf *r, uint64_t v[IOCOUNT_N], uint64_t no)
{
	uint8_t mask;
	unsigned c;

	if (rbuf_get_u8(r, &mask) < 0 || mask == 0 || mask >> IOCOUNT_N != 0)
		return -1;
	for (c = 0; c < IOCOUNT_N; c++) {
		if ((mask >> c & 1u) != 0 &&
		    (rbuf_get_varint(r, &v[c]) < 0 || v[c] == 0 || v[c] == no))
			return -1;
	}
	return 0;
}

static int
get_values(struct jget *g, uint8_t flags)
{
	struct rbuf *r = g->src->r;
	uint64_t d[IOCOUNT_N];

	memset(d, 0, sizeof(d));
	memset(g->cspan, 0, sizeof(g->cspan));
	g->any = false;
	if ((flags & F_DELTAS) != 0 && get_masked(r, d, 0) < 0)
		return -1;
	iocount_from_array(&g->d, d);
	if ((flags & F_CSPANS) != 0 && get_masked(r, g->cspan, g->span) < 0)
		return -1;
	if ((flags & F_OPS) != 0 &&
	    (obstate_get_ops(r, &g->ops, &g->any) < 0 || !g->any))
		return -1;
	return 0;
}

static int
add(struct jget *g, bool named, struct lh_err *err)
{
	uint32_t c = named ? HINDEX_NONE : g->k->client[g->prev];
	int rc;

	rc = outbox_add(g->ob, named ? g->fs : gtable_client_fs(g->t, c),
	    named ? g->nid : gtable_client_nid(g->t, c), &g->d,
	    g->any ? &g->ops : NULL, g->span, g->cspan, g->last, g->start);
	if (rc == -ENOMEM)
		return lh_err_set(err, 0, rc, "out of memory");
	return rc < 0 ? BAD(err, "record") : 0;
}

/* One record, and the run it starts: *left, the records still to come,
 * goes down by as many. */
static int
get_rec(struct jget *g, uint64_t *left, struct lh_err *err)
{
	struct rbuf *r = g->src->r;
	uint64_t more = 0, i;
	uint8_t flags;
	int rc;

	/* A record is far smaller than STATEFILE_RECORD_MAX. */
	rc = statefile_src_need(g->src, STATEFILE_RECORD_MAX, err);
	if (rc < 0)
		return rc;
	if (rbuf_get_u8(r, &flags) < 0 || (flags & F_KEY) == F_KEY ||
	    (flags & 128u) != 0 ||
	    ((flags & F_RUN) != 0 &&
	        ((flags & F_PLAIN) != 0 || (flags & F_KEY) == F_NAME)) ||
	    get_key_span(g, flags) < 0 || get_values(g, flags) < 0)
		return BAD(err, "record");
	if ((flags & F_RUN) != 0 &&
	    (rbuf_get_varint(r, &more) < 0 || more == 0 || more >= *left ||
	        more > g->k->n - (uint64_t)g->prev - 1))
		return BAD(err, "record");
	rc = add(g, (flags & F_KEY) == F_NAME, err);
	for (i = 0; i < more && rc == 0; i++) {
		g->prev++;
		rc = add(g, false, err);
	}
	*left -= 1 + more;
	return rc;
}

/* One saved batch, added to ob's pending batch. */
static int
get_batch(struct jget *g, uint64_t *ret_batch, struct lh_err *err)
{
	struct rbuf *r = g->src->r;
	uint64_t batch, first, n, left;
	int rc;

	rc = statefile_src_need(g->src, STATEFILE_RECORD_MAX, err);
	if (rc < 0)
		return rc;
	if (rbuf_get_varint(r, &batch) < 0 || rbuf_get_varint(r, &first) < 0 ||
	    rbuf_get_varint(r, &g->last) < 0 ||
	    rbuf_get_varint(r, &g->start) < 0 || rbuf_get_varint(r, &n) < 0)
		return BAD(err, "batch");
	/* A record by name takes at least 3 bytes, one by number may be
	 * in a run: refuse absurd counts before adding any. */
	if (first > g->last || n > g->k->n + statefile_src_left(g->src) / 3)
		return BAD(err, "batch");
	g->prev = -1;
	g->span = 0;
	for (left = n; left > 0;) {
		rc = get_rec(g, &left, err);
		if (rc < 0)
			return rc;
	}
	if (g->ob->pending.n != n)
		return BAD(err, "record repeated");
	if (n > 0) {
		g->ob->pending.first_sweep = first;
		g->ob->pending.start_ns = g->start;
	}
	*ret_batch = batch;
	return 0;
}

/* The clients, then both batches, as obstate_get() reads them. */
static int
get_all(struct jget *g, struct lh_err *err)
{
	struct rbuf *r = g->src->r;
	uint64_t n, digest, batch = 0;
	uint8_t inflight;
	int rc;

	rc = statefile_src_need(g->src, STATEFILE_RECORD_MAX, err);
	if (rc < 0)
		return rc;
	if (rbuf_get_varint(r, &n) < 0 || rbuf_get_be64(r, &digest) < 0 ||
	    rbuf_get_u8(r, &inflight) < 0 || inflight > 1)
		return BAD(err, "outbox");
	if (n != g->k->n || digest != g->k->digest)
		return BAD(err, "clients differ from the writer's");
	if (inflight) {
		rc = get_batch(g, &batch, err);
		if (rc < 0)
			return rc;
		if (batch == 0 || batch > g->ob->last_batch ||
		    outbox_restore_inflight(g->ob, batch) < 0)
			return BAD(err, "batch in flight");
	}
	rc = get_batch(g, &batch, err);
	if (rc < 0)
		return rc;
	if (batch != 0)
		return BAD(err, "pending batch numbered");
	rc = outbox_check(g->ob);
	if (rc == -ENOMEM)
		return lh_err_set(err, 0, rc, "out of memory");
	return rc < 0 ? BAD(err, "deltas that cannot be sent") : 0;
}

int
gstate_jout_get(struct statefile_src *src, const struct gtable *t,
    struct outbox *ob, struct lh_err *err)
{
	struct jkeys k;
	struct jget *g;
	int rc;

	/* Not on the stack: a NID and the op counts are large. */
	g = calloc(1, sizeof(*g));
	if (g == NULL || keys_build(t, true, &k) < 0) {
		free(g);
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	}
	g->src = src;
	g->t = t;
	g->k = &k;
	g->ob = ob;
	rc = get_all(g, err);
	keys_free(&k);
	free(g);
	return rc;
}
