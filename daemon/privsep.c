/* SPDX-License-Identifier: BSD-2-Clause */
/* Privilege separation of the gatherer (privsep.h). */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/capability.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "lustre_tree.h"
#include "privsep.h"
#include "reader.h"

/* The files of a gatherer in state_dir: gatherer.state, gatherer.lock,
 * and what is made from their names (.tmp, .bad.<time>). */
#define PRIVSEP_FILES "gatherer."

/* setgroups, setgid, setuid, and proof that there is no way back. */
static int
become(uid_t uid, gid_t gid)
{
	if (setgroups(1, &gid) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		return -errno;
	if (setresuid(0, 0, 0) == 0 || setresgid(0, 0, 0) == 0)
		return -EPERM;
	return 0;
}

/* What the user, and root, see of the Lustre tree. */
struct view {
	unsigned targets; /* exports/ directories that open */
	bool debugfs;     /* <root>/sys/kernel/debug opens */
};

static void
look(const char *root, struct view *v)
{
	struct ltree t;
	char path[PATH_MAX];

	memset(&t, 0, sizeof(t));
	memset(v, 0, sizeof(*v));
	if (ltree_discover(&t, root, NULL) == 0)
		v->targets = (unsigned)t.ntargets;
	ltree_free(&t);
	if (snprintf(path, sizeof(path), "%s/sys/kernel/debug",
	        root[0] != '\0' && strcmp(root, "/") != 0 ? root : "") <
	    (int)sizeof(path)) {
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		v->debugfs = fd >= 0;
		if (fd >= 0)
			(void)close(fd);
	}
}

/* Look as the user, in a child that became it. */
static int
look_as(const char *root, uid_t uid, gid_t gid, struct view *ret)
{
	unsigned char msg[5] = {0};
	ssize_t n;
	pid_t pid, w;
	int p[2], status;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		(void)close(p[0]);
		(void)close(p[1]);
		return -EAGAIN;
	}
	if (pid == 0) {
		struct view v;

		(void)close(p[0]);
		if (become(uid, gid) < 0)
			_exit(1);
		look(root, &v);
		memcpy(msg, &v.targets, sizeof(v.targets));
		msg[4] = v.debugfs ? 1 : 0;
		_exit(write(p[1], msg, sizeof(msg)) == (ssize_t)sizeof(msg) ?
		        0 :
		        1);
	}
	(void)close(p[1]);
	do
		n = read(p[0], msg, sizeof(msg));
	while (n < 0 && errno == EINTR);
	(void)close(p[0]);
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(msg))
		return -EPERM;
	memcpy(&ret->targets, msg, sizeof(ret->targets));
	ret->debugfs = msg[4] == 1;
	return 0;
}

/* Whether the user cannot read the tree alone: fewer targets than root
 * sees, or none yet and a debugfs closed to it.  A gatherer often starts
 * before Lustre does: with no target to go by, a 2.17 server cannot be
 * told from an older one, and a reader forked for nothing costs less
 * than a gatherer that can never see its targets. */
static int
needs_reader(const char *root, uid_t uid, gid_t gid, bool *ret)
{
	struct view mine, theirs = {0, false};
	int rc;

	look(root, &mine);
	rc = look_as(root, uid, gid, &theirs);
	if (rc < 0)
		return rc;
	*ret = mine.targets > theirs.targets ||
	    (mine.targets == 0 && mine.debugfs && !theirs.debugfs);
	return 0;
}

/*
 * Give state_dir and the gatherer's files in it to the user when root owns
 * them: a gatherer that ran as root made them.  The directory itself only
 * when it is empty or already holds a gatherer's files, so that a
 * mistaken state_dir (/var/lib) is never given away.
 */
