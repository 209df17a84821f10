/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writing the gatherer's state journal (gstate_journal.h): records
 * appended, and compaction.  A record's body, every integer a varint
 * unless said otherwise:
 *
 *   be64 last sweep (ns), be64 last batch
 *   targets: count, then each: str8 name, str8 fs, u8 kind, dev, ino,
 *     its number of exports, u8 partial, idle snapshot (ns), then the
 *     exports written: count, then each as in the base (gstate.c)
 *   the outbox (gstate_jout.h; a journal of version 1: obstate.h), to the
 *   end of the body
 *
 * A partial target wrote only its changed exports: each of the others was
 * read idle this sweep, and a replay gives it the idle snapshot, the
 * earliest snapshot time read among them (its true one is at most a sweep's
 * reading time later: the first span after the restart is that much too
 * long, the rate slightly under, never a spike).  Otherwise every export
 * is written: one not read this sweep keeps its own snapshot time.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

int
gstate_journal_init(struct gstate_journal *j, const char *base,
    const char *journal)
{
	memset(j, 0, sizeof(*j));
	j->fd = -1;
	if (snprintf(j->base, sizeof(j->base), "%s", base) >=
	        (int)sizeof(j->base) ||
	    snprintf(j->path, sizeof(j->path), "%s", journal) >=
	        (int)sizeof(j->path))
		return -ENAMETOOLONG;
	return 0;
}

void
gstate_journal_close(struct gstate_journal *j)
{
	if (j->fd >= 0)
		(void)close(j->fd);
	j->fd = -1;
}

int
gstate_base_sum(const char *path, uint8_t sum[32], uint64_t *ret_len,
    struct lh_err *err)
{
	struct stat sb;
	ssize_t n = -1;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return lh_err_set(err, 0, -errno, "%s", strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_size < SHA256_LEN)
		rc = -EBADMSG;
	else
		n = pread(fd, sum, SHA256_LEN, sb.st_size - SHA256_LEN);
	if (rc == 0 && n != SHA256_LEN)
		rc = n < 0 ? -errno : -EBADMSG;
	(void)close(fd);
	if (rc < 0)
		return lh_err_set(err, 0, rc, "%s",
		    rc == -EBADMSG ? "damaged: too short" : strerror(-rc));
	if (ret_len != NULL)
		*ret_len = (uint64_t)sb.st_size;
	return 0;
}

/* An empty journal following the base just saved, put in place whole
 * (statefile_commit(): never torn), and opened to append. */
