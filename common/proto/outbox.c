/* SPDX-License-Identifier: BSD-2-Clause */
/* Unacknowledged deltas: a batch in flight and a pending one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "frame.h"
#include "outbox.h"
#include "wire.h"

static void
batch_init(struct outbox_batch *b)
{
	memset(b, 0, sizeof(*b));
	opsarena_init(&b->ops);
	hindex_init(&b->index);
	strpool_init(&b->names);
}

static void
batch_free(struct outbox_batch *b)
{
	free(b->recs);
	opsarena_free(&b->ops);
	free(b->cspans);
	strpool_free(&b->names);
	hindex_free(&b->index);
	batch_init(b);
}

/* Forget the records, keep the storage. */
static void
batch_clear(struct outbox_batch *b)
{
	b->n = 0;
	opsarena_clear(&b->ops);
	b->ncspans = 0;
	strpool_clear(&b->names);
	b->fsn.n = 0;
	b->batch = 0;
	b->first_sweep = 0;
	b->last_sweep = 0;
	b->start_ns = 0;
	hindex_clear(&b->index);
}

void
outbox_init(struct outbox *ob, uint64_t last_batch)
{
	memset(ob, 0, sizeof(*ob));
	ob->last_batch = last_batch;
	batch_init(&ob->inflight);
	batch_init(&ob->pending);
	wbuf_init(&ob->kept, 0);
}

void
outbox_forget_encoding(struct outbox *ob)
{
	wbuf_free(&ob->kept);
	ob->kept_batch = 0;
}

void
outbox_free(struct outbox *ob)
{
	batch_free(&ob->inflight);
	batch_free(&ob->pending);
	outbox_forget_encoding(ob);
	ob->have_inflight = false;
}

static uint64_t
rec_hash(const void *ctx, uint32_t idx)
{
	const struct outbox_batch *b = ctx;

	return hindex_hash_pair(outbox_rec_fs(b, &b->recs[idx]),
	    outbox_rec_nid(b, &b->recs[idx]));
}

struct rec_key {
	const char *fs;
	const char *nid;
};

static bool
rec_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct outbox_batch *b = ctx;
	const struct rec_key *k = key;

	return strcmp(outbox_rec_nid(b, &b->recs[idx]), k->nid) == 0 &&
	    strcmp(outbox_rec_fs(b, &b->recs[idx]), k->fs) == 0;
}

/* The record of (fs, nid) in b, created (zeroed) if absent. */
static struct outbox_rec *
batch_get(struct outbox_batch *b, const char *fs, const char *nid, int *rc)
{
	struct rec_key k = {fs, nid};
	struct outbox_rec *r;
	uint64_t h = hindex_hash_pair(fs, nid);
	uint32_t idx, name;
	uint16_t fsi;

	idx = hindex_find(&b->index, h, rec_match, b, &k);
	if (idx != HINDEX_NONE)
		return &b->recs[idx];
	if (b->n >= OUTBOX_MAX_KEYS) {
		*rc = -ENOSPC;
		return NULL;
	}
	if (b->n == b->cap) {
		r = array_grow(b->recs, &b->cap, b->n, sizeof(*r));
		if (r == NULL) {
			*rc = -ENOMEM;
			return NULL;
		}
		b->recs = r;
	}
	*rc = fsnames_index(&b->fsn, fs, &fsi);
	if (*rc < 0)
		return NULL;
	*rc = strpool_add(&b->names, nid, &name);
	if (*rc < 0)
		return NULL;
	r = &b->recs[b->n];
	memset(r, 0, sizeof(*r));
	r->nid = name;
	r->fs = fsi;
	r->ops = OUTBOX_NO_OPS;
	r->cspan = OUTBOX_NO_OPS;
	*rc = hindex_add(&b->index, h, (uint32_t)b->n, rec_hash, b);
	if (*rc < 0) {
		/* The name goes with the record. */
		strpool_truncate(&b->names, name);
		return NULL;
	}
	b->n++;
	return r;
}

const struct mdops *
outbox_rec_ops(const struct outbox_batch *b, const struct outbox_rec *r,
    struct mdops *buf)
{
	if (r->ops == OUTBOX_NO_OPS)
		return NULL;
	opsarena_get(&b->ops, r->ops, buf);
	return buf;
}

size_t
outbox_batch_nops(const struct outbox_batch *b)
{
	size_t i, n = 0;

	for (i = 0; i < b->n; i++)
		n += b->recs[i].ops != OUTBOX_NO_OPS;
	return n;
}

