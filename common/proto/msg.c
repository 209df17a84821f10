/* SPDX-License-Identifier: BSD-2-Clause */
/* Payload encoders and decoders (docs/protocol.md, "Messages"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "msg.h"
#include "wire.h"

#define BAD(err, what) lh_err_set((err), 0, -EBADMSG, "%s", (what))

/* Record mask bits: which counters follow, and whether a span does. */
#define REC_READ_BYTES  0x01u
#define REC_WRITE_BYTES 0x02u
#define REC_READ_OPS    0x04u
#define REC_WRITE_OPS   0x08u
#define REC_OSS_OPS     0x10u
#define REC_MDS_OPS     0x20u
#define REC_COUNTERS    0x3fu
#define REC_SPAN        0x40u
#define REC_CSPAN       0x80u /* a span for each present counter */

/* Names (identities, filesystems, targets, networks, addresses) are
 * printable ASCII without blanks; free text (software, BYE) may have
 * blanks.  Nothing a peer sends can then forge a log line. */
static bool
printable(const char *s, bool blanks)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c > 0x7e || c < 0x20 || (c == ' ' && !blanks))
			return false;
	}
	return true;
}

static int
get_name(struct rbuf *r, char *out, size_t size)
{
	if (rbuf_get_str8(r, out, size) < 0 || out[0] == '\0' ||
	    !printable(out, false))
		return -1;
	return 0;
}

bool
msg_fs_name_ok(const char *fs)
{
	/* What a Ganglia metric name may hold (gmetric/gcache.c), as a
	 * filesystem's name is the default prefix of its metrics. */
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz"
	                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-";

	return fs[0] != '\0' && strspn(fs, ok) == strlen(fs);
}

/* The index of the first of n names (a HELLO's or SWEEP's fs[], of
 * MSG_FS_MAX bytes each) equal to an earlier one, or n. */
static unsigned
fs_repeated(const void *fs, unsigned n)
{
	const char *names = fs;
	unsigned i, j;

	for (i = 1; i < n; i++) {
		for (j = 0; j < i; j++) {
			if (strcmp(names + (size_t)i * MSG_FS_MAX,
			        names + (size_t)j * MSG_FS_MAX) == 0)
				return i;
		}
	}
	return n;
}

static bool
role_ok(uint8_t role)
{
	return role >= MSG_ROLE_GATHERER && role <= MSG_ROLE_RELAY;
}

static int
get_text(struct rbuf *r, char *out, size_t size)
{
	if (rbuf_get_str8(r, out, size) < 0 || !printable(out, true))
		return -1;
	return 0;
}

static int
done(const struct rbuf *r, struct lh_err *err, const char *what)
{
	if (r->len != 0)
		return lh_err_set(err, 0, -EBADMSG,
		    "%s: %zu bytes of trailing "
		    "garbage",
		    what, r->len);
	return 0;
}

/* ---- CHALLENGE ------------------------------------------------------ */

int
msg_challenge_encode(struct wbuf *w, const struct msg_challenge *m)
{
	(void)wbuf_put(w, m->nonce, MSG_NONCE_LEN);
	(void)wbuf_put_be64(w, m->time_ns);
	(void)wbuf_put_be64(w, m->caps);
	(void)wbuf_put_u8(w, m->role);
	(void)wbuf_put_str8(w, m->name);
	return wbuf_status(w);
}

int
msg_challenge_decode(struct msg_challenge *m, const uint8_t *p, size_t n,
    struct lh_err *err)
{
	struct rbuf r;

	rbuf_init(&r, p, n);
	if (rbuf_get(&r, m->nonce, MSG_NONCE_LEN) < 0 ||
	    rbuf_get_be64(&r, &m->time_ns) < 0 ||
	    rbuf_get_be64(&r, &m->caps) < 0 || rbuf_get_u8(&r, &m->role) < 0 ||
	    get_name(&r, m->name, sizeof(m->name)) < 0)
		return BAD(err, "CHALLENGE: truncated, or a bad name");
	if (!role_ok(m->role))
		return lh_err_set(err, 0, -EBADMSG,
		    "CHALLENGE: role %u (1 gatherer, 2 aggregator, 3 relay)",
		    m->role);
	return done(&r, err, "CHALLENGE");
}

/* ---- HELLO ---------------------------------------------------------- */

