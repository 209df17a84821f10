/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the gatherer's table (gtable.h), shared by its files: gtable.c
 * (targets, clients and exports, and restoring them), gtable_observe.c
 * (an export's delta into its client's sums) and gtable_sweep.c (the
 * sweep's end: pruning and the records handed out).  Not for other
 * modules.
 */
#ifndef LH_GTABLE_INT_H
#define LH_GTABLE_INT_H

#include <stdint.h>

#include "delta.h"
#include "gtable.h"

/* The hash of client idx in t->cindex (by fs and NID). */
uint64_t gt_client_hash(const void *ctx, uint32_t idx);

/* The slots of every export of tg afresh (after exp[] or the clients
 * were renumbered).  Cannot fail: every client listed had a slot. */
void gt_slot_rebuild(struct gt_target *tg);

/* Free tg and what it holds. */
void gt_target_free(struct gt_target *tg);

/* Drop every export of tg (a target gone or replaced). */
void gt_target_forget_exports(struct gtable *t, struct gt_target *tg);

/* e's previous values from gtable_export_prev()'s form (a state
 * file's). */
void gt_export_restore_prev(const struct gt_target *tg, struct gt_export *e,
    const struct delta_sample *s);

/* e (of tg) is about to take cur and ops (NULL: zeros) in
 * gtable_observe(): marks it changed, or counts an idle read. */
void gt_export_note_read(struct gt_target *tg, struct gt_export *e,
    const struct delta_sample *cur, const struct mdops *ops);

#endif