/* The op sums of b packed afresh, without the bytes that adds left dead,
 * once those outweigh the live ones: a long outage adds to every sum each
 * sweep.  Without memory, they stay as they are. */
static void
ops_repack(struct outbox_batch *b)
{
	struct opsarena fresh;
	struct mdops v;
	size_t i;

	if (opsarena_dead(&b->ops) <= b->ops.live + 4096)
		return;
	opsarena_init(&fresh);
	if (opsarena_reserve_bytes(&fresh, b->ops.live) < 0) {
		opsarena_free(&fresh);
		return;
	}
	for (i = 0; i < b->n; i++) {
		struct outbox_rec *r = &b->recs[i];

		if (r->ops == OUTBOX_NO_OPS)
			continue;
		opsarena_get(&b->ops, r->ops, &v);
		r->ops = opsarena_put(&fresh, &v);
	}
	opsarena_free(&b->ops);
	b->ops = fresh;
}

/* a + b for spans, saturating at the largest a SWEEP carries. */
static uint64_t
span_add(uint64_t a, uint64_t b)
{
	if (a >= (uint64_t)INT64_MAX || b >= (uint64_t)INT64_MAX - a)
		return (uint64_t)INT64_MAX;
	return a + b;
}

void
outbox_rec_cspans(const struct outbox_batch *b, const struct outbox_rec *r,
    uint64_t ret[MSG_NCOUNTERS])
{
	unsigned i;

	for (i = 0; i < MSG_NCOUNTERS; i++)
		ret[i] = r->cspan != OUTBOX_NO_OPS ? b->cspans[r->cspan][i] :
		                                     r->span_us;
}

/* Whether an add gives some counter a span other than span_us. */
static bool
own_cspans(uint64_t span_us, const uint64_t *cspan_us)
{
	unsigned i;

	for (i = 0; cspan_us != NULL && i < MSG_NCOUNTERS; i++) {
		if (cspan_us[i] != 0 && cspan_us[i] != span_us)
			return true;
	}
	return false;
}

/* outbox_add() into b. */
static int
batch_add(struct outbox_batch *b, const char *fs, const char *nid,
    const struct iocount *d, const struct mdops *ops, uint64_t span_us,
    const uint64_t *cspan_us, uint64_t sweep_id, uint64_t start_ns)
{
	bool own = own_cspans(span_us, cspan_us);
	uint64_t(*spans)[MSG_NCOUNTERS];
	struct outbox_rec *r;
	unsigned i;
	int rc = 0;

	if (strlen(fs) == 0 || strlen(fs) >= MSG_FS_MAX || strlen(nid) == 0 ||
	    strlen(nid) >= NID_STR_MAX)
		return -EINVAL;
	if (ops != NULL && mdops_is_zero(ops))
		ops = NULL;
	/* Room first, so that adding cannot fail half-way. */
	if (ops != NULL && opsarena_reserve(&b->ops) < 0)
		return -ENOMEM;
	if (own) {
		spans = array_grow(b->cspans, &b->cspanscap, b->ncspans,
		    sizeof(*b->cspans));
		if (spans == NULL)
			return -ENOMEM;
		b->cspans = spans;
	}
	r = batch_get(b, fs, nid, &rc);
	if (r == NULL)
		return rc;
	if (ops != NULL) {
		opsarena_add(&b->ops, &r->ops, ops);
		ops_repack(b);
	}
	iocount_add(&r->d, d);
	if (own && r->cspan == OUTBOX_NO_OPS) {
		/* Until now every counter's span was span_us. */
		for (i = 0; i < MSG_NCOUNTERS; i++)
			b->cspans[b->ncspans][i] = r->span_us;
		r->cspan = (uint32_t)b->ncspans++;
	}
	if (r->cspan != OUTBOX_NO_OPS) {
		for (i = 0; i < MSG_NCOUNTERS; i++) {
			uint64_t cs = cspan_us != NULL && cspan_us[i] != 0 ?
			    cspan_us[i] :
			    span_us;

			b->cspans[r->cspan][i] =
			    span_add(b->cspans[r->cspan][i], cs);
		}
	}
	r->span_us = span_add(r->span_us, span_us);
	if (b->first_sweep == 0 || sweep_id < b->first_sweep)
		b->first_sweep = sweep_id;
	if (sweep_id > b->last_sweep)
		b->last_sweep = sweep_id;
	if (b->start_ns == 0 || (start_ns != 0 && start_ns < b->start_ns))
		b->start_ns = start_ns;
	return 0;
}

