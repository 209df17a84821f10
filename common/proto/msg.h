/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Payload codecs of the frame types (docs/protocol.md): CHALLENGE, HELLO,
 * ACK, SWEEP and BYE.  Encoders append to a struct wbuf; decoders read a
 * payload that has already been authenticated, check every length and
 * count against the bytes actually present, and never allocate (SWEEP
 * records are handed to a callback one by one), but for
 * msg_sweep_stage(), which fills the caller's growing arrays.
 */
#ifndef LH_MSG_H
#define LH_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iocount.h"
#include "mdops.h"
#include "nid.h"

struct wbuf;
struct lh_err;

#define MSG_NONCE_LEN     32
#define MSG_NAME_MAX      64 /* identity, NUL included */
#define MSG_SOFTWARE_MAX  32
#define MSG_FS_MAX        16  /* fsname, NUL included */
#define MSG_TARGET_MAX    64  /* target name, NUL included */
#define MSG_HELLO_FS_MAX  64  /* filesystems in one HELLO */
#define MSG_HELLO_TGT_MAX 512 /* targets in one HELLO */
#define MSG_SWEEP_FS_MAX  64  /* filesystems in one SWEEP */
#define MSG_BYE_TEXT_MAX  128
#define MSG_NCOUNTERS     6  /* counters of a SWEEP record (struct iocount) */
#define MSG_OPS_MAX       64 /* names in a SWEEP's metadata-op section */
#define MSG_OP_NAME_MAX   32 /* an op name, NUL included */
/* The longest CHALLENGE payload: nonce, time, capabilities, role and a
 * 63-byte name.  A listener sends it before anything is authenticated,
 * so a connector buffers no more than this before the handshake. */
#define MSG_CHALLENGE_MAX (MSG_NONCE_LEN + 8 + 8 + 1 + 1 + MSG_NAME_MAX - 1)

/* Roles, as HELLO and CHALLENGE carry them. */
enum msg_role {
	MSG_ROLE_GATHERER = 1,
	MSG_ROLE_AGGREGATOR = 2,
	MSG_ROLE_RELAY = 3,
};

/* Capability bits (HELLO and CHALLENGE): what the sender understands. */
#define MSG_CAP_SWEEP 0x1u /* per-(fs, NID) SWEEP, version 1 */
#define MSG_CAP_MDOPS 0x2u /* the SWEEP's metadata-op section (4.4) */

struct msg_challenge {
	uint8_t nonce[MSG_NONCE_LEN];
	uint64_t time_ns; /* listener's wall clock, ns since the epoch */
	uint64_t caps;
	uint8_t role;
	char name[MSG_NAME_MAX];
};

struct msg_hello_target {
	char name[MSG_TARGET_MAX];
	uint16_t fs; /* index into fs[] */
};

struct msg_hello {
	uint8_t nonce[MSG_NONCE_LEN];
	uint8_t role;
	char software[MSG_SOFTWARE_MAX]; /* "lharvestd 0.1.0" */
	uint64_t time_ns;                /* sender's wall clock */
	uint32_t interval;               /* sweep interval, seconds */
	uint64_t caps;
	char name[MSG_NAME_MAX];
	uint16_t nfs;
	char fs[MSG_HELLO_FS_MAX][MSG_FS_MAX];
	uint16_t ntargets;
	struct msg_hello_target targets[MSG_HELLO_TGT_MAX];
};

enum msg_ack_kind {
	MSG_ACK_HELLO = 1, /* handshake accepted */
	MSG_ACK_SWEEP = 2, /* the batch is safe */
	MSG_ACK_DUPLICATE =
	    3, /* the batch was already safe: not counted again */
};

struct msg_ack {
	uint8_t kind;
	uint64_t seq;     /* sequence number of the frame acknowledged */
	uint64_t batch;   /* SWEEP batch number, 0 for HELLO */
	uint64_t time_ns; /* receiver's wall clock */
};

struct msg_bye {
	uint8_t reason; /* 0 shutdown, 1 reload, 2 protocol error */
	char text[MSG_BYE_TEXT_MAX];
};

