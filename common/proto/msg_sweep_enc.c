/* SPDX-License-Identifier: BSD-2-Clause */
/* Encoding a SWEEP (docs/protocol.md 4.4): records sorted into groups by
 * (filesystem, network, kind), addresses as gaps, spans relative. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "msg.h"
#include "msg_int.h"
#include "wire.h"

/* ---- SWEEP ---------------------------------------------------------- */

/*
 * A record's place in the encoding order, small (24 bytes) because a
 * relay or a big OSS encodes a million or ten thousand of them: the parts
 * of its NID point into the record's own text.
 */
struct sort_rec {
	const char *nid; /* "<addr>@<net>", borrowed from the record */
	uint32_t idx;    /* the record's position */
	uint32_t num;    /* address of an IPV4 or NUM NID */
	uint16_t fs;
	uint8_t kind; /* enum nid_kind */
	uint8_t alen; /* address length: the net starts at nid + alen + 1 */
};

static const char *
sort_net(const struct sort_rec *x)
{
	return x->nid + x->alen + 1;
}

static int
sort_cmp(const void *a, const void *b)
{
	const struct sort_rec *x = a, *y = b;
	int r;

	if (x->fs != y->fs)
		return x->fs < y->fs ? -1 : 1;
	r = strcmp(sort_net(x), sort_net(y));
	if (r != 0)
		return r;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->kind == NID_KIND_STRING) {
		/* The addresses' order as strcmp() would give it. */
		r = memcmp(x->nid, y->nid,
		    x->alen < y->alen ? x->alen : y->alen);
		if (r != 0)
			return r;
		return x->alen == y->alen ? 0 : x->alen < y->alen ? -1 : 1;
	}
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return 0;
}

static bool
same_group(const struct sort_rec *x, const struct sort_rec *y)
{
	return x->fs == y->fs && x->kind == y->kind &&
	    strcmp(sort_net(x), sort_net(y)) == 0;
}

/* a - b for two spans of 0..2^63-1: always fits. */
static int64_t
span_diff(uint64_t a, uint64_t b)
{
	return a >= b ? (int64_t)(a - b) : -(int64_t)(b - a);
}

static void
put_record(struct wbuf *w, const struct msg_sweep *h, const struct msg_rec *r,
    const struct sort_rec *s, uint32_t *prev)
{
	uint64_t v[MSG_NCOUNTERS];
	uint8_t mask = 0;
	unsigned i;

	iocount_to_array(&r->d, v);

	if (s->kind == NID_KIND_STRING) {
		(void)wbuf_put_u8(w, s->alen);
		(void)wbuf_put(w, s->nid, s->alen);
	} else {
		/* Sorted ascending: the gap to the previous address is
		 * small, typically one byte. */
		(void)wbuf_put_varint(w, s->num - *prev);
		*prev = s->num;
	}
	for (i = 0; i < MSG_NCOUNTERS; i++) {
		if (v[i] == 0)
			continue;
		mask |= (uint8_t)(1u << i);
		/* Bit 7 only when a counter needs a span of its own: one
		 * encoding per record. */
		if (msg_counter_span(r, i) != r->span_us)
			mask |= REC_CSPAN;
	}
	if (r->span_us != h->span_us)
		mask |= REC_SPAN;
	(void)wbuf_put_u8(w, mask);
	for (i = 0; i < MSG_NCOUNTERS; i++) {
		if (v[i] != 0)
			(void)wbuf_put_varint(w, v[i]);
	}
	if ((mask & REC_SPAN) != 0)
		(void)wbuf_put_zigzag(w, span_diff(r->span_us, h->span_us));
	if ((mask & REC_CSPAN) == 0)
		return;
	for (i = 0; i < MSG_NCOUNTERS; i++) {
		if (v[i] != 0)
			(void)wbuf_put_zigzag(w,
			    span_diff(msg_counter_span(r, i), r->span_us));
	}
}

static bool
rec_has_ops(const struct msg_rec *r)
{
	return r->ops != NULL && !mdops_is_zero(r->ops);
}

/*
 * The metadata-op section, after the groups, only when some record has
 * counts: the names of the ops used, in mdops.h order, then the records
 * that have counts, by their position in the SWEEP (s: encoding order).
 */
static void
put_ops(struct wbuf *w, msg_rec_get_fn get, const void *ctx,
    const struct sort_rec *s, size_t n)
{
	int slot[MDOPS_N];
	uint64_t used = 0, nops = 0, prev = 0;
	unsigned k = 0, op;
	struct msg_rec rec;
	const struct msg_rec *r = &rec;
	size_t i;

	for (i = 0; i < n; i++) {
		get(ctx, s[i].idx, &rec);
		if (!rec_has_ops(r))
			continue;
		nops++;
		for (op = 0; op < MDOPS_N; op++) {
			if (r->ops->v[op] != 0)
				used |= (uint64_t)1 << op;
		}
	}
	if (nops == 0)
		return;
	for (op = 0; op < MDOPS_N; op++) {
		slot[op] = -1;
		if ((used & ((uint64_t)1 << op)) != 0)
			slot[op] = (int)k++;
	}
	(void)wbuf_put_varint(w, k);
	for (op = 0; op < MDOPS_N; op++) {
		if (slot[op] >= 0)
			(void)wbuf_put_str8(w, mdops_name(op));
	}
	(void)wbuf_put_varint(w, nops);
	for (i = 0; i < n; i++) {
		uint64_t bits = 0;

		get(ctx, s[i].idx, &rec);
		if (!rec_has_ops(r))
			continue;
		for (op = 0; op < MDOPS_N; op++) {
			if (r->ops->v[op] != 0)
				bits |= (uint64_t)1 << slot[op];
		}
		(void)wbuf_put_varint(w, i - prev);
		prev = i;
		(void)wbuf_put_varint(w, bits);
		for (op = 0; op < MDOPS_N; op++) {
			if (r->ops->v[op] != 0)
				(void)wbuf_put_varint(w, r->ops->v[op]);
		}
	}
}

