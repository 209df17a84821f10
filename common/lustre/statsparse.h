/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Parser for one Lustre "stats" text buffer: a per-client export file
 * (obdfilter.*.exports.*.stats, mdt.*.exports.*.stats) or a per-target
 * stats/md_stats file, in the format of any Lustre from 2.5 to 2.17.
 *
 *   snapshot_time             1712345678.123456789 secs.nsecs
 *   start_time                1711740878.004815162 secs.nsecs   (2.15+)
 *   elapsed_time              604800.118641627 secs.nsecs       (2.15+)
 *   read_bytes                49412 samples [bytes] 4096 4194304 176312373248
 * 7127... punch                     57 samples [reqs]
 *
 * The parser never allocates: the caller owns struct lstats (about 12 KiB)
 * and may reuse it for every file.  Counters are kept in file order, keyed
 * by name whatever their order or unit.  docs/stats-format.md lists every
 * form accepted and why.
 */
#ifndef LH_STATSPARSE_H
#define LH_STATSPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lh_err;

#define LSTATS_NAME_MAX     64  /* counter name, NUL included */
#define LSTATS_UNIT_MAX     16  /* unit without brackets, NUL included */
#define LSTATS_COUNTERS_MAX 128 /* a 2.17 MDT export prints about 30 */

/* Unit of a header time's fraction. */
enum lstats_time_unit {
	LSTATS_TU_NONE = 0, /* no fraction, or no header at all */
	LSTATS_TU_USECS,    /* "secs.usecs": unpadded microseconds (<= 2.9) */
	LSTATS_TU_NSECS,    /* "secs.nsecs": 9-digit nanoseconds (>= 2.10) */
};

struct lstats_time {
	uint64_t sec;
	uint32_t nsec; /* always nanoseconds, whatever the file printed */
	bool present;
};

/* Which optional fields a counter line carried, and what it is. */
#define LSTATS_F_MINMAXSUM 0x01u /* min max sum present (7 or 8 fields) */
#define LSTATS_F_SUMSQ     0x02u /* sumsq present (8 fields) */
#define LSTATS_F_DUP       0x04u /* name already seen in this file */

/* Fields printed with a leading '-' (Lustre prints s64 with %lld); the
 * value then holds the two's complement of the magnitude. */
#define LSTATS_NEG_COUNT 0x01u
#define LSTATS_NEG_MIN   0x02u
#define LSTATS_NEG_MAX   0x04u
#define LSTATS_NEG_SUM   0x08u
#define LSTATS_NEG_SUMSQ 0x10u

struct lstats_counter {
	char name[LSTATS_NAME_MAX];
	char unit[LSTATS_UNIT_MAX];
	uint64_t count; /* "samples" */
	uint64_t min;
	uint64_t max;
	uint64_t sum;
	uint64_t sumsq; /* wraps modulo 2^64 on busy targets: never trust it */
	uint32_t line;  /* 1-based line in the buffer */
	uint8_t flags;  /* LSTATS_F_* */
	uint8_t neg;    /* LSTATS_NEG_* */
	uint8_t name_len; /* strlen(name): compare names without strlen */
};

struct lstats {
	struct lstats_time snapshot;
	struct lstats_time start;        /* 2.15+; 0.0 on 2.15.0/2.15.1 */
	struct lstats_time elapsed;      /* 2.15+ */
	enum lstats_time_unit time_unit; /* that of snapshot_time */
	unsigned ncounters;
	unsigned nskipped;      /* lines that are neither header nor counter */
	unsigned first_skipped; /* line number of the first of those, or 0 */
	struct lstats_counter counters[LSTATS_COUNTERS_MAX];
};

/* Flags for lstats_parse(). */
#define LSTATS_PARSE_UNTERMINATED_OK 0x01u /* last line may lack '\n' */
/* min, max and sumsq are not wanted (the gatherer's case): a line in
 * Lustre's own layout has them checked as always but not converted, so
 * they read 0; every other field is what a full parse gives. */
#define LSTATS_PARSE_NO_MINMAX       0x02u

/*
 * Parse len bytes of buf into st (reset first).  Returns 0, or on failure
 * a negative errno with err filled and st left empty:
 *   -ENODATA  nothing but blank lines;
 *   -EBADMSG  a malformed header or counter line, or a last line without
 *             '\n' (a truncated read: re-read, never half-parse);
 *   -E2BIG    more than LSTATS_COUNTERS_MAX counters.
 * Lines that are neither header nor counter are counted in st->nskipped.
 */
int lstats_parse(struct lstats *st, const char *buf, size_t len, unsigned flags,
    struct lh_err *err);

/* First counter called name, or NULL.  A name that appears twice (2.5-2.11
 * OST files) is found at its first line, the one that counts. */
const struct lstats_counter *
lstats_find(const struct lstats *st, const char *name);

#endif