/* The part of a SWEEP before its records. */
struct msg_sweep {
	uint64_t batch;       /* per-sender delivery number, from 1 */
	uint64_t first_sweep; /* earliest sweep id folded in (= last if one) */
	uint64_t start_ns;    /* wall-clock start of the span, ns */
	uint64_t span_us;     /* default span of a record, microseconds */
	uint16_t nfs;
	char fs[MSG_SWEEP_FS_MAX][MSG_FS_MAX];
	/* Encoder: add the metadata-op section when a record has counts;
	 * only for a receiver whose CHALLENGE has MSG_CAP_MDOPS.  Decoder:
	 * the section was there. */
	bool ops;
	uint32_t nrecs; /* filled by the decoder: every record encoded */
	/*
	 * Decoder: what it left out rather than refuse the whole SWEEP
	 * (docs/protocol.md 4.4).  Bit i of fs_dropped: fs[i] cannot be a
	 * Ganglia metric name (msg_fs_name_ok), and its ndropped records
	 * were not handed to the callback; fs[i] itself is printable.
	 * nops_dropped records were handed out without their metadata-op
	 * counts, which added up to more than their mds_ops (counted only
	 * when a callback is given, or by msg_sweep_stage()).  The encoder
	 * ignores these.
	 */
	uint64_t fs_dropped;
	uint32_t ndropped;
	uint32_t nops_dropped;
};

/* One (filesystem, client NID) record: counter deltas and their span. */
struct msg_rec {
	uint16_t fs;     /* index into msg_sweep.fs[] */
	const char *nid; /* encoder: borrowed; decoder: valid during the call */
	struct iocount d;
	uint64_t span_us; /* deltas of a long outage span hours or days */
	/*
	 * Each counter's own span (the rate of counter i is its delta over
	 * cspan_us[i]), in struct iocount order: read_bytes, write_bytes,
	 * read_ops, write_ops, oss_ops, mds_ops.  The encoder reads it only
	 * for present (non-zero) counters, takes 0 as "span_us" (a zero span
	 * for a non-zero delta means nothing), and sets mask bit 7 iff one
	 * of them differs from span_us.  The decoder fills all six: the
	 * counter's own span where bit 7 gave one, else span_us.
	 */
	uint64_t cspan_us[MSG_NCOUNTERS];
	bool has_cspan; /* decoder: bit 7 was set; the encoder ignores it */
	/*
	 * Per-operation metadata counts (mdops.h), or NULL: none.  Their
	 * rates share the span of mds_ops (cspan_us[5]).  Encoder: borrowed,
	 * sent only with msg_sweep.ops; decoder: valid during the call, ops
	 * the decoder does not know by name left out.
	 */
	const struct mdops *ops;
};

int msg_challenge_encode(struct wbuf *w, const struct msg_challenge *m);
int msg_challenge_decode(struct msg_challenge *m, const uint8_t *p, size_t n,
    struct lh_err *err);

int msg_hello_encode(struct wbuf *w, const struct msg_hello *m);
int msg_hello_decode(struct msg_hello *m, const uint8_t *p, size_t n,
    struct lh_err *err);

int msg_ack_encode(struct wbuf *w, const struct msg_ack *m);
int msg_ack_decode(struct msg_ack *m, const uint8_t *p, size_t n,
    struct lh_err *err);

int msg_bye_encode(struct wbuf *w, const struct msg_bye *m);
int msg_bye_decode(struct msg_bye *m, const uint8_t *p, size_t n,
    struct lh_err *err);

/*
 * Encode a SWEEP of n records.  They are sent sorted by filesystem,
 * network and address (what makes the encoding small), NIDs in canonical
 * form (nid_canon); recs itself is left as it is.  A (fs, NID) pair may
 * appear once, after canonicalisation.  Returns 0, -EINVAL (bad NID,
 * duplicate, fs index out of range or of a name msg_fs_name_ok refuses, a
 * filesystem named twice, a span above 2^63-1) or the wbuf's error.
 */
int msg_sweep_encode(struct wbuf *w, const struct msg_sweep *h,
    const struct msg_rec *recs, size_t n);

/* Record i of the caller's records, into ret (its nid must stay valid
 * until the encoding is done, its ops until the next call). */
typedef void (*msg_rec_get_fn)(const void *ctx, size_t i, struct msg_rec *ret);

/* The same, reading the records through get(), so that a sender need
 * not build an array of struct msg_rec for a large batch. */
int msg_sweep_encode_from(struct wbuf *w, const struct msg_sweep *h,
    msg_rec_get_fn get, const void *ctx, size_t n);

/* Whether fs can be a filesystem's name on the wire: 1-15 of the
 * characters a Ganglia metric name may hold, A-Z a-z 0-9 _ . - */
bool msg_fs_name_ok(const char *fs);

/*
 * Whether a record of (fs, nid) can travel: encoded in a SWEEP and
 * accepted by a receiver's decoder.  A sender checks a name once, before
 * it ever queues it, so that one strange directory name cannot make
 * every later batch undeliverable.  Returns 0 or -EINVAL.
 */
