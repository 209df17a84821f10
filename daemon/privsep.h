/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Privilege separation of the gatherer, as OpenBSD's ntpd and bgpd do it.
 * A gatherer started as root with a user to run as (the configuration's
 * user key, or -u) never faces the network as root:
 *
 *  1. privsep_begin(), still root and before any socket: state_dir and
 *     the gatherer's files in it are given to the user when root owns
 *     them (an upgrade from a gatherer that ran as root); a child that
 *     has become the user lists the Lustre targets under lustre_root, and
 *     when it sees fewer than root does (Lustre 2.17's debugfs, mode 0700),
 *     or none yet while debugfs is closed to it (Lustre not started yet),
 *     the stats reader (reader.h) is forked: uid 0, no capability, no
 *     secret in its memory, reading nothing but stats and uuid files;
 *  2. the caller reads what only root may (the key file);
 *  3. privsep_drop(): setgroups, setgid, setuid to the user, for good.
 *
 * When the user sees every target, no reader is forked and the whole
 * gatherer runs as the user.
 */
#ifndef LH_PRIVSEP_H
#define LH_PRIVSEP_H

#include <stdbool.h>
#include <sys/types.h>

struct privsep {
	bool active; /* started as root with a user: privsep_drop() drops */
	bool dropped;
	uid_t uid;
	gid_t gid;
	char user[64];
	/* The reader, when one was forked: the socket to it and its pid. */
	int reader_fd; /* -1: none */
	pid_t reader_pid;
};

/*
 * Step 1 above, for user (NULL or "": stay who we are) and the gatherer's
 * lustre_root and state_dir.  Not root: nothing to do (a user other than
 * ourselves is one line, and ignored).  Returns 0, or -1 after one log
 * line (no such user, user root, a fork or a socketpair that failed).
 */
int privsep_begin(struct privsep *ps, const char *user, const char *root,
    const char *state_dir);

/* Step 3: become the user for good (a no-op unless ps->active).  Returns
 * 0, or -1 after one log line; the caller must then stop. */
int privsep_drop(struct privsep *ps);

#endif
