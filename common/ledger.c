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

#include "err.h"
#include "ledger.h"
#include "msg.h"

struct ledger_entry {
	char name[MSG_NAME_MAX];
	uint64_t batch;
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

static uint64_t
load(const struct ledger *l, const char *name, struct lh_err *err)
{
	char path[4096], text[32], *end;
	unsigned long long v;
	ssize_t n;
	int fd;

	if (l->dir == NULL || entry_path(l, name, path, sizeof(path)) < 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			(void)lh_err_set(err, 0, -errno, "%s: %s", path,
			    strerror(errno));
		return 0;
	}
	n = read(fd, text, sizeof(text) - 1);
	(void)close(fd);
	if (n <= 0) {
		(void)lh_err_set(err, 0, -EIO, "%s: empty or unreadable", path);
		return 0;
	}
	text[n] = '\0';
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno != 0 || end == text || (*end != '\n' && *end != '\0')) {
		(void)lh_err_set(err, 0, -EBADMSG, "%s: not a batch number",
		    path);
		return 0;
	}
	return v;
}

static struct ledger_entry *
find(struct ledger *l, const char *name, bool create, struct lh_err *err)
{
	struct ledger_entry *e;
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->e[i].name, name) == 0)
			return &l->e[i];
	}
	if (!create || strlen(name) >= MSG_NAME_MAX)
		return NULL;
	if (l->n == l->cap) {
		size_t cap = l->cap == 0 ? 16 : l->cap * 2;

		e = realloc(l->e, cap * sizeof(*e));
		if (e == NULL)
			return NULL;
		l->e = e;
		l->cap = cap;
	}
	e = &l->e[l->n++];
	memcpy(e->name, name, strlen(name) + 1);
	e->batch = load(l, name, err);
	return e;
}

uint64_t
ledger_get(struct ledger *l, const char *sender, struct lh_err *err)
{
	struct ledger_entry *e = find(l, sender, true, err);

	return e != NULL ? e->batch : 0;
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
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return lh_err_set(err, 0, -errno, "%s: %s", tmp,
		    strerror(errno));
	if (write(fd, text, (size_t)n) != n || fsync(fd) < 0)
		rc = lh_err_set(err, 0, -EIO, "%s: %s", tmp, strerror(errno));
	if (close(fd) < 0 && rc == 0)
		rc = lh_err_set(err, 0, -EIO, "%s: %s", tmp, strerror(errno));
	if (rc == 0 && rename(tmp, path) < 0)
		rc =
		    lh_err_set(err, 0, -errno, "%s: %s", path, strerror(errno));
	if (rc < 0)
		(void)unlink(tmp);
	return rc;
}

int
ledger_set(struct ledger *l, const char *sender, uint64_t batch,
    struct lh_err *err)
{
	struct ledger_entry *e = find(l, sender, true, err);

	if (e == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
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

/* "6f737331.batch" -> "oss1"; -1 for any other name. */
static int
decode_name(const char *file, char *out, size_t size)
{
	const char *dot = strrchr(file, '.');
	size_t n, i;

	if (dot == NULL || strcmp(dot, ".batch") != 0)
		return -1;
	n = (size_t)(dot - file);
	if (n == 0 || n % 2 != 0 || n / 2 >= size)
		return -1;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval((unsigned char)file[2 * i]);
		int lo = hexval((unsigned char)file[2 * i + 1]);

		if (hi < 0 || lo < 0 || (hi << 4 | lo) == 0)
			return -1;
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
		if (decode_name(de->d_name, name, sizeof(name)) < 0 ||
		    fstatat(dirfd(d), de->d_name, &sb, 0) < 0)
			continue;
		fn(arg, name, (int64_t)sb.st_mtime);
		n++;
	}
	(void)closedir(d);
	return n;
}
