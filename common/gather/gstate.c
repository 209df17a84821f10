/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer's state file (see gstate.h).  Layout, every integer a
 * varint unless said otherwise:
 *
 *   "LHGS", be32 version, be64 saved at (ns), last sweep (ns), last batch,
 *   scope
 *   targets: count, then each: str8 name, str8 fs, u8 kind, dev, ino,
 *     exports: count, then each: str8 nid, ino (its low 26 bits), u8 flags (bit
 * 0 the uuid was read, bits 1-2 what it said, bit 3 the counters were read, bit
 *     4 op counts follow), the six counters (read_ops and write_ops as
 *     their low 32 bits), samples (its low 32 bits),
 *     snapshot (ns), start (its tag, gtable_start_tag()), then with bit 4
 *     the op counts read with them
 *   outbox: as common/proto/obstate.h says (op counts from version 3 on)
 *   the SHA-256 of all of the above (32 bytes: statefile.h)
 *
 * Bit 4 is set only on an MDT export whose op counts are known; they are
 * written as obstate.h writes op counts.
 *
 * Older versions are still read, so that an upgrade keeps the deltas not
 * yet acknowledged:
 *  - version 4 keeps read_ops, write_ops and the inode whole (they are
 *    cut down on reading); a version 4 binary refuses version 5, whose
 *    cut-down counts it would take for smaller values, and starts afresh;
 *  - version 3 keeps samples and start whole (they are cut down on
 *    reading); a version 3 binary refuses version 4, whose start tags it
 *    would take for resets, and starts afresh;
 *  - version 2 is version 3 without op counts (and without bit 4): its
 *    MDT exports' op counts are unknown, and their next op delta is a
 *    baseline rather than everything since the target started.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "gstate.h"
#include "gstate_int.h"
#include "gtable.h"
#include "hindex.h"
#include "hmac.h"
#include "mdops.h"
#include "obstate.h"
#include "outbox.h"
#include "statefile.h"
#include "wire.h"

#define GSTATE_MAGIC "LHGS"
#define GSTATE_V3    3 /* samples and start whole */
#define GSTATE_V2    2 /* no op counts */
#define GSTATE_F_OPS 16u

/* e's op counts into buf, or NULL: none known. */
static const struct mdops *
export_ops(const struct gt_target *tg, const struct gt_export *e,
    struct mdops *buf)
{
	if (tg->ops == NULL || !e->have || e->ops_unknown)
		return NULL;
	gtable_export_ops(tg, e, buf);
	return buf;
}

void
gstate_put_export(struct wbuf *w, const struct gtable *t,
    const struct gt_target *tg, const struct gt_export *e)
{
	struct mdops opsbuf;
	const struct mdops *ops = export_ops(tg, e, &opsbuf);
	struct delta_sample prev;
	const char *nid = gtable_client_nid(t, e->client);
	size_t n = strlen(nid);
	uint8_t *p, *start;

	if (n > 255) {
		(void)wbuf_put_str8(w, nid); /* fails w, as it says */
		return;
	}
	/* Room for the longest form first, then every field written in
	 * place: the state of 90,000 exports is written a sweep, and a
	 * checked call per field was most of its cost.  The bytes are
	 * those of wbuf_put_str8(), wbuf_put_varint()... field by field. */
	start = p = wbuf_room(w,
	    1 + n + 1 + VARINT_MAX * 4 + OBSTATE_COUNTERS_MAX +
	        OBSTATE_OPS_MAX);
	if (p == NULL)
		return;
	/* An export listed but never read has nothing to resume from; it
	 * is written anyway (with zeros) so that it is not mistaken for a
	 * new one after the restart. */
	gtable_export_prev(tg, e, &prev);
	*p++ = (uint8_t)n;
	p = bytes_store(p, nid, n);
	p = varint_store(p, e->ino);
	*p++ = (uint8_t)((e->classified ? 1u : 0u) | (e->cls & 3u) << 1 |
	    (e->have ? 8u : 0u) | (ops != NULL ? GSTATE_F_OPS : 0u));
	p = obstate_store_counters(p, &prev.c);
	p = varint_store(p, prev.samples);
	p = varint_store(p, prev.snap_ns);
	p = varint_store(p, prev.start_ns);
	if (ops != NULL)
		p = obstate_store_ops(p, ops);
	wbuf_advance(w, (size_t)(p - start));
}

void
gstate_put_target_head(struct wbuf *w, const struct gt_target *tg)
{
	(void)wbuf_put_str8(w, tg->name);
	(void)wbuf_put_str8(w, tg->fs);
	(void)wbuf_put_u8(w, (uint8_t)tg->kind);
	(void)wbuf_put_varint(w, tg->dev);
	(void)wbuf_put_varint(w, tg->ino);
}

