/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer's state as a base and a journal, so that a sweep writes in
 * proportion to what changed rather than the whole table (a big OSS's is
 * 6 MB: 26 GB a day at a 20 s interval).
 *
 *  - the base, gatherer.state: a whole state file (gstate.h), written
 *    atomically as before;
 *  - the journal, gatherer.journal: a header naming the base it follows
 *    (by the base's SHA-256), then one record per sweep, appended and
 *    fdatasync()ed: the exports that changed, the targets, and the whole
 *    outbox (its clients by number: gstate_jout.h).  An export read idle (only
 * its snapshot time moved) is not written: its target's record carries the
 * earliest snapshot time read among its idle exports, which replaces theirs at
 * a replay.
 *
 * Compaction (a new base, then an empty journal naming it) happens when
 * the journal has grown past the base's size or holds
 * GSTATE_JRECORDS_MAX records, at the first save after
 * loading, when asked (a clean stop), after a failed append, when the
 * journal file was removed or replaced under it (records appended to it
 * would be lost), and when exports or targets were forgotten or the scope
 * changed (not journaled).
 * A crash at any point leaves a consistent pair: a journal that names
 * another base is ignored, and a base is whole on its own.
 *
 * Loading: the base, then the records in order.  A torn last record (the
 * process or the machine stopped while it was written; its batch was
 * never sent) is dropped; a bad record followed by another is damage, and
 * the whole state is refused (-EBADMSG), never replayed past a hole.
 */
#ifndef LH_GSTATE_JOURNAL_H
#define LH_GSTATE_JOURNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gtable;
struct lh_err;
struct outbox;

/* A replay walks every export once per record: an idle record is a few
 * hundred bytes, so that the size alone would let 10,000 of them pile up
 * behind a big OSS's base (0.07 ms each to replay; 0.07 s for these). */
#define GSTATE_JRECORDS_MAX 1024

struct gstate_journal {
	char base[PATH_MAX]; /* the base file */
	char path[PATH_MAX]; /* the journal */
	int fd;              /* open to append, or -1: the next save compacts */
	uint64_t len;        /* the journal's bytes */
	uint64_t records;    /* and its records */
	uint64_t base_len;   /* the base's */
	uint64_t scope;      /* the base's scope (gstate_save()) */
	uint64_t dev, ino;   /* the journal's identity when opened */
	/* What the last save did, for the sweep's log line. */
	bool compacted;
	uint64_t written; /* bytes */
};

/* Paths of the base and the journal; nothing opened yet.  Returns 0 or
 * -ENAMETOOLONG. */
int gstate_journal_init(struct gstate_journal *j, const char *base,
    const char *journal);

/* Close the journal (a no-op when closed): the next save compacts. */
void gstate_journal_close(struct gstate_journal *j);

/*
 * Save t and ob: one record appended, or a compaction (compact: now).
 * Clears the exports' changed marks.  Returns 0, or a negative errno with
 * err set: the state on disk is then the one of the last save.
 */
int
gstate_journal_save(struct gstate_journal *j, uint64_t scope, struct gtable *t,
    const struct outbox *ob, bool compact, struct lh_err *err);

/* What a load found in the journal. */
struct gstate_jinfo {
	size_t records;     /* replayed */
	uint64_t dropped;   /* bytes of a torn last record, dropped */
	bool other_base;    /* it follows another base: ignored */
	bool journal_found; /* there was one */
};

/*
 * Restore the base into t and ob (freshly initialised), then the
 * journal's records.  Returns as gstate_load(): 0, -ENOENT (no base: a
 * journal alone is ignored), -EBADMSG (refused: damaged, of an unknown
 * version), or another negative errno (cannot be read this time).
 */
int gstate_journal_load(const char *base, const char *journal,
    uint64_t *ret_scope, struct gtable *t, struct outbox *ob,
    struct gstate_jinfo *info, struct lh_err *err);

/* The same for a journal in memory, over the state already in t and ob
 * (base_sum: the SHA-256 of the base it must follow): the fuzz target's
 * entry. */
int gstate_journal_decode(const void *p, size_t n, const uint8_t base_sum[32],
    struct gtable *t, struct outbox *ob, struct gstate_jinfo *info,
    struct lh_err *err);

#endif
