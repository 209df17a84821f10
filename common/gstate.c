/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer's state file (see gstate.h).  Layout, every integer a
 * varint unless said otherwise:
 *
 *   "LHGS", be32 version, be64 saved at (ns), last sweep (ns), last batch,
 *   scope
 *   targets: count, then each: str8 name, str8 fs, u8 kind, dev, ino,
 *     exports: count, then each: str8 nid, ino, u8 flags (bit 0 the uuid
 *     was read, bits 1-2 what it said, bit 3 the counters were read, bit
 *     4 op counts follow), the six counters, samples, snapshot (ns),
 *     start (ns), then with bit 4 the op counts read with them
 *   outbox: u8 1 if a batch is in flight, then that batch; the pending
 *     batch.  A batch: number, first sweep, last sweep, start (ns),
 *     records: count, then each: str8 fs, str8 nid, the six deltas, span,
 *     six counter spans (us), op counts
 *   the SHA-256 of all of the above (32 bytes)
 *
 * Op counts: a mask of the ops that are not zero (bit i: enum mdops_op
 * i), then those counts; a record without any has mask 0.  Bit 4 is set
 * only on an MDT export whose op counts are known.
 *
 * Version 2 is version 3 without op counts (and without bit 4): it is
 * still read, so that an upgrade keeps the deltas not yet acknowledged;
 * its MDT exports' op counts are unknown, and their next op delta is a
 * baseline rather than everything since the target started.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "gstate.h"
#include "gtable.h"
#include "hindex.h"
#include "hmac.h"
#include "mdops.h"
#include "outbox.h"
#include "wire.h"

#define GSTATE_MAGIC   "LHGS"
#define GSTATE_VERSION 3
#define GSTATE_V2      2 /* no op counts */
#define GSTATE_F_OPS   16u
#define GSTATE_CHUNK   ((size_t)64 * 1024)
#define GSTATE_MAX     ((size_t)1 << 30) /* far above 4 M exports */

/* Streams the encoding to a file in chunks, hashing as it goes. */
struct gstate_out {
	int fd;
	struct wbuf w;
	struct sha256_ctx *sha;
	int error;
};

static void
out_flush(struct gstate_out *o)
{
	size_t off = 0;

	if (o->error == 0 && wbuf_status(&o->w) < 0)
		o->error = wbuf_status(&o->w);
	if (o->error != 0)
		return;
	if (sha256_update(o->sha, o->w.data, o->w.len) < 0) {
		o->error = -EIO;
		return;
	}
	while (off < o->w.len) {
		ssize_t n = write(o->fd, o->w.data + off, o->w.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			o->error = n < 0 ? -errno : -EIO;
			return;
		}
		off += (size_t)n;
	}
	wbuf_reset(&o->w);
}

static void
out_maybe_flush(struct gstate_out *o)
{
	if (o->w.len >= GSTATE_CHUNK)
		out_flush(o);
}

static void
put_counters(struct wbuf *w, const struct iocount *c)
{
	(void)wbuf_put_varint(w, c->read_bytes);
	(void)wbuf_put_varint(w, c->write_bytes);
	(void)wbuf_put_varint(w, c->read_ops);
	(void)wbuf_put_varint(w, c->write_ops);
	(void)wbuf_put_varint(w, c->oss_ops);
	(void)wbuf_put_varint(w, c->mds_ops);
}

static void
put_ops(struct wbuf *w, const struct mdops *m)
{
	uint64_t mask = 0;
	unsigned i;

	for (i = 0; i < MDOPS_N; i++) {
		if (m != NULL && m->v[i] != 0)
			mask |= (uint64_t)1 << i;
	}
	(void)wbuf_put_varint(w, mask);
	for (i = 0; i < MDOPS_N; i++) {
		if ((mask & (uint64_t)1 << i) != 0)
			(void)wbuf_put_varint(w, m->v[i]);
	}
}

/* The op counts of an MDT export, when known. */
static const struct mdops *
export_ops(const struct gt_target *tg, const struct gt_export *e)
{
	if (tg->ops == NULL || !e->have || e->ops_unknown)
		return NULL;
	return &tg->ops[e - tg->exp];
}

