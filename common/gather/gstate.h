/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer's state file: the counters last read from every export and
 * the deltas not yet acknowledged (the outbox), saved together after each
 * sweep so that they always agree, and restored at start.  A gatherer
 * restarted (or an OSS rebooted) therefore counts from where it stopped:
 * nothing counted twice, nothing lost.
 *
 * The file is written to a temporary name, fsync()ed and renamed over the
 * old one, and ends with the SHA-256 of everything before it: a torn or
 * damaged file is refused whole (and the gatherer starts with a baseline)
 * rather than turned into a spike.  The format is private to one version
 * of lharvestd; an unknown version is refused the same way.
 */
#ifndef LH_GSTATE_H
#define LH_GSTATE_H

#include <stddef.h>
#include <stdint.h>

struct gtable;
struct lh_err;
struct outbox;

/*
 * Save t and ob to path, with scope: a digest of what the gatherer reads
 * (its lustre_root and filesystems), so that a restart under another
 * configuration can tell that targets new to it are not new to Lustre.
 * Returns 0, or a negative errno with err set.
 */
int gstate_save(const char *path, uint64_t scope, const struct gtable *t,
    const struct outbox *ob, struct lh_err *err);

/*
 * Restore into t and ob, both freshly initialised.  Returns 0, -ENOENT
 * when there is no state file, or another negative errno with err set
 * (t and ob are then partly filled: free and initialise them again).
 */
int gstate_load(const char *path, uint64_t *ret_scope, struct gtable *t,
    struct outbox *ob, struct lh_err *err);

/* Restore from a buffer (the fuzz target's entry). */
int gstate_decode(const void *p, size_t n, uint64_t *ret_scope,
    struct gtable *t, struct outbox *ob, struct lh_err *err);

/* The scope digest of a lustre_root and a list of filesystems, in any
 * order. */
uint64_t
gstate_scope(const char *lustre_root, char *const *filesystems, size_t n);

#endif
