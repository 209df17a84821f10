/* SPDX-License-Identifier: BSD-2-Clause */
/* The privileged stats reader and the gatherer's end of it (reader.h). */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "err.h"
#include "log.h"
#include "lustre_tree.h"
#include "reader.h"
#include "statsfeed.h"

/* What the reader sends at once: a write per 128 KiB, not per file. */
#define READER_FLUSH ((size_t)128 * 1024)
/* The gatherer's receive buffer: the largest message and then some. */
#define READER_BUF   (4 + SFEED_MSG_MAX + (size_t)64 * 1024)

static int
write_all(int fd, const uint8_t *p, size_t len)
{
	while (len > 0) {
		/* No SIGPIPE: the other side going away is an error here. */
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Exactly len bytes; 1 on EOF before the first byte. */
static int
read_full(int fd, uint8_t *p, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return got == 0 ? 1 : -EPIPE;
		got += (size_t)n;
	}
	return 0;
}

static int
flush(int fd, struct wbuf *w, size_t above)
{
	int rc;

	if (wbuf_status(w) < 0)
		return wbuf_status(w);
	if (w->len < above || w->len == 0)
		return 0;
	rc = write_all(fd, w->data, w->len);
	wbuf_reset(w);
	return rc;
}

/* ---------------------------------------------------------- the reader */

struct serve {
	int fd;
	const char *root;
	struct ltree tree;
	struct wbuf out;
	char *stats, *uuid; /* one file each */
};

static int
serve_targets(struct serve *s)
{
	struct lh_err err;
	size_t i;
	int rc;

	ltree_clear(&s->tree);
	rc = ltree_discover(&s->tree, s->root, &err);
	for (i = 0; rc == 0 && i < s->tree.ntargets; i++) {
		const struct ltree_target *lt = &s->tree.targets[i];
		struct sfeed_target t;
		struct stat sb;

		memset(&t, 0, sizeof(t));
		if (fstat(lt->exports_fd, &sb) == 0) {
			t.dev = (uint64_t)sb.st_dev;
			t.ino = (uint64_t)sb.st_ino;
		}
		memcpy(t.name, lt->name, sizeof(t.name));
		memcpy(t.fs, lt->fs, sizeof(t.fs));
		t.kind = lt->kind;
		memcpy(t.path, lt->path, sizeof(t.path));
		rc = sfeed_put_target(&s->out, &t);
		if (rc == 0)
			rc = flush(s->fd, &s->out, READER_FLUSH);
	}
	if (rc < 0 && rc != -EPIPE)
		return sfeed_put_end(&s->out, rc);
	return rc < 0 ? rc : sfeed_put_end(&s->out, 0);
}

/* One NID directory's files into one record: dirfd is exports/, or with
 * in_nid the NID directory itself. */
static int
serve_nid(struct serve *s, struct ltree_target *lt, int dirfd, bool in_nid,
    const char *nid, uint64_t ino, bool with_uuid)
{
	char path[LTREE_NID_MAX + 16];
	struct sfeed_export e;

	memset(&e, 0, sizeof(e));
	(void)snprintf(e.nid, sizeof(e.nid), "%s", nid);
	e.ino = ino;
	if (with_uuid) {
		(void)snprintf(path, sizeof(path), "%s%suuid",
		    in_nid ? "" : nid, in_nid ? "" : "/");
		e.has_uuid = true;
		e.uuid = s->uuid;
		e.uuid_rc = ltree_read_at(dirfd, path, &lt->open_flags, s->uuid,
		    SFEED_FILE_MAX, &e.uuid_len);
	}
	(void)snprintf(path, sizeof(path), "%s%sstats", in_nid ? "" : nid,
	    in_nid ? "" : "/");
	e.stats = s->stats;
	e.stats_rc = ltree_read_stats_at(dirfd, path, &lt->open_flags, s->stats,
	    SFEED_FILE_MAX, &e.stats_len);
	if (sfeed_put_export(&s->out, &e) < 0)
		return wbuf_status(&s->out) < 0 ? wbuf_status(&s->out) :
		                                  -EMSGSIZE;
	return flush(s->fd, &s->out, READER_FLUSH);
}

/* The NID directories of exports/, as gather_target() lists them. */
static int
serve_exports(struct serve *s, struct ltree_target *lt, bool with_uuid)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0, listing = 0;

	fd = openat(lt->exports_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		rc = -errno;
		if (fd >= 0)
			(void)close(fd);
		return sfeed_put_end(&s->out, rc);
	}
	while ((de = ltree_next_entry(d, &listing)) != NULL) {
		if (de->d_name[0] == '.' || ltree_nid_is_local(de->d_name) ||
		    !sfeed_nid_ok(de->d_name) ||
		    !ltree_is_dir_entry(dirfd(d), de))
			continue;
		rc = serve_nid(s, lt, dirfd(d), false, de->d_name,
		    (uint64_t)de->d_ino, with_uuid);
		if (rc < 0)
			break;
	}
	if (rc == 0 && listing != 0)
		rc = -listing;
	(void)closedir(d);
	if (rc == -EPIPE || rc == -ECONNRESET)
		return rc;
	return sfeed_put_end(&s->out, rc);
}