static void
put_target(struct gstate_out *o, const struct gtable *t,
    const struct gt_target *tg)
{
	struct wbuf *w = &o->w;
	size_t i;

	(void)wbuf_put_str8(w, tg->name);
	(void)wbuf_put_str8(w, tg->fs);
	(void)wbuf_put_u8(w, (uint8_t)tg->kind);
	(void)wbuf_put_varint(w, tg->dev);
	(void)wbuf_put_varint(w, tg->ino);
	(void)wbuf_put_varint(w, tg->nexp);
	for (i = 0; i < tg->nexp; i++) {
		const struct gt_export *e = &tg->exp[i];
		const struct mdops *ops = export_ops(tg, e);

		/* An export listed but never read has nothing to resume
		 * from; it is written anyway (with zeros) so that it is not
		 * mistaken for a new one after the restart. */
		(void)wbuf_put_str8(w, t->clients[e->client].nid);
		(void)wbuf_put_varint(w, e->ino);
		(void)wbuf_put_u8(w,
		    (uint8_t)((e->classified ? 1u : 0u) | (e->cls & 3u) << 1 |
		        (e->have ? 8u : 0u) |
		        (ops != NULL ? GSTATE_F_OPS : 0u)));
		put_counters(w, &e->prev.c);
		(void)wbuf_put_varint(w, e->prev.samples);
		(void)wbuf_put_varint(w, e->prev.snap_ns);
		(void)wbuf_put_varint(w, e->prev.start_ns);
		if (ops != NULL)
			put_ops(w, ops);
		out_maybe_flush(o);
	}
}

static void
put_batch(struct gstate_out *o, const struct outbox_batch *b)
{
	struct wbuf *w = &o->w;
	size_t i;
	unsigned c;

	(void)wbuf_put_varint(w, b->batch);
	(void)wbuf_put_varint(w, b->first_sweep);
	(void)wbuf_put_varint(w, b->last_sweep);
	(void)wbuf_put_varint(w, b->start_ns);
	(void)wbuf_put_varint(w, b->n);
	for (i = 0; i < b->n; i++) {
		const struct outbox_rec *r = &b->recs[i];

		(void)wbuf_put_str8(w, r->fs);
		(void)wbuf_put_str8(w, r->nid);
		put_counters(w, &r->d);
		(void)wbuf_put_varint(w, r->span_us);
		for (c = 0; c < GT_NCOUNTERS; c++)
			(void)wbuf_put_varint(w, r->cspan_us[c]);
		put_ops(w, r->ops != OUTBOX_NO_OPS ? &b->ops[r->ops] : NULL);
		out_maybe_flush(o);
	}
}

static int
write_all(struct gstate_out *o, uint64_t scope, const struct gtable *t,
    const struct outbox *ob, uint64_t now_ns)
{
	uint8_t sum[SHA256_LEN];
	size_t i;
	ssize_t n;

	(void)wbuf_put(&o->w, GSTATE_MAGIC, 4);
	(void)wbuf_put_be32(&o->w, GSTATE_VERSION);
	(void)wbuf_put_be64(&o->w, now_ns);
	(void)wbuf_put_be64(&o->w, t->last_sweep_ns);
	(void)wbuf_put_be64(&o->w, ob->last_batch);
	(void)wbuf_put_be64(&o->w, scope);
	(void)wbuf_put_varint(&o->w, t->ntargets);
	for (i = 0; i < t->ntargets; i++)
		put_target(o, t, t->targets[i]);
	(void)wbuf_put_u8(&o->w, ob->have_inflight ? 1 : 0);
	if (ob->have_inflight)
		put_batch(o, &ob->inflight);
	put_batch(o, &ob->pending);
	out_flush(o);
	if (o->error != 0)
		return o->error;
	o->error = sha256_end(o->sha, sum);
	o->sha = NULL;
	if (o->error != 0)
		return o->error;
	n = write(o->fd, sum, sizeof(sum));
	if (n != (ssize_t)sizeof(sum))
		return n < 0 ? -errno : -EIO;
	return 0;
}

/* fsync the directory holding path, so that the rename is durable. */
static int
sync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	int fd, rc = 0;

	(void)snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		(void)snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	(void)close(fd);
	return rc;
}

