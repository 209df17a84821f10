/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a sender (gatherer, relay) has counted but the receiver has not yet
 * acknowledged (docs/protocol.md section 5).  Two batches at most:
 *
 *  - in flight: sent, waiting for its ACK; never changed, sent again with
 *    the same number and records after a reconnect;
 *  - pending: everything counted since, coalesced per (filesystem, NID):
 *    deltas added up, spans added up (each counter's span too), however
 *    long the outage.  Metadata-op counts (an MDS's records) are added
 *    up too, kept apart so that only the records that have some pay for
 *    them.
 *
 * Memory is therefore bounded by twice the number of distinct clients, and
 * by OUTBOX_MAX_KEYS at worst.  Pure: no I/O, no clock.
 */
#ifndef LH_OUTBOX_H
#define LH_OUTBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fsnames.h"
#include "hindex.h"
#include "iocount.h"
#include "mdops.h"
#include "msg.h"
#include "nid.h"
#include "opsarena.h"
#include "strpool.h"
#include "wire.h"

#define OUTBOX_MAX_KEYS ((size_t)4 << 20)
#define OUTBOX_NO_OPS   OPSARENA_NONE /* outbox_rec.ops: none */

struct outbox_rec {
	uint32_t nid; /* offset of its NID in the batch's names */
	uint16_t fs;  /* index into the batch's fsn */
	struct iocount d;
	uint64_t span_us;
	uint32_t ops; /* its op sums in the batch's ops, or OUTBOX_NO_OPS */
	/* Index into the batch's cspans[], or OUTBOX_NO_OPS: every
	 * counter's span is span_us (outbox_rec_cspans()). */
	uint32_t cspan;
};

struct outbox_batch {
	uint64_t batch;       /* 0 while pending (numbered when sent) */
	uint64_t first_sweep; /* earliest sweep folded in */
	uint64_t last_sweep;  /* latest */
	uint64_t start_ns;    /* earliest span start */
	struct outbox_rec *recs;
	size_t n, cap;
	struct hindex index; /* over recs, by (fs, nid) */
	/* The op sums of the records that have some, packed: an MDS's
	 * 17 counts per client take a few bytes rather than 136. */
	struct opsarena ops;
	/* Each counter's span (struct iocount order), summed like span_us
	 * (an add without a span of its own for a counter adds span_us),
	 * kept only for the records where one differs from span_us. */
	uint64_t (*cspans)[MSG_NCOUNTERS];
	size_t ncspans, cspanscap;
	/* The records' NIDs, each once and NUL-terminated, and their
	 * filesystems: a record does not carry NID_STR_MAX bytes of its
	 * own. */
	struct strpool names;
	struct fsnames fsn;
};

/* A record's NID and filesystem. */
static inline const char *
outbox_rec_nid(const struct outbox_batch *b, const struct outbox_rec *r)
{
	return strpool_get(&b->names, r->nid);
}

static inline const char *
outbox_rec_fs(const struct outbox_batch *b, const struct outbox_rec *r)
{
	return fsnames_get(&b->fsn, r->fs);
}

/* A record's op sums, unpacked into buf: buf, or NULL when it has none. */
const struct mdops *outbox_rec_ops(const struct outbox_batch *b,
    const struct outbox_rec *r, struct mdops *buf);

/* How many of b's records have op sums. */
size_t outbox_batch_nops(const struct outbox_batch *b);

/* A record's span of each counter, into ret. */
void outbox_rec_cspans(const struct outbox_batch *b, const struct outbox_rec *r,
    uint64_t ret[MSG_NCOUNTERS]);

struct outbox {
	uint64_t last_batch; /* the last number handed out */
	bool have_inflight;
	struct outbox_batch inflight;
	struct outbox_batch pending;
	uint64_t dropped; /* records refused at OUTBOX_MAX_KEYS */
	uint64_t splits;  /* batches cut down to fit a frame */
	/* The pending batch holds only what the last seal split off: it
	 * may still be unsealed. */
	bool rest_only;
	/* The SWEEP of the batch in flight (with its op section) as the
	 * seal encoded it to see that it fits, after FRAME_HDR_LEN bytes of
	 * room: outbox_next() hands it over instead of encoding it again.
	 * Kept for batch kept_batch only (0: none). */
	struct wbuf kept;
	uint64_t kept_batch;
};

void outbox_init(struct outbox *ob, uint64_t last_batch);
void outbox_free(struct outbox *ob);

/*
 * Count a delta of one (fs, NID) for sweep sweep_id, covering span_us
 * microseconds from start_ns.  ops (may be NULL: none) are its metadata
 * op deltas, whose rates share the span of mds_ops.  cspan_us (may be
 * NULL) gives each counter its own span, in struct iocount order, a 0
 * meaning span_us (so does NULL for every counter).  Coalesced into the
 * pending batch: deltas, op counts and spans added up, spans saturating
 * at 2^63-1.  Returns 0, -EINVAL (bad names), -E2BIG (more filesystems than
 * a SWEEP carries), -ENOMEM or -ENOSPC (too
 * many keys: counted in ob->dropped).
 */
int outbox_add(struct outbox *ob, const char *fs, const char *nid,
    const struct iocount *d, const struct mdops *ops, uint64_t span_us,
    const uint64_t *cspan_us, uint64_t sweep_id, uint64_t start_ns);

/*
 * Count metadata op deltas ops of one (fs, NID) for sweep sweep_id alone,
 * into the pending batch (the record created if new, with no span yet):
 * the gatherer adds each MDT export's op deltas as it reads them, and the
 * record's counters and span with outbox_add() at the sweep's end, so
 * that it holds no op sums of its own.  Returns as outbox_add().
 */
int outbox_add_ops(struct outbox *ob, const char *fs, const char *nid,
    const struct mdops *ops, uint64_t sweep_id);

/* True when something is not yet acknowledged (in flight or pending). */
bool outbox_has_data(const struct outbox *ob);

/*
 * Number the pending batch: if no batch is in flight, the pending one
 * becomes the batch in flight under the next number.  Batches are
 * numbered only here, so that a sender that saves its outbox (the
 * gatherer's state file) seals just before saving: every number it ever
 * sent is then in its saved state, and a restart can never send different
 * records under a number already used.  A sender that saves nothing seals
 * whenever it adds or is acknowledged.
 */
void outbox_seal(struct outbox *ob);

/*
 * outbox_seal(), for a receiver that takes SWEEP payloads of at most
 * max_payload bytes (outbox_payload_max(); 0: no limit).  A batch whose
 * SWEEP would be larger is split before it is ever sent (a batch once
 * sent is never changed): its first records are numbered and sealed, the
 * others stay pending, ahead of what is added next, for the next seals.
 * Returns 0, 1 (split: counted in ob->splits), or a negative errno
 * (-ENOMEM, -EMSGSIZE: not even one record fits), nothing then sealed.
 */
int outbox_seal_within(struct outbox *ob, size_t max_payload);

/* The same for a batch in flight restored from a state file (saved by a
 * version that did not split, or under a larger max_frame): one that
 * could never be sent whole is split.  Returns as outbox_seal_within(). */
int outbox_fit(struct outbox *ob, size_t max_payload);

/* The largest SWEEP payload in a frame of max_frame bytes (0: the
 * default; clamped as the session clamps it). */
size_t outbox_payload_max(size_t max_frame);

/* Undo the outbox_seal() that just numbered the batch in flight, before
 * anything was sent: its records go back to the (empty) pending batch and
 * its number is free again (what a split left pending goes back behind
 * them).  For a sender whose save failed: what it could not save, it must
 * not send.  Returns 0, -ENOMEM, or -EINVAL (no batch in flight, or
 * records added since). */
int outbox_unseal(struct outbox *ob);

/* True when a sealed batch waits to be sent or acknowledged. */
bool outbox_ready(const struct outbox *ob);

/*
 * The SWEEP payload of the batch in flight (the same number and records
 * every time until it is acknowledged).  ops: the receiver takes the
 * metadata-op section (its CHALLENGE had MSG_CAP_MDOPS); without it the
 * same batch goes without its op counts.  *ret_batch and *ret_sweep get
 * its batch number and last sweep id.  Returns 0, -ENODATA (nothing
 * sealed) or an encoding error.
 */
int outbox_next(struct outbox *ob, struct wbuf *w, bool ops,
    uint64_t *ret_batch, uint64_t *ret_sweep);

/*
 * A seal that found the whole batch fits keeps the SWEEP it encoded to
 * find out.  When w holds only the room for a frame header (FRAME_HDR_LEN
 * bytes, as a sender writes it) and ops is set, outbox_next() moves that
 * encoding into w (w's storage is swapped, not copied), so that a sweep
 * encodes its batch once.  Callers forget what their sender did not take
 * (it would stay resident through an outage): outbox_forget_encoding(),
 * right after giving the sender its chance.
 */
void outbox_forget_encoding(struct outbox *ob);

/* Whether both batches encode (a restored outbox: see gstate.c).
 * Returns 0 or the encoder's error. */
int outbox_check(const struct outbox *ob);

/* State restore: what outbox_add() collected becomes the batch in flight
 * under the saved number batch.  Returns 0, or -EINVAL (a batch in flight
 * already, nothing collected, or a number above last_batch). */
int outbox_restore_inflight(struct outbox *ob, uint64_t batch);

/* The receiver acknowledged batch (ACK kind SWEEP or DUPLICATE): forget
 * it.  Returns 0, or -ESRCH if that is not the batch in flight. */
int outbox_acked(struct outbox *ob, uint64_t batch);

#endif