int
msg_hello_encode(struct wbuf *w, const struct msg_hello *m)
{
	unsigned i;

	if (m->nfs > MSG_HELLO_FS_MAX || m->ntargets > MSG_HELLO_TGT_MAX)
		return -EINVAL;
	(void)wbuf_put(w, m->nonce, MSG_NONCE_LEN);
	(void)wbuf_put_u8(w, m->role);
	(void)wbuf_put_str8(w, m->software);
	(void)wbuf_put_be64(w, m->time_ns);
	(void)wbuf_put_be32(w, m->interval);
	(void)wbuf_put_be64(w, m->caps);
	(void)wbuf_put_str8(w, m->name);
	(void)wbuf_put_varint(w, m->nfs);
	for (i = 0; i < m->nfs; i++)
		(void)wbuf_put_str8(w, m->fs[i]);
	(void)wbuf_put_varint(w, m->ntargets);
	for (i = 0; i < m->ntargets; i++) {
		if (m->targets[i].fs >= m->nfs)
			return -EINVAL;
		(void)wbuf_put_varint(w, m->targets[i].fs);
		(void)wbuf_put_str8(w, m->targets[i].name);
	}
	return wbuf_status(w);
}

int
msg_hello_decode(struct msg_hello *m, const uint8_t *p, size_t n,
    struct lh_err *err)
{
	uint64_t nfs, nt, fs;
	struct rbuf r;
	unsigned i;

	rbuf_init(&r, p, n);
	if (rbuf_get(&r, m->nonce, MSG_NONCE_LEN) < 0 ||
	    rbuf_get_u8(&r, &m->role) < 0 ||
	    get_text(&r, m->software, sizeof(m->software)) < 0 ||
	    rbuf_get_be64(&r, &m->time_ns) < 0 ||
	    rbuf_get_be32(&r, &m->interval) < 0 ||
	    rbuf_get_be64(&r, &m->caps) < 0 ||
	    get_name(&r, m->name, sizeof(m->name)) < 0 ||
	    rbuf_get_varint(&r, &nfs) < 0)
		return BAD(err, "HELLO: truncated, or a bad name");
	if (!role_ok(m->role))
		return lh_err_set(err, 0, -EBADMSG,
		    "HELLO: role %u (1 gatherer, 2 aggregator, 3 relay)",
		    m->role);
	if (nfs > MSG_HELLO_FS_MAX)
		return BAD(err, "HELLO: too many filesystems");
	m->nfs = (uint16_t)nfs;
	for (i = 0; i < m->nfs; i++) {
		if (get_name(&r, m->fs[i], sizeof(m->fs[i])) < 0)
			return BAD(err, "HELLO: bad filesystem name");
		/* Printable, so safe in the line. */
		if (!msg_fs_name_ok(m->fs[i]))
			return lh_err_set(err, 0, -EBADMSG,
			    "HELLO: filesystem name '%s' cannot be a Ganglia "
			    "metric name",
			    m->fs[i]);
	}
	if (fs_repeated(m->fs, m->nfs) < m->nfs)
		return lh_err_set(err, 0, -EBADMSG,
		    "HELLO: filesystem '%s' named twice",
		    m->fs[fs_repeated(m->fs, m->nfs)]);
	if (rbuf_get_varint(&r, &nt) < 0 || nt > MSG_HELLO_TGT_MAX)
		return BAD(err, "HELLO: bad target count");
	m->ntargets = (uint16_t)nt;
	for (i = 0; i < m->ntargets; i++) {
		if (rbuf_get_varint(&r, &fs) < 0 || fs >= m->nfs ||
		    get_name(&r, m->targets[i].name,
		        sizeof(m->targets[i].name)) < 0)
			return BAD(err, "HELLO: bad target");
		m->targets[i].fs = (uint16_t)fs;
	}
	return done(&r, err, "HELLO");
}

/* ---- ACK, BYE ------------------------------------------------------- */

int
msg_ack_encode(struct wbuf *w, const struct msg_ack *m)
{
	(void)wbuf_put_u8(w, m->kind);
	(void)wbuf_put_be64(w, m->seq);
	(void)wbuf_put_be64(w, m->batch);
	(void)wbuf_put_be64(w, m->time_ns);
	return wbuf_status(w);
}

