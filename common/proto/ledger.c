/* SPDX-License-Identifier: BSD-2-Clause */
/* Highest safe batch per sender, in memory and on disk. */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "err.h"
#include "ledger.h"
#include "msg.h"

struct ledger_entry {
	char name[MSG_NAME_MAX];
	uint64_t batch;
	bool held; /* its file could not be read: never written */
};

struct ledger {
	char *dir;
	struct ledger_entry *e;
	size_t n, cap;
};

int
ledger_new(struct ledger **ret, const char *dir)
{
	struct ledger *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return -ENOMEM;
	if (dir != NULL && (l->dir = strdup(dir)) == NULL) {
		free(l);
		return -ENOMEM;
	}
	*ret = l;
	return 0;
}

void
ledger_free(struct ledger *l)
{
	if (l == NULL)
		return;
	free(l->e);
	free(l->dir);
	free(l);
}

/* Names may hold any printable character: the file name is their hex. */
static int
entry_path(const struct ledger *l, const char *name, char *buf, size_t size)
{
	size_t off, i;
	int n = snprintf(buf, size, "%s/", l->dir);

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	off = (size_t)n;
	for (i = 0; name[i] != '\0'; i++) {
		if (off + 3 >= size)
			return -ENAMETOOLONG;
		(void)snprintf(buf + off, 3, "%02x", (unsigned char)name[i]);
		off += 2;
	}
	if (off + sizeof(".batch") > size)
		return -ENAMETOOLONG;
	memcpy(buf + off, ".batch", sizeof(".batch"));
	return 0;
}

int
ledger_parse(const char *text, size_t n, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i, digits = n;

	if (n > 0 && text[n - 1] == '\n')
		digits--;
	if (digits == 0 || digits > 20)
		return -EBADMSG;
	for (i = 0; i < digits; i++) {
		unsigned d;

		if (text[i] < '0' || text[i] > '9')
			return -EBADMSG;
		d = (unsigned)(text[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EBADMSG;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

/*
 * The sender's file: 0 and *ret (0 when there is none), or -EBADMSG with
 * the file and the reason in err.  A symlink is refused (O_NOFOLLOW): the
 * directory is this process's, nobody else's link is followed.
 */
static int
load(const struct ledger *l, const char *name, uint64_t *ret,
    struct lh_err *err)
{
	char path[4096], text[LEDGER_FILE_MAX + 2];
	size_t n = 0;
	ssize_t k;
	int fd, e;

	*ret = 0;
	if (l->dir == NULL)
		return 0;
	if (entry_path(l, name, path, sizeof(path)) < 0)
		return lh_err_set(err, 0, -EBADMSG, "%s/...: path too long",
		    l->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		e = errno;
		if (e == ENOENT)
			return 0;
		return lh_err_set(err, 0, -EBADMSG, "%s: %s", path,
		    e == ELOOP ? "a symbolic link" : strerror(e));
	}
	/* Read to the end: a number followed by anything is not one. */
	while (n < sizeof(text) &&
	    (k = read(fd, text + n, sizeof(text) - n)) != 0) {
		if (k < 0) {
			e = errno;
			if (e == EINTR)
				continue;
			(void)close(fd);
			return lh_err_set(err, 0, -EBADMSG, "%s: %s", path,
			    strerror(e));
		}
		n += (size_t)k;
	}
	(void)close(fd);
	if (n == 0)
		return lh_err_set(err, 0, -EBADMSG, "%s: empty", path);
	if (n > LEDGER_FILE_MAX || ledger_parse(text, n, ret) < 0)
		return lh_err_set(err, 0, -EBADMSG, "%s: not a batch number",
		    path);
	return 0;
}

static struct ledger_entry *
find(struct ledger *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->e[i].name, name) == 0)
			return &l->e[i];
	}
	return NULL;
}

/* The sender's entry, read from its file the first time and, while it is
 * held, every time (someone may have fixed it).  Returns 0 and *ret, or
 * -EBADMSG (held) or -ENOMEM, with err. */
static int
entry_get(struct ledger *l, const char *name, struct ledger_entry **ret,
    struct lh_err *err)
{
	struct ledger_entry *e = find(l, name);
	uint64_t v;
	int rc;

	if (e != NULL && !e->held) {
		*ret = e;
		return 0;
	}
	if (e == NULL) {
		if (strlen(name) >= MSG_NAME_MAX) {
			(void)lh_err_set(err, 0, -EINVAL, "name too long");
			return -EINVAL;
		}
		if (l->n == l->cap) {
			e = array_grow(l->e, &l->cap, l->n, sizeof(*e));
			if (e == NULL) {
				(void)lh_err_set(err, 0, -ENOMEM,
				    "out of memory");
				return -ENOMEM;
			}
			l->e = e;
		}
		e = &l->e[l->n++];
		memset(e, 0, sizeof(*e));
		memcpy(e->name, name, strlen(name) + 1);
	}
	rc = load(l, name, &v, err);
	e->held = rc < 0;
	if (rc < 0)
		return -EBADMSG;
	e->batch = v;
	*ret = e;
	return 0;
}

int
ledger_lookup(struct ledger *l, const char *sender, uint64_t *ret,
    struct lh_err *err)
{
	struct ledger_entry *e = NULL;
	int rc = entry_get(l, sender, &e, err);

	if (rc < 0 || e == NULL)
		return rc < 0 ? rc : -ENOMEM;
	*ret = e->batch;
	return 0;
}

uint64_t
ledger_get(struct ledger *l, const char *sender, struct lh_err *err)
{
	uint64_t v = 0;

	(void)ledger_lookup(l, sender, &v, err);
	return v;
}

/* Make the rename durable: the directory's entry is what a restart
 * reads. */
static int
sync_dir(const char *dir, struct lh_err *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return lh_err_set(err, 0, -errno, "%s: %s", dir,
		    strerror(errno));
	if (fsync(fd) < 0)
		rc = lh_err_set(err, 0, -EIO, "%s: fsync: %s", dir,
		    strerror(errno));
	(void)close(fd);
	return rc;
}

/* The temporary: created here, never an existing file nor a link planted
 * in its place (one left by a crash is removed first: unlink removes a
 * link, not what it points to). */
static int
open_tmp(const char *tmp)
{
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = open(tmp, flags, 0600);

	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
		fd = open(tmp, flags, 0600);
	return fd < 0 ? -errno : fd;
}

static int
store(const struct ledger *l, const char *name, uint64_t batch,
    struct lh_err *err)
{
	char path[4096], tmp[4200], text[32];
	int fd, n, rc = 0;

	if (entry_path(l, name, path, sizeof(path)) < 0)
		return lh_err_set(err, 0, -ENAMETOOLONG, "%s: path too long",
		    l->dir);
	(void)snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)batch);
	fd = open_tmp(tmp);
	if (fd < 0)
		return lh_err_set(err, 0, fd, "%s: %s", tmp, strerror(-fd));
	if (write(fd, text, (size_t)n) != n || fsync(fd) < 0)
		rc = lh_err_set(err, 0, -EIO, "%s: %s", tmp, strerror(errno));
	if (close(fd) < 0 && rc == 0)
		rc = lh_err_set(err, 0, -EIO, "%s: %s", tmp, strerror(errno));
	if (rc == 0 && rename(tmp, path) < 0)
		rc =
		    lh_err_set(err, 0, -errno, "%s: %s", path, strerror(errno));
	if (rc < 0) {
		(void)unlink(tmp);
		return rc;
	}
	return sync_dir(l->dir, err);
}

