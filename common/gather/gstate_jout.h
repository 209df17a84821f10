/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The outbox in a state journal's record (gstate_journal.c), written
 * compactly: an idle sweep's outbox is a record of zeros for every client,
 * which in the base's form (obstate.h: filesystem and NID as text, six
 * zero deltas, seven spans) took 41 bytes a client, 410 KB on a big OSS.
 *
 * A record names its client by number: the clients in the order in which
 * a walk of the table (targets in order, each one's exports in order)
 * first meets them.  The writer walks its live table after the sweep, the
 * replay the table it has rebuilt from the base and the records up to
 * this one: the same targets and exports in the same order, hence the
 * same numbers.  The record carries the number of clients and a digest of
 * their names in that order, and a replay whose table does not give the
 * same refuses the record (damage) rather than count to the wrong client.
 * A client not in the table (its deltas outlived its exports) is written
 * by name.  Layout, every integer a varint:
 *
 *   clients: count, be64 digest; u8 1 if a batch is in flight, then that
 *   batch; the pending batch.  A batch: number, first sweep, last sweep,
 *   start (ns), records: count, then each: u8 flags, then what they say:
 *     bits 0-1  the client: 0 the next number (the previous one's plus
 *               one, the first 0), 1 a number (zigzag, from the next),
 *               2 by name (str8 fs, str8 nid); 3 never
 *     bit 2     the span is not the previous record's (the first's:
 *               not 0): zigzag of the difference, modulo 2^64
 *     bit 3     deltas: u8 mask of those not zero (struct iocount
 *               order), then those
 *     bit 4     counter spans: u8 mask of those not the record's, then
 *               those (never 0)
 *     bit 5     op counts (obstate_put_ops(), some not zero)
 *     bit 6     a run: count r, then r more records like this one, each
 *               the next client (only without bits 3-5, never by name)
 *     bit 7     never
 * An idle client's record is then one byte, and a run of them a few.
 */
#ifndef LH_GSTATE_JOUT_H
#define LH_GSTATE_JOUT_H

struct gtable;
struct lh_err;
struct outbox;
struct statefile_out;
struct statefile_src;

/* ob into o, its clients numbered after t.  Returns 0 or -ENOMEM. */
int gstate_jout_put(struct statefile_out *o, const struct gtable *t,
    const struct outbox *ob);

/* Restore into ob, initialised with the record's last batch number, the
 * clients numbered after t.  Returns 0, or a negative errno with err set
 * (-EBADMSG: damaged). */
int gstate_jout_get(struct statefile_src *src, const struct gtable *t,
    struct outbox *ob, struct lh_err *err);

#endif
