/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Files that hold what a daemon must not lose across a restart (the
 * gatherer's and the relay's state): written to "<path>.tmp" in chunks,
 * fsync()ed, renamed over the old file (then the directory fsync()ed),
 * and ending with the SHA-256 of everything before it, so that a torn or
 * damaged file is refused whole, never half-read.
 */
#ifndef LH_STATEFILE_H
#define LH_STATEFILE_H

#include <stddef.h>
#include <stdint.h>

struct lh_err;
struct statefile_out;
struct wbuf;

#define STATEFILE_MAX ((size_t)1 << 30) /* what a reader accepts */

/* Start writing path (through path.tmp).  Returns 0 and *ret, or a
 * negative errno with err set. */
int statefile_create(const char *path, struct statefile_out **ret,
    struct lh_err *err);

/* The buffer to append the next bytes to. */
struct wbuf *statefile_buf(struct statefile_out *o);

/* Write out what the buffer holds once it is large: call it after each
 * record, so that a file of any size takes a bounded buffer. */
void statefile_maybe_flush(struct statefile_out *o);

/* Write the rest and the checksum, make it durable and put it in place;
 * frees o either way.  Returns 0, or a negative errno with err set (the
 * old file is then untouched). */
int statefile_commit(struct statefile_out *o, struct lh_err *err);

/* Give up: remove path.tmp, free o (NULL is fine). */
void statefile_discard(struct statefile_out *o);

/*
 * Appending to a file of the caller's (the gatherer's state journal,
 * common/gather/gstate_journal.c): statefile_append() writes through the
 * same bounded buffer to fd (duplicated: it shares fd's offset, and fd
 * stays the caller's) from its offset, hashing what it writes;
 * statefile_append_end() writes the rest and gives the SHA-256 of every
 * byte written, without writing it nor syncing (the caller does both).
 * Both return 0, or a negative errno with err set; end frees o either way.
 */
int statefile_append(int fd, struct statefile_out **ret, struct lh_err *err);
int statefile_append_end(struct statefile_out *o, uint8_t sum[32],
    struct lh_err *err);

/* Check the trailing checksum of the n bytes at p: 0 and *ret_body (the
 * bytes before it), or -EBADMSG with err set. */
int
statefile_verify(const void *p, size_t n, size_t *ret_body, struct lh_err *err);

/*
 * Read a whole file (a regular file of at most STATEFILE_MAX bytes, not
 * a symbolic link).  Returns 0 with *ret (malloc()ed, the caller frees
 * it) and *ret_len, -ENOENT when there is none, or another negative errno
 * with err set.  The checksum is not checked: see statefile_verify().
 *
 * Errors, here and from the loaders built on these functions, come in
 * two kinds.  -EBADMSG: the file is refused (damaged, of an unknown or
 * newer format, a symbolic link, too large): it will never load, and is
 * set aside (statefile_set_aside()) rather than overwritten.  Any other
 * errno: it could not be read this time (an I/O error, out of memory, a
 * directory or a FIFO in its place): worth trying again, never a reason
 * to overwrite it.
 */
int statefile_read(const char *path, uint8_t **ret, size_t *ret_len,
    struct lh_err *err);

/*
 * A state file read a window at a time, so that loading one takes a
 * bounded buffer however large the file (a gatherer's is about 60 bytes
 * per export: 5 MB on a big OSS, which would double its resident memory
 * while it starts).  statefile_open() checks the trailing checksum in a
 * first pass over the file, as statefile_verify() does, then gives the
 * bytes before it, the body, through statefile_in_rbuf().  A reader calls
 * statefile_in_need() before each record: the window then holds at least
 * that many bytes, or all that are left.
 */
struct statefile_in;
struct rbuf;

#define STATEFILE_RECORD_MAX ((size_t)4096) /* what a need() may ask */

/* A body shorter than min_body is "damaged: too short".  Returns 0 and
 * *ret, -ENOENT when there is no file, or another negative errno with err
 * set (-EBADMSG: damaged, with the same reasons as statefile_verify() and
 * statefile_read()). */
int statefile_open(const char *path, size_t min_body, struct statefile_in **ret,
    struct lh_err *err);

/* A window onto the next n bytes of fd from its offset, their checksum
 * checked by the caller (a journal's record): fd is duplicated and stays
 * the caller's.  Returns 0 and *ret, or a negative errno with err set. */
int statefile_in_fd(int fd, uint64_t n, struct statefile_in **ret,
    struct lh_err *err);

/* The window onto the body: reading from it consumes the body. */
struct rbuf *statefile_in_rbuf(struct statefile_in *in);

/* At least n (at most STATEFILE_RECORD_MAX) bytes in the window, or all
 * that are left.  Returns 0, or a negative errno with err set. */
int statefile_in_need(struct statefile_in *in, size_t n, struct lh_err *err);

/* Body bytes not consumed yet, the window's included. */
uint64_t statefile_in_left(const struct statefile_in *in);

void statefile_in_close(struct statefile_in *in); /* NULL is fine */

/* What a state file's decoder reads: a body in memory (in NULL: r holds
 * all of it), or a file a window at a time (r is in's window). */
struct statefile_src {
	struct rbuf *r;
	struct statefile_in *in;
};

/* statefile_in_need(), or nothing for a body in memory. */
int statefile_src_need(struct statefile_src *s, size_t n, struct lh_err *err);

/* Body bytes not consumed yet: for bounds on counts read from the file
 * (refused before anything is allocated for them). */
uint64_t statefile_src_left(const struct statefile_src *s);

/*
 * Move a refused state file out of the way, to "<path>.bad.<now_s>" (or
 * ".bad.<now_s>.<n>": never over another): kept for a post-mortem, and
 * never overwritten by the next save.  Returns 0 with its new name in
 * ret_path (len bytes), or a negative errno with err set.
 */
int statefile_set_aside(const char *path, uint64_t now_s, char *ret_path,
    size_t len, struct lh_err *err);

#endif
