/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The privileged stats reader, and the gatherer's connection to it.  When
 * the Lustre tree under lustre_root needs root (Lustre 2.17's debugfs,
 * mode 0700), a gatherer started as root forks this reader before it
 * touches the network, then drops to its user (privsep.c).  The reader
 * keeps uid 0 with no capability and does nothing but answer the
 * gatherer's requests over a socketpair (common/lustre/statsfeed.h): list the
 * targets under the lustre_root it was given at the fork, list one
 * target's NID directories with the bytes of their stats files (and uuid
 * files when asked), or read the files of named NIDs.  It never writes a
 * file, never opens a path it was sent (only NID names, one component,
 * a directory under a target it found itself, not through a symbolic
 * link), and exits when the gatherer goes.
 */
#ifndef LH_READER_H
#define LH_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire.h"

struct lh_err;
struct ltree;
struct sfeed_export;
struct sfeed_rec;

/* The reader process's whole life: serve fd until the gatherer closes
 * it.  Returns the exit status. */
int reader_serve(int fd, const char *root);

/* The gatherer's end: blocking, like the file reads it replaces. */
struct reader_conn {
	int fd; /* -1: no reader, the gatherer reads the tree itself */
	pid_t pid;
	uint8_t *buf; /* what the reader sent, not yet decoded */
	size_t cap, start, end;
	struct wbuf out; /* requests */
};

/* Take over fd (the socket to process pid).  Returns 0 or -ENOMEM. */
int reader_conn_init(struct reader_conn *c, int fd, pid_t pid);

/* Close the socket (the reader exits) and reap the reader. */
void reader_conn_close(struct reader_conn *c);

/* Ask for the targets and put them in t (after ltree_clear()).  Returns 0,
 * or a negative errno with err's reason; any error but -ENOMEM means the
 * reader is gone or broken. */
int reader_discover(struct reader_conn *c, struct ltree *t, struct lh_err *err);

/* Send what the caller wrote to c->out (sfeed_put_req(), or a NIDS
 * request).  Returns 0 or a negative errno with err's reason. */
int reader_send(struct reader_conn *c, struct lh_err *err);

/* The next record of the answer, borrowed until the next call.  Returns
 * 0, or a negative errno with err's reason (the reader is gone or sent
 * something malformed: the connection is unusable). */
int
reader_next(struct reader_conn *c, struct sfeed_rec *ret, struct lh_err *err);

/*
 * What the gatherer does with each NID directory of an answer: count it
 * (0), or leave it for now and have it read again with its uuid file
 * (*ret_again).  ino is the directory's inode.  A negative return
 * (-ENOMEM) stops the counting; the answer is still read to its end.
 */
typedef int (*reader_export_fn)(void *arg, const struct sfeed_export *e,
    uint64_t ino, bool *ret_again);

/*
 * One target (index in the last reader_discover()) through the reader:
 * its NID directories with their stats files (and uuid files when
 * with_uuid), each handed to fn, then those fn asked for again, by name,
 * with their uuid, in requests of at most SFEED_REQ_MAX bytes.  *ret_end:
 * 0 when the listing was complete, else the negative errno that cut it.
 * Returns 0, fn's error, or -EPIPE with err's reason: the reader is gone
 * or broken.
 */
int reader_read_target(struct reader_conn *c, uint32_t index, bool with_uuid,
    reader_export_fn fn, void *arg, int *ret_end, struct lh_err *err);

#endif
