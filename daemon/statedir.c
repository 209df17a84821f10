/* SPDX-License-Identifier: BSD-2-Clause */
/* Hold a state directory (statedir.h). */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "log.h"
#include "statedir.h"
#include "statefile.h"

/*
 * Whoever can write to state_dir can plant links and files where the
 * state is written, or replace it: it must be a directory (not a link to
 * one) owned by us or root, writable by neither group nor others.
 */
static int
statedir_check(const char *dir)
{
	struct stat sb;

	if (lstat(dir, &sb) < 0) {
		log_warn("state_dir %s", dir);
		return -1;
	}
	if (S_ISLNK(sb.st_mode)) {
		log_warnx("state_dir %s: a symbolic link: give the directory "
		          "it points to",
		    dir);
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		log_warnx("state_dir %s: not a directory", dir);
		return -1;
	}
	if (sb.st_uid != geteuid() && sb.st_uid != 0) {
		log_warnx("state_dir %s: owned by uid %u, neither this "
		          "process's (%u) nor root",
		    dir, (unsigned)sb.st_uid, (unsigned)geteuid());
		return -1;
	}
	if ((sb.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		log_warnx("state_dir %s: mode %04o lets group or others "
		          "write to it (chmod go-w)",
		    dir, (unsigned)(sb.st_mode & 07777));
		return -1;
	}
	return 0;
}

int
statedir_lock(const char *dir, const char *lockname)
{
	char path[PATH_MAX];
	int fd;

	if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
		log_warn("state_dir %s", dir);
		return -1;
	}
	if (statedir_check(dir) < 0)
		return -1;
	if (snprintf(path, sizeof(path), "%s/%s", dir, lockname) >=
	    (int)sizeof(path)) {
		log_warnx("state_dir %s: path too long", dir);
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		log_warn("%s", path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		log_warnx("%s: another lharvestd uses this state_dir (give "
		          "each instance its own)",
		    path);
		(void)close(fd);
		return -1;
	}
	return fd;
}

int
statedir_set_aside(const char *path, const char *reason, const char *lost)
{
	char bad[PATH_MAX];
	struct lh_err err;

	if (statefile_set_aside(path, clock_realtime_ns() / CLOCK_NS_PER_S, bad,
	        sizeof(bad), &err) < 0) {
		log_warnx("%s: %s; %s; not starting (it would be overwritten)",
		    path, reason, err.reason);
		return -1;
	}
	log_warnx("%s: %s; moved aside to %s, %s", path, reason, bad, lost);
	return 0;
}