int
gstate_get_target_head(struct rbuf *r, struct gstate_target_head *h)
{
	if (rbuf_get_str8(r, h->name, sizeof(h->name)) < 0 ||
	    rbuf_get_str8(r, h->fs, sizeof(h->fs)) < 0 ||
	    rbuf_get_u8(r, &h->kind) < 0 || rbuf_get_varint(r, &h->dev) < 0 ||
	    rbuf_get_varint(r, &h->ino) < 0)
		return -1;
	if (h->kind > LH_TARGET_MDT || h->name[0] == '\0' || h->fs[0] == '\0')
		return -1;
	return 0;
}

static void
put_target(struct statefile_out *o, const struct gtable *t,
    const struct gt_target *tg)
{
	struct wbuf *w = statefile_buf(o);
	size_t i;

	gstate_put_target_head(w, tg);
	(void)wbuf_put_varint(w, tg->nexp);
	for (i = 0; i < tg->nexp; i++) {
		gstate_put_export(w, t, tg, &tg->exp[i]);
		statefile_maybe_flush(o);
	}
}

static void
write_all(struct statefile_out *o, uint64_t scope, const struct gtable *t,
    const struct outbox *ob, uint64_t now_ns)
{
	struct wbuf *w = statefile_buf(o);
	size_t i;

	(void)wbuf_put(w, GSTATE_MAGIC, 4);
	(void)wbuf_put_be32(w, GSTATE_VERSION);
	(void)wbuf_put_be64(w, now_ns);
	(void)wbuf_put_be64(w, t->last_sweep_ns);
	(void)wbuf_put_be64(w, ob->last_batch);
	(void)wbuf_put_be64(w, scope);
	(void)wbuf_put_varint(w, t->ntargets);
	for (i = 0; i < t->ntargets; i++)
		put_target(o, t, t->targets[i]);
	obstate_put(o, ob);
}

int
gstate_save(const char *path, uint64_t scope, const struct gtable *t,
    const struct outbox *ob, struct lh_err *err)
{
	struct statefile_out *o;
	int rc;

	rc = statefile_create(path, &o, err);
	if (rc < 0)
		return rc;
	write_all(o, scope, t, ob, clock_realtime_ns());
	return statefile_commit(o, err);
}

#define BAD(err, what) lh_err_set((err), 0, -EBADMSG, "damaged: %s", (what))

/* An export's flags byte: what this version of the file may hold. */
static bool
export_flags_ok(uint8_t flags, uint32_t version, uint8_t kind)
{
	if ((flags >> 1 & 3u) > 2)
		return false;
	if ((flags & GSTATE_F_OPS) == 0)
		return flags <= 15;
	return version > GSTATE_V2 && flags <= 31 && (flags & 8u) != 0 &&
	    kind == LH_TARGET_MDT;
}

int
gstate_get_export(struct statefile_src *src, uint32_t version, struct gtable *t,
    struct gt_target *tg, bool update, struct lh_err *err)
{
	uint8_t kind = (uint8_t)tg->kind;
	struct rbuf *r = src->r;
	char nid[NID_STR_MAX];
	struct delta_sample prev;
	struct mdops ops;
	uint64_t ino;
	uint8_t flags;
	bool any;
	int rc;

	/* An export is far smaller than STATEFILE_RECORD_MAX. */
	rc = statefile_src_need(src, STATEFILE_RECORD_MAX, err);
	if (rc < 0)
		return rc;
	memset(&prev, 0, sizeof(prev));
	if (rbuf_get_str8(r, nid, sizeof(nid)) < 0 ||
	    rbuf_get_varint(r, &ino) < 0 || rbuf_get_u8(r, &flags) < 0 ||
	    obstate_get_counters(r, &prev.c) < 0 ||
	    rbuf_get_varint(r, &prev.samples) < 0 ||
	    rbuf_get_varint(r, &prev.snap_ns) < 0 ||
	    rbuf_get_varint(r, &prev.start_ns) < 0)
		return BAD(err, "export");
	if (nid[0] == '\0' || !export_flags_ok(flags, version, kind))
		return BAD(err, "export");
	if ((flags & GSTATE_F_OPS) != 0 && obstate_get_ops(r, &ops, &any) < 0)
		return BAD(err, "export");
	if (version <= GSTATE_V3)
		prev.start_ns = gtable_start_tag(prev.start_ns);
	/* Without op counts an MDT export's are unknown (NULL). */
	rc = (update ? gtable_update_export : gtable_restore_export)(t, tg, nid,
	    ino, (enum ltree_peer)(flags >> 1 & 3u), (flags & 1u) != 0,
	    (flags & 8u) != 0 ? &prev : NULL,
	    (flags & GSTATE_F_OPS) != 0 ? &ops : NULL);
	if (rc == -ENOMEM)
		return lh_err_set(err, 0, rc, "out of memory");
	if (rc < 0)
		return BAD(err, rc == -EEXIST ? "export repeated" : "export");
	return 0;
}