int
outbox_add(struct outbox *ob, const char *fs, const char *nid,
    const struct iocount *d, const struct mdops *ops, uint64_t span_us,
    const uint64_t *cspan_us, uint64_t sweep_id, uint64_t start_ns)
{
	int rc = batch_add(&ob->pending, fs, nid, d, ops, span_us, cspan_us,
	    sweep_id, start_ns);

	if (rc == -ENOSPC)
		ob->dropped++;
	if (rc == 0)
		ob->rest_only = false;
	return rc;
}

int
outbox_add_ops(struct outbox *ob, const char *fs, const char *nid,
    const struct mdops *ops, uint64_t sweep_id)
{
	static const struct iocount zero;

	/* No span: the record's own comes with its counters. */
	return outbox_add(ob, fs, nid, &zero, ops, 0, NULL, sweep_id, 0);
}

bool
outbox_has_data(const struct outbox *ob)
{
	return ob->have_inflight || ob->pending.n > 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The most common span: records that have it need no span of their own. */
static uint64_t
common_span(const struct outbox_batch *b, size_t n)
{
	uint64_t *v, best = 0;
	size_t i, run = 0, best_run = 0;

	if (n == 0)
		return 0;
	v = malloc(n * sizeof(*v));
	if (v == NULL)
		return b->recs[0].span_us;
	for (i = 0; i < n; i++)
		v[i] = b->recs[i].span_us;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++) {
		run = i > 0 && v[i] == v[i - 1] ? run + 1 : 1;
		if (run > best_run) {
			best_run = run;
			best = v[i];
		}
	}
	free(v);
	return best;
}

/* What rec_get() reads: a batch, and room to unpack a record's op sums
 * (the encoder reads them before it asks for the next record). */
struct rec_src {
	const struct outbox_batch *b;
	struct mdops *ops;
};

static void
rec_get(const void *ctx, size_t i, struct msg_rec *ret)
{
	const struct rec_src *src = ctx;
	const struct outbox_batch *b = src->b;
	const struct outbox_rec *r = &b->recs[i];

	ret->fs = r->fs;
	ret->nid = outbox_rec_nid(b, r);
	ret->d = r->d;
	ret->span_us = r->span_us;
	/* The encoder sets bit 7 only for records whose counters' spans
	 * differ from span_us. */
	outbox_rec_cspans(b, r, ret->cspan_us);
	ret->has_cspan = false;
	ret->ops = outbox_rec_ops(b, r, src->ops);
}

/* The SWEEP of b's first n records (all of b's filesystems listed). */
static int
batch_encode(const struct outbox_batch *b, size_t n, bool ops, struct wbuf *w)
{
	static const struct msg_sweep zero;
	struct msg_sweep h = zero;
	struct mdops ops_room;
	struct rec_src src = {b, &ops_room};

	h.batch = b->batch;
	h.first_sweep = b->first_sweep;
	h.start_ns = b->start_ns;
	h.span_us = common_span(b, n);
	h.ops = ops;
	/* The batch's filesystems are the SWEEP's, in the same order. */
	h.nfs = b->fsn.n;
	memcpy(h.fs, b->fsn.v, b->fsn.n * sizeof(b->fsn.v[0]));
	return msg_sweep_encode_from(w, &h, rec_get, &src, n);
}

/* The pending batch becomes the one in flight, numbered batch; the old
 * in-flight storage is reused for the next pending one. */
static void
promote(struct outbox *ob, uint64_t batch)
{
	struct outbox_batch tmp = ob->inflight;

	outbox_forget_encoding(ob);
	ob->inflight = ob->pending;
	ob->pending = tmp;
	batch_clear(&ob->pending);
	ob->inflight.batch = batch;
	ob->have_inflight = true;
}

/* Record i of src added to dst (coalesced there: into an empty batch, an
 * exact copy), counted in src's sweeps. */
static int
batch_copy_rec(struct outbox_batch *dst, const struct outbox_batch *src,
    size_t i)
{
	const struct outbox_rec *r = &src->recs[i];
	uint64_t cspans[MSG_NCOUNTERS];
	struct mdops ops;
	int rc;

	outbox_rec_cspans(src, r, cspans);
	rc = batch_add(dst, outbox_rec_fs(src, r), outbox_rec_nid(src, r),
	    &r->d, outbox_rec_ops(src, r, &ops), r->span_us, cspans,
	    src->last_sweep, src->start_ns);
	if (rc == 0 && src->first_sweep != 0 &&
	    src->first_sweep < dst->first_sweep)
		dst->first_sweep = src->first_sweep;
	return rc;
}

