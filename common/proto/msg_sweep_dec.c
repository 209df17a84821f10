/* SPDX-License-Identifier: BSD-2-Clause */
/* Decoding a SWEEP (docs/protocol.md 4.4): a checking pass over the whole
 * payload, then a pass handing each record to the caller; or one pass
 * that checks and keeps every record in the caller's stage (msg_stage.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "msg.h"
#include "msg_int.h"
#include "wire.h"

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

/* A record's address into np: a text address (sorted after the
 * group's previous one), or a gap from the previous number. */
static int
get_address(struct rbuf *r, struct nid_parts *np, bool first,
    struct lh_err *err)
{
	uint64_t gap;

	if (np->kind == NID_KIND_STRING) {
		char prev[sizeof(np->addr)];

		memcpy(prev, np->addr, sizeof(prev));
		if (msg_get_name(r, np->addr, sizeof(np->addr)) < 0)
			return BAD(err, "SWEEP: bad address");
		/* Compared in canonical form, which is what the aggregator
		 * counts: two spellings of one IPv6 address are one client. */
		(void)nid_addr_canon(np->addr);
		/* Sorted, as the encoder writes them: a repeat is refused. */
		if (!first && strcmp(prev, np->addr) >= 0)
			return BAD(err,
			    "SWEEP: text addresses out of order, or "
			    "one client twice");
		return 0;
	}
	if (msg_get_varint(r, &gap) < 0 ||
	    gap > (uint64_t)UINT32_MAX - np->num || (gap == 0 && !first))
		return BAD(err, "SWEEP: bad address gap");
	np->num += (uint32_t)gap;
	return 0;
}

/* A record into rec, its NID's text into nid (NID_STR_MAX bytes), which
 * rec->nid points to.  The checking pass (print false) needs the text of
 * a text address only, to refuse one in canonical form. */