int msg_rec_check(const char *fs, const char *nid);

/* Called for each decoded record; a non-zero return stops decoding and
 * is returned by msg_sweep_decode(). */
typedef int (
    *msg_rec_cb)(void *arg, const struct msg_sweep *h, const struct msg_rec *r);

/*
 * Decode a SWEEP, calling cb (may be NULL) for every usable record in
 * order, its NID in canonical form (nid_canon).  The whole payload is
 * checked first: cb is never called for a SWEEP that turns out to be
 * malformed further on (-EBADMSG: the structure is broken, a rule of
 * the encoding is broken, a filesystem is named twice, a client appears
 * twice).  A record that decodes but cannot be used is left out and
 * counted instead, in h->ndropped and h->nops_dropped (see struct
 * msg_sweep): the return is then still 0.
 */
int msg_sweep_decode(struct msg_sweep *h, const uint8_t *p, size_t n,
    msg_rec_cb cb, void *arg, struct lh_err *err);

/*
 * A SWEEP decoded in one pass (msg_sweep_stage()), for a receiver that
 * sums a million records a sweep: the records are kept in binary form,
 * their clients as (filesystem, network, kind, address) as the wire
 * carries them, so that the receiver keys its sums without printing or
 * hashing NID text for the common forms.
 */
struct msg_sgroup {
	uint16_t fs;           /* index into msg_sweep.fs[] */
	uint8_t kind;          /* enum nid_kind */
	bool dropped;          /* fs is in fs_dropped: not to be counted */
	char net[NID_NET_MAX]; /* canonical ("o2ib0" is "o2ib") */
	uint32_t first, n;     /* its records: recs[first], ... */
};

struct msg_srec {
	/* IPv4 and numbered NIDs: the address; text addresses: the offset
	 * of the whole NID's canonical text in msg_stage.text. */
	uint32_t addr;
	uint32_t cspan;            /* 0: every counter's span is span_us;
	                              else 1 + index into msg_stage.cspans */
	uint32_t ops;              /* 0: none; else 1 + index into .ops */
	uint64_t d[MSG_NCOUNTERS]; /* deltas, struct iocount order */
	uint64_t span_us;
};

/* The caller's storage for msg_sweep_stage(), reused from SWEEP to SWEEP
 * (zeroed at first; msg_stage_free() at the end). */
struct msg_stage {
	struct msg_sgroup *groups;
	size_t ngroups, gcap;
	struct msg_srec *recs;
	size_t nrecs, rcap;
	uint64_t (*cspans)[MSG_NCOUNTERS]; /* as msg_rec.cspan_us */
	size_t ncspans, cscap;
	struct mdops *ops; /* op counts, sum not above the record's mds_ops */
	size_t nops, opcap;
	char *text; /* NUL-terminated NIDs of text addresses */
	size_t ntext, tcap;
};

/*
 * Decode a SWEEP in one pass into h and st: the same checks as
 * msg_sweep_decode() (the same return and reason for a malformed one),
 * and the same records, each of them in st, in order, those of a dropped
 * filesystem too (their group says so); h->ndropped and h->nops_dropped
 * are counted as msg_sweep_decode() does with a callback, and a record
 * whose op counts were dropped has none.  Unlike the other decoders this
 * one grows st's arrays: -ENOMEM (err set) when it cannot.  Whatever the
 * return, st holds no more than the part decoded.
 */
int msg_sweep_stage(struct msg_sweep *h, const uint8_t *p, size_t n,
    struct msg_stage *st, struct lh_err *err);

void msg_stage_free(struct msg_stage *st);

/*
 * Record i of group g of st as msg_sweep_decode() hands it out: its NID's
 * text into nid (NID_STR_MAX bytes), its op counts (if any) into ops.
 * For the few who want text (tests, the fuzz target that compares the
 * two decoders).
 */
void msg_stage_rec(const struct msg_stage *st, const struct msg_sgroup *g,
    size_t i, struct msg_rec *ret, char *nid, struct mdops *ops);

/*
 * The largest legal HELLO payload (docs/protocol.md 4.2 and 6), the most a
 * listener buffers before a peer has proved it holds a key: nonce 32, role
 * 1, software 1+31, time 8, interval 4, capabilities 8, name 1+63,
 * varint(64) 1, 64 filesystems of 1+63, varint(512) 2, 512 targets of
 * 1+1+63: 32+1+32+8+4+8+64+1+4096+2+33280 = 37528 bytes.
 */
#define MSG_HELLO_MAX 37528

#endif
