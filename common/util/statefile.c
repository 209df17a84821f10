/* SPDX-License-Identifier: BSD-2-Clause */
/* Atomic, checksummed state files (statefile.h). */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "hmac.h"
#include "statefile.h"
#include "wire.h"

#define CHUNK ((size_t)64 * 1024)

struct statefile_out {
	char path[PATH_MAX];
	char tmp[PATH_MAX];
	int fd;
	struct wbuf w;
	struct sha256_ctx *sha;
	int error;
	uint64_t written; /* bytes written through fd by this writer */
	uint64_t kicked;  /* of which handed to writeback already */
};

/*
 * Every KICK bytes, start writing the last ones out to the disk without
 * waiting for them (sync_file_range(), as databases do), while the rest
 * is still being encoded: the fsync() at the end then waits for the last
 * piece, not for the whole file.  A state file of a busy OSS is 5-6 MB a
 * sweep.  Only a hint: on tmpfs, or where the call is refused, nothing
 * changes, and durability still comes from the fsync().
 */
#define KICK ((uint64_t)1024 * 1024)

static void
kick_writeback(struct statefile_out *o)
{
	uint64_t n = o->written - o->kicked;
	off_t end;

	if (n < KICK)
		return;
	/* fd's offset (shared with the caller's descriptor when
	 * appending) is where the bytes just written end. */
	end = lseek(o->fd, 0, SEEK_CUR);
	if (end >= (off_t)n)
		(void)sync_file_range(o->fd, end - (off_t)n, (off_t)n,
		    SYNC_FILE_RANGE_WRITE);
	o->kicked = o->written;
}

static void
out_flush(struct statefile_out *o)
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
	o->written += o->w.len;
	wbuf_reset(&o->w);
	kick_writeback(o);
}

static void
out_free(struct statefile_out *o)
{
	if (o->sha != NULL)
		(void)sha256_end(o->sha, (uint8_t[SHA256_LEN]){0});
	wbuf_free(&o->w);
	if (o->fd >= 0)
		(void)close(o->fd);
	free(o);
}

/*
 * path.tmp created anew, never through a symbolic link nor into a file
 * someone else made (O_EXCL | O_NOFOLLOW).  What is there already (a
 * crash's leftover, or a planted link) is removed first: unlink() removes
 * a link, never what it points to.  Returns the descriptor or -errno.
 */
static int
tmp_open(const char *tmp)
{
	const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = open(tmp, flags, 0600);

	if (fd < 0 && errno == EEXIST) {
		if (unlink(tmp) < 0)
			return -errno;
		fd = open(tmp, flags, 0600);
	}
	return fd < 0 ? -errno : fd;
}

int
statefile_create(const char *path, struct statefile_out **ret,
    struct lh_err *err)
{
	struct statefile_out *o = calloc(1, sizeof(*o));