static int
get_record(struct rbuf *r, const struct msg_sweep *h, struct nid_parts *np,
    bool first, bool print, struct msg_rec *rec, char *nid, struct lh_err *err)
{
	uint64_t v[MSG_NCOUNTERS] = {0, 0, 0, 0, 0, 0};
	uint8_t mask;
	unsigned i;
	int rc;

	rc = get_address(r, np, first, err);
	if (rc < 0)
		return rc;
	if (msg_get_u8(r, &mask) < 0)
		return BAD(err, "SWEEP: truncated record mask");
	for (i = 0; i < MSG_NCOUNTERS; i++) {
		if ((mask & (1u << i)) != 0 &&
		    (msg_get_varint(r, &v[i]) < 0 || v[i] == 0))
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
	if (msg_get_varint(&o->r, &gap) < 0 || (gap == 0 && !first) ||
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

		if (msg_get_name(&o->r, name, sizeof(name)) < 0)
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
	if (msg_get_varint(&o->r, &bits) < 0 || bits == 0 ||
	    (o->k < 64 && (bits >> o->k) != 0))
		return BAD(err, "SWEEP: bad op mask");
	for (i = 0; i < o->k; i++) {
		if ((bits & ((uint64_t)1 << i)) == 0)
			continue;
		if (msg_get_varint(&o->r, &v) < 0 || v == 0)
			return BAD(err, "SWEEP: bad op count");
		if (o->map[i] >= 0)
			ret->v[o->map[i]] = v;
		sum = v > UINT64_MAX - sum ? UINT64_MAX : sum + v;
	}
	*ret_sum = sum;
	o->left--;
	return ops_next(o, nrecs, false, err);
}

/* One pass over a SWEEP's records (sweep_pass()). */
struct pass {
	struct msg_sweep *h;
	struct rbuf r;
	struct ops_reader ops;
	uint64_t nrecs; /* the records the checking pass counted */
	msg_rec_cb cb;  /* NULL: the checking pass */
	void *arg;
	struct msg_stage *st; /* the checking pass keeps the records here */
};

/* Where the previous group was, to keep groups in order. */
struct group_key {
	uint64_t fs;
	uint8_t kind;
	char net[NID_NET_MAX];
};

/* The fixed header and the filesystems' names. */
static int
sweep_header(struct msg_sweep *h, struct rbuf *r, struct lh_err *err)
{
	uint64_t nfs;
	unsigned i;

	if (rbuf_get_be64(r, &h->batch) < 0 ||
	    rbuf_get_be64(r, &h->first_sweep) < 0 ||
	    rbuf_get_be64(r, &h->start_ns) < 0 ||
	    rbuf_get_be64(r, &h->span_us) < 0 || rbuf_get_varint(r, &nfs) < 0)
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
		if (msg_get_name(r, h->fs[i], sizeof(h->fs[i])) < 0)
			return BAD(err, "SWEEP: bad filesystem name");
		/* Its metrics could never reach Ganglia: its records are
		 * dropped and counted, the rest of the SWEEP is counted. */
		if (!msg_fs_name_ok(h->fs[i]))
			h->fs_dropped |= (uint64_t)1 << i;
	}
	/* Two entries for one filesystem would sum its clients twice. */
	if (msg_fs_repeated(h->fs, h->nfs) < h->nfs)
		return lh_err_set(err, 0, -EBADMSG,
		    "SWEEP: filesystem '%s' named twice",
		    h->fs[msg_fs_repeated(h->fs, h->nfs)]);
	return 0;
}

/* Group g's header into np, *ret_fs and *ret_nrec, after prev (updated). */
static int
group_begin(struct rbuf *r, const struct msg_sweep *h, uint64_t g,
    struct group_key *prev, struct nid_parts *np, uint64_t *ret_fs,
    uint64_t *ret_nrec, struct lh_err *err)
{
	uint64_t fs, nrec;
	uint8_t kind;
	int order;

	memset(np, 0, sizeof(*np));
	if (rbuf_get_varint(r, &fs) < 0 || fs >= h->nfs ||
	    msg_get_name(r, np->net, sizeof(np->net)) < 0 ||
	    strchr(np->net, '@') != NULL || rbuf_get_u8(r, &kind) < 0 ||
	    kind > NID_KIND_NUM || rbuf_get_varint(r, &nrec) < 0 || nrec == 0 ||
	    nrec > r->len / 2)
		return BAD(err, "SWEEP: bad group");
	/* "o2ib0" is "o2ib": one network, one name, as the aggregator
	 * counts it. */
	np->net[nid_net_canon_len(np->net, strlen(np->net))] = '\0';
	/* Groups in increasing (filesystem, canonical network, kind)
	 * order, so that no (fs, NID) repeats. */
	order = fs != prev->fs ? (fs < prev->fs ? -1 : 1) :
	                         strcmp(np->net, prev->net);
	if (order == 0)
		order = kind == prev->kind ? 0 : (kind < prev->kind ? -1 : 1);
	if (g > 0 && order <= 0)
		return BAD(err, "SWEEP: groups out of order");
	prev->fs = fs;
	prev->kind = kind;
	memcpy(prev->net, np->net, sizeof(prev->net));
	np->kind = (enum nid_kind)kind;
	*ret_fs = fs;
	*ret_nrec = nrec;
	return 0;
}

/* A group's nrec records, checked, and handed to the callback if any. */
static int
group_records(struct pass *ps, struct nid_parts *np, uint64_t fs, uint64_t nrec,
    struct lh_err *err)
{
	struct msg_sweep *h = ps->h;
	char nid[NID_STR_MAX];
	struct mdops opv;
	uint64_t opsum, k;

	if (ps->st != NULL &&
	    msg_stage_group(ps->st, fs, np, (h->fs_dropped >> fs & 1) != 0,
	        nrec) < 0)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	for (k = 0; k < nrec; k++) {
		struct msg_rec rec;
		bool ops_bad = false;
		int rc;

		rc = get_record(&ps->r, h, np, k == 0, ps->cb != NULL, &rec,
		    nid, err);
		if (rc < 0)
			return rc;
		if (ps->st != NULL && msg_stage_rec_add(ps->st, np, &rec) < 0)
			return lh_err_set(err, 0, -ENOMEM, "out of memory");
		rec.fs = (uint16_t)fs;
		rec.ops = NULL;
		if (ps->ops.left > 0 && ps->ops.next == h->nrecs) {
			rc = ops_take(&ps->ops, ps->nrecs, &opv, &opsum, err);
			if (rc < 0)
				return rc;
			rec.ops = &opv;
			/* The operations are part of mds_ops: counts above
			 * it would show rates above it. */
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
		if (ps->cb != NULL) {
			rc = ps->cb(ps->arg, h, &rec);
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

/* The checking pass's end: the op section, if bytes are left, read
 * whole; *ops_off is where it starts. */
static int
ops_check(struct pass *ps, size_t n, size_t *ops_off, struct lh_err *err)
{
	struct msg_sweep *h = ps->h;
	struct mdops opv;
	uint64_t opsum;
	int rc;

	h->ops = ps->r.len > 0;
	*ops_off = n - ps->r.len;
	if (!h->ops)
		return 0;
	rc = ops_begin(&ps->ops, ps->r.p, ps->r.len, h->nrecs, err);
	while (rc == 0 && ps->ops.left > 0) {
		uint64_t idx = ps->ops.next;

		rc = ops_take(&ps->ops, h->nrecs, &opv, &opsum, err);
		if (rc == 0 && ps->st != NULL &&
		    msg_stage_ops(ps->st, h, idx, &opv, opsum) < 0)
			rc = lh_err_set(err, 0, -ENOMEM, "out of memory");
	}
	if (rc < 0)
		return rc;
	return msg_done(&ps->ops.r, err, "SWEEP");
}

static int
sweep_pass(struct pass *pp, const uint8_t *p, size_t n, size_t *ops_off,
    struct lh_err *err)
{
	struct msg_sweep *h = pp->h;
	msg_rec_cb cb = pp->cb;
	struct group_key prev;
	struct nid_parts np;
	uint64_t ngroups, g, fs = 0, nrec = 0;
	struct pass ps = *pp;
	int rc;

	ps.nrecs = 0;
	rbuf_init(&ps.r, p, n);
	rc = sweep_header(h, &ps.r, err);
	if (rc < 0)
		return rc;
	if (rbuf_get_varint(&ps.r, &ngroups) < 0 || ngroups > ps.r.len)
		return BAD(err, "SWEEP: bad group count");
	/* The callback pass knows from the checking pass where the op
	 * section starts, and reads it alongside the records. */
	ps.ops.left = 0;
	if (cb != NULL && h->ops) {
		rc = ops_begin(&ps.ops, p + *ops_off, n - *ops_off, h->nrecs,
		    err);
		if (rc < 0)
			return rc;
		ps.nrecs = h->nrecs;
	}
	h->nrecs = 0;
	memset(&prev, 0, sizeof(prev));
	for (g = 0; g < ngroups; g++) {
		rc = group_begin(&ps.r, h, g, &prev, &np, &fs, &nrec, err);
		if (rc < 0)
			return rc;
		rc = group_records(&ps, &np, fs, nrec, err);
		if (rc != 0)
			return rc;
	}
	if (cb != NULL)
		return 0;
	return ops_check(&ps, n, ops_off, err);
}

int
msg_sweep_decode(struct msg_sweep *h, const uint8_t *p, size_t n, msg_rec_cb cb,
    void *arg, struct lh_err *err)
{
	struct pass ps = {.h = h};
	size_t ops_off = 0;
	int rc;

	/* Check the whole payload before the first record is handed out, so
	 * that a malformed SWEEP is refused whole, never half-counted. */
	rc = sweep_pass(&ps, p, n, &ops_off, err);
	if (rc < 0 || cb == NULL)
		return rc;
	ps.cb = cb;
	ps.arg = arg;
	return sweep_pass(&ps, p, n, &ops_off, err);
}

int
msg_sweep_stage(struct msg_sweep *h, const uint8_t *p, size_t n,
    struct msg_stage *st, struct lh_err *err)
{
	struct pass ps = {.h = h, .st = st};
	size_t ops_off = 0;

	/* The checking pass, keeping what it reads: the caller counts
	 * nothing of it unless the whole payload is good. */
	msg_stage_clear(st);
	return sweep_pass(&ps, p, n, &ops_off, err);
}