int
ledger_set(struct ledger *l, const char *sender, uint64_t batch,
    struct lh_err *err)
{
	struct ledger_entry *e = NULL;
	int rc = entry_get(l, sender, &e, err);

	if (rc < 0 || e == NULL)
		return rc < 0 ? rc : -ENOMEM;
	if (batch <= e->batch)
		return 0;
	e->batch = batch;
	return l->dir != NULL ? store(l, sender, batch, err) : 0;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int
ledger_file_sender(const char *file, char *out, size_t size)
{
	const char *dot = strrchr(file, '.');
	size_t n, i;

	if (dot == NULL || strcmp(dot, ".batch") != 0)
		return -EINVAL;
	n = (size_t)(dot - file);
	if (n == 0 || n % 2 != 0 || n / 2 >= size)
		return -EINVAL;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval((unsigned char)file[2 * i]);
		int lo = hexval((unsigned char)file[2 * i + 1]);

		if (hi < 0 || lo < 0 || (hi << 4 | lo) == 0)
			return -EINVAL;
		out[i] = (char)(hi << 4 | lo);
	}
	out[n / 2] = '\0';
	return 0;
}

int
ledger_each(const struct ledger *l, ledger_each_fn fn, void *arg)
{
	char name[256];
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int n = 0;

	if (l->dir == NULL)
		return 0;
	d = opendir(l->dir);
	if (d == NULL)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		if (ledger_file_sender(de->d_name, name, sizeof(name)) < 0 ||
		    fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		fn(arg, name, (int64_t)sb.st_mtime);
		n++;
	}
	(void)closedir(d);
	return n;
}
