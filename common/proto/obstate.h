/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An outbox (common/proto/outbox.h) inside a state file (statefile.h): the
 * deltas a sender (gatherer, relay) has not yet had acknowledged, so that
 * they survive its restart.  Layout, every integer a varint:
 *
 *   u8 1 if a batch is in flight, then that batch; the pending batch.
 *   A batch: number (0 while pending), first sweep, last sweep, start
 *   (ns), records: count, then each: str8 fs, str8 nid, the six deltas,
 *   span, six counter spans (us; 0: the span, the same), and (when the
 *   file has them) op counts.
 *   Op counts: a mask of the ops that are not zero (bit i: enum mdops_op
 *   i), then those counts; 0 for none.
 *
 * The batch in flight keeps its number and records, so that it is sent
 * again unchanged after the restart.
 */
#ifndef LH_OBSTATE_H
#define LH_OBSTATE_H

#include <stdbool.h>
#include <stdint.h>

struct iocount;
struct lh_err;
struct mdops;
struct outbox;
struct rbuf;
struct statefile_out;
struct statefile_src;
struct wbuf;

void obstate_put(struct statefile_out *o, const struct outbox *ob);

/* Restore into ob, initialised with the saved last batch number (the
 * batch in flight may not be above it).  with_ops: the records carry op
 * counts.  Returns 0, or a negative errno with err set ("damaged: ..."):
 * free and initialise ob again then. */
int obstate_get(struct statefile_src *src, bool with_ops, struct outbox *ob,
    struct lh_err *err);

/* The pieces, for other parts of a state file.  Each asks w for room for
 * its longest form first (a state file's buffer has no max): into a wbuf
 * with a max, it fails unless that much is left. */
void obstate_put_counters(struct wbuf *w, const struct iocount *c);
void obstate_put_ops(struct wbuf *w, const struct mdops *m); /* m may be NULL */
/* The same bytes into room made by wbuf_room() (at least
 * OBSTATE_COUNTERS_MAX, OBSTATE_OPS_MAX bytes); each returns p past
 * them. */
#define OBSTATE_COUNTERS_MAX (VARINT_MAX * (size_t)IOCOUNT_N)
#define OBSTATE_OPS_MAX      (VARINT_MAX * (size_t)(1 + MDOPS_N))
uint8_t *obstate_store_counters(uint8_t *p, const struct iocount *c);
uint8_t *obstate_store_ops(uint8_t *p, const struct mdops *m);
int obstate_get_counters(struct rbuf *r, struct iocount *c);
/* *ret_any: some op count is there. */
int obstate_get_ops(struct rbuf *r, struct mdops *m, bool *ret_any);

#endif
