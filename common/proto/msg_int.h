/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the payload codecs (msg.h), shared by their files: msg.c (the
 * small messages: CHALLENGE, HELLO, ACK, BYE), msg_sweep_enc.c (encoding
 * a SWEEP) and msg_sweep_dec.c (decoding one).  Not for other modules.
 */
#ifndef LH_MSG_INT_H
#define LH_MSG_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "msg.h"
#include "wire.h"

/* A malformed payload: err says what.  -EBADMSG, as lh_err_set() returns
 * it, but visibly so to the static analyser, which cannot see err.c. */
#define BAD(err, what)                                                         \
	((void)lh_err_set((err), 0, -EBADMSG, "%s", (what)), -EBADMSG)

/* Record mask bits: which counters follow, and whether a span does. */
#define REC_READ_BYTES  0x01u
#define REC_WRITE_BYTES 0x02u
#define REC_READ_OPS    0x04u
#define REC_WRITE_OPS   0x08u
#define REC_OSS_OPS     0x10u
#define REC_MDS_OPS     0x20u
#define REC_COUNTERS    0x3fu
#define REC_SPAN        0x40u
#define REC_CSPAN       0x80u /* a span for each present counter */

/*
 * rbuf_get_varint(), inline, with its rules: at most 10 bytes, the 10th
 * carrying the top bit only, no last byte of 0 after others (one
 * encoding per value).  The SWEEP decoder reads several a record, a
 * million records a sweep at a large site, where the call was a quarter
 * of the decoding (docs/performance.md, issue 19).
 */
static inline int
msg_get_varint(struct rbuf *r, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < 10 && i < r->len; i++) {
		uint8_t b = r->p[i];

		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (b < 0x80) {
			if ((b == 0 && i > 0) || (i == 9 && b > 1))
				return -1;
			*v = x;
			r->p += i + 1;
			r->len -= i + 1;
			return 0;
		}
	}
	return -1;
}

/* rbuf_get_u8(), inline for the same reason: a record's mask. */
static inline int
msg_get_u8(struct rbuf *r, uint8_t *v)
{
	if (r->len == 0)
		return -1;
	*v = *r->p++;
	r->len--;
	return 0;
}

/* Names (identities, filesystems, targets, networks, addresses) are
 * printable ASCII without blanks; free text (software, BYE) may have
 * blanks.  Nothing a peer sends can then forge a log line.  Inline: the
 * SWEEP decoder reads a name per group and per text address. */
static inline bool
msg_printable(const char *s, bool blanks)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c > 0x7e || c < 0x20 || (c == ' ' && !blanks))
			return false;
	}
	return true;
}

/* A name (see msg_printable()) from r into out.  Returns 0 or -1. */
static inline int
msg_get_name(struct rbuf *r, char *out, size_t size)
{
	if (rbuf_get_str8(r, out, size) < 0 || out[0] == '\0' ||
	    !msg_printable(out, false))
		return -1;
	return 0;
}

/* The span of counter i as the encoder sends it: 0 means the record's. */
static inline uint64_t
msg_counter_span(const struct msg_rec *r, unsigned i)
{
	return r->cspan_us[i] != 0 ? r->cspan_us[i] : r->span_us;
}

/* The index of the first of n names (a HELLO's or SWEEP's fs[], of
 * MSG_FS_MAX bytes each) equal to an earlier one, or n. */
unsigned msg_fs_repeated(const void *fs, unsigned n);

/* 0 when r is used up, else -EBADMSG with "what: N bytes of trailing
 * garbage". */
int msg_done(const struct rbuf *r, struct lh_err *err, const char *what);

/* The one-pass decoder's stage (msg_stage.c), filled by the checking
 * pass of msg_sweep_dec.c. */
void msg_stage_clear(struct msg_stage *st);
/* A group of nrec records of filesystem fs whose NIDs are np's network
 * and kind.  Returns 0 or -ENOMEM. */
int msg_stage_group(struct msg_stage *st, uint64_t fs,
    const struct nid_parts *np, bool dropped, uint64_t nrec);
/* A record of the last group, its address in np, its NID's text (text
 * addresses only) in rec->nid.  Returns 0 or -ENOMEM. */
int msg_stage_rec_add(struct msg_stage *st, const struct nid_parts *np,
    const struct msg_rec *rec);
/* The op counts (summing to opsum) of record idx, kept unless its
 * filesystem is dropped or they sum to more than its mds_ops (counted in
 * h->nops_dropped).  Returns 0 or -ENOMEM. */
int msg_stage_ops(struct msg_stage *st, struct msg_sweep *h, uint64_t idx,
    const struct mdops *ops, uint64_t opsum);

#endif