static int
journal_start(struct gstate_journal *j, struct lh_err *err)
{
	uint8_t sum[SHA256_LEN];
	struct statefile_out *o;
	struct stat sb;
	struct wbuf *w;
	int rc, fd;

	rc = gstate_base_sum(j->base, sum, &j->base_len, err);
	if (rc < 0)
		return rc;
	rc = statefile_create(j->path, &o, err);
	if (rc < 0)
		return rc;
	w = statefile_buf(o);
	(void)wbuf_put(w, GSTATE_JMAGIC, 4);
	(void)wbuf_put_be32(w, GSTATE_JVERSION);
	(void)wbuf_put(w, sum, sizeof(sum));
	rc = statefile_commit(o, err);
	if (rc < 0)
		return rc;
	fd = open(j->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return lh_err_set(err, 0, -errno, "%s: %s", j->path,
		    strerror(errno));
	if (fstat(fd, &sb) < 0) {
		rc = -errno;
		(void)close(fd);
		return lh_err_set(err, 0, rc, "%s: %s", j->path, strerror(-rc));
	}
	j->dev = (uint64_t)sb.st_dev;
	j->ino = (uint64_t)sb.st_ino;
	j->fd = fd;
	j->len = GSTATE_JSTART;
	j->records = 0;
	return 0;
}

/* A new base and an empty journal after it. */
static int
journal_compact(struct gstate_journal *j, uint64_t scope, struct gtable *t,
    const struct outbox *ob, struct lh_err *err)
{
	struct lh_err jerr;
	int rc;

	/* Never another record after this one's base: the old journal is
	 * closed first. */
	gstate_journal_close(j);
	rc = gstate_save(j->base, scope, t, ob, err);
	if (rc < 0)
		return rc;
	j->scope = scope;
	gtable_journaled(t);
	j->compacted = true;
	/* The base is whole on its own, and saved: the old journal names
	 * the old base and is ignored.  Without a new one, the next save
	 * compacts again. */
	if (journal_start(j, &jerr) < 0) {
		gstate_journal_close(j);
		j->written = 0;
		return 0;
	}
	j->written = j->base_len + GSTATE_JSTART;
	return 0;
}

/* tg's part of a record: see the top of this file. */
static void
put_target(struct statefile_out *o, const struct gtable *t,
    const struct gt_target *tg)
{
	struct wbuf *w = statefile_buf(o);
	uint64_t idle = UINT64_MAX;
	size_t i, nclean = 0;
	bool partial;

	for (i = 0; i < tg->nexp; i++) {
		const struct gt_export *e = &tg->exp[i];

		if (e->changed)
			continue;
		nclean++;
		if (e->prev_snap_ns < idle)
			idle = e->prev_snap_ns;
	}
	/* Every export not changed was read idle this sweep: none of them
	 * was missed (a read that failed, a listing cut short). */
	partial = nclean > 0 && nclean == tg->nidle;
	gstate_put_target_head(w, tg);
	(void)wbuf_put_varint(w, tg->nexp);
	(void)wbuf_put_u8(w, partial ? 1 : 0);
	(void)wbuf_put_varint(w, partial ? idle : 0);
	(void)wbuf_put_varint(w, partial ? tg->nexp - nclean : tg->nexp);
	for (i = 0; i < tg->nexp; i++) {
		if (partial && !tg->exp[i].changed)
			continue;
		gstate_put_export(w, t, tg, &tg->exp[i]);
		statefile_maybe_flush(o);
	}
}

/* Returns 0 or -ENOMEM. */
static int
put_record(struct statefile_out *o, const struct gtable *t,
    const struct outbox *ob)
{
	struct wbuf *w = statefile_buf(o);
	size_t i;

	(void)wbuf_put_be64(w, t->last_sweep_ns);
	(void)wbuf_put_be64(w, ob->last_batch);
	(void)wbuf_put_varint(w, t->ntargets);
	for (i = 0; i < t->ntargets; i++)
		put_target(o, t, t->targets[i]);
	return gstate_jout_put(o, t, ob);
}

/* All n bytes at off, or -errno. */
static int
pwrite_full(int fd, const void *p, size_t n, uint64_t off)
{
	const uint8_t *b = p;

	while (n > 0) {
		ssize_t got = pwrite(fd, b, n, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
		b += got;
		n -= (size_t)got;
		off += (uint64_t)got;
	}
	return 0;
}

/* The record's body after its (pending) header, through a bounded
 * buffer; its length and checksum into *ret_len and sum. */
static int
write_body(struct gstate_journal *j, const struct gtable *t,
    const struct outbox *ob, uint64_t *ret_len, uint8_t sum[SHA256_LEN],
    struct lh_err *err)
{
	struct statefile_out *o;
	off_t end;
	int rc;

	if (lseek(j->fd, (off_t)(j->len + GSTATE_JREC_HEAD), SEEK_SET) < 0)
		return lh_err_set(err, 0, -errno, "%s", strerror(errno));
	rc = statefile_append(j->fd, &o, err);
	if (rc < 0)
		return rc;
	/* Without memory the record is left unfinished, its header
	 * pending: the caller compacts. */
	if (put_record(o, t, ob) < 0) {
		(void)statefile_append_end(o, sum, err);
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	}
	rc = statefile_append_end(o, sum, err);
	if (rc < 0)
		return rc;
	end = lseek(j->fd, 0, SEEK_CUR);
	if (end < 0)
		return lh_err_set(err, 0, -errno, "%s", strerror(errno));
	*ret_len = (uint64_t)end - j->len - GSTATE_JREC_HEAD;
	if (*ret_len > GSTATE_JREC_MAX)
		return lh_err_set(err, 0, -EFBIG, "journal record too large");
	return 0;
}

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* One record: header pending, body, header, checksum, fdatasync(). */
static int
journal_append(struct gstate_journal *j, struct gtable *t,
    const struct outbox *ob, struct lh_err *err)
{
	static const uint8_t pending[GSTATE_JREC_HEAD] = {0xff, 0xff, 0xff,
	    0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t head[GSTATE_JREC_HEAD], sum[SHA256_LEN];
	uint64_t len = 0;
	int rc;

	rc = pwrite_full(j->fd, pending, sizeof(pending), j->len);
	if (rc == 0)
		rc = write_body(j, t, ob, &len, sum, err);
	else
		(void)lh_err_set(err, 0, rc, "%s", strerror(-rc));
	if (rc < 0)
		return rc;
	put_be32(head, (uint32_t)len);
	put_be32(head + 4, ~(uint32_t)len);
	rc = pwrite_full(j->fd, head, sizeof(head), j->len);
	if (rc == 0)
		rc = pwrite_full(j->fd, sum, sizeof(sum),
		    j->len + GSTATE_JREC_HEAD + len);
	if (rc == 0 && fdatasync(j->fd) < 0)
		rc = -errno;
	if (rc < 0)
		return lh_err_set(err, 0, rc, "cannot write: %s",
		    strerror(-rc));
	j->len += GSTATE_JREC_HEAD + len + SHA256_LEN;
	j->records++;
	j->written = GSTATE_JREC_HEAD + len + SHA256_LEN;
	gtable_journaled(t);
	return 0;
}

/* Whether the journal's name still leads to the file we append to: a
 * journal removed or replaced would take the records with it. */
static bool
journal_in_place(const struct gstate_journal *j)
{
	struct stat sb;

	return lstat(j->path, &sb) == 0 && (uint64_t)sb.st_dev == j->dev &&
	    (uint64_t)sb.st_ino == j->ino;
}

int
gstate_journal_save(struct gstate_journal *j, uint64_t scope, struct gtable *t,
    const struct outbox *ob, bool compact, struct lh_err *err)
{
	j->compacted = false;
	j->written = 0;
	/* Past the base's size a new base costs no more than the records
	 * since the last one did: bytes written stay within twice what
	 * changed.  Past GSTATE_JRECORDS_MAX records, a replay's time is
	 * bounded too. */
	if (compact || j->fd < 0 || scope != j->scope || gtable_forgot(t) ||
	    j->len > j->base_len || j->records >= GSTATE_JRECORDS_MAX ||
	    !journal_in_place(j))
		return journal_compact(j, scope, t, ob, err);
	if (journal_append(j, t, ob, err) == 0)
		return 0;
	/* What a failed append left at the end (a torn record) must never
	 * be followed by another: a new base and journal at once. */
	return journal_compact(j, scope, t, ob, err);
}
