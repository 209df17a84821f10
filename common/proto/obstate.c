/* SPDX-License-Identifier: BSD-2-Clause */
/* An outbox in a state file (obstate.h). */
#include <errno.h>
#include <string.h>

#include "err.h"
#include "iocount.h"
#include "mdops.h"
#include "msg.h"
#include "obstate.h"
#include "outbox.h"
#include "statefile.h"
#include "wire.h"

#define BAD(err, what) lh_err_set((err), 0, -EBADMSG, "damaged: %s", (what))

uint8_t *
obstate_store_counters(uint8_t *p, const struct iocount *c)
{
	uint64_t v[IOCOUNT_N];
	unsigned i;

	iocount_to_array(c, v);
	for (i = 0; i < IOCOUNT_N; i++)
		p = varint_store(p, v[i]);
	return p;
}

uint8_t *
obstate_store_ops(uint8_t *p, const struct mdops *m)
{
	uint64_t mask = 0;
	unsigned i;

	for (i = 0; i < MDOPS_N; i++) {
		if (m != NULL && m->v[i] != 0)
			mask |= (uint64_t)1 << i;
	}
	p = varint_store(p, mask);
	for (i = 0; i < MDOPS_N; i++) {
		if ((mask & (uint64_t)1 << i) != 0)
			p = varint_store(p, m->v[i]);
	}
	return p;
}

void
obstate_put_counters(struct wbuf *w, const struct iocount *c)
{
	uint8_t *p = wbuf_room(w, OBSTATE_COUNTERS_MAX);

	if (p != NULL)
		wbuf_advance(w, (size_t)(obstate_store_counters(p, c) - p));
}

void
obstate_put_ops(struct wbuf *w, const struct mdops *m)
{
	uint8_t *p = wbuf_room(w, OBSTATE_OPS_MAX);

	if (p != NULL)
		wbuf_advance(w, (size_t)(obstate_store_ops(p, m) - p));
}

int
obstate_get_counters(struct rbuf *r, struct iocount *c)
{
	uint64_t v[IOCOUNT_N];
	unsigned i;

	for (i = 0; i < IOCOUNT_N; i++) {
		if (rbuf_get_varint(r, &v[i]) < 0)
			return -1;
	}
	iocount_from_array(c, v);
	return 0;
}

int
obstate_get_ops(struct rbuf *r, struct mdops *m, bool *ret_any)
{
	uint64_t mask;
	unsigned i;

	memset(m, 0, sizeof(*m));
	if (rbuf_get_varint(r, &mask) < 0 || (mask >> MDOPS_N) != 0)
		return -1;
	for (i = 0; i < MDOPS_N; i++) {
		if ((mask & (uint64_t)1 << i) == 0)
			continue;
		if (rbuf_get_varint(r, &m->v[i]) < 0 || m->v[i] == 0)
			return -1;
	}
	*ret_any = mask != 0;
	return 0;
}

static void
put_batch(struct statefile_out *o, const struct outbox_batch *b)
{
	struct wbuf *w = statefile_buf(o);
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
		obstate_put_counters(w, &r->d);
		(void)wbuf_put_varint(w, r->span_us);
		/* A counter's span that is the record's is written as 0,
		 * which outbox_add() reads as the record's: one byte rather
		 * than four for most of them. */
		outbox_rec_cspans(b, r, cspans);
		for (c = 0; c < MSG_NCOUNTERS; c++)
			(void)wbuf_put_varint(w,
			    cspans[c] != r->span_us ? cspans[c] : 0);
		obstate_put_ops(w, outbox_rec_ops(b, r, &ops));
		statefile_maybe_flush(o);
	}
}

void
obstate_put(struct statefile_out *o, const struct outbox *ob)
{
	(void)wbuf_put_u8(statefile_buf(o), ob->have_inflight ? 1 : 0);
	if (ob->have_inflight)
		put_batch(o, &ob->inflight);
	put_batch(o, &ob->pending);
}

/* One saved batch, added to ob's pending batch. */
static int
get_batch(struct statefile_src *src, bool with_ops, struct outbox *ob,
    uint64_t *ret_batch, struct lh_err *err)
{
	struct rbuf *r = src->r;
	char fs[MSG_FS_MAX], nid[NID_STR_MAX];
	uint64_t batch, first, last, start, n, i, span;
	uint64_t cspan[MSG_NCOUNTERS];
	struct iocount d;
	struct mdops ops;
	bool any = false;
	unsigned c;
	int rc;

	rc = statefile_src_need(src, STATEFILE_RECORD_MAX, err);
	if (rc < 0)
		return rc;
	if (rbuf_get_varint(r, &batch) < 0 || rbuf_get_varint(r, &first) < 0 ||
	    rbuf_get_varint(r, &last) < 0 || rbuf_get_varint(r, &start) < 0 ||
	    rbuf_get_varint(r, &n) < 0)
		return BAD(err, "batch");
	if (n > statefile_src_left(src) / 16 || first > last)
		return BAD(err, "batch");
	for (i = 0; i < n; i++) {
		/* A record is far smaller than STATEFILE_RECORD_MAX. */
		rc = statefile_src_need(src, STATEFILE_RECORD_MAX, err);
		if (rc < 0)
			return rc;
		if (rbuf_get_str8(r, fs, sizeof(fs)) < 0 ||
		    rbuf_get_str8(r, nid, sizeof(nid)) < 0 ||
		    obstate_get_counters(r, &d) < 0 ||
		    rbuf_get_varint(r, &span) < 0)
			return BAD(err, "record");
		for (c = 0; c < MSG_NCOUNTERS; c++) {
			if (rbuf_get_varint(r, &cspan[c]) < 0)
				return BAD(err, "record");
		}
		if (with_ops && obstate_get_ops(r, &ops, &any) < 0)
			return BAD(err, "record");
		rc = outbox_add(ob, fs, nid, &d, any ? &ops : NULL, span, cspan,
		    last, start);
		if (rc == -ENOMEM)
			return lh_err_set(err, 0, rc, "out of memory");
		if (rc < 0)
			return BAD(err, "record");
	}
	if (ob->pending.n != n)
		return BAD(err, "record repeated");
	if (n > 0) {
		ob->pending.first_sweep = first;
		ob->pending.start_ns = start;
	}
	*ret_batch = batch;
	return 0;
}

int
obstate_get(struct statefile_src *src, bool with_ops, struct outbox *ob,
    struct lh_err *err)
{
	uint64_t batch = 0;
	uint8_t inflight;
	int rc;

	rc = statefile_src_need(src, 1, err);
	if (rc < 0)
		return rc;
	if (rbuf_get_u8(src->r, &inflight) < 0 || inflight > 1)
		return BAD(err, "outbox");
	if (inflight) {
		rc = get_batch(src, with_ops, ob, &batch, err);
		if (rc < 0)
			return rc;
		if (batch == 0 || batch > ob->last_batch ||
		    outbox_restore_inflight(ob, batch) < 0)
			return BAD(err, "batch in flight");
	}
	rc = get_batch(src, with_ops, ob, &batch, err);
	if (rc < 0)
		return rc;
	if (batch != 0)
		return BAD(err, "pending batch numbered");
	rc = outbox_check(ob);
	if (rc == -ENOMEM)
		return lh_err_set(err, 0, rc, "out of memory");
	if (rc < 0)
		return BAD(err, "deltas that cannot be sent");
	return 0;
}