int
gstate_save(const char *path, uint64_t scope, const struct gtable *t,
    const struct outbox *ob, struct lh_err *err)
{
	char tmp[PATH_MAX];
	struct gstate_out o;
	int rc;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return lh_err_set(err, 0, -ENAMETOOLONG, "path too long");
	memset(&o, 0, sizeof(o));
	wbuf_init(&o.w, 0);
	o.sha = sha256_begin();
	if (o.sha == NULL) {
		wbuf_free(&o.w);
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	}
	o.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (o.fd < 0) {
		rc = -errno;
		(void)sha256_end(o.sha, (uint8_t[SHA256_LEN]){0});
		wbuf_free(&o.w);
		return lh_err_set(err, 0, rc, "%s: %s", tmp, strerror(-rc));
	}
	rc = write_all(&o, scope, t, ob, clock_realtime_ns());
	if (o.sha != NULL)
		(void)sha256_end(o.sha, (uint8_t[SHA256_LEN]){0});
	wbuf_free(&o.w);
	if (rc == 0 && fsync(o.fd) < 0)
		rc = -errno;
	if (close(o.fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		(void)unlink(tmp);
		return lh_err_set(err, 0, rc, "cannot write: %s",
		    strerror(-rc));
	}
	/* The new file is in place either way; a failed directory sync
	 * only makes it less durable across a power cut. */
	(void)sync_dir_of(path);
	return 0;
}

#define BAD(err, what) lh_err_set((err), 0, -EBADMSG, "damaged: %s", (what))

static int
get_counters(struct rbuf *r, struct iocount *c)
{
	if (rbuf_get_varint(r, &c->read_bytes) < 0 ||
	    rbuf_get_varint(r, &c->write_bytes) < 0 ||
	    rbuf_get_varint(r, &c->read_ops) < 0 ||
	    rbuf_get_varint(r, &c->write_ops) < 0 ||
	    rbuf_get_varint(r, &c->oss_ops) < 0 ||
	    rbuf_get_varint(r, &c->mds_ops) < 0)
		return -1;
	return 0;
}

/* Op counts as put_ops() wrote them: *ret_mask says whether any. */
static int
get_ops(struct rbuf *r, struct mdops *m, uint64_t *ret_mask)
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
	*ret_mask = mask;
	return 0;
}

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

static int
get_target(struct rbuf *r, uint32_t version, struct gtable *t,
    struct lh_err *err)
{
	char name[LTREE_TARGET_MAX], fs[LTREE_FS_MAX], nid[NID_STR_MAX];
	struct delta_sample prev;
	struct mdops ops;
	struct gt_target *tg;
	uint64_t dev, ino, n, i, mask;
	uint8_t kind, flags;

	if (rbuf_get_str8(r, name, sizeof(name)) < 0 ||
	    rbuf_get_str8(r, fs, sizeof(fs)) < 0 || rbuf_get_u8(r, &kind) < 0 ||
	    rbuf_get_varint(r, &dev) < 0 || rbuf_get_varint(r, &ino) < 0 ||
	    rbuf_get_varint(r, &n) < 0)
		return BAD(err, "target");
	if (kind > LH_TARGET_MDT || name[0] == '\0' || fs[0] == '\0')
		return BAD(err, "target");
	/* Each export takes at least 12 bytes: refuse absurd counts before
	 * allocating for them. */
	if (n > r->len / 12)
		return BAD(err, "export count");
	tg = gtable_restore_target(t, name, fs, (enum lh_target_kind)kind, dev,
	    ino);
	if (tg == NULL)
		return BAD(err, "target repeated");
	for (i = 0; i < n; i++) {
		memset(&prev, 0, sizeof(prev));
		if (rbuf_get_str8(r, nid, sizeof(nid)) < 0 ||
		    rbuf_get_varint(r, &ino) < 0 ||
		    rbuf_get_u8(r, &flags) < 0 ||
		    get_counters(r, &prev.c) < 0 ||
		    rbuf_get_varint(r, &prev.samples) < 0 ||
		    rbuf_get_varint(r, &prev.snap_ns) < 0 ||
		    rbuf_get_varint(r, &prev.start_ns) < 0)
			return BAD(err, "export");
		if (nid[0] == '\0' || !export_flags_ok(flags, version, kind))
			return BAD(err, "export");
		if ((flags & GSTATE_F_OPS) != 0 && get_ops(r, &ops, &mask) < 0)
			return BAD(err, "export");
		/* Without op counts an MDT export's are unknown (NULL). */
		int rc = gtable_restore_export(t, tg, nid, ino,
		    (enum ltree_peer)(flags >> 1 & 3u), (flags & 1u) != 0,
		    (flags & 8u) != 0 ? &prev : NULL,
		    (flags & GSTATE_F_OPS) != 0 ? &ops : NULL);
		if (rc == -ENOMEM)
			return lh_err_set(err, 0, rc, "out of memory");
		if (rc < 0)
			return BAD(err,
			    rc == -EEXIST ? "export repeated" : "export");
	}
	return 0;
}

