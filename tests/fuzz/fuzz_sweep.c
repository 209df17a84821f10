/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: any bytes into the SWEEP decoder.  What decodes is
 * encoded again and decoded again, and must give the same header and the
 * same records (as a set: the encoder sorts).  The input is copied into a
 * buffer of exactly its size so ASan sees any read past the end.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "msg.h"
#include "nid.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct rec {
	uint16_t fs;
	char nid[NID_STR_MAX];
	struct iocount d;
	uint64_t span_us;
	uint64_t cspan_us[MSG_NCOUNTERS];
	bool has_cspan;
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
	size_t len;

	if (r->fs >= h->nfs || r->nid == NULL)
		abort();
	len = strnlen(r->nid, NID_STR_MAX);
	if (len == NID_STR_MAX)
		abort();
	/* Handed out in canonical form, of a usable filesystem. */
	if ((h->fs_dropped >> r->fs & 1) != 0 || !msg_fs_name_ok(h->fs[r->fs]))
		abort();
	{
		char canon[NID_STR_MAX];

		if (nid_canon(r->nid, canon, sizeof(canon)) != 0 ||
		    strcmp(canon, r->nid) != 0)
			abort();
	}
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
	rs->r[rs->n].fs = r->fs;
	memcpy(rs->r[rs->n].nid, r->nid, len + 1);
	rs->r[rs->n].d = r->d;
	rs->r[rs->n].span_us = r->span_us;
	memcpy(rs->r[rs->n].cspan_us, r->cspan_us, sizeof(r->cspan_us));
	rs->r[rs->n].has_cspan = r->has_cspan;
	rs->n++;
	return 0;
}

static int
rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->fs != y->fs)
		return x->fs < y->fs ? -1 : 1;
	return strcmp(x->nid, y->nid);
}

static int
same_hdr(const struct msg_sweep *a, const struct msg_sweep *b)
{
	size_t i;

	if (a->batch != b->batch || a->first_sweep != b->first_sweep ||
	    a->start_ns != b->start_ns || a->span_us != b->span_us ||
	    a->nfs != b->nfs || a->nrecs - a->ndropped != b->nrecs ||
	    b->ndropped != 0 || a->fs_dropped != b->fs_dropped)
		return 0;
	for (i = 0; i < a->nfs; i++)
		if (strcmp(a->fs[i], b->fs[i]) != 0)
			return 0;
	return 1;
}

/* Decoded records are a set: no (fs, NID) comes twice; rs is sorted. */
static int
has_duplicate(const struct recs *rs)
{
	size_t i;

	for (i = 1; i < rs->n; i++)
		if (rec_cmp(&rs->r[i - 1], &rs->r[i]) == 0)
			return 1;
	return 0;
}

/* The decoded records as the encoder takes them, or NULL. */
static struct msg_rec *
to_msg_recs(const struct recs *rs)
{
	struct msg_rec *mr = calloc(rs->n > 0 ? rs->n : 1, sizeof(*mr));
	size_t i;

	if (mr == NULL)
		return NULL;
	for (i = 0; i < rs->n; i++) {
		mr[i].fs = rs->r[i].fs;
		mr[i].nid = rs->r[i].nid;
		mr[i].d = rs->r[i].d;
		mr[i].span_us = rs->r[i].span_us;
		/* As decoded: the encoder must send bit 7 again exactly
		 * where it was. */
		memcpy(mr[i].cspan_us, rs->r[i].cspan_us,
		    sizeof(mr[i].cspan_us));
	}
	return mr;
}

/* Two sorted record sets, field for field. */
static int
same_recs(const struct recs *a, const struct recs *b)
{
	size_t i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (rec_cmp(&a->r[i], &b->r[i]) != 0 ||
		    memcmp(&a->r[i].d, &b->r[i].d, sizeof(a->r[i].d)) != 0 ||
		    a->r[i].span_us != b->r[i].span_us ||
		    memcmp(a->r[i].cspan_us, b->r[i].cspan_us,
		        sizeof(a->r[i].cspan_us)) != 0 ||
		    a->r[i].has_cspan != b->r[i].has_cspan)
			return 0;
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct msg_sweep h, h2;
	struct recs a = {0, 0, NULL, 0}, b = {0, 0, NULL, 0};
	struct msg_rec *mr = NULL;
	struct lh_err err;
	struct wbuf w;
	uint8_t *buf = malloc(size > 0 ? size : 1);
	int rc;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	lh_err_clear(&err);
	rc = msg_sweep_decode(&h, buf, size, collect_cb, &a, &err);
	if (rc < 0 || a.oom) {
		if (!a.oom && err.reason[0] == '\0')
			abort(); /* every failure must say why */
		goto out;
	}
	if (rc != 0 || h.nfs > MSG_SWEEP_FS_MAX ||
	    h.nrecs != a.n + h.ndropped || h.nops_dropped > a.n)
		abort();
	if (a.n > 0)
		qsort(a.r, a.n, sizeof(*a.r), rec_cmp);
	/* A SWEEP cannot name a client twice, in any spelling. */
	if (has_duplicate(&a))
		abort();

	mr = to_msg_recs(&a);
	if (mr == NULL)
		goto out;
	wbuf_init(&w, 0);
	rc = msg_sweep_encode(&w, &h, mr, a.n);
	if (rc != 0)
		abort();
	if (msg_sweep_decode(&h2, w.data, w.len, collect_cb, &b, NULL) != 0 ||
	    b.oom)
		abort();
	if (b.n > 0)
		qsort(b.r, b.n, sizeof(*b.r), rec_cmp);
	if (!same_hdr(&h, &h2) || !same_recs(&a, &b))
		abort();
	wbuf_free(&w);
out:
	free(mr);
	free(a.r);
	free(b.r);
	free(buf);
	return 0;
}