/* How many of b's first records make a SWEEP (with its op section, the
 * larger encoding) of at most max_payload bytes: all of them, or fewer.
 * When all of them do, their SWEEP is left in keep (empty before), after
 * FRAME_HDR_LEN bytes of room (see outbox_forget_encoding()).  Returns 0,
 * -EMSGSIZE (not even one), or an encoding error. */
static int
batch_fit(const struct outbox_batch *b, size_t max_payload, struct wbuf *keep,
    size_t *ret_n)
{
	static const uint8_t room[FRAME_HDR_LEN];
	struct wbuf w;
	size_t k = b->n, len;
	int rc;

	/* The whole batch first, where a sender will want it. */
	(void)wbuf_put(keep, room, sizeof(room));
	rc = batch_encode(b, k, true, keep);
	if (rc == 0 && keep->len - sizeof(room) <= max_payload) {
		*ret_n = k;
		return 0;
	}
	len = rc == 0 ? keep->len - sizeof(room) : 0;
	wbuf_free(keep);
	if (rc < 0)
		return rc;
	wbuf_init(&w, 0);
	for (;;) {
		/* Records are of much the same size: in proportion, 5% to
		 * spare, and at least one fewer each time. */
		size_t next = (size_t)((double)k * (double)max_payload /
		    (double)len * 0.95);

		k = next < k ? next : k - 1;
		if (k == 0) {
			rc = -EMSGSIZE;
			break;
		}
		wbuf_reset(&w);
		rc = batch_encode(b, k, true, &w);
		if (rc < 0 || w.len <= max_payload)
			break;
		len = w.len;
	}
	wbuf_free(&w);
	if (rc == 0)
		*ret_n = k;
	return rc;
}

/*
 * The batch in flight, never sent, cut down to its first n records: the
 * others go to the front of the pending batch (coalesced with what it
 * has).  Built aside, so that running out of memory changes nothing.
 */
static int
inflight_split(struct outbox *ob, size_t n)
{
	struct outbox_batch keep, rest;
	const struct outbox_batch *b = &ob->inflight;
	size_t i;
	int rc = 0;

	batch_init(&keep);
	batch_init(&rest);
	for (i = 0; i < b->n && rc == 0; i++)
		rc = batch_copy_rec(i < n ? &keep : &rest, b, i);
	for (i = 0; i < ob->pending.n && rc == 0; i++)
		rc = batch_copy_rec(&rest, &ob->pending, i);
	if (rc < 0) {
		batch_free(&keep);
		batch_free(&rest);
		return rc;
	}
	outbox_forget_encoding(ob);
	keep.batch = b->batch;
	keep.first_sweep = b->first_sweep;
	keep.last_sweep = b->last_sweep;
	keep.start_ns = b->start_ns;
	batch_free(&ob->inflight);
	batch_free(&ob->pending);
	ob->inflight = keep;
	ob->pending = rest;
	ob->splits++;
	return 0;
}

int
outbox_fit(struct outbox *ob, size_t max_payload)
{
	size_t n = 0;
	int rc;

	if (!ob->have_inflight || max_payload == 0)
		return 0;
	outbox_forget_encoding(ob);
	rc = batch_fit(&ob->inflight, max_payload, &ob->kept, &n);
	if (rc < 0)
		return rc;
	if (n == ob->inflight.n) {
		ob->kept_batch = ob->inflight.batch;
		return 0;
	}
	rc = inflight_split(ob, n);
	return rc < 0 ? rc : 1;
}

int
outbox_seal_within(struct outbox *ob, size_t max_payload)
{
	int rc;

	if (ob->have_inflight || ob->pending.n == 0)
		return 0;
	promote(ob, ++ob->last_batch);
	rc = outbox_fit(ob, max_payload);
	if (rc < 0) {
		/* Not numbered after all: tried again at the next seal. */
		(void)outbox_unseal(ob);
		return rc;
	}
	ob->rest_only = rc > 0;
	return rc;
}

size_t
outbox_payload_max(size_t max_frame)
{
	if (max_frame == 0)
		max_frame = FRAME_MAX_DEFAULT;
	if (max_frame < FRAME_MIN_MAX)
		max_frame = FRAME_MIN_MAX;
	if (max_frame > FRAME_MAX_LIMIT)
		max_frame = FRAME_MAX_LIMIT;
	return max_frame - FRAME_OVERHEAD;
}