static int
get_target(struct statefile_src *src, uint32_t version, struct gtable *t,
    struct lh_err *err)
{
	struct gstate_target_head h;
	struct gt_target *tg;
	uint64_t n, i;
	int rc;

	rc = statefile_src_need(src, STATEFILE_RECORD_MAX, err);
	if (rc < 0)
		return rc;
	if (gstate_get_target_head(src->r, &h) < 0 ||
	    rbuf_get_varint(src->r, &n) < 0)
		return BAD(err, "target");
	/* Each export takes at least 12 bytes: refuse absurd counts before
	 * allocating for them. */
	if (n > statefile_src_left(src) / 12)
		return BAD(err, "export count");
	tg = gtable_restore_target(t, h.name, h.fs, (enum lh_target_kind)h.kind,
	    h.dev, h.ino);
	if (tg == NULL)
		return BAD(err, "target repeated");
	for (i = 0; i < n; i++) {
		rc = gstate_get_export(src, version, t, tg, false, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The body of a state file, whose checksum was checked. */
static int
decode_body(struct statefile_src *src, uint64_t *ret_scope, struct gtable *t,
    struct outbox *ob, struct lh_err *err)
{
	uint64_t saved, last_sweep, last_batch, ntargets, i;
	struct rbuf *r = src->r;
	uint8_t magic[4];
	uint32_t version;
	int rc;

	rc = statefile_src_need(src, STATEFILE_RECORD_MAX, err);
	if (rc < 0)
		return rc;
	if (rbuf_get(r, magic, 4) < 0 || memcmp(magic, GSTATE_MAGIC, 4) != 0)
		return BAD(err, "not a gatherer state file");
	if (rbuf_get_be32(r, &version) < 0)
		return BAD(err, "header");
	if (version > GSTATE_VERSION)
		return lh_err_set(err, 0, -EBADMSG,
		    "written by a newer lharvestd (state format %u, this "
		    "version reads %d to %d)",
		    version, GSTATE_V2, GSTATE_VERSION);
	if (version < GSTATE_V2)
		return lh_err_set(err, 0, -EBADMSG,
		    "state format %u, this version reads %d to %d", version,
		    GSTATE_V2, GSTATE_VERSION);
	if (rbuf_get_be64(r, &saved) < 0 || rbuf_get_be64(r, &last_sweep) < 0 ||
	    rbuf_get_be64(r, &last_batch) < 0 ||
	    rbuf_get_be64(r, ret_scope) < 0 ||
	    rbuf_get_varint(r, &ntargets) < 0 ||
	    ntargets > statefile_src_left(src) / 8)
		return BAD(err, "header");
	outbox_free(ob);
	outbox_init(ob, last_batch);
	for (i = 0; i < ntargets; i++) {
		rc = get_target(src, version, t, err);
		if (rc < 0)
			return rc;
	}
	rc = obstate_get(src, version > GSTATE_V2, ob, err);
	if (rc < 0)
		return rc;
	if (statefile_src_left(src) != 0)
		return BAD(err, "trailing bytes");
	gtable_restored(t, last_sweep);
	return 0;
}

int
gstate_decode(const void *p, size_t n, uint64_t *ret_scope, struct gtable *t,
    struct outbox *ob, struct lh_err *err)
{
	struct rbuf r;
	struct statefile_src src = {&r, NULL};
	size_t body;
	int rc;

	if (n < 4 + 4 + 32 + SHA256_LEN)
		return BAD(err, "too short");
	rc = statefile_verify(p, n, &body, err);
	if (rc < 0)
		return rc;
	rbuf_init(&r, p, body);
	return decode_body(&src, ret_scope, t, ob, err);
}

int
gstate_load(const char *path, uint64_t *ret_scope, struct gtable *t,
    struct outbox *ob, struct lh_err *err)
{
	struct statefile_src src;
	struct statefile_in *in;
	int rc;

	/* A window at a time: loading a big OSS's state (5 MB) must not
	 * double the gatherer's memory while it starts. */
	rc = statefile_open(path, 4 + 4 + 32, &in, err);
	if (rc < 0)
		return rc;
	src.r = statefile_in_rbuf(in);
	src.in = in;
	rc = decode_body(&src, ret_scope, t, ob, err);
	statefile_in_close(in);
	return rc;
}

uint64_t
gstate_scope(const char *lustre_root, char *const *filesystems, size_t n)
{
	uint64_t h = hindex_hash_str(HINDEX_SEED, lustre_root);
	uint64_t fs = 0;
	size_t i;

	/* The order of the filesystems does not matter: add their hashes. */
	for (i = 0; i < n; i++)
		fs += hindex_hash_str(HINDEX_SEED, filesystems[i]);
	return h ^ (fs * 0x9e3779b97f4a7c15ULL);
}
