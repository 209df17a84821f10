/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The per-client export statistics of the targets this server holds, under
 * a configurable root (tests use a simulated tree):
 *
 *   <root>/proc/fs/lustre/{obdfilter,mdt}/<fs>-<OST|MDT>xxxx/exports/<nid>/
 *   <root>/sys/kernel/debug/lustre/{obdfilter,mdt}/...     (Lustre 2.17)
 *
 * Each exports/ directory is held open, so reading a NID's files is one
 * openat() relative to it: no path walk per file.
 */
#ifndef LH_LUSTRE_TREE_H
#define LH_LUSTRE_TREE_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iocount.h"

struct lh_err;

#define LTREE_TARGET_MAX 64  /* target name, NUL included */
#define LTREE_FS_MAX     16  /* fsname is at most 8 chars, NUL included */
#define LTREE_NID_MAX    128 /* LNET_NIDSTR_SIZE is 64 since 2.15 */
#define LTREE_PATH_MAX   4096

struct ltree_target {
	char name[LTREE_TARGET_MAX]; /* scratch-OST0001 */
	char fs[LTREE_FS_MAX];       /* scratch */
	enum lh_target_kind kind;
	int exports_fd;            /* O_DIRECTORY, owned; -1: read by the
	                              privileged reader (daemon/reader.c) */
	char path[LTREE_PATH_MAX]; /* of exports/, for messages */
	uint64_t dev, ino;         /* of exports/, when exports_fd is -1 */
	int open_flags;            /* for ltree_read_at(): O_NOATIME until
	                              the kernel refuses it */
};

struct ltree {
	struct ltree_target *targets;
	size_t ntargets;
	size_t cap;
};

/* What an export's uuid file says about the peer. */
enum ltree_peer {
	LTREE_PEER_STALE = 0, /* empty: no live export (idle client) */
	LTREE_PEER_CLIENT,    /* a client mount's random UUID */
	LTREE_PEER_SERVER,    /* a Lustre target: MDT OSP, lwp, ... */
};

/* Split a target directory name ("scratch-OST000a") into fsname and kind.
 * Returns 0, or -EINVAL for a name that is not a Lustre target. */
int ltree_parse_target(const char *name, char *ret_fs, size_t fs_size,
    enum lh_target_kind *ret_kind);

/* Classify the contents of an exports/<nid>/uuid file. */
enum ltree_peer ltree_classify_uuid(const char *buf, size_t len);

/*
 * Find every target under root (NULL or "" means "/") that has an exports/
 * directory, in both the /proc and the debugfs location, and open it.
 * Targets are appended to t; call ltree_clear() before a new discovery.
 * Returns 0 (possibly with no target), or -ENOMEM.
 */
int ltree_discover(struct ltree *t, const char *root, struct lh_err *err);

/* Append a copy of tg (a target another process found, exports_fd -1).
 * Returns 0 or -ENOMEM. */
int ltree_add(struct ltree *t, const struct ltree_target *tg);

/* Close and forget every target; t can be reused. */
void ltree_clear(struct ltree *t);

/* Release everything t owns. */
void ltree_free(struct ltree *t);

/*
 * Read the whole file dirfd/path (a /proc file: its size is not known
 * beforehand) into buf.  Returns 0 and the length, -EFBIG if it does not
 * fit in cap bytes, or the negative errno of open/read.  ENOENT, ENODEV and
 * EIO mean the export went away between readdir and read.
 *
 * *oflags (a target's open_flags) is O_NOATIME or 0.  A reader never
 * changes a file, so it asks the kernel not to record the access: on a
 * /proc or debugfs tree that changes nothing, but on a tree of regular
 * files (a copy, a simulator on tmpfs) the first read of each file
 * rewritten since the last sweep would otherwise dirty its inode.  Only
 * the file's owner (or CAP_FOWNER) may ask: at the first EPERM the open
 * is made again without it and *oflags drops it for good.
 */
int ltree_read_at(int dirfd, const char *path, int *oflags, char *buf,
    size_t cap, size_t *ret_len);

/*
 * ltree_read_at() for the gatherer's hot path, with one read() where the
 * kernel allows: a seq_file read (every Lustre stats file, in /proc and
 * debugfs) returns as many whole lines as fit in its page-sized buffer,
 * so a first read of at most LTREE_ONE_READ bytes that is shorter than
 * the caller's buffer is the whole file (an empty one included); longer
 * ones may have been cut at a line and are read on to EOF.  For the
 * stats files and the uuid files of exports.  Same returns as
 * ltree_read_at().
 */
#define LTREE_ONE_READ 3072
int ltree_read_stats_at(int dirfd, const char *path, int *oflags, char *buf,
    size_t cap, size_t *ret_len);

/* True for the errors of a read that mean the export went away between
 * readdir and read (ENOENT, ENODEV, EIO, ENOTDIR): not an error. */
bool ltree_gone(int rc);

/* True when the entry de of the directory dirfd is a directory (d_type,
 * or fstatat() on filesystems that do not fill it in). */
bool ltree_is_dir_entry(int dirfd, const struct dirent *de);

/* readdir(d), with errno cleared before it: NULL at the end of d
 * (*ret_err 0) or on an error (*ret_err the errno).  What the caller did
 * between two entries (an fstatat() of one that went away) is never
 * taken for the listing's error. */
struct dirent *ltree_next_entry(DIR *d, int *ret_err);

/* True for the names of NID directories that are never clients. */
bool ltree_nid_is_local(const char *nid);

#endif
