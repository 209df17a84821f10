/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Lustre stats text -> struct lstats.  One pass, line by line, no
 * allocation.  The format is detected per line, never from a version
 * number: vendor builds and backports make versions a poor oracle.
 */
#include <errno.h>
#include <string.h>

#include "err.h"
#include "statsparse.h"

/* A counter line has 4, 7 or 8 fields; a header line 2 to 4. */
#define LINE_TOKENS_MAX 10

struct token {
	const char *p;
	size_t n;
};

struct line {
	struct token tok[LINE_TOKENS_MAX];
	unsigned ntok;
	bool overflow; /* more than LINE_TOKENS_MAX fields */
};

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool
tok_is(const struct token *t, const char *s)
{
	size_t n = strlen(s);

	return t->n == n && memcmp(t->p, s, n) == 0;
}

static void
line_split(struct line *ln, const char *p, const char *end)
{
	ln->ntok = 0;
	ln->overflow = false;
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

	if (unit == NULL) {
		/* No unit word: 9 digits can only be padded nanoseconds;
		 * fewer are what "%lu" microseconds look like. */
		if (nfrac == 0)
			tu = LSTATS_TU_NONE;
		else if (nfrac == 9)
			tu = LSTATS_TU_NSECS;
		else if (nfrac <= 6)
			tu = LSTATS_TU_USECS;
		else
			return -1;
	} else if (tok_is(unit, "secs.usecs") || tok_is(unit, "(secs.usecs)")) {
		tu = LSTATS_TU_USECS;
	} else if (tok_is(unit, "secs.nsecs") || tok_is(unit, "(secs.nsecs)")) {
		tu = LSTATS_TU_NSECS;
	} else {
		return -1;
	}

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

/* The header names, with or without a colon ("snapshot_time:" in brw_stats
 * and some vendor builds).  Returns the slot or NULL. */
static struct lstats_time *
header_slot(struct lstats *st, const struct token *t, bool *ret_colon)
{
	static const char *const names[] = {"snapshot_time", "start_time",
	    "elapsed_time"};
	size_t n = t->n;
	unsigned i;

	*ret_colon = n > 0 && t->p[n - 1] == ':';
	if (*ret_colon)
		n--;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strlen(names[i]) == n && memcmp(t->p, names[i], n) == 0)
			break;
	}
	switch (i) {
	case 0:
		return &st->snapshot;
	case 1:
		return &st->start;
	case 2:
		return &st->elapsed;
	default:
		return NULL;
	}
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
	if (!colon && ln->ntok > 1 && tok_is(&ln->tok[1], ":"))
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

/* A cheap bucket for spotting repeated names without comparing every
 * counter with every other. */
static unsigned
name_bucket(const struct token *t)
{
	return ((unsigned)t->n * 31u + (unsigned char)t->p[0] +
	           (unsigned char)t->p[t->n - 1] * 7u) &
	    63u;
}

static bool
name_seen(const struct lstats *st, const struct token *t)
{
	unsigned i;

	for (i = 0; i < st->ncounters; i++) {
		const struct lstats_counter *c = &st->counters[i];

		if (strlen(c->name) == t->n && memcmp(c->name, t->p, t->n) == 0)
			return true;
	}
	return false;
}

