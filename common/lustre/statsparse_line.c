/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The general way through a Lustre stats line (statsparse.h): split into
 * fields, then read as a header (snapshot_time, start_time, elapsed_time)
 * or a counter, with a reason for anything malformed.  Any line the fast
 * path in statsparse.c does not take comes here.
 */
#include <errno.h>
#include <string.h>

#include "err.h"
#include "statsparse.h"
#include "statsparse_int.h"

static void
line_split(struct line *ln, const char *p, const char *end)
{
	ln->ntok = 0;
	ln->overflow = false;
	ln->end = end;
	for (;;) {
		const char *start;

		while (p < end && is_space(*p))
			p++;
		if (p == end)
			return;
		start = p;
		while (p < end && !is_space(*p))
			p++;
		if (ln->ntok == LINE_TOKENS_MAX) {
			ln->overflow = true;
			return;
		}
		ln->tok[ln->ntok].p = start;
		ln->tok[ln->ntok].n = (size_t)(p - start);
		ln->ntok++;
	}
}

/*
 * Decimal integer with an optional '-' (Lustre prints s64 counters with
 * %lld).  Unsigned values go up to 2^64-1 (sumsq is %llu since 2.9);
 * negative ones down to -2^63 and come back as two's complement.
 */
static int
parse_int(const struct token *t, uint64_t *ret, bool *ret_neg)
{
	const char *p = t->p, *end = t->p + t->n;
	bool neg = false;
	uint64_t v = 0;

	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	if (p == end)
		return -1;
	for (; p < end; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (d > 9)
			return -1;
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return -1;
		v = (uint64_t)0 - v;
	}
	*ret = v;
	*ret_neg = neg && v != 0;
	return 0;
}

/* The unit of a time value with nfrac fraction digits: from its unit
 * word, or without one from the digits.  Returns 0 or -1. */
static int
time_unit(const struct token *unit, size_t nfrac, enum lstats_time_unit *ret)
{
	if (unit == NULL) {
		/* No unit word: 9 digits can only be padded nanoseconds;
		 * fewer are what "%lu" microseconds look like. */
		if (nfrac == 0)
			*ret = LSTATS_TU_NONE;
		else if (nfrac == 9)
			*ret = LSTATS_TU_NSECS;
		else if (nfrac <= 6)
			*ret = LSTATS_TU_USECS;
		else
			return -1;
	} else if (TOK_IS(unit, "secs.usecs") || TOK_IS(unit, "(secs.usecs)")) {
		*ret = LSTATS_TU_USECS;
	} else if (TOK_IS(unit, "secs.nsecs") || TOK_IS(unit, "(secs.nsecs)")) {
		*ret = LSTATS_TU_NSECS;
	} else {
		return -1;
	}
	return 0;
}

/* "1421320813.45071" + unit -> seconds and nanoseconds.  In secs.usecs
 * (Lustre <= 2.9, "%lu.%lu") the fraction is an unpadded count of
 * microseconds: ".45071" is 45071 us, not 0.45071 s. */
static int
parse_time_value(const struct token *val, const struct token *unit,
    struct lstats_time *ret, enum lstats_time_unit *ret_tu)
{
	const char *p = val->p, *end = val->p + val->n, *dot;
	enum lstats_time_unit tu;
	uint64_t sec = 0, frac = 0;
	size_t nsec_digits, nfrac;

	dot = memchr(p, '.', val->n);
	if (dot == p)
		return -1;
	for (; p < (dot != NULL ? dot : end); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (d > 9 || sec > (UINT64_MAX - d) / 10)
			return -1;
		sec = sec * 10 + d;
	}
	nfrac = dot != NULL ? (size_t)(end - dot - 1) : 0;
	if (dot != NULL && nfrac == 0)
		return -1;
	if (nfrac > 9)
		return -1;
	for (p = dot != NULL ? dot + 1 : end; p < end; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (d > 9)
			return -1;
		frac = frac * 10 + d;
	}

	if (time_unit(unit, nfrac, &tu) < 0)
		return -1;
	switch (tu) {
	case LSTATS_TU_USECS:
		if (nfrac > 6)
			return -1;
		frac *= 1000;
		break;
	case LSTATS_TU_NSECS:
		/* "%09lu": always 9 digits; a shorter hand copy is read as a
		 * decimal fraction. */
		for (nsec_digits = nfrac; nsec_digits < 9; nsec_digits++)
			frac *= 10;
		break;
	case LSTATS_TU_NONE:
		break;
	}
	ret->sec = sec;
	ret->nsec = (uint32_t)frac;
	ret->present = true;
	*ret_tu = tu;
	return 0;
}

