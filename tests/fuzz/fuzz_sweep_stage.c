/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: any bytes into both SWEEP decoders, the one-pass
 * msg_sweep_stage() the aggregator counts from and msg_sweep_decode().
 * They must agree: the same return and reason, the same header and
 * counts, the same records in the same order.  The stage is reused from
 * input to input, as the aggregator reuses it from frame to frame.  The
 * input is copied into a buffer of exactly its size so ASan sees any
 * read past the end.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "msg.h"
#include "nid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct rec {
	uint16_t fs;
	char nid[NID_STR_MAX];
	struct msg_rec r; /* nid and ops not used */
	bool has_ops;
	struct mdops ops;
};

struct recs {
	size_t n, cap;
	struct rec *r;
	int oom;
};

static int
collect_cb(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	struct recs *rs = arg;
	struct rec *e;

	(void)h;
	if (rs->n == rs->cap) {
		size_t cap = rs->cap > 0 ? 2 * rs->cap : 16;
		struct rec *nr = realloc(rs->r, cap * sizeof(*nr));

		if (nr == NULL) {
			rs->oom = 1;
			return -ENOMEM;
		}
		rs->r = nr;
		rs->cap = cap;
	}
	e = &rs->r[rs->n++];
	memset(e, 0, sizeof(*e));
	e->fs = r->fs;
	if (strnlen(r->nid, NID_STR_MAX) == NID_STR_MAX)
		abort();
	memcpy(e->nid, r->nid, strlen(r->nid) + 1);
	e->r = *r;
	e->r.nid = NULL;
	e->r.ops = NULL;
	/* Present, if all zeros (names this side does not know), or not:
	 * both decoders must say the same. */
	e->has_ops = r->ops != NULL;
	if (r->ops != NULL)
		e->ops = *r->ops;
	return 0;
}

static int
same_hdr(const struct msg_sweep *a, const struct msg_sweep *b)
{
	size_t i;

	if (a->batch != b->batch || a->first_sweep != b->first_sweep ||
	    a->start_ns != b->start_ns || a->span_us != b->span_us ||
	    a->nfs != b->nfs || a->ops != b->ops || a->nrecs != b->nrecs ||
	    a->fs_dropped != b->fs_dropped || a->ndropped != b->ndropped ||
	    a->nops_dropped != b->nops_dropped)
		return 0;
	for (i = 0; i < a->nfs; i++)
		if (strcmp(a->fs[i], b->fs[i]) != 0)
			return 0;
	return 1;
}

/* The stage's records as msg_sweep_decode() hands them out, into rs;
 * 0, or -1 when the stage itself is inconsistent. */
static int
from_stage(const struct msg_sweep *h, const struct msg_stage *st,
    struct recs *rs)
{
	size_t g, i, next = 0;

	for (g = 0; g < st->ngroups; g++) {
		const struct msg_sgroup *gr = &st->groups[g];

		/* Groups cover the records in order, none empty. */
		if (gr->first != next || gr->n == 0 || gr->fs >= h->nfs ||
		    gr->dropped != ((h->fs_dropped >> gr->fs & 1) != 0))
			return -1;
		next += gr->n;
		for (i = gr->first; i < next && !gr->dropped; i++) {
			char nid[NID_STR_MAX];
			struct msg_rec rec;
			struct mdops ops;

			msg_stage_rec(st, gr, i, &rec, nid, &ops);
			if (collect_cb(rs, h, &rec) != 0)
				return 0; /* out of memory: nothing to say */
		}
	}
	return next == st->nrecs && next == h->nrecs ? 0 : -1;
}

static int
same_recs(const struct recs *a, const struct recs *b)
{
	size_t i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++) {
		const struct rec *x = &a->r[i], *y = &b->r[i];

		if (x->fs != y->fs || strcmp(x->nid, y->nid) != 0 ||
		    memcmp(&x->r.d, &y->r.d, sizeof(x->r.d)) != 0 ||
		    x->r.span_us != y->r.span_us ||
		    memcmp(x->r.cspan_us, y->r.cspan_us,
		        sizeof(x->r.cspan_us)) != 0 ||
		    x->r.has_cspan != y->r.has_cspan ||
		    x->has_ops != y->has_ops ||
		    memcmp(&x->ops, &y->ops, sizeof(x->ops)) != 0)
			return 0;
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct msg_stage st;
	static struct msg_sweep ha, hb;
	struct recs a = {0, 0, NULL, 0}, b = {0, 0, NULL, 0};
	struct lh_err ea, eb;
	uint8_t *buf = malloc(size > 0 ? size : 1);
	int ra, rb;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	lh_err_clear(&ea);
	lh_err_clear(&eb);
	ra = msg_sweep_decode(&ha, buf, size, collect_cb, &a, &ea);
	rb = msg_sweep_stage(&hb, buf, size, &st, &eb);
	if (a.oom || rb == -ENOMEM)
		goto out;
	if (ra != rb || strcmp(ea.reason, eb.reason) != 0)
		abort();
	if (ra == 0 &&
	    (!same_hdr(&ha, &hb) || from_stage(&hb, &st, &b) < 0 ||
	        (!b.oom && !same_recs(&a, &b))))
		abort();
out:
	free(a.r);
	free(b.r);
	free(buf);
	return 0;
}