/* The spans of r the encoder will send are all in 0..2^63-1. */
static bool
rec_spans_ok(const struct msg_rec *r)
{
	uint64_t v[MSG_NCOUNTERS];
	unsigned i;

	if (r->span_us > INT64_MAX)
		return false;
	iocount_to_array(&r->d, v);
	for (i = 0; i < MSG_NCOUNTERS; i++) {
		if (v[i] != 0 && msg_counter_span(r, i) > INT64_MAX)
			return false;
	}
	return true;
}

/* The sort entries of the n records (s: n entries, zeroed), their NIDs
 * canonical (a copy in (*canon)[i] where a NID was not, allocated on the
 * first).  Returns 0, -EINVAL or -ENOMEM. */
static int
sort_build(const struct msg_sweep *h, msg_rec_get_fn get, const void *ctx,
    size_t n, struct sort_rec *s, char ***canon)
{
	struct nid_parts parts;
	struct msg_rec rec;
	char text[NID_STR_MAX];
	size_t i;

	for (i = 0; i < n; i++) {
		get(ctx, i, &rec);
		/* nid_split() bounds both parts below NID_STR_MAX (128):
		 * each fits its one-byte length. */
		if (rec.fs >= h->nfs || !msg_fs_name_ok(h->fs[rec.fs]) ||
		    !rec_spans_ok(&rec) || h->span_us > INT64_MAX ||
		    nid_canon(rec.nid, text, sizeof(text)) < 0 ||
		    nid_split(text, &parts) < 0)
			return -EINVAL;
		s[i].nid = rec.nid;
		/* Lustre prints NIDs in canonical form: a copy is rare. */
		if (strcmp(text, rec.nid) != 0) {
			if (*canon == NULL &&
			    (*canon = calloc(n, sizeof(**canon))) == NULL)
				return -ENOMEM;
			if (((*canon)[i] = strdup(text)) == NULL)
				return -ENOMEM;
			s[i].nid = (*canon)[i];
		}
		s[i].idx = (uint32_t)i;
		s[i].num = parts.num;
		s[i].fs = rec.fs;
		s[i].kind = (uint8_t)parts.kind;
		s[i].alen = (uint8_t)strlen(parts.addr);
	}
	return 0;
}

/* The SWEEP of the n sorted records s, ngroups groups, into w. */
static void
put_sweep(struct wbuf *w, const struct msg_sweep *h, msg_rec_get_fn get,
    const void *ctx, const struct sort_rec *s, size_t n, size_t ngroups)
{
	struct msg_rec rec;
	size_t i, j;

	(void)wbuf_put_be64(w, h->batch);
	(void)wbuf_put_be64(w, h->first_sweep);
	(void)wbuf_put_be64(w, h->start_ns);
	(void)wbuf_put_be64(w, h->span_us);
	(void)wbuf_put_varint(w, h->nfs);
	for (i = 0; i < h->nfs; i++)
		(void)wbuf_put_str8(w, h->fs[i]);
	(void)wbuf_put_varint(w, ngroups);
	for (i = 0; i < n; i = j) {
		uint32_t prev = 0;

		for (j = i + 1; j < n && same_group(&s[i], &s[j]); j++)
			;
		(void)wbuf_put_varint(w, s[i].fs);
		(void)wbuf_put_str8(w, sort_net(&s[i]));
		(void)wbuf_put_u8(w, s[i].kind);
		(void)wbuf_put_varint(w, j - i);
		for (size_t k = i; k < j; k++) {
			get(ctx, s[k].idx, &rec);
			put_record(w, h, &rec, &s[k], &prev);
		}
	}
	if (h->ops)
		put_ops(w, get, ctx, s, n);
}

int
msg_sweep_encode_from(struct wbuf *w, const struct msg_sweep *h,
    msg_rec_get_fn get, const void *ctx, size_t n)
{
	struct sort_rec *s;
	char **canon = NULL;
	size_t i, ngroups = 0;
	int rc;

	if (h->nfs > MSG_SWEEP_FS_MAX || n > UINT32_MAX ||
	    msg_fs_repeated(h->fs, h->nfs) < h->nfs)
		return -EINVAL;
	s = calloc(n > 0 ? n : 1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	rc = sort_build(h, get, ctx, n, s, &canon);
	if (rc < 0)
		goto out;
	qsort(s, n, sizeof(*s), sort_cmp);
	for (i = 0; i < n; i++) {
		if (i > 0 && sort_cmp(&s[i - 1], &s[i]) == 0) {
			rc = -EINVAL; /* the same (fs, NID) twice */
			goto out;
		}
		if (i == 0 || !same_group(&s[i - 1], &s[i]))
			ngroups++;
	}
	put_sweep(w, h, get, ctx, s, n, ngroups);
	rc = wbuf_status(w);
out:
	for (i = 0; canon != NULL && i < n; i++)
		free(canon[i]);
	free(canon);
	free(s);
	return rc;
}

static void
array_get(const void *ctx, size_t i, struct msg_rec *ret)
{
	*ret = ((const struct msg_rec *)ctx)[i];
}

int
msg_sweep_encode(struct wbuf *w, const struct msg_sweep *h,
    const struct msg_rec *recs, size_t n)
{
	return msg_sweep_encode_from(w, h, array_get, recs, n);
}

/* The decimal digits of v at p; returns the end. */