/* One saved batch, added to ob's pending batch. */
static int
get_batch(struct rbuf *r, uint32_t version, struct outbox *ob,
    uint64_t *ret_batch, struct lh_err *err)
{
	char fs[MSG_FS_MAX], nid[NID_STR_MAX];
	uint64_t batch, first, last, start, n, i, span, mask = 0;
	uint64_t cspan[GT_NCOUNTERS];
	struct iocount d;
	struct mdops ops;
	unsigned c;

	if (rbuf_get_varint(r, &batch) < 0 || rbuf_get_varint(r, &first) < 0 ||
	    rbuf_get_varint(r, &last) < 0 || rbuf_get_varint(r, &start) < 0 ||
	    rbuf_get_varint(r, &n) < 0)
		return BAD(err, "batch");
	if (n > r->len / 16 || first > last)
		return BAD(err, "batch");
	for (i = 0; i < n; i++) {
		if (rbuf_get_str8(r, fs, sizeof(fs)) < 0 ||
		    rbuf_get_str8(r, nid, sizeof(nid)) < 0 ||
		    get_counters(r, &d) < 0 || rbuf_get_varint(r, &span) < 0)
			return BAD(err, "record");
		for (c = 0; c < GT_NCOUNTERS; c++) {
			if (rbuf_get_varint(r, &cspan[c]) < 0)
				return BAD(err, "record");
		}
		if (version > GSTATE_V2 && get_ops(r, &ops, &mask) < 0)
			return BAD(err, "record");
		int rc = outbox_add(ob, fs, nid, &d, mask != 0 ? &ops : NULL,
		    span, cspan, last, start);
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
gstate_decode(const void *p, size_t n, uint64_t *ret_scope, struct gtable *t,
    struct outbox *ob, struct lh_err *err)
{
	uint8_t sum[SHA256_LEN], magic[4], inflight;
	uint64_t saved, last_sweep, last_batch, ntargets, i, batch = 0;
	uint32_t version;
	struct rbuf r;
	int rc;

	if (n < 4 + 4 + 32 + SHA256_LEN)
		return BAD(err, "too short");
	if (sha256(p, n - SHA256_LEN, sum) < 0)
		return lh_err_set(err, 0, -EIO, "cannot hash");
	if (!hmac_equal(sum, (const uint8_t *)p + n - SHA256_LEN, SHA256_LEN))
		return BAD(err, "checksum mismatch");
	rbuf_init(&r, p, n - SHA256_LEN);
	if (rbuf_get(&r, magic, 4) < 0 || memcmp(magic, GSTATE_MAGIC, 4) != 0)
		return BAD(err, "not a gatherer state file");
	if (rbuf_get_be32(&r, &version) < 0 ||
	    (version != GSTATE_VERSION && version != GSTATE_V2))
		return lh_err_set(err, 0, -EBADMSG,
		    "state format %u, this version reads %d and %d", version,
		    GSTATE_V2, GSTATE_VERSION);
	if (rbuf_get_be64(&r, &saved) < 0 ||
	    rbuf_get_be64(&r, &last_sweep) < 0 ||
	    rbuf_get_be64(&r, &last_batch) < 0 ||
	    rbuf_get_be64(&r, ret_scope) < 0 ||
	    rbuf_get_varint(&r, &ntargets) < 0 || ntargets > r.len / 8)
		return BAD(err, "header");
	outbox_free(ob);
	outbox_init(ob, last_batch);
	for (i = 0; i < ntargets; i++) {
		rc = get_target(&r, version, t, err);
		if (rc < 0)
			return rc;
	}
	if (rbuf_get_u8(&r, &inflight) < 0 || inflight > 1)
		return BAD(err, "outbox");
	if (inflight) {
		rc = get_batch(&r, version, ob, &batch, err);
		if (rc < 0)
			return rc;
		if (batch == 0 || batch > last_batch ||
		    outbox_restore_inflight(ob, batch) < 0)
			return BAD(err, "batch in flight");
	}
	rc = get_batch(&r, version, ob, &batch, err);
	if (rc < 0)
		return rc;
	if (batch != 0 || r.len != 0)
		return BAD(err, "trailing bytes");
	rc = outbox_check(ob);
	if (rc == -ENOMEM)
		return lh_err_set(err, 0, rc, "out of memory");
	if (rc < 0)
		return BAD(err, "deltas that cannot be sent");
	gtable_restored(t, last_sweep);
	return 0;
}

int
gstate_load(const char *path, uint64_t *ret_scope, struct gtable *t,
    struct outbox *ob, struct lh_err *err)
{
	struct stat sb;
	uint8_t *buf;
	size_t len = 0;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ENOENT)
			return rc;
		return lh_err_set(err, 0, rc, "%s", strerror(-rc));
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (size_t)sb.st_size > GSTATE_MAX) {
		(void)close(fd);
		return lh_err_set(err, 0, -EBADMSG,
		    "not a regular file of at most 1 GiB");
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (buf == NULL) {
		(void)close(fd);
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	}
	while (len < (size_t)sb.st_size + 1) {
		ssize_t n = read(fd, buf + len, (size_t)sb.st_size + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	(void)close(fd);
	rc = gstate_decode(buf, len, ret_scope, t, ob, err);
	free(buf);
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