int
msg_ack_decode(struct msg_ack *m, const uint8_t *p, size_t n,
    struct lh_err *err)
{
	struct rbuf r;

	rbuf_init(&r, p, n);
	if (rbuf_get_u8(&r, &m->kind) < 0 || rbuf_get_be64(&r, &m->seq) < 0 ||
	    rbuf_get_be64(&r, &m->batch) < 0 ||
	    rbuf_get_be64(&r, &m->time_ns) < 0)
		return BAD(err, "ACK: truncated");
	if (m->kind < MSG_ACK_HELLO || m->kind > MSG_ACK_DUPLICATE)
		return lh_err_set(err, 0, -EBADMSG, "ACK: unknown kind %u",
		    m->kind);
	return done(&r, err, "ACK");
}

int
msg_bye_encode(struct wbuf *w, const struct msg_bye *m)
{
	(void)wbuf_put_u8(w, m->reason);
	(void)wbuf_put_str8(w, m->text);
	return wbuf_status(w);
}

int
msg_bye_decode(struct msg_bye *m, const uint8_t *p, size_t n,
    struct lh_err *err)
{
	struct rbuf r;

	rbuf_init(&r, p, n);
	if (rbuf_get_u8(&r, &m->reason) < 0 ||
	    get_text(&r, m->text, sizeof(m->text)) < 0)
		return BAD(err, "BYE: truncated or malformed");
	return done(&r, err, "BYE");
}

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

/* The span of counter i as the encoder sends it: 0 means the record's. */
static uint64_t
counter_span(const struct msg_rec *r, unsigned i)
{
	return r->cspan_us[i] != 0 ? r->cspan_us[i] : r->span_us;
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
		if (counter_span(r, i) != r->span_us)
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
			    span_diff(counter_span(r, i), r->span_us));
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
		if (v[i] != 0 && counter_span(r, i) > INT64_MAX)
			return false;
	}
	return true;
}