static int
serve_nids(struct serve *s, struct ltree_target *lt, const struct sfeed_req *q)
{
	char nid[LTREE_NID_MAX];
	struct rbuf r;
	int rc;

	rbuf_init(&r, q->nids, q->nids_len);
	while ((rc = sfeed_next_nid(&r, nid, sizeof(nid))) == 0) {
		/* A name from the gatherer: a directory of exports/, never
		 * through a symbolic link. */
		int fd = openat(lt->exports_fd, nid,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0) {
			struct sfeed_export e;

			memset(&e, 0, sizeof(e));
			(void)snprintf(e.nid, sizeof(e.nid), "%s", nid);
			e.stats_rc = -errno;
			e.has_uuid = true;
			e.uuid_rc = e.stats_rc;
			rc = sfeed_put_export(&s->out, &e);
		} else {
			rc = serve_nid(s, lt, fd, true, nid, 0, true);
			(void)close(fd);
		}
		if (rc < 0)
			return rc;
	}
	return rc < 0 ? rc : sfeed_put_end(&s->out, 0);
}

static int
serve_one(struct serve *s, const uint8_t *msg, size_t len)
{
	struct sfeed_req q;
	struct lh_err err;
	int rc;

	rc = sfeed_decode_req(msg, len, &q, &err);
	if (rc < 0) {
		log_warnx("stats reader: %s from the gatherer, stopping",
		    err.reason);
		return rc;
	}
	if (q.type == SFEED_REQ_TARGETS)
		rc = serve_targets(s);
	else if (q.target >= s->tree.ntargets)
		rc = sfeed_put_end(&s->out, -ENOENT);
	else if (q.type == SFEED_REQ_EXPORTS)
		rc = serve_exports(s, &s->tree.targets[q.target], q.with_uuid);
	else
		rc = serve_nids(s, &s->tree.targets[q.target], &q);
	if (rc == 0)
		rc = flush(s->fd, &s->out, 0);
	return rc;
}

int
reader_serve(int fd, const char *root)
{
	struct serve s;
	uint8_t hdr[4], *msg;
	size_t len;
	int rc = 0, status = 1;

	memset(&s, 0, sizeof(s));
	s.fd = fd;
	s.root = root;
	wbuf_init(&s.out, 0);
	s.stats = malloc(SFEED_FILE_MAX);
	s.uuid = malloc(SFEED_FILE_MAX);
	msg = malloc(SFEED_REQ_MAX);
	if (s.stats == NULL || s.uuid == NULL || msg == NULL) {
		log_warnx("stats reader: out of memory");
		goto out;
	}
	for (;;) {
		rc = read_full(fd, hdr, sizeof(hdr));
		if (rc == 1) {
			status = 0; /* the gatherer is gone: so are we */
			break;
		}
		if (rc == 0 &&
		    (sfeed_msg_len(hdr, sizeof(hdr), &len) < 0 ||
		        len > SFEED_REQ_MAX))
			rc = -EBADMSG;
		if (rc == 0)
			rc = read_full(fd, msg, len);
		if (rc == 0)
			rc = serve_one(&s, msg, len);
		if (rc != 0)
			break;
	}
	if (rc < 0 && rc != -EPIPE && rc != -ECONNRESET)
		log_warnx("stats reader: %s, stopping", strerror(-rc));
out:
	ltree_free(&s.tree);
	wbuf_free(&s.out);
	free(s.stats);
	free(s.uuid);
	free(msg);
	(void)close(fd);
	return status;
}

