/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The privileged stats reader, and the gatherer's connection to it.  When
 * the Lustre tree under lustre_root needs root (Lustre 2.17's debugfs,
 * mode 0700), a gatherer started as root forks this reader before it
 * touches the network, then drops to its user (privsep.c).  The reader
 * keeps uid 0 with no capability and does nothing but answer the
 * gatherer's requests over a socketpair (common/statsfeed.h): list the
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

#endif
