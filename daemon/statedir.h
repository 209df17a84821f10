/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A role's state directory: created if missing, and held with flock() for
 * the life of the process, so that two instances never share one (their
 * state files would overwrite each other's).
 */
#ifndef LH_STATEDIR_H
#define LH_STATEDIR_H

/*
 * Create dir (0750) if missing and lock dir/lockname.  Returns the locked
 * descriptor (keep it open), or -1 after one log line.
 */
int statedir_lock(const char *dir, const char *lockname);

#endif
