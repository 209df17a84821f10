/* SPDX-License-Identifier: BSD-2-Clause */
/* Discover Lustre targets and read their export files. */
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "err.h"
#include "lustre_tree.h"

/* Where each Lustre line keeps export stats, relative to the root:
 * 2.5-2.16 under /proc, 2.17 under debugfs.  Both are probed every time,
 * so an upgrade needs no configuration change. */
/* The roots lctl searches, in its order.  Export stats are in /proc up
 * to 2.16 and in debugfs from 2.17; sysfs is searched too, as lctl does.
 * A target found under two roots is read from the first only. */
static const char *const stats_bases[] = {"sys/fs/lustre",
    "sys/kernel/debug/lustre", "proc/fs/lustre"};

static bool
ltree_has(const struct ltree *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->ntargets; i++) {
		if (strcmp(t->targets[i].name, name) == 0)
			return true;
	}
	return false;
}

static const struct {
	const char *dir;
	enum lh_target_kind kind;
} kind_dirs[] = {
    {"obdfilter", LH_TARGET_OST},
    {"mdt", LH_TARGET_MDT},
};

int
ltree_parse_target(const char *name, char *ret_fs, size_t fs_size,
    enum lh_target_kind *ret_kind)
{
	const char *dash = strrchr(name, '-'), *p;
	enum lh_target_kind kind;
	size_t fslen;

	if (dash == NULL || dash == name)
		return -EINVAL;
	if (strncmp(dash + 1, "OST", 3) == 0)
		kind = LH_TARGET_OST;
	else if (strncmp(dash + 1, "MDT", 3) == 0)
		kind = LH_TARGET_MDT;
	else
		return -EINVAL;
	/* The index is hex, at least 4 digits ("OST000a"). */
	for (p = dash + 4; *p != '\0'; p++) {
		if (!isxdigit((unsigned char)*p))
			return -EINVAL;
	}
	if (p - (dash + 4) < 4)
		return -EINVAL;
	fslen = (size_t)(dash - name);
	if (fslen >= fs_size)
		return -EINVAL;
	memcpy(ret_fs, name, fslen);
	ret_fs[fslen] = '\0';
	*ret_kind = kind;
	return 0;
}

/* "scratch-MDT0000-mdtlov_UUID", "fs-MDT0000-lwp-OST0001_UUID",
 * "fs-OST0002_UUID": a Lustre target, never a client. */
static bool
uuid_names_target(const char *p, size_t n)
{
	size_t i;

	if (n < 5 || memcmp(p + n - 5, "_UUID", 5) != 0)
		return false;
	for (i = 0; i + 8 <= n; i++) {
		if (p[i] == '-' &&
		    (memcmp(p + i + 1, "MDT", 3) == 0 ||
		        memcmp(p + i + 1, "OST", 3) == 0) &&
		    isxdigit((unsigned char)p[i + 4]) &&
		    isxdigit((unsigned char)p[i + 5]) &&
		    isxdigit((unsigned char)p[i + 6]) &&
		    isxdigit((unsigned char)p[i + 7]))
			return true;
	}
	return false;
}

enum ltree_peer
ltree_classify_uuid(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	bool any = false;

	/* One line per live export of that NID. */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl != NULL ? nl : end;

		while (le > p && isspace((unsigned char)le[-1]))
			le--;
		while (p < le && isspace((unsigned char)*p))
			p++;
		if (le > p) {
			if (uuid_names_target(p, (size_t)(le - p)))
				return LTREE_PEER_SERVER;
			any = true;
		}
		p = nl != NULL ? nl + 1 : end;
	}
	return any ? LTREE_PEER_CLIENT : LTREE_PEER_STALE;
}

bool
ltree_gone(int rc)
{
	return rc == -ENOENT || rc == -ENODEV || rc == -EIO || rc == -ENOTDIR;
}

