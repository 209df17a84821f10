/* SPDX-License-Identifier: BSD-2-Clause */
/* Hold a state directory (statedir.h). */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "statedir.h"

int
statedir_lock(const char *dir, const char *lockname)
{
	char path[PATH_MAX];
	int fd;

	if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
		log_warn("state_dir %s", dir);
		return -1;
	}
	if (snprintf(path, sizeof(path), "%s/%s", dir, lockname) >=
	    (int)sizeof(path)) {
		log_warnx("state_dir %s: path too long", dir);
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
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
