/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A receiver's memory of what it has made safe: per sender name, the
 * highest SWEEP batch number counted (docs/protocol.md section 5).  A
 * batch at or below it is a resend: acknowledged as a duplicate, not
 * counted again.  With a directory, each sender's number is kept in
 * <dir>/<hex of the name>.batch, replaced atomically (write, fsync,
 * rename), so a restart of the receiver remembers it.
 */
#ifndef LH_LEDGER_H
#define LH_LEDGER_H

#include <stdint.h>

struct lh_err;
struct ledger;

/* dir NULL: in memory only.  Returns 0 or -ENOMEM. */
int ledger_new(struct ledger **ret, const char *dir);
void ledger_free(struct ledger *l);

/* The highest safe batch of sender, 0 if none.  A file that cannot be
 * read is reported in err (when not NULL) and counts as 0. */
uint64_t ledger_get(struct ledger *l, const char *sender, struct lh_err *err);

/* Record batch as safe for sender.  Returns 0, or a negative errno with
 * err filled when the file cannot be written (the memory copy is kept). */
int ledger_set(struct ledger *l, const char *sender, uint64_t batch,
    struct lh_err *err);

/* Called for each sender with a file in the ledger's directory, with the
 * file's last change (seconds since the epoch). */
typedef void (*ledger_each_fn)(void *arg, const char *sender, int64_t mtime);

/* Every sender of the directory (none in memory only).  Returns the
 * number of senders, or a negative errno when the directory cannot be
 * read. */
int ledger_each(const struct ledger *l, ledger_each_fn fn, void *arg);

#endif