/* -------------------------------------------------- the gatherer's end */

int
reader_conn_init(struct reader_conn *c, int fd, pid_t pid)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->pid = pid;
	wbuf_init(&c->out, SFEED_REQ_MAX + 4);
	c->cap = READER_BUF;
	c->buf = malloc(c->cap);
	return c->buf == NULL ? -ENOMEM : 0;
}

void
reader_conn_close(struct reader_conn *c)
{
	if (c->fd >= 0)
		(void)close(c->fd);
	if (c->pid > 0) {
		pid_t w;

		do
			w = waitpid(c->pid, NULL, 0);
		while (w < 0 && errno == EINTR);
	}
	free(c->buf);
	wbuf_free(&c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

int
reader_send(struct reader_conn *c, struct lh_err *err)
{
	int rc = flush(c->fd, &c->out, 0);

	if (rc < 0)
		return lh_err_set(err, 0, rc, "stats reader (pid %ld): %s",
		    (long)c->pid, strerror(-rc));
	return 0;
}

int
reader_next(struct reader_conn *c, struct sfeed_rec *ret, struct lh_err *err)
{
	struct lh_err why;
	size_t len;
	ssize_t n;

	for (;;) {
		int rc =
		    sfeed_msg_len(c->buf + c->start, c->end - c->start, &len);
		if (rc == -EBADMSG)
			return lh_err_set(err, 0, rc,
			    "stats reader (pid %ld): message out of bounds",
			    (long)c->pid);
		if (rc == 0 && c->end - c->start >= 4 + len) {
			rc = sfeed_decode_rec(c->buf + c->start + 4, len, ret,
			    &why);
			c->start += 4 + len;
			if (rc < 0)
				return lh_err_set(err, 0, rc,
				    "stats reader (pid %ld): %s", (long)c->pid,
				    why.reason);
			return 0;
		}
		/* The records handed out before are done with: make room. */
		if (c->start > 0) {
			memmove(c->buf, c->buf + c->start, c->end - c->start);
			c->end -= c->start;
			c->start = 0;
		}
		do
			n = read(c->fd, c->buf + c->end, c->cap - c->end);
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			return lh_err_set(err, 0, n == 0 ? -EPIPE : -errno,
			    "stats reader (pid %ld): %s", (long)c->pid,
			    n == 0 ? "gone" : strerror(errno));
		c->end += (size_t)n;
	}
}

int
reader_discover(struct reader_conn *c, struct ltree *t, struct lh_err *err)
{
	struct ltree_target lt;
	struct sfeed_rec r;
	bool nomem = false;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = sfeed_put_req(&c->out, SFEED_REQ_TARGETS, 0, false);
	if (rc == 0)
		rc = reader_send(c, err);
	while (rc == 0 && (rc = reader_next(c, &r, err)) == 0 &&
	    r.type == SFEED_TARGET) {
		memset(&lt, 0, sizeof(lt));
		memcpy(lt.name, r.target.name, sizeof(lt.name));
		memcpy(lt.fs, r.target.fs, sizeof(lt.fs));
		lt.kind = r.target.kind;
		lt.exports_fd = -1;
		memcpy(lt.path, r.target.path, sizeof(lt.path));
		lt.dev = r.target.dev;
		lt.ino = r.target.ino;
		/* Out of memory: read the rest of the answer all the same. */
		if (ltree_add(t, &lt) < 0)
			nomem = true;
	}
	if (rc < 0)
		return rc;
	if (r.type != SFEED_END)
		return lh_err_set(err, 0, -EBADMSG,
		    "stats reader (pid %ld): record %u in a list of targets",
		    (long)c->pid, (unsigned)r.type);
	/* The reader's own trouble (a path too long, its memory) is what
	 * the gatherer's discovery would have said. */
	if (r.end_rc < 0)
		log_warnx("stats reader: targets under lustre_root: %s",
		    strerror(-r.end_rc));
	if (nomem)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	return 0;
}

/* NIDs the gatherer wants again, with their uuid. */
struct again_nid {
	char nid[LTREE_NID_MAX];
	uint64_t ino;
};

struct again {
	struct again_nid *v;
	size_t n, cap;
};

static int
again_add(struct again *a, const char *nid, uint64_t ino)
{
	struct again_nid *v = array_grow(a->v, &a->cap, a->n, sizeof(*v));

	if (v == NULL)
		return -ENOMEM;
	a->v = v;
	(void)snprintf(a->v[a->n].nid, LTREE_NID_MAX, "%s", nid);
	a->v[a->n++].ino = ino;
	return 0;
}

/*
 * One answer, up to its end record (status in *ret_end).  asked: the
 * NIDs of a NIDS request, answered in order (NULL: a listing, whose NIDs
 * fn wants again go to a).  Returns 0, fn's error or -ENOMEM (the answer
 * read to its end all the same), or -EPIPE with err's reason.
 */
static int
read_answer(struct reader_conn *c, reader_export_fn fn, void *arg,
    struct again *a, const struct again_nid *asked, size_t nasked, int *ret_end,
    struct lh_err *err)
{
	struct sfeed_rec r;
	size_t i = 0;
	int rc = 0, frc;

	memset(&r, 0, sizeof(r));
	for (;;) {
		bool again = false;

		if (reader_next(c, &r, err) < 0)
			return -EPIPE;
		if (r.type == SFEED_END) {
			*ret_end = r.end_rc;
			return rc;
		}
		if (r.type != SFEED_EXPORT ||
		    (asked != NULL &&
		        (i >= nasked || strcmp(r.exp.nid, asked[i].nid) != 0)))
			return lh_err_set(err, 0, -EPIPE,
			    "stats reader (pid %ld): record %u out of place",
			    (long)c->pid, (unsigned)r.type);
		i++;
		if (rc < 0)
			continue;
		frc = fn(arg, &r.exp,
		    asked != NULL ? asked[i - 1].ino : r.exp.ino, &again);
		if (frc < 0)
			rc = frc;
		else if (again && a != NULL &&
		    again_add(a, r.exp.nid, r.exp.ino) < 0)
			rc = -ENOMEM;
	}
}

int
reader_read_target(struct reader_conn *c, uint32_t index, bool with_uuid,
    reader_export_fn fn, void *arg, int *ret_end, struct lh_err *err)
{
	struct again a = {NULL, 0, 0};
	size_t i, j, off;
	int rc, end2 = 0;

	rc = sfeed_put_req(&c->out, SFEED_REQ_EXPORTS, index, with_uuid);
	if (rc == 0)
		rc = reader_send(c, err) < 0 ? -EPIPE : 0;
	if (rc == 0)
		rc = read_answer(c, fn, arg, &a, NULL, 0, ret_end, err);
	if (rc == 0 && a.n > 0)
		log_debug("stats reader: %zu NIDs of target %u asked for "
		          "again, with their uuid",
		    a.n, (unsigned)index);
	for (i = 0; rc == 0 && i < a.n; i = j) {
		rc = sfeed_begin_nids(&c->out, index, &off);
		for (j = i; rc == 0 && j < a.n &&
		     c->out.len + LTREE_NID_MAX + 1 < SFEED_REQ_MAX;
		     j++)
			rc = sfeed_add_nid(&c->out, a.v[j].nid);
		if (rc == 0)
			rc = sfeed_end_nids(&c->out, off);
		if (rc == 0)
			rc = reader_send(c, err) < 0 ? -EPIPE : 0;
		if (rc == 0)
			rc = read_answer(c, fn, arg, NULL, &a.v[i], j - i,
			    &end2, err);
	}
	free(a.v);
	if (rc < 0 && rc != -EPIPE && rc != -ENOMEM)
		rc = lh_err_set(err, 0, -EPIPE, "stats reader (pid %ld): %s",
		    (long)c->pid, strerror(-rc));
	return rc;
}