int
msg_sweep_encode_from(struct wbuf *w, const struct msg_sweep *h,
    msg_rec_get_fn get, const void *ctx, size_t n)
{
	struct nid_parts parts;
	struct msg_rec rec;
	struct sort_rec *s;
	char **canon = NULL, text[NID_STR_MAX];
	size_t i, j, ngroups = 0;
	int rc = 0;

	if (h->nfs > MSG_SWEEP_FS_MAX || n > UINT32_MAX ||
	    fs_repeated(h->fs, h->nfs) < h->nfs)
		return -EINVAL;
	s = calloc(n > 0 ? n : 1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		get(ctx, i, &rec);
		/* nid_split() bounds both parts below NID_STR_MAX (128):
		 * each fits its one-byte length. */
		if (rec.fs >= h->nfs || !msg_fs_name_ok(h->fs[rec.fs]) ||
		    !rec_spans_ok(&rec) || h->span_us > INT64_MAX ||
		    nid_canon(rec.nid, text, sizeof(text)) < 0 ||
		    nid_split(text, &parts) < 0) {
			rc = -EINVAL;
			goto out;
		}
		s[i].nid = rec.nid;
		/* Lustre prints NIDs in canonical form: a copy is rare. */
		if (strcmp(text, rec.nid) != 0) {
			if (canon == NULL &&
			    (canon = calloc(n, sizeof(*canon))) == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			if ((canon[i] = strdup(text)) == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			s[i].nid = canon[i];
		}
		s[i].idx = (uint32_t)i;
		s[i].num = parts.num;
		s[i].fs = rec.fs;
		s[i].kind = (uint8_t)parts.kind;
		s[i].alen = (uint8_t)strlen(parts.addr);
	}
	qsort(s, n, sizeof(*s), sort_cmp);
	for (i = 0; i < n; i++) {
		if (i > 0 && sort_cmp(&s[i - 1], &s[i]) == 0) {
			rc = -EINVAL; /* the same (fs, NID) twice */
			goto out;
		}
		if (i == 0 || !same_group(&s[i - 1], &s[i]))
			ngroups++;
	}

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
static char *
put_dec(char *p, uint32_t v)
{
	char tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

/* An IPv4 or numbered NID's longest text: a dotted quad, '@', the
 * network and the NUL. */
_Static_assert(15 + 1 + NID_NET_MAX <= NID_STR_MAX, "NID_STR_MAX too small");

/*
 * nid_format() of an IPv4 or numbered NID, the same text without printf:
 * an aggregator's decoder prints one per record, a million per sweep at
 * a large site (tests/bench/agg_load.sh), where snprintf() was half of the
 * decoding.  buf holds NID_STR_MAX bytes, which always suffice.
 */
static void
format_num_nid(const struct nid_parts *np, char *buf)
{
	size_t nl = strnlen(np->net, NID_NET_MAX - 1);
	char *p = buf;

	if (np->kind == NID_KIND_IPV4) {
		p = put_dec(p, np->num >> 24);
		*p++ = '.';
		p = put_dec(p, (np->num >> 16) & 0xff);
		*p++ = '.';
		p = put_dec(p, (np->num >> 8) & 0xff);
		*p++ = '.';
		p = put_dec(p, np->num & 0xff);
	} else {
		p = put_dec(p, np->num);
	}
	*p++ = '@';
	memcpy(p, np->net, nl);
	p[nl] = '\0';
}

/* *ret = base + a span adjustment read from r, which must lie in
 * 0..2^63-1 (base does).  -1 on a short read, -2 out of range. */
static int
get_span(struct rbuf *r, uint64_t base, int64_t *ret_adj, uint64_t *ret)
{
	uint64_t mag;
	int64_t adj;

	if (rbuf_get_zigzag(r, &adj) < 0)
		return -1;
	/* |adj| without overflow, even for INT64_MIN. */
	mag = adj < 0 ? (uint64_t)(-(adj + 1)) + 1 : (uint64_t)adj;
	if (adj < 0 ? mag > base : mag > (uint64_t)INT64_MAX - base)
		return -2;
	*ret_adj = adj;
	*ret = adj < 0 ? base - mag : base + mag;
	return 0;
}

/* Bit 7: a span for each present counter, relative to the record's;
 * canonical only when at least one differs from it.  Whatever decodes
 * encodes again to the same bytes. */
static int
get_counter_spans(struct rbuf *r, uint8_t mask, struct msg_rec *rec,
    struct lh_err *err)
{
	bool differs = false;
	unsigned i;

	for (i = 0; i < MSG_NCOUNTERS; i++)
		rec->cspan_us[i] = rec->span_us;
	rec->has_cspan = (mask & REC_CSPAN) != 0;
	if (!rec->has_cspan)
		return 0;
	if ((mask & REC_COUNTERS) == 0)
		return BAD(err, "SWEEP: counter spans without counters");
	for (i = 0; i < MSG_NCOUNTERS; i++) {
		int64_t adj;
		int rc;

		if ((mask & (1u << i)) == 0)
			continue;
		rc = get_span(r, rec->span_us, &adj, &rec->cspan_us[i]);
		if (rc < 0)
			return BAD(err,
			    rc == -1 ? "SWEEP: truncated counter span" :
			               "SWEEP: counter span out of range");
		if (adj == 0)
			continue;
		/* 0 is what an encoder's caller writes for "the record's
		 * span", so a counter span of its own is never 0 (nor is a
		 * zero span for a non-zero delta of any use). */
		if (rec->cspan_us[i] == 0)
			return BAD(err, "SWEEP: counter span 0");
		differs = true;
	}
	if (!differs)
		return BAD(err, "SWEEP: counter spans all equal the record's");
	return 0;
}

/* A record into rec, its NID's text into nid (NID_STR_MAX bytes), which
 * rec->nid points to.  The checking pass (print false) needs the text of
 * a text address only, to refuse one in canonical form. */
static int
get_record(struct rbuf *r, const struct msg_sweep *h, struct nid_parts *np,
    bool first, bool print, struct msg_rec *rec, char *nid, struct lh_err *err)
{
	uint64_t v[MSG_NCOUNTERS] = {0, 0, 0, 0, 0, 0}, gap;
	uint8_t mask;
	unsigned i;
	int rc;

	if (np->kind == NID_KIND_STRING) {
		char prev[sizeof(np->addr)];

		memcpy(prev, np->addr, sizeof(prev));
		if (get_name(r, np->addr, sizeof(np->addr)) < 0)
			return BAD(err, "SWEEP: bad address");
		/* Compared in canonical form, which is what the aggregator
		 * counts: two spellings of one IPv6 address are one client. */
		(void)nid_addr_canon(np->addr);
		/* Sorted, as the encoder writes them: a repeat is refused. */
		if (!first && strcmp(prev, np->addr) >= 0)
			return BAD(err,
			    "SWEEP: text addresses out of order, or "
			    "one client twice");
	} else {
		if (rbuf_get_varint(r, &gap) < 0 ||
		    gap > (uint64_t)UINT32_MAX - np->num ||
		    (gap == 0 && !first))
			return BAD(err, "SWEEP: bad address gap");
		np->num += (uint32_t)gap;
	}
	if (rbuf_get_u8(r, &mask) < 0)
		return BAD(err, "SWEEP: truncated record mask");
	for (i = 0; i < MSG_NCOUNTERS; i++) {
		if ((mask & (1u << i)) != 0 &&
		    (rbuf_get_varint(r, &v[i]) < 0 || v[i] == 0))
			return BAD(err, "SWEEP: bad counter");
	}
	rec->span_us = h->span_us;
	if ((mask & REC_SPAN) != 0) {
		int64_t adj;

		rc = get_span(r, h->span_us, &adj, &rec->span_us);
		if (rc == -2)
			return BAD(err, "SWEEP: span out of range");
		if (rc < 0 || adj == 0)
			return BAD(err, "SWEEP: bad span");
	}
	rc = get_counter_spans(r, mask, rec, err);
	if (rc < 0)
		return rc;
	if (np->kind == NID_KIND_STRING) {
		struct nid_parts chk;

		if (nid_format(np, nid, NID_STR_MAX) < 0)
			return BAD(err, "SWEEP: NID too long");
		/* One NID has one encoding: a text address that reads as
		 * IPv4 or a number would be a second way to send the same
		 * client. */
		if (nid_split(nid, &chk) < 0 || chk.kind != NID_KIND_STRING)
			return BAD(err,
			    "SWEEP: text address in canonical form");
	} else if (print) {
		format_num_nid(np, nid);
	}
	rec->nid = nid;
	rec->d.read_bytes = v[0];
	rec->d.write_bytes = v[1];
	rec->d.read_ops = v[2];
	rec->d.write_ops = v[3];
	rec->d.oss_ops = v[4];
	rec->d.mds_ops = v[5];
	return 0;
}

/* Reads the metadata-op section alongside the records. */
struct ops_reader {
	struct rbuf r;
	int map[MSG_OPS_MAX]; /* section name index -> enum mdops_op, -1 */
	unsigned k;           /* names */
	uint64_t left;        /* op records not read yet */
	uint64_t next;        /* record index of the next one, if left */
};

/* The op record count, and where the first op record goes. */
static int
ops_next(struct ops_reader *o, uint64_t nrecs, bool first, struct lh_err *err)
{
	uint64_t gap;

	if (o->left == 0)
		return 0;
	if (rbuf_get_varint(&o->r, &gap) < 0 || (gap == 0 && !first) ||
	    gap >= nrecs || (first ? gap : o->next + gap) >= nrecs)
		return BAD(err, "SWEEP: bad op record index");
	o->next = first ? gap : o->next + gap;
	return 0;
}

/* The section's names and op record count: p/n is what follows the
 * groups, nrecs the records of the SWEEP. */
static int
ops_begin(struct ops_reader *o, const uint8_t *p, size_t n, uint64_t nrecs,
    struct lh_err *err)
{
	uint64_t k;
	unsigned i, j;

	rbuf_init(&o->r, p, n);
	if (rbuf_get_varint(&o->r, &k) < 0 || k == 0 || k > MSG_OPS_MAX)
		return BAD(err, "SWEEP: bad op name count");
	o->k = (unsigned)k;
	for (i = 0; i < o->k; i++) {
		char name[MSG_OP_NAME_MAX];
		struct rbuf dup;

		if (get_name(&o->r, name, sizeof(name)) < 0)
			return BAD(err, "SWEEP: bad op name");
		o->map[i] = mdops_lookup(name);
		/* Distinct names: read the earlier ones again. */
		rbuf_init(&dup, p, n);
		(void)rbuf_get_varint(&dup, &k);
		for (j = 0; j < i; j++) {
			char seen[MSG_OP_NAME_MAX];

			(void)rbuf_get_str8(&dup, seen, sizeof(seen));
			if (strcmp(seen, name) == 0)
				return BAD(err, "SWEEP: op name repeated");
		}
	}
	if (rbuf_get_varint(&o->r, &o->left) < 0 || o->left == 0 ||
	    o->left > nrecs)
		return BAD(err, "SWEEP: bad op record count");
	return ops_next(o, nrecs, true, err);
}

/* The op record of the record o->next, into *ret; *ret_sum is the sum of
 * all its counts, the names this side does not know included (at most
 * UINT64_MAX). */
static int
ops_take(struct ops_reader *o, uint64_t nrecs, struct mdops *ret,
    uint64_t *ret_sum, struct lh_err *err)
{
	uint64_t bits, v, sum = 0;
	unsigned i;

	memset(ret, 0, sizeof(*ret));
	if (rbuf_get_varint(&o->r, &bits) < 0 || bits == 0 ||
	    (o->k < 64 && (bits >> o->k) != 0))
		return BAD(err, "SWEEP: bad op mask");
	for (i = 0; i < o->k; i++) {
		if ((bits & ((uint64_t)1 << i)) == 0)
			continue;
		if (rbuf_get_varint(&o->r, &v) < 0 || v == 0)
			return BAD(err, "SWEEP: bad op count");
		if (o->map[i] >= 0)
			ret->v[o->map[i]] = v;
		sum = v > UINT64_MAX - sum ? UINT64_MAX : sum + v;
	}
	*ret_sum = sum;
	o->left--;
	return ops_next(o, nrecs, false, err);
}

static int
sweep_pass(struct msg_sweep *h, const uint8_t *p, size_t n, msg_rec_cb cb,
    void *arg, size_t *ops_off, struct lh_err *err)
{
	uint64_t nfs, ngroups, g, nrecs = 0, opsum;
	struct ops_reader ops;
	char nid[NID_STR_MAX];
	struct mdops opv;
	struct rbuf r;
	unsigned i;
	int rc;

	rbuf_init(&r, p, n);
	if (rbuf_get_be64(&r, &h->batch) < 0 ||
	    rbuf_get_be64(&r, &h->first_sweep) < 0 ||
	    rbuf_get_be64(&r, &h->start_ns) < 0 ||
	    rbuf_get_be64(&r, &h->span_us) < 0 || rbuf_get_varint(&r, &nfs) < 0)
		return BAD(err, "SWEEP: truncated header");
	if (nfs > MSG_SWEEP_FS_MAX)
		return BAD(err, "SWEEP: too many filesystems");
	if (h->span_us > INT64_MAX)
		return BAD(err, "SWEEP: span out of range");
	h->nfs = (uint16_t)nfs;
	h->fs_dropped = 0;
	h->ndropped = 0;
	h->nops_dropped = 0;
	for (i = 0; i < h->nfs; i++) {
		if (get_name(&r, h->fs[i], sizeof(h->fs[i])) < 0)
			return BAD(err, "SWEEP: bad filesystem name");
		/* Its metrics could never reach Ganglia: its records are
		 * dropped and counted, the rest of the SWEEP is counted. */
		if (!msg_fs_name_ok(h->fs[i]))
			h->fs_dropped |= (uint64_t)1 << i;
	}
	/* Two entries for one filesystem would sum its clients twice. */
	if (fs_repeated(h->fs, h->nfs) < h->nfs)
		return lh_err_set(err, 0, -EBADMSG,
		    "SWEEP: filesystem '%s' named twice",
		    h->fs[fs_repeated(h->fs, h->nfs)]);
	if (rbuf_get_varint(&r, &ngroups) < 0 || ngroups > r.len)
		return BAD(err, "SWEEP: bad group count");
	/* The callback pass knows from the checking pass where the op
	 * section starts, and reads it alongside the records. */
	ops.left = 0;
	if (cb != NULL && h->ops) {
		rc = ops_begin(&ops, p + *ops_off, n - *ops_off, h->nrecs, err);
		if (rc < 0)
			return rc;
		nrecs = h->nrecs;
	}
	h->nrecs = 0;
	char prev_net[NID_NET_MAX] = "";
	uint64_t prev_fs = 0;
	uint8_t prev_kind = 0;

	for (g = 0; g < ngroups; g++) {
		struct nid_parts np;
		uint64_t fs, nrec, k;
		uint8_t kind;
		int order;

		memset(&np, 0, sizeof(np));
		if (rbuf_get_varint(&r, &fs) < 0 || fs >= h->nfs ||
		    get_name(&r, np.net, sizeof(np.net)) < 0 ||
		    strchr(np.net, '@') != NULL || rbuf_get_u8(&r, &kind) < 0 ||
		    kind > NID_KIND_NUM || rbuf_get_varint(&r, &nrec) < 0 ||
		    nrec == 0 || nrec > r.len / 2)
			return BAD(err, "SWEEP: bad group");
		/* "o2ib0" is "o2ib": one network, one name, as the
		 * aggregator counts it. */
		np.net[nid_net_canon_len(np.net, strlen(np.net))] = '\0';
		/* Groups in increasing (filesystem, canonical network, kind)
		 * order, so that no (fs, NID) repeats. */
		order = fs != prev_fs ? (fs < prev_fs ? -1 : 1) :
		                        strcmp(np.net, prev_net);
		if (order == 0)
			order =
			    kind == prev_kind ? 0 : (kind < prev_kind ? -1 : 1);
		if (g > 0 && order <= 0)
			return BAD(err, "SWEEP: groups out of order");
		prev_fs = fs;
		prev_kind = kind;
		memcpy(prev_net, np.net, sizeof(prev_net));
		np.kind = (enum nid_kind)kind;
		for (k = 0; k < nrec; k++) {
			struct msg_rec rec;
			bool ops_bad = false;

			rc = get_record(&r, h, &np, k == 0, cb != NULL, &rec,
			    nid, err);
			if (rc < 0)
				return rc;
			rec.fs = (uint16_t)fs;
			rec.ops = NULL;
			if (ops.left > 0 && ops.next == h->nrecs) {
				rc = ops_take(&ops, nrecs, &opv, &opsum, err);
				if (rc < 0)
					return rc;
				rec.ops = &opv;
				/* The operations are part of mds_ops: counts
				 * above it would show rates above it. */
				ops_bad = opsum > rec.d.mds_ops;
			}
			h->nrecs++;
			if ((h->fs_dropped >> fs & 1) != 0) {
				h->ndropped++;
				continue;
			}
			/* Keep the record's counters, drop the breakdown. */
			if (ops_bad) {
				rec.ops = NULL;
				h->nops_dropped++;
			}
			if (cb != NULL) {
				rc = cb(arg, h, &rec);
				if (rc != 0)
					return rc;
			}
		}
	}
	if (cb != NULL)
		return 0;
	/* The checking pass: an op section, if bytes are left. */
	h->ops = r.len > 0;
	*ops_off = n - r.len;
	if (!h->ops)
		return 0;
	rc = ops_begin(&ops, r.p, r.len, h->nrecs, err);
	while (rc == 0 && ops.left > 0)
		rc = ops_take(&ops, h->nrecs, &opv, &opsum, err);
	if (rc < 0)
		return rc;
	return done(&ops.r, err, "SWEEP");
}

int
msg_sweep_decode(struct msg_sweep *h, const uint8_t *p, size_t n, msg_rec_cb cb,
    void *arg, struct lh_err *err)
{
	size_t ops_off = 0;
	int rc;

	/* Check the whole payload before the first record is handed out, so
	 * that a malformed SWEEP is refused whole, never half-counted. */
	rc = sweep_pass(h, p, n, NULL, NULL, &ops_off, err);
	if (rc < 0 || cb == NULL)
		return rc;
	return sweep_pass(h, p, n, cb, arg, &ops_off, err);
}

int
msg_rec_check(const char *fs, const char *nid)
{
	static const struct msg_sweep zero;
	struct msg_sweep h = zero, back;
	struct msg_rec r;
	struct wbuf w;
	int rc;

	if (strlen(fs) >= sizeof(h.fs[0]))
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	h.batch = 1;
	h.nfs = 1;
	memcpy(h.fs[0], fs, strlen(fs) + 1);
	r.nid = nid;
	wbuf_init(&w, 0);
	rc = msg_sweep_encode(&w, &h, &r, 1);
	if (rc == 0)
		rc = msg_sweep_decode(&back, w.data, w.len, NULL, NULL, NULL);
	if (rc == 0 && back.ndropped != 0)
		rc = -EINVAL;
	wbuf_free(&w);
	return rc == -ENOMEM ? rc : rc < 0 ? -EINVAL : 0;
}