static int
take_over(const char *dir, uid_t uid, gid_t gid)
{
	struct dirent *de;
	struct stat sb;
	unsigned given = 0, entries = 0;
	bool ours = false;
	DIR *d;
	int fd;

	if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
		log_warn("state_dir %s", dir);
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0 || (d = fdopendir(fd)) == NULL) {
		log_warn("state_dir %s", dir);
		if (fd >= 0)
			(void)close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat fsb;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		entries++;
		if (strncmp(de->d_name, PRIVSEP_FILES, strlen(PRIVSEP_FILES)) !=
		    0)
			continue;
		ours = true;
		/* Never through a link: only root's regular files. */
		if (fstatat(dirfd(d), de->d_name, &fsb, AT_SYMLINK_NOFOLLOW) <
		        0 ||
		    !S_ISREG(fsb.st_mode) || fsb.st_uid != 0)
			continue;
		if (fchownat(dirfd(d), de->d_name, uid, gid,
		        AT_SYMLINK_NOFOLLOW) < 0) {
			log_warn("%s/%s: cannot give it to uid %u", dir,
			    de->d_name, (unsigned)uid);
			(void)closedir(d);
			return -1;
		}
		given++;
	}
	if (sb.st_uid == 0 && (entries == 0 || ours)) {
		if (fchown(dirfd(d), uid, gid) < 0) {
			log_warn("state_dir %s: cannot give it to uid %u", dir,
			    (unsigned)uid);
			(void)closedir(d);
			return -1;
		}
		given++;
	}
	(void)closedir(d);
	if (given > 0)
		log_info("state_dir %s: %u entries of root's given to uid %u "
		         "(state of a gatherer that ran as root)",
		    dir, given, (unsigned)uid);
	return 0;
}

/* The reader keeps uid 0 (the owner of debugfs) and nothing else: no
 * supplementary group, no capability, no way to gain any. */
static void
reader_child(int fd, const char *root)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];

	(void)prctl(PR_SET_NAME, "lharvestd-read", 0, 0, 0);
	/* Stopping is the gatherer's business: the reader ends when its
	 * socket does, after the gatherer has finished with it. */
	(void)signal(SIGINT, SIG_IGN);
	(void)signal(SIGTERM, SIG_IGN);
	(void)signal(SIGHUP, SIG_IGN);
	(void)signal(SIGPIPE, SIG_IGN);
	if (setgroups(0, NULL) < 0 && errno != EPERM)
		log_warn("stats reader: setgroups");
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capset, &hdr, data) < 0)
		log_warn("stats reader: dropping its capabilities");
	(void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	_exit(reader_serve(fd, root));
}

static int
fork_reader(struct privsep *ps, const char *root)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		log_warn("stats reader: socketpair");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		log_warn("stats reader: fork");
		(void)close(sv[0]);
		(void)close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		(void)close(sv[0]);
		reader_child(sv[1], root);
	}
	(void)close(sv[1]);
	ps->reader_fd = sv[0];
	ps->reader_pid = pid;
	return 0;
}

int
privsep_begin(struct privsep *ps, const char *user, const char *root,
    const char *state_dir)
{
	const struct passwd *pw;
	bool reader = false;
	int rc;

	memset(ps, 0, sizeof(*ps));
	ps->reader_fd = -1;
	if (user == NULL || user[0] == '\0')
		return 0;
	errno = 0;
	pw = getpwnam(user);
	if (pw == NULL) {
		log_warnx("user %s: %s", user,
		    errno != 0 ? strerror(errno) : "no such user");
		return -1;
	}
	if (geteuid() != 0) {
		if (pw->pw_uid != geteuid())
			log_warnx("user %s: not started as root, running as "
			          "uid %u, ignoring",
			    user, (unsigned)geteuid());
		return 0;
	}
	if (pw->pw_uid == 0 || pw->pw_gid == 0) {
		log_warnx("user %s: %s 0 is root's: name an unprivileged user",
		    user, pw->pw_uid == 0 ? "uid" : "gid");
		return -1;
	}
	ps->uid = pw->pw_uid;
	ps->gid = pw->pw_gid;
	(void)snprintf(ps->user, sizeof(ps->user), "%s", user);
	ps->active = true;
	if (take_over(state_dir, ps->uid, ps->gid) < 0)
		return -1;
	rc = needs_reader(root, ps->uid, ps->gid, &reader);
	if (rc < 0) {
		log_warnx("user %s: cannot look at %s as it: %s", user, root,
		    strerror(-rc));
		return -1;
	}
	if (reader && fork_reader(ps, root) < 0)
		return -1;
	return 0;
}

int
privsep_drop(struct privsep *ps)
{
	int rc;

	if (!ps->active || ps->dropped)
		return 0;
	rc = become(ps->uid, ps->gid);
	if (rc < 0) {
		log_warnx("user %s: cannot become it: %s", ps->user,
		    strerror(-rc));
		return -1;
	}
	ps->dropped = true;
	if (ps->reader_pid > 0)
		log_info("running as %s (uid %u); the Lustre tree needs root: "
		         "read by the stats reader, pid %ld",
		    ps->user, (unsigned)ps->uid, (long)ps->reader_pid);
	else
		log_info("running as %s (uid %u), reading the Lustre tree "
		         "itself",
		    ps->user, (unsigned)ps->uid);
	return 0;
}