void
outbox_seal(struct outbox *ob)
{
	if (!ob->have_inflight && ob->pending.n > 0)
		promote(ob, ++ob->last_batch);
}

/* What a split left pending goes back behind the batch in flight's
 * records, in their order (so that the next seal splits the same), all in
 * the batch in flight.  Built aside: out of memory changes nothing. */
static int
rest_merge(struct outbox *ob)
{
	struct outbox_batch all;
	size_t i;
	int rc = 0;

	batch_init(&all);
	for (i = 0; i < ob->inflight.n && rc == 0; i++)
		rc = batch_copy_rec(&all, &ob->inflight, i);
	for (i = 0; i < ob->pending.n && rc == 0; i++)
		rc = batch_copy_rec(&all, &ob->pending, i);
	if (rc < 0) {
		batch_free(&all);
		return rc;
	}
	batch_free(&ob->pending);
	batch_free(&ob->inflight);
	outbox_forget_encoding(ob);
	ob->inflight = all;
	ob->rest_only = false;
	return 0;
}

int
outbox_unseal(struct outbox *ob)
{
	struct outbox_batch tmp;

	if (!ob->have_inflight || (ob->pending.n > 0 && !ob->rest_only) ||
	    ob->inflight.batch != ob->last_batch)
		return -EINVAL;
	if (ob->pending.n > 0) {
		int rc = rest_merge(ob);

		if (rc < 0)
			return rc;
	}
	outbox_forget_encoding(ob);
	tmp = ob->pending;
	ob->pending = ob->inflight;
	ob->inflight = tmp;
	ob->pending.batch = 0;
	ob->have_inflight = false;
	ob->last_batch--;
	return 0;
}

bool
outbox_ready(const struct outbox *ob)
{
	return ob->have_inflight;
}

int
outbox_restore_inflight(struct outbox *ob, uint64_t batch)
{
	if (ob->have_inflight || ob->pending.n == 0 || batch == 0 ||
	    batch > ob->last_batch)
		return -EINVAL;
	promote(ob, batch);
	return 0;
}

int
outbox_check(const struct outbox *ob)
{
	struct wbuf w;
	int rc = 0;

	/* With the op section: what it adds can only make it fail more. */
	wbuf_init(&w, 0);
	if (ob->have_inflight)
		rc = batch_encode(&ob->inflight, ob->inflight.n, true, &w);
	wbuf_reset(&w);
	if (rc == 0 && ob->pending.n > 0)
		rc = batch_encode(&ob->pending, ob->pending.n, true, &w);
	wbuf_free(&w);
	return rc;
}

int
outbox_next(struct outbox *ob, struct wbuf *w, bool ops, uint64_t *ret_batch,
    uint64_t *ret_sweep)
{
	int rc;

	if (!ob->have_inflight)
		return -ENODATA;
	/* The seal's encoding of this very batch, in place of w's bytes
	 * (the frame's header room is the same zeros in both). */
	if (ops && ob->kept_batch == ob->inflight.batch &&
	    w->len == FRAME_HDR_LEN && wbuf_swap(w, &ob->kept) == 0) {
		outbox_forget_encoding(ob);
		*ret_batch = ob->inflight.batch;
		*ret_sweep = ob->inflight.last_sweep;
		return 0;
	}
	rc = batch_encode(&ob->inflight, ob->inflight.n, ops, w);
	if (rc < 0)
		return rc;
	*ret_batch = ob->inflight.batch;
	*ret_sweep = ob->inflight.last_sweep;
	return 0;
}

int
outbox_acked(struct outbox *ob, uint64_t batch)
{
	if (!ob->have_inflight || ob->inflight.batch != batch)
		return -ESRCH;
	/*
	 * Its storage becomes the next pending batch's when nothing is
	 * pending yet (the usual case: the ack comes before the next
	 * sweep).  That sweep then fills pages the gatherer already holds,
	 * instead of faulting in a batch's worth again, and never holds two
	 * batches' storage: the one it fills is this one.  The empty
	 * pending batch it replaces is freed; so is this one when a later
	 * sweep's records are pending already.
	 */
	if (ob->pending.n == 0) {
		batch_free(&ob->pending);
		ob->pending = ob->inflight;
		batch_clear(&ob->pending);
		batch_init(&ob->inflight);
	} else {
		batch_free(&ob->inflight);
	}
	outbox_forget_encoding(ob);
	ob->have_inflight = false;
	return 0;
}
