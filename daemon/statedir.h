/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A role's state directory: created if missing, and held with flock() for
 * the life of the process, so that two instances never share one (their
 * state files would overwrite each other's).
 */
#ifndef LH_STATEDIR_H
#define LH_STATEDIR_H

/*
 * Create dir (0750) if missing, check that it is a directory (not a
 * symbolic link) owned by us or root and not writable by group or
 * others, and lock dir/lockname.  Returns the locked descriptor (keep it
 * open), or -1 after one log line naming dir and the reason.
 */
int statedir_lock(const char *dir, const char *lockname);

/*
 * A state file refused for reason (statefile.h: -EBADMSG) is moved aside
 * to "<path>.bad.<time>", never overwritten; one line says why, where it
 * went, and lost (what starting without it loses).  Returns 0, or -1 (it
 * could not be moved: logged; the caller must not start).
 */
int statedir_set_aside(const char *path, const char *reason, const char *lost);

/* Attempts at a state file that cannot be read (not refused: an I/O
 * error, out of memory), one second apart, before giving up. */
#define STATEDIR_LOAD_TRIES 3

#endif