	if (o == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	o->fd = -1;
	wbuf_init(&o->w, 0);
	if (snprintf(o->path, sizeof(o->path), "%s", path) >=
	        (int)sizeof(o->path) ||
	    snprintf(o->tmp, sizeof(o->tmp), "%s.tmp", path) >=
	        (int)sizeof(o->tmp)) {
		out_free(o);
		return lh_err_set(err, 0, -ENAMETOOLONG, "path too long");
	}
	o->sha = sha256_begin();
	if (o->sha == NULL) {
		out_free(o);
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	}
	o->fd = tmp_open(o->tmp);
	if (o->fd < 0) {
		int rc = o->fd;

		o->fd = -1;
		(void)lh_err_set(err, 0, rc, "%s: %s", o->tmp, strerror(-rc));
		out_free(o);
		return rc;
	}
	*ret = o;
	return 0;
}

struct wbuf *
statefile_buf(struct statefile_out *o)
{
	return &o->w;
}

void
statefile_maybe_flush(struct statefile_out *o)
{
	if (o->w.len >= CHUNK)
		out_flush(o);
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

static int
finish(struct statefile_out *o)
{
	uint8_t sum[SHA256_LEN];
	ssize_t n;
	int rc;

	out_flush(o);
	if (o->error != 0)
		return o->error;
	rc = sha256_end(o->sha, sum);
	o->sha = NULL;
	if (rc != 0)
		return rc;
	n = write(o->fd, sum, sizeof(sum));
	if (n != (ssize_t)sizeof(sum))
		return n < 0 ? -errno : -EIO;
	if (fsync(o->fd) < 0)
		return -errno;
	rc = close(o->fd) < 0 ? -errno : 0;
	o->fd = -1;
	if (rc == 0 && rename(o->tmp, o->path) < 0)
		rc = -errno;
	return rc;
}

int
statefile_commit(struct statefile_out *o, struct lh_err *err)
{
	int rc = finish(o);

	if (rc < 0) {
		(void)unlink(o->tmp);
		out_free(o);
		return lh_err_set(err, 0, rc, "cannot write: %s",
		    strerror(-rc));
	}
	/* The new file is in place either way; a failed directory sync
	 * only makes it less durable across a power cut. */
	(void)sync_dir_of(o->path);
	out_free(o);
	return 0;
}

void
statefile_discard(struct statefile_out *o)
{
	if (o == NULL)
		return;
	(void)unlink(o->tmp);
	out_free(o);
}

int
statefile_append(int fd, struct statefile_out **ret, struct lh_err *err)
{
	struct statefile_out *o = calloc(1, sizeof(*o));

	if (o == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	wbuf_init(&o->w, 0);
	o->sha = sha256_begin();
	o->fd = o->sha != NULL ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (o->fd < 0) {
		int rc = o->sha == NULL ? -ENOMEM : -errno;

		out_free(o);
		return lh_err_set(err, 0, rc, "%s", strerror(-rc));
	}
	*ret = o;
	return 0;
}

int
statefile_append_end(struct statefile_out *o, uint8_t sum[SHA256_LEN],
    struct lh_err *err)
{
	int rc;

	out_flush(o);
	rc = o->error;
	if (rc == 0) {
		rc = sha256_end(o->sha, sum) < 0 ? -EIO : 0;
		o->sha = NULL;
	}
	out_free(o);
	if (rc < 0)
		return lh_err_set(err, 0, rc, "cannot write: %s",
		    strerror(-rc));
	return 0;
}

int
statefile_verify(const void *p, size_t n, size_t *ret_body, struct lh_err *err)
{
	uint8_t sum[SHA256_LEN];

	if (n < SHA256_LEN)
		return lh_err_set(err, 0, -EBADMSG, "damaged: too short");
	if (sha256(p, n - SHA256_LEN, sum) < 0)
		return lh_err_set(err, 0, -EIO, "cannot hash");
	if (!hmac_equal(sum, (const uint8_t *)p + n - SHA256_LEN, SHA256_LEN))
		return lh_err_set(err, 0, -EBADMSG,
		    "damaged: checksum mismatch");
	*ret_body = n - SHA256_LEN;
	return 0;
}

/*
 * path opened for reading, with its size: never through a symbolic link,
 * never blocking on a FIFO.  Returns the descriptor, -ENOENT, -EBADMSG
 * (refused: a link, or too large), or another -errno (cannot be read: a
 * directory or another kind of file in the way, an I/O error), err set
 * but for -ENOENT.
 */
static int
in_open(const char *path, struct stat *sb, struct lh_err *err)
{
	const char *why = NULL;
	int fd, rc;

	/* Written on every path: the analyzer cannot tell rc < 0. */
	memset(sb, 0, sizeof(*sb));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		rc = errno > 0 ? -errno : -EIO;
		if (rc == -ENOENT)
			return rc;
		if (rc == -ELOOP) {
			rc = -EBADMSG;
			why = "a symbolic link, not a file";
		}
	} else if (fstat(fd, sb) < 0) {
		rc = errno > 0 ? -errno : -EIO;
	} else if (S_ISDIR(sb->st_mode)) {
		rc = -EISDIR;
		why = "a directory, not a file";
	} else if (!S_ISREG(sb->st_mode)) {
		rc = -EINVAL;
		why = "not a regular file";
	} else if ((size_t)sb->st_size > STATEFILE_MAX) {
		rc = -EBADMSG;
		why = "larger than 1 GiB";
	} else {
		return fd;
	}
	if (fd >= 0)
		(void)close(fd);
	(void)lh_err_set(err, 0, rc, "%s", why != NULL ? why : strerror(-rc));
	return rc;
}

int
statefile_read(const char *path, uint8_t **ret, size_t *ret_len,
    struct lh_err *err)
{
	struct stat sb;
	uint8_t *buf;
	size_t len = 0;
	int fd;

	fd = in_open(path, &sb, err);
	if (fd < 0)
		return fd;
	/* One byte more than the size: a file that grew is read whole. */
	buf = malloc((size_t)sb.st_size + 1);
	if (buf == NULL) {
		(void)close(fd);
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	}
	while (len < (size_t)sb.st_size + 1) {
		ssize_t n = read(fd, buf + len, (size_t)sb.st_size + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* An I/O error is not damage: the file is kept. */
			int rc = -errno;

			free(buf);
			(void)close(fd);
			return lh_err_set(err, 0, rc, "%s", strerror(-rc));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	(void)close(fd);
	*ret = buf;
	*ret_len = len;
	return 0;
}

struct statefile_in {
	int fd;
	uint64_t unread; /* body bytes still in the file */
	struct rbuf r;   /* the window: unconsumed bytes of buf */
	uint8_t buf[CHUNK];
};

/* All n bytes at p from fd, or -errno / -EBADMSG (the file shrank). */
static int
read_full(int fd, uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t got = read(fd, p, n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -EBADMSG;
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

/* The first pass: the body's SHA-256 against the trailing one. */
static int
in_verify(struct statefile_in *in, uint64_t body, struct lh_err *err)
{
	uint8_t sum[SHA256_LEN], want[SHA256_LEN];
	struct sha256_ctx *sha = sha256_begin();
	int rc = 0;

	if (sha == NULL)
		return lh_err_set(err, 0, -EIO, "cannot hash");
	while (body > 0 && rc == 0) {
		size_t n = body < CHUNK ? (size_t)body : CHUNK;

		rc = read_full(in->fd, in->buf, n);
		if (rc == 0 && sha256_update(sha, in->buf, n) < 0)
			rc = -EIO;
		body -= n;
	}
	if (rc == 0)
		rc = read_full(in->fd, want, sizeof(want));
	if (sha256_end(sha, sum) < 0 && rc == 0)
		rc = -EIO;
	if (rc == -EBADMSG)
		return lh_err_set(err, 0, rc, "damaged: shorter than it was");
	if (rc < 0)
		return lh_err_set(err, 0, rc, "%s", strerror(-rc));
	if (!hmac_equal(sum, want, SHA256_LEN))
		return lh_err_set(err, 0, -EBADMSG,
		    "damaged: checksum mismatch");
	return 0;
}

int
statefile_open(const char *path, size_t min_body, struct statefile_in **ret,
    struct lh_err *err)
{
	struct statefile_in *in;
	struct stat sb;
	int rc;

	in = malloc(sizeof(*in));
	if (in == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	/* The file is replaced by rename(), never rewritten in place: the
	 * open descriptor keeps seeing the same bytes in both passes. */
	in->fd = in_open(path, &sb, err);
	if (in->fd < 0) {
		rc = in->fd;
		free(in);
		return rc;
	}
	if ((size_t)sb.st_size < min_body + SHA256_LEN) {
		rc = lh_err_set(err, 0, -EBADMSG, "damaged: too short");
		goto fail;
	}
	in->unread = (uint64_t)sb.st_size - SHA256_LEN;
	rc = in_verify(in, in->unread, err);
	if (rc < 0)
		goto fail;
	if (lseek(in->fd, 0, SEEK_SET) < 0) {
		rc = -errno;
		rc = lh_err_set(err, 0, rc, "%s", strerror(-rc));
		goto fail;
	}
	rbuf_init(&in->r, in->buf, 0);
	*ret = in;
	return 0;

fail:
	statefile_in_close(in);
	return rc;
}

int
statefile_in_fd(int fd, uint64_t n, struct statefile_in **ret,
    struct lh_err *err)
{
	struct statefile_in *in = malloc(sizeof(*in));

	if (in == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	in->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (in->fd < 0) {
		int rc = -errno;

		free(in);
		return lh_err_set(err, 0, rc, "%s", strerror(-rc));
	}
	in->unread = n;
	rbuf_init(&in->r, in->buf, 0);
	*ret = in;
	return 0;
}

struct rbuf *
statefile_in_rbuf(struct statefile_in *in)
{
	return &in->r;
}

int
statefile_in_need(struct statefile_in *in, size_t n, struct lh_err *err)
{
	size_t room, want;
	int rc;

	if (in->r.len >= n || in->unread == 0)
		return 0;
	/* What is left of the window goes to the front, then as much of
	 * the body as fits after it. */
	memmove(in->buf, in->r.p, in->r.len);
	room = sizeof(in->buf) - in->r.len;
	want = in->unread < room ? (size_t)in->unread : room;
	rc = read_full(in->fd, in->buf + in->r.len, want);
	if (rc < 0)
		return lh_err_set(err, 0, rc, "%s",
		    rc == -EBADMSG ? "damaged: shorter than it was" :
		                     strerror(-rc));
	in->unread -= want;
	rbuf_init(&in->r, in->buf, in->r.len + want);
	return 0;
}

uint64_t
statefile_in_left(const struct statefile_in *in)
{
	return in->unread + in->r.len;
}

void
statefile_in_close(struct statefile_in *in)
{
	if (in == NULL)
		return;
	if (in->fd >= 0)
		(void)close(in->fd);
	free(in);
}

int
statefile_src_need(struct statefile_src *s, size_t n, struct lh_err *err)
{
	return s->in != NULL ? statefile_in_need(s->in, n, err) : 0;
}

uint64_t
statefile_src_left(const struct statefile_src *s)
{
	return s->in != NULL ? statefile_in_left(s->in) : s->r->len;
}

/* rename() that never replaces what is at to. */
static int
rename_noreplace(const char *from, const char *to)
{
	struct stat sb;

	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* A filesystem without RENAME_NOREPLACE: look first. */
	if (lstat(to, &sb) == 0)
		return -EEXIST;
	return rename(from, to) < 0 ? -errno : 0;
}

int
statefile_set_aside(const char *path, uint64_t now_s, char *ret_path,
    size_t len, struct lh_err *err)
{
	char bad[PATH_MAX];
	unsigned i;
	int n, rc = -EEXIST;

	for (i = 0; i < 100 && rc == -EEXIST; i++) {
		if (i == 0)
			n = snprintf(bad, sizeof(bad), "%s.bad.%llu", path,
			    (unsigned long long)now_s);
		else
			n = snprintf(bad, sizeof(bad), "%s.bad.%llu.%u", path,
			    (unsigned long long)now_s, i);
		if (n < 0 || (size_t)n >= sizeof(bad) || (size_t)n >= len)
			return lh_err_set(err, 0, -ENAMETOOLONG,
			    "path too long");
		rc = rename_noreplace(path, bad);
	}
	if (rc < 0)
		return lh_err_set(err, 0, rc, "cannot move it aside to %s: %s",
		    bad, strerror(-rc));
	(void)sync_dir_of(path);
	(void)snprintf(ret_path, len, "%s", bad);
	return 0;
}
