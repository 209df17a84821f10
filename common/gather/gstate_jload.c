/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Loading the gatherer's state journal (gstate_journal.h; its layout in
 * gstate_int.h and gstate_journal.c).  Two passes, as a state file is
 * read: the first checks every record's checksum and finds where the good
 * ones end (a torn last record dropped, a bad one followed by more bytes
 * refused), the second replays the good ones, each a window at a time.
 * Only the last record's outbox is decoded: the earlier ones were
 * replaced by it.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "gstate.h"
#include "gstate_int.h"
#include "gstate_jout.h"
#include "gstate_journal.h"
#include "gtable.h"
#include "hmac.h"
#include "obstate.h"
#include "outbox.h"
#include "statefile.h"
#include "wire.h"

#define CHUNK ((size_t)64 * 1024)
#define BAD(err, what)                                                         \
	lh_err_set((err), 0, -EBADMSG, "journal damaged: %s", (what))

/* The journal's bytes: in memory (p), or a file (fd, read through buf). */
struct jsrc {
	int fd;
	const uint8_t *p;
	uint64_t size;
	uint8_t *buf;
};

/* n bytes at off into dst: 0, or -errno. */
static int
jsrc_read(const struct jsrc *s, uint64_t off, void *dst, size_t n)
{
	uint8_t *d = dst;

	if (s->p != NULL) {
		memcpy(d, s->p + off, n);
		return 0;
	}
	while (n > 0) {
		ssize_t got = pread(s->fd, d, n, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
		d += got;
		n -= (size_t)got;
		off += (uint64_t)got;
	}
	return 0;
}

/* The SHA-256 of n bytes at off. */
static int
jsrc_hash(const struct jsrc *s, uint64_t off, uint64_t n, uint8_t *sum)
{
	struct sha256_ctx *sha;
	int rc = 0;

	if (s->p != NULL)
		return sha256(s->p + off, (size_t)n, sum) < 0 ? -EIO : 0;
	sha = sha256_begin();
	if (sha == NULL)
		return -ENOMEM;
	while (n > 0 && rc == 0) {
		size_t k = n < CHUNK ? (size_t)n : CHUNK;

		rc = jsrc_read(s, off, s->buf, k);
		if (rc == 0 && sha256_update(sha, s->buf, k) < 0)
			rc = -EIO;
		off += k;
		n -= k;
	}
	if (sha256_end(sha, sum) < 0 && rc == 0)
		rc = -EIO;
	return rc;
}

/* Whether the record at off is whole and good: 1, 0 (not), or -errno.
 * *ret_len: its body's length when its header is sound, else
 * GSTATE_JREC_PENDING. */
static int
record_good(const struct jsrc *s, uint64_t off, uint32_t *ret_len)
{
	uint8_t head[GSTATE_JREC_HEAD], sum[SHA256_LEN], want[SHA256_LEN];
	uint32_t len;
	int rc;

	*ret_len = GSTATE_JREC_PENDING;
	if (s->size - off < GSTATE_JREC_HEAD + SHA256_LEN)
		return 0;
	rc = jsrc_read(s, off, head, sizeof(head));
	if (rc < 0)
		return rc;
	len = wire_be32(head);
	if ((len ^ wire_be32(head + 4)) != 0xffffffffu || len > GSTATE_JREC_MAX)
		return 0;
	*ret_len = len;
	if (s->size - off - GSTATE_JREC_HEAD - SHA256_LEN < len)
		return 0;
	rc = jsrc_hash(s, off + GSTATE_JREC_HEAD, len, sum);
	if (rc == 0)
		rc = jsrc_read(s, off + GSTATE_JREC_HEAD + len, want,
		    sizeof(want));
	if (rc < 0)
		return rc;
	return hmac_equal(sum, want, SHA256_LEN) ? 1 : 0;
}

/* Whether a good record starts in the n bytes at b (from off on): 1,
 * 0, or -errno. */
static int
good_in(const struct jsrc *s, const uint8_t *b, size_t n, uint64_t off)
{
	uint32_t len;
	size_t i;
	int rc;

	for (i = 0; i + GSTATE_JREC_HEAD <= n; i++) {
		if ((wire_be32(b + i) ^ wire_be32(b + i + 4)) != 0xffffffffu)
			continue;
		rc = record_good(s, off + i, &len);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/*
 * After a record whose header is not sound: whether a good record starts
 * anywhere after off (then the bad one was damage in the middle, not a
 * torn end).  Headers are looked for first, a window at a time; only one
 * that could be a record's has its checksum checked.  1, 0, or -errno.
 */
static int
good_after(const struct jsrc *s, uint64_t off)
{
	uint8_t *win = NULL;
	uint64_t o = off + 1;
	int rc = 0;

	if (s->p == NULL && (win = malloc(CHUNK)) == NULL)
		return -ENOMEM;
	while (rc == 0 && o < s->size &&
	    s->size - o >= GSTATE_JREC_HEAD + SHA256_LEN) {
		size_t n = s->size - o < CHUNK ? (size_t)(s->size - o) : CHUNK;

		if (win != NULL)
			rc = jsrc_read(s, o, win, n);
		if (rc == 0)
			rc = good_in(s, win != NULL ? win : s->p + o, n, o);
		/* The next window overlaps by a header less a byte. */
		o += n - (GSTATE_JREC_HEAD - 1);
	}
	free(win);
	return rc;
}

/* The record at off is not good: 0 when it is a torn end (dropped), or
 * -EBADMSG (damage: something good or whole follows it). */
static int
bad_record(const struct jsrc *s, uint64_t off, uint32_t len, struct lh_err *err)
{
	int rc;

	if (len != GSTATE_JREC_PENDING)
		return off + GSTATE_JREC_HEAD + len + SHA256_LEN < s->size ?
		    BAD(err, "a bad record followed by others") :
		    0;
	/* A header still pending, or half written, is the record being
	 * appended when the writer stopped: nothing ever follows it. */
	if (s->size - off >= GSTATE_JREC_HEAD) {
		uint8_t head[GSTATE_JREC_HEAD];

		rc = jsrc_read(s, off, head, sizeof(head));
		if (rc < 0)
			return lh_err_set(err, 0, rc, "%s", strerror(-rc));
		if (wire_be32(head) == GSTATE_JREC_PENDING ||
		    wire_be32(head + 4) == GSTATE_JREC_PENDING)
			return 0;
	}
	rc = good_after(s, off);
	if (rc < 0)
		return lh_err_set(err, 0, rc, "%s", strerror(-rc));
	return rc > 0 ? BAD(err, "a bad record header followed by records") : 0;
}

/* The first pass: the number of good records, and the bytes after them
 * (a torn end) into info. */
static int
scan(const struct jsrc *s, size_t *ret_n, struct gstate_jinfo *info,
    struct lh_err *err)
{
	uint64_t off = GSTATE_JSTART;
	size_t n = 0;
	uint32_t len;

	while (off < s->size) {
		int rc = record_good(s, off, &len);

		if (rc < 0)
			return lh_err_set(err, 0, rc, "%s", strerror(-rc));
		if (rc == 0) {
			rc = bad_record(s, off, len, err);
			if (rc < 0)
				return rc;
			break;
		}
		n++;
		off += GSTATE_JREC_HEAD + (uint64_t)len + SHA256_LEN;
	}
	info->dropped = s->size - off;
	*ret_n = n;
	return 0;
}

/* The exports of tg after its part of a record: each one not written
 * takes the idle snapshot (partial) or is missing (damage). */
static int
target_settle(struct gt_target *tg, bool partial, uint64_t idle,
    struct lh_err *err)
{
	size_t i;

	for (i = 0; i < tg->nexp; i++) {
		struct gt_export *e = &tg->exp[i];

		if (!e->changed && !partial)
			return BAD(err, "an export missing");
		if (!e->changed && e->have)
			e->prev_snap_ns = idle;
		e->changed = 0;
	}
	return 0;
}

/* One target's part of a record. */
static int
apply_target(struct statefile_src *src, struct gtable *t, struct lh_err *err)
{
	struct rbuf *r = src->r;
	struct gstate_target_head h;
	uint64_t nexp, idle, nw, i;
	struct gt_target *tg;
	uint8_t partial;
	int rc;

	rc = statefile_src_need(src, STATEFILE_RECORD_MAX, err);
	if (rc < 0)
		return rc;
	if (gstate_get_target_head(r, &h) < 0 ||
	    rbuf_get_varint(r, &nexp) < 0 || rbuf_get_u8(r, &partial) < 0 ||
	    rbuf_get_varint(r, &idle) < 0 || rbuf_get_varint(r, &nw) < 0)
		return BAD(err, "target");
	if (partial > 1 || nw > nexp || nw > statefile_src_left(src) / 12)
		return BAD(err, "target");
	tg = gtable_find_target(t, h.name);
	if (tg == NULL)
		tg = gtable_restore_target(t, h.name, h.fs,
		    (enum lh_target_kind)h.kind, h.dev, h.ino);
	if (tg == NULL || strcmp(tg->fs, h.fs) != 0 || tg->kind != h.kind)
		return BAD(err, "target");
	tg->dev = h.dev;
	tg->ino = h.ino;
	for (i = 0; i < nw; i++) {
		rc = gstate_get_export(src, GSTATE_VERSION, t, tg, true, err);
		if (rc < 0)
			return rc;
	}
	if (tg->nexp != nexp)
		return BAD(err, "exports differ from its base");
	return target_settle(tg, partial != 0, idle, err);
}

/* One record's body; last: its outbox is the one restored. */
static int
apply_record(struct statefile_src *src, uint32_t version, bool last,
    struct gtable *t, struct outbox *ob, struct lh_err *err)
{
	uint64_t last_sweep, last_batch, ntargets, i;
	int rc;

	rc = statefile_src_need(src, STATEFILE_RECORD_MAX, err);
	if (rc < 0)
		return rc;
	if (rbuf_get_be64(src->r, &last_sweep) < 0 ||
	    rbuf_get_be64(src->r, &last_batch) < 0 ||
	    rbuf_get_varint(src->r, &ntargets) < 0 ||
	    ntargets > statefile_src_left(src) / 8)
		return BAD(err, "record");
	for (i = 0; i < ntargets; i++) {
		rc = apply_target(src, t, err);
		if (rc < 0)
			return rc;
	}
	if (t->ntargets != ntargets)
		return BAD(err, "targets differ from its base");
	if (last) {
		outbox_free(ob);
		outbox_init(ob, last_batch);
		rc = version == GSTATE_JVERSION1 ?
		    obstate_get(src, true, ob, err) :
		    gstate_jout_get(src, t, ob, err);
		if (rc < 0)
			return rc;
		if (statefile_src_left(src) != 0)
			return BAD(err, "trailing bytes");
	}
	gtable_restored(t, last_sweep);
	return 0;
}

/* The second pass: the first n records, in order. */
static int
replay(const struct jsrc *s, uint32_t version, size_t n, struct gtable *t,
    struct outbox *ob, struct lh_err *err)
{
	uint8_t head[GSTATE_JREC_HEAD];
	uint64_t off = GSTATE_JSTART;
	size_t k;

	for (k = 0; k < n; k++) {
		struct statefile_in *in = NULL;
		struct statefile_src src;
		struct rbuf r;
		uint32_t len;
		int rc;

		rc = jsrc_read(s, off, head, sizeof(head));
		if (rc < 0)
			return lh_err_set(err, 0, rc, "%s", strerror(-rc));
		len = wire_be32(head);
		off += GSTATE_JREC_HEAD;
		if (s->p != NULL) {
			rbuf_init(&r, s->p + off, len);
			src.r = &r;
		} else if (lseek(s->fd, (off_t)off, SEEK_SET) < 0) {
			return lh_err_set(err, 0, -errno, "%s",
			    strerror(errno));
		} else {
			rc = statefile_in_fd(s->fd, len, &in, err);
			if (rc < 0)
				return rc;
			src.r = statefile_in_rbuf(in);
		}
		src.in = in;
		rc = apply_record(&src, version, k + 1 == n, t, ob, err);
		statefile_in_close(in);
		if (rc < 0)
			return rc;
		off += (uint64_t)len + SHA256_LEN;
	}
	return 0;
}

/* The header, then both passes. */
static int
journal_replay(const struct jsrc *s, const uint8_t base_sum[SHA256_LEN],
    struct gtable *t, struct outbox *ob, struct gstate_jinfo *info,
    struct lh_err *err)
{
	uint8_t head[GSTATE_JSTART], sum[SHA256_LEN];
	uint32_t version;
	size_t n = 0;
	int rc;

	info->journal_found = true;
	if (s->size < GSTATE_JSTART)
		return BAD(err, "header");
	rc = jsrc_read(s, 0, head, sizeof(head));
	if (rc < 0)
		return lh_err_set(err, 0, rc, "%s", strerror(-rc));
	if (sha256(head, GSTATE_JHEAD, sum) < 0)
		return lh_err_set(err, 0, -EIO, "cannot hash");
	if (memcmp(head, GSTATE_JMAGIC, 4) != 0 ||
	    !hmac_equal(sum, head + GSTATE_JHEAD, SHA256_LEN))
		return BAD(err, "header");
	/* Version 1 (the outbox as the base writes it) is still read: an
	 * upgrade keeps the deltas not yet acknowledged. */
	version = wire_be32(head + 4);
	if (version != GSTATE_JVERSION && version != GSTATE_JVERSION1)
		return lh_err_set(err, 0, -EBADMSG,
		    "journal of format %u, this version reads %d to %d",
		    version, GSTATE_JVERSION1, GSTATE_JVERSION);
	if (!hmac_equal(head + 8, base_sum, SHA256_LEN)) {
		/* Left behind by a compaction that put a newer base in
		 * place: that base holds all it held. */
		info->other_base = true;
		return 0;
	}
	rc = scan(s, &n, info, err);
	if (rc == 0)
		rc = replay(s, version, n, t, ob, err);
	if (rc == 0)
		info->records = n;
	return rc;
}

int
gstate_journal_decode(const void *p, size_t n, const uint8_t base_sum[32],
    struct gtable *t, struct outbox *ob, struct gstate_jinfo *info,
    struct lh_err *err)
{
	struct jsrc s = {-1, p, n, NULL};

	memset(info, 0, sizeof(*info));
	gtable_journaled(t);
	return journal_replay(&s, base_sum, t, ob, info, err);
}

/* The journal at path opened, with its size: 0, -ENOENT, -EBADMSG (a
 * link, not a regular file, too large) or -errno. */
static int
journal_open(const char *path, uint64_t *ret_size, struct lh_err *err)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0 && errno == ELOOP)
		return BAD(err, "a symbolic link, not a file");
	if (fd < 0)
		return lh_err_set(err, 0, -errno, "journal: %s",
		    strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size > STATEFILE_MAX) {
		(void)close(fd);
		return BAD(err, "not a regular file of at most 1 GiB");
	}
	*ret_size = (uint64_t)sb.st_size;
	return fd;
}

int
gstate_journal_load(const char *base, const char *journal, uint64_t *ret_scope,
    struct gtable *t, struct outbox *ob, struct gstate_jinfo *info,
    struct lh_err *err)
{
	uint8_t sum[SHA256_LEN];
	struct jsrc s = {-1, NULL, 0, NULL};
	int rc;

	memset(info, 0, sizeof(*info));
	rc = gstate_load(base, ret_scope, t, ob, err);
	if (rc < 0)
		return rc;
	gtable_journaled(t);
	rc = gstate_base_sum(base, sum, NULL, err);
	if (rc < 0)
		return rc;
	s.fd = journal_open(journal, &s.size, err);
	if (s.fd == -ENOENT)
		return 0;
	if (s.fd < 0)
		return s.fd;
	s.buf = malloc(CHUNK);
	rc = s.buf == NULL ? lh_err_set(err, 0, -ENOMEM, "out of memory") :
	                     journal_replay(&s, sum, t, ob, info, err);
	free(s.buf);
	(void)close(s.fd);
	return rc;
}