static int
parse_header(struct lstats *st, struct lstats_time *slot, const struct line *ln,
    unsigned lineno, bool colon, struct lh_err *err)
{
	const struct token *name = &ln->tok[0];
	const struct token *val, *unit = NULL;
	enum lstats_time_unit tu;
	unsigned i = 1;

	/* 2.15.0 job_stats style: "snapshot_time   : 1896533.4 secs.nsecs" */
	if (!colon && ln->ntok > 1 && TOK_IS(&ln->tok[1], ":"))
		i++;
	if (ln->ntok <= i || ln->ntok > i + 2 || ln->overflow)
		return lh_err_set(err, lineno, -EBADMSG,
		    "line %u: malformed %.*s line", lineno, (int)name->n,
		    name->p);
	val = &ln->tok[i];
	if (ln->ntok == i + 2)
		unit = &ln->tok[i + 1];
	if (slot->present)
		return lh_err_set(err, lineno, -EBADMSG,
		    "line %u: %.*s appears twice", lineno, (int)name->n,
		    name->p);
	if (parse_time_value(val, unit, slot, &tu) < 0)
		return lh_err_set(err, lineno, -EBADMSG,
		    "line %u: bad time '%.*s%s%.*s'", lineno, (int)val->n,
		    val->p, unit != NULL ? " " : "",
		    unit != NULL ? (int)unit->n : 0,
		    unit != NULL ? unit->p : "");
	if (slot == &st->snapshot)
		st->time_unit = tu;
	return 0;
}

static int
parse_counter(struct lstats *st, const struct line *ln, unsigned lineno,
    uint64_t *seen, struct lh_err *err)
{
	const struct token *name = &ln->tok[0], *unit = &ln->tok[3];
	uint64_t vals[5] = {0, 0, 0, 0, 0};
	unsigned nvals, i, negs = 0;
	bool neg;

	nvals = ln->ntok - 4;
	if (ln->overflow || (nvals != 0 && nvals != 3 && nvals != 4))
		return lh_err_set(err, lineno, -EBADMSG,
		    "line %u: counter %.*s has %s%u fields, expected 4, 7 or 8",
		    lineno, (int)name->n, name->p, ln->overflow ? "over " : "",
		    ln->ntok);
	if (name->n >= LSTATS_NAME_MAX)
		return lh_err_set(err, lineno, -EBADMSG,
		    "line %u: counter name longer than %d bytes", lineno,
		    LSTATS_NAME_MAX - 1);
	if (!sp_unit_ok(unit))
		return lh_err_set(err, lineno, -EBADMSG,
		    "line %u: counter %.*s has a bad unit '%.*s'", lineno,
		    (int)name->n, name->p, (int)unit->n, unit->p);
	if (st->ncounters == LSTATS_COUNTERS_MAX)
		return lh_err_set(err, lineno, -E2BIG,
		    "line %u: more than %d counters", lineno,
		    LSTATS_COUNTERS_MAX);
	for (i = 0; i < 1 + nvals; i++) {
		const struct token *t = &ln->tok[i == 0 ? 1 : 3 + i];

		if (parse_int(t, &vals[i], &neg) < 0)
			return lh_err_set(err, lineno, -EBADMSG,
			    "line %u: counter %.*s: bad number '%.*s'", lineno,
			    (int)name->n, name->p, (int)t->n, t->p);
		if (neg)
			negs |= 1u << i;
	}
	sp_counter_store(st, seen, name, unit, vals, nvals, negs, lineno,
	    ln->end);
	return 0;
}

int
sp_parse_line(struct lstats *st, const char *p, const char *end,
    unsigned lineno, uint64_t *seen, struct lh_err *err)
{
	struct lstats_time *slot;
	struct line ln;
	bool colon;

	if (memchr(p, '\0', (size_t)(end - p)) != NULL)
		return lh_err_set(err, lineno, -EBADMSG, "line %u: NUL byte",
		    lineno);
	line_split(&ln, p, end);
	if (ln.ntok == 0)
		return 0; /* blank lines: hand copies and brw_stats have them */
	slot = sp_header_slot(st, &ln.tok[0], &colon);
	if (slot != NULL)
		return parse_header(st, slot, &ln, lineno, colon, err);
	if (ln.ntok >= 4 && TOK_IS(&ln.tok[2], "samples"))
		return parse_counter(st, &ln, lineno, seen, err);
	/* Not ours: keep going, say how many (a future Lustre may add
	 * lines; the daemon logs them, rate-limited). */
	if (st->nskipped++ == 0)
		st->first_skipped = lineno;
	return 0;
}