static int
parse_counter(struct lstats *st, const struct line *ln, unsigned lineno,
    uint64_t *seen, struct lh_err *err)
{
	const struct token *name = &ln->tok[0], *unit = &ln->tok[3];
	struct lstats_counter *c;
	unsigned nvals, i, bucket;
	uint64_t vals[5];
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
	if (unit->n < 3 || unit->p[0] != '[' || unit->p[unit->n - 1] != ']' ||
	    unit->n - 2 >= LSTATS_UNIT_MAX)
		return lh_err_set(err, lineno, -EBADMSG,
		    "line %u: counter %.*s has a bad unit '%.*s'", lineno,
		    (int)name->n, name->p, (int)unit->n, unit->p);
	if (st->ncounters == LSTATS_COUNTERS_MAX)
		return lh_err_set(err, lineno, -E2BIG,
		    "line %u: more than %d counters", lineno,
		    LSTATS_COUNTERS_MAX);

	c = &st->counters[st->ncounters];
	memset(vals, 0, sizeof(vals));
	c->neg = 0;
	for (i = 0; i < 1 + nvals; i++) {
		const struct token *t = &ln->tok[i == 0 ? 1 : 3 + i];

		if (parse_int(t, &vals[i], &neg) < 0)
			return lh_err_set(err, lineno, -EBADMSG,
			    "line %u: counter %.*s: bad number '%.*s'", lineno,
			    (int)name->n, name->p, (int)t->n, t->p);
		if (neg)
			c->neg |= (uint8_t)(1u << i);
	}
	memcpy(c->name, name->p, name->n);
	c->name[name->n] = '\0';
	memcpy(c->unit, unit->p + 1, unit->n - 2);
	c->unit[unit->n - 2] = '\0';
	c->count = vals[0];
	c->min = vals[1];
	c->max = vals[2];
	c->sum = vals[3];
	c->sumsq = vals[4];
	c->line = lineno;
	c->flags = 0;
	if (nvals >= 3)
		c->flags |= LSTATS_F_MINMAXSUM;
	if (nvals == 4)
		c->flags |= LSTATS_F_SUMSQ;
	bucket = name_bucket(name);
	if ((*seen & ((uint64_t)1 << bucket)) != 0 && name_seen(st, name))
		c->flags |= LSTATS_F_DUP;
	*seen |= (uint64_t)1 << bucket;
	st->ncounters++;
	return 0;
}

static void
lstats_reset(struct lstats *st)
{
	st->snapshot.present = false;
	st->start.present = false;
	st->elapsed.present = false;
	st->time_unit = LSTATS_TU_NONE;
	st->ncounters = 0;
	st->nskipped = 0;
	st->first_skipped = 0;
}

static int
parse_line(struct lstats *st, const char *p, const char *end, unsigned lineno,
    uint64_t *seen, struct lh_err *err)
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
	slot = header_slot(st, &ln.tok[0], &colon);
	if (slot != NULL)
		return parse_header(st, slot, &ln, lineno, colon, err);
	if (ln.ntok >= 4 && tok_is(&ln.tok[2], "samples"))
		return parse_counter(st, &ln, lineno, seen, err);
	/* Not ours: keep going, say how many (a future Lustre may add
	 * lines; the daemon logs them, rate-limited). */
	if (st->nskipped++ == 0)
		st->first_skipped = lineno;
	return 0;
}

int
lstats_parse(struct lstats *st, const char *buf, size_t len, unsigned flags,
    struct lh_err *err)
{
	const char *p = buf, *end = buf + len;
	uint64_t seen = 0;
	unsigned lineno = 0;
	int rc;

	lstats_reset(st);
	lh_err_clear(err);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		lineno++;
		if (nl == NULL) {
			if ((flags & LSTATS_PARSE_UNTERMINATED_OK) == 0) {
				rc = lh_err_set(err, lineno, -EBADMSG,
				    "line %u: no newline at end of file "
				    "(truncated read)",
				    lineno);
				goto fail;
			}
			nl = end;
		}
		rc = parse_line(st, p, nl, lineno, &seen, err);
		if (rc < 0)
			goto fail;
		p = nl + 1;
	}
	if (!st->snapshot.present && !st->start.present &&
	    !st->elapsed.present && st->ncounters == 0 && st->nskipped == 0) {
		rc = lh_err_set(err, 0, -ENODATA, "empty stats");
		goto fail;
	}
	return 0;

fail:
	lstats_reset(st);
	return rc;
}

const struct lstats_counter *
lstats_find(const struct lstats *st, const char *name)
{
	unsigned i;

	for (i = 0; i < st->ncounters; i++) {
		if (strcmp(st->counters[i].name, name) == 0)
			return &st->counters[i];
	}
	return NULL;
}
