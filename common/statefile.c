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
};

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
	wbuf_reset(&o->w);
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
	o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (o->fd < 0) {
		int rc = -errno;

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

int
statefile_read(const char *path, uint8_t **ret, size_t *ret_len,
    struct lh_err *err)
{
	struct stat sb;
	uint8_t *buf;
	size_t len = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		int rc = -errno;

		if (rc == -ENOENT)
			return rc;
		return lh_err_set(err, 0, rc, "%s", strerror(-rc));
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (size_t)sb.st_size > STATEFILE_MAX) {
		(void)close(fd);
		return lh_err_set(err, 0, -EBADMSG,
		    "not a regular file of at most 1 GiB");
	}
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
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	(void)close(fd);
	*ret = buf;
	*ret_len = len;
	return 0;
}
