/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A receiver's memory of what it has made safe: per sender name, the
 * highest SWEEP batch number counted (docs/protocol.md section 5).  A
 * batch at or below it is a resend: acknowledged as a duplicate, not
 * counted again.  With a directory, each sender's number is kept in
 * <dir>/<hex of the name>.batch, replaced atomically (a temporary opened
 * O_EXCL|O_NOFOLLOW, write, fsync, rename, fsync of the directory), so a
 * restart of the receiver remembers it.
 *
 * An entry whose file cannot be read (damaged, not a number, a symlink,
 * an I/O error) is held: it is never rewritten nor moved by this module,
 * lookups fail until someone fixes or removes the file (it is read again
 * at each lookup), and its sender's batches can be neither counted nor
 * acknowledged meanwhile (docs/reliability.md section 3).
 */
#ifndef LH_LEDGER_H
#define LH_LEDGER_H

#include <stddef.h>
#include <stdint.h>

struct lh_err;
struct ledger;

/* The longest file a ledger entry may be: a decimal 64-bit number and a
 * newline. */
#define LEDGER_FILE_MAX 21

/* dir NULL: in memory only.  Returns 0 or -ENOMEM. */
int ledger_new(struct ledger **ret, const char *dir);
void ledger_free(struct ledger *l);

/* The highest safe batch of sender in *ret (0: none).  Returns 0, or
 * -EBADMSG with err naming the file and the reason when the sender's
 * file cannot be read (the entry is held; *ret untouched), or -ENOMEM. */
int ledger_lookup(struct ledger *l, const char *sender, uint64_t *ret,
    struct lh_err *err);

/* As ledger_lookup(), 0 for a held entry (err says why): for callers
 * that only compare, never acknowledge on the strength of it. */
uint64_t ledger_get(struct ledger *l, const char *sender, struct lh_err *err);

/* Record batch as safe for sender; an entry is never lowered (a smaller
 * batch is a no-op).  Returns 0, -EBADMSG for a held entry (its file is
 * left as it is), or a negative errno with err filled when the file
 * cannot be written (the memory copy is kept). */
int ledger_set(struct ledger *l, const char *sender, uint64_t batch,
    struct lh_err *err);

/* Called for each sender with a file in the ledger's directory, with the
 * file's last change (seconds since the epoch). */
typedef void (*ledger_each_fn)(void *arg, const char *sender, int64_t mtime);

/* Every sender of the directory (none in memory only).  Returns the
 * number of senders, or a negative errno when the directory cannot be
 * read. */
int ledger_each(const struct ledger *l, ledger_each_fn fn, void *arg);

/* A ledger file's contents: 1 to 20 decimal digits below 2^64, then at
 * most one newline, nothing else.  Returns 0 and *ret, or -EBADMSG. */
int ledger_parse(const char *text, size_t n, uint64_t *ret);

/* A ledger file's name ("6f737331.batch") to its sender ("oss1").
 * Returns 0, or -EINVAL for a name that is not a ledger entry's. */
int ledger_file_sender(const char *file, char *out, size_t size);

#endif