bool
ltree_is_dir_entry(int dirfd, const struct dirent *de)
{
	struct stat sb;

	if (de->d_type == DT_DIR)
		return true;
	if (de->d_type != DT_UNKNOWN)
		return false;
	return fstatat(dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(sb.st_mode);
}

struct dirent *
ltree_next_entry(DIR *d, int *ret_err)
{
	struct dirent *de;

	errno = 0;
	de = readdir(d);
	*ret_err = de == NULL ? errno : 0;
	return de;
}

bool
ltree_nid_is_local(const char *nid)
{
	/* The loopback NID: a peer target on this very node.  Asked of
	 * every directory listed: the first byte settles nearly all. */
	return nid[0] == '0' && strcmp(nid, "0@lo") == 0;
}

static int
ltree_grow(struct ltree *t)
{
	struct ltree_target *n;

	n = array_grow(t->targets, &t->cap, t->ntargets, sizeof(*n));
	if (n == NULL)
		return -ENOMEM;
	t->targets = n;
	return 0;
}

static int
discover_kind(struct ltree *t, const char *dirpath, enum lh_target_kind kind,
    struct lh_err *err)
{
	char path[LTREE_PATH_MAX];
	struct dirent *de;
	DIR *d;
	int rc = 0, len;

	d = opendir(dirpath);
	if (d == NULL)
		return 0; /* no such target type here */
	while ((de = readdir(d)) != NULL) {
		struct ltree_target *tg;
		enum lh_target_kind k;
		char fs[LTREE_FS_MAX];
		int fd, n;

		if (de->d_name[0] == '.' ||
		    strlen(de->d_name) >= LTREE_TARGET_MAX ||
		    ltree_parse_target(de->d_name, fs, sizeof(fs), &k) < 0 ||
		    k != kind || ltree_has(t, de->d_name))
			continue;
		fd = openat(dirfd(d), de->d_name,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = openat(fd, "exports", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		(void)close(fd);
		if (n < 0)
			continue; /* 2.17 keeps the /proc target without it */
		len = snprintf(path, sizeof(path), "%s/%s/exports", dirpath,
		    de->d_name);
		if (len < 0 || (size_t)len >= sizeof(path)) {
			(void)close(n);
			continue;
		}
		if (t->ntargets == t->cap && ltree_grow(t) < 0) {
			(void)close(n);
			rc = lh_err_set(err, 0, -ENOMEM, "out of memory");
			break;
		}
		tg = &t->targets[t->ntargets++];
		memset(tg, 0, sizeof(*tg));
		memcpy(tg->name, de->d_name, strlen(de->d_name) + 1);
		memcpy(tg->fs, fs, sizeof(fs));
		memcpy(tg->path, path, (size_t)len + 1);
		tg->kind = kind;
		tg->exports_fd = n;
		tg->open_flags = O_NOATIME;
	}
	(void)closedir(d);
	return rc;
}

int
ltree_discover(struct ltree *t, const char *root, struct lh_err *err)
{
	char path[LTREE_PATH_MAX];
	size_t b, k;
	int rc, n;

	if (root == NULL || root[0] == '\0')
		root = "/";
	for (b = 0; b < sizeof(stats_bases) / sizeof(stats_bases[0]); b++) {
		for (k = 0; k < sizeof(kind_dirs) / sizeof(kind_dirs[0]); k++) {
			n = snprintf(path, sizeof(path), "%s%s%s/%s", root,
			    root[strlen(root) - 1] == '/' ? "" : "/",
			    stats_bases[b], kind_dirs[k].dir);
			if (n < 0 || (size_t)n >= sizeof(path))
				return lh_err_set(err, 0, -ENAMETOOLONG,
				    "%s: path too long", root);
			rc = discover_kind(t, path, kind_dirs[k].kind, err);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int
ltree_add(struct ltree *t, const struct ltree_target *tg)
{
	if (t->ntargets == t->cap && ltree_grow(t) < 0)
		return -ENOMEM;
	t->targets[t->ntargets++] = *tg;
	return 0;
}

void
ltree_clear(struct ltree *t)
{
	size_t i;

	for (i = 0; i < t->ntargets; i++) {
		if (t->targets[i].exports_fd >= 0)
			(void)close(t->targets[i].exports_fd);
	}
	t->ntargets = 0;
}

void
ltree_free(struct ltree *t)
{
	if (t == NULL)
		return;
	ltree_clear(t);
	free(t->targets);
	t->targets = NULL;
	t->cap = 0;
}

/* Read fd to EOF into buf, len bytes of which are already there. */
static int
read_rest(int fd, char *buf, size_t cap, size_t len, size_t *ret_len)
{
	ssize_t n;
	int rc = 0;

	/* /proc reports size 0 and sysfs 4096: read to EOF, never stat(). */
	for (;;) {
		if (len == cap) {
			char probe;

			n = read(fd, &probe, 1);
			if (n > 0)
				rc = -EFBIG;
			else if (n < 0)
				rc = -errno;
			break;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (rc == 0)
		*ret_len = len;
	return rc;
}

/* Open dirfd/path to read, with *oflags while the kernel allows them
 * (ltree_read_at()).  Returns the descriptor or a negative errno. */
static int
open_at(int dirfd, const char *path, int *oflags)
{
	const int base = O_RDONLY | O_CLOEXEC | O_NOFOLLOW;
	int fd;

	fd = openat(dirfd, path, base | *oflags);
	if (fd < 0 && errno == EPERM && (*oflags & O_NOATIME) != 0) {
		*oflags &= ~O_NOATIME;
		fd = openat(dirfd, path, base | *oflags);
	}
	return fd < 0 ? -errno : fd;
}

int
ltree_read_at(int dirfd, const char *path, int *oflags, char *buf, size_t cap,
    size_t *ret_len)
{
	int fd, rc;

	fd = open_at(dirfd, path, oflags);
	if (fd < 0)
		return fd;
	rc = read_rest(fd, buf, cap, 0, ret_len);
	(void)close(fd);
	return rc;
}

int
ltree_read_stats_at(int dirfd, const char *path, int *oflags, char *buf,
    size_t cap, size_t *ret_len)
{
	ssize_t n;
	int fd, rc;

	fd = open_at(dirfd, path, oflags);
	if (fd < 0)
		return fd;
	do
		n = read(fd, buf, cap);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		rc = -errno;
	} else if ((size_t)n <= LTREE_ONE_READ && (size_t)n < cap) {
		/* (0 is the end of the file already: an empty uuid of a
		 * stale export, read once, not twice) */
		*ret_len = (size_t)n;
		rc = 0;
	} else {
		rc = read_rest(fd, buf, cap, (size_t)n, ret_len);
	}
	(void)close(fd);
	return rc;
}
