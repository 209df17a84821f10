/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the gatherer's state (gstate.h): what the base file
 * (gstate.c) and the journal (gstate_journal.c, gstate_jload.c) share,
 * an export and a target written and read the same way in both.  Not for
 * other modules.
 */
#ifndef LH_GSTATE_INT_H
#define LH_GSTATE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "lustre_tree.h"

struct gt_export;
struct gt_target;
struct gtable;
struct lh_err;
struct rbuf;
struct statefile_src;
struct wbuf;

#define GSTATE_VERSION 5 /* the base file's, and the journal's exports */

/*
 * The journal (gstate_journal.h): a header, then records.
 *  - header: "LHGJ", be32 version, the SHA-256 of the base it follows
 *    (the base file's own trailing checksum), then the SHA-256 of those
 *    40 bytes (written whole by statefile_commit(), never torn);
 *  - record: be32 body length, be32 its complement, the body, the
 *    SHA-256 of the body.  While a record is written its length reads
 *    GSTATE_JREC_PENDING twice.
 */
#define GSTATE_JMAGIC       "LHGJ"
#define GSTATE_JVERSION     2 /* the outbox as gstate_jout.h writes it */
#define GSTATE_JVERSION1    1 /* the outbox as obstate.h writes it */
#define GSTATE_JHEAD        (4 + 4 + 32)
#define GSTATE_JSTART       (GSTATE_JHEAD + 32)
#define GSTATE_JREC_HEAD    8
#define GSTATE_JREC_PENDING 0xffffffffu
#define GSTATE_JREC_MAX     ((uint32_t)1 << 30)

/* The SHA-256 that ends the base file at path, and its size (ret_len may
 * be NULL).  Returns 0, or a negative errno with err set. */
int gstate_base_sum(const char *path, uint8_t sum[32], uint64_t *ret_len,
    struct lh_err *err);

/* e, an export of tg, as the state file keeps it. */
void gstate_put_export(struct wbuf *w, const struct gtable *t,
    const struct gt_target *tg, const struct gt_export *e);

/* tg's name, filesystem, kind and exports/ identity. */
void gstate_put_target_head(struct wbuf *w, const struct gt_target *tg);

/* What gstate_put_target_head() wrote, read back and checked (a known
 * kind, names not empty).  Returns 0, or -1: damaged. */
struct gstate_target_head {
	char name[LTREE_TARGET_MAX];
	char fs[LTREE_FS_MAX];
	uint8_t kind;
	uint64_t dev, ino;
};
int gstate_get_target_head(struct rbuf *r, struct gstate_target_head *h);

/* One export of tg from a state file of version: restored (update
 * false: it must be new), or updated or created (a journal's record:
 * gtable_update_export()).  Returns 0, or a negative errno with err set
 * (-EBADMSG: damaged). */
int gstate_get_export(struct statefile_src *src, uint32_t version,
    struct gtable *t, struct gt_target *tg, bool update, struct lh_err *err);

#endif
