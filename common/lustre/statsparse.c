/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Lustre stats text -> struct lstats.  One pass, line by line, no
 * allocation.  The format is detected per line, never from a version
 * number: vendor builds and backports make versions a poor oracle.
 *
 * A gatherer parses some 90,000 of these files a sweep, so the lines as
 * Lustre prints them (nearly all of them) take a fast path that reads
 * eight bytes at a time (fast_line()); any other line, and any line the
 * fast path is not sure of, takes the general way (statsparse_line.c).  Both
 * give the same result for every line the fast path takes.
 */
#include <errno.h>
#include <string.h>

#include "err.h"
#include "statsparse.h"
#include "statsparse_int.h"

/*
 * Word-at-a-time helpers.  A line is mostly padding and digits, so both
 * are scanned eight bytes per step.  Words are read in little-endian
 * order whatever the host, so that the first byte of the text is the
 * lowest byte of the word.
 */
#define ONES8 0x0101010101010101ULL

/* Where "%-25s " puts the first byte after a short name. */
#define LSTATS_NAME_COLUMN 26

static uint64_t
load8(const char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/* The index of the lowest byte of m that has its top bit set (m != 0). */
static unsigned
first_marked(uint64_t m)
{
	return (unsigned)__builtin_ctzll(m) / 8;
}

/* The bytes of w below 0x21 (blanks, '\n', NUL, other controls), each
 * marked by its top bit.  Only the lowest mark is exact (a borrow may
 * mark bytes above it), and only the lowest is ever used. */
static uint64_t
bytes_below_0x21(uint64_t w)
{
	return (w - ONES8 * 0x21) & ~w & ONES8 * 0x80;
}

/* The bytes of w that are not decimal digits, marked the same way. */
static uint64_t
non_digits(uint64_t w)
{
	uint64_t x = w ^ ONES8 * '0'; /* digits become 0..9 */

	return ((x + ONES8 * 0x76) | x) & ONES8 * 0x80;
}

/* The value of 8 digits read with load8(); 0 bytes count as leading
 * zeros. */
static uint64_t
digits8_value(uint64_t w)
{
	w = ((w & ONES8 * 0x0f) * (1 + (10 << 8))) >> 8;
	w = ((w & 0x00ff00ff00ff00ffULL) * (1 + (100 << 16))) >> 16;
	return ((w & 0x0000ffff0000ffffULL) * (1 + (10000ULL << 32))) >> 32;
}

/* Past the spaces at p.  Lustre pads names to a 25 or 35 column. */
static const char *
skip_spaces(const char *p, const char *end)
{
	while (end - p >= 8) {
		uint64_t w = load8(p) ^ ONES8 * ' ';

		if (w != 0)
			return p + (unsigned)__builtin_ctzll(w) / 8;
		p += 8;
	}
	while (p < end && *p == ' ')
		p++;
	return p;
}

/* The header names, with or without a colon ("snapshot_time:" in brw_stats
 * and some vendor builds).  Returns the slot or NULL. */
static struct lstats_time *
header_slot(struct lstats *st, const struct token *t, bool *ret_colon)
{
	struct token name = *t;

	*ret_colon = name.n > 0 && name.p[name.n - 1] == ':';
	if (*ret_colon)
		name.n--;
	if (TOK_IS(&name, "snapshot_time"))
		return &st->snapshot;
	if (TOK_IS(&name, "start_time"))
		return &st->start;
	if (TOK_IS(&name, "elapsed_time"))
		return &st->elapsed;
	return NULL;
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

		if (c->name_len == t->n && memcmp(c->name, t->p, t->n) == 0)
			return true;
	}
	return false;
}

_Static_assert(LSTATS_NAME_MAX >= 16 && LSTATS_UNIT_MAX >= 16,
    "copy_short() writes 16 bytes");

/* n bytes (< 16 or < the size of dst) of a name or unit from src to dst
 * and a NUL.  Most are short: when 16 bytes can be read at src, they are
 * copied as one block (the bytes after the NUL mean nothing). */
static void
copy_short(char *dst, const char *src, size_t n, const char *end)
{
	if (n < 16 && end - src >= 16)
		memcpy(dst, src, 16);
	else
		memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Store a counter line whose fields passed every check, as counter
 * st->ncounters (< LSTATS_COUNTERS_MAX).  Bytes may be read up to end. */
static void
counter_store(struct lstats *st, uint64_t *seen, const struct token *name,
    const struct token *unit, const uint64_t vals[5], unsigned nvals,
    unsigned neg, unsigned lineno, const char *end)
{
	struct lstats_counter *c = &st->counters[st->ncounters];
	unsigned bucket = name_bucket(name);

	copy_short(c->name, name->p, name->n, end);
	c->name_len = (uint8_t)name->n;
	copy_short(c->unit, unit->p + 1, unit->n - 2, end);
	c->count = vals[0];
	c->min = vals[1];
	c->max = vals[2];
	c->sum = vals[3];
	c->sumsq = vals[4];
	c->line = lineno;
	c->neg = (uint8_t)neg;
	c->flags = 0;
	if (nvals >= 3)
		c->flags |= LSTATS_F_MINMAXSUM;
	if (nvals == 4)
		c->flags |= LSTATS_F_SUMSQ;
	if ((*seen & ((uint64_t)1 << bucket)) != 0 && name_seen(st, name))
		c->flags |= LSTATS_F_DUP;
	*seen |= (uint64_t)1 << bucket;
	st->ncounters++;
}

static bool
unit_ok(const struct token *unit)
{
	return unit->n >= 3 && unit->p[0] == '[' &&
	    unit->p[unit->n - 1] == ']' && unit->n - 2 < LSTATS_UNIT_MAX;
}

/*
 * The fast path, for lines exactly as Lustre prints them: a counter, the
 * name, spaces, then "count samples [unit]" and " min max sum[ sumsq]"
 * one space apart, unsigned numbers, '\n' at the end; or a 2.10+ header
 * (fast_header()).  Each step reads eight bytes at once, never past the
 * end of the buffer (the last bytes are read one by one).  Anything else
 * (a tab, two spaces, a CR, a sign, an overflow, a bad unit, a repeated
 * header, a NUL...) makes it give up (NULL) before it changes anything,
 * and the line goes the general way; every line it takes, the general
 * way would read the same.  tests/unit/test_statsparse.c holds the two
 * against each other.
 */

/* The end of the run of bytes above 0x20 at p (or end). */
static const char *
fast_field_end(const char *p, const char *end)
{
	while (end - p >= 8) {
		uint64_t low = bytes_below_0x21(load8(p));

		if (low != 0)
			return p + first_marked(low);
		p += 8;
	}
	while (p < end && (unsigned char)*p > ' ')
		p++;
	return p;
}

/* v * 10^n + add, or false if that overflows. */
static bool
mul_add(uint64_t *v, uint64_t pow, uint64_t add)
{
	return !__builtin_mul_overflow(*v, pow, v) &&
	    !__builtin_add_overflow(*v, add, v);
}

/* fast_digits() near the end of the buffer: digit by digit, going on
 * from v. */
static bool
slow_digits(const char **pp, const char *p, const char *end, uint64_t v,
    uint64_t *ret)
{
	for (; p < end && (unsigned)(*p - '0') <= 9; p++) {
		if (!mul_add(&v, 10, (unsigned)(*p - '0')))
			return false;
	}
	if (p == *pp)
		return false;
	*ret = v;
	*pp = p;
	return true;
}

/* The first n (0..7) digits of w as a number: shifted up, the bytes past
 * them are gone and zero bytes lead (two shifts: one by 64 would be
 * undefined). */
static uint64_t
digits_head(uint64_t w, unsigned n)
{
	return digits8_value(w << (8 * (7 - n)) << 8);
}

/*
 * The digits at *pp as a number, *pp moved past them: false if there are
 * none or it overflows.  A word at a time and no loop: up to 15 digits
 * (all but the largest sums) in one or two words without an overflow
 * check, up to 23 in three.  Always inlined: called for every number of
 * every line, it is a tenth faster in place, and gcc would not.
 */
static inline __attribute__((always_inline)) bool
fast_digits(const char **pp, const char *end, uint64_t *ret)
{
	static const uint64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000,
	    1000000, 10000000};
	const char *p = *pp;
	uint64_t w, m, v;
	unsigned n;

	if (end - p < 16)
		return slow_digits(pp, p, end, 0, ret);
	w = load8(p);
	m = non_digits(w);
	if (m != 0) {
		n = first_marked(m);
		if (n == 0)
			return false;
		*ret = digits_head(w, n);
		*pp = p + n;
		return true;
	}
	v = digits8_value(w);
	w = load8(p + 8);
	m = non_digits(w);
	if (m != 0) {
		n = first_marked(m);
		*ret = v * pow10[n] + digits_head(w, n);
		*pp = p + 8 + n;
		return true;
	}
	v = v * 100000000u + digits8_value(w);
	p += 16;
	if (end - p < 8)
		return slow_digits(pp, p, end, v, ret);
	w = load8(p);
	m = non_digits(w);
	if (m == 0)
		return slow_digits(pp, p, end, v, ret); /* zeros lead */
	n = first_marked(m);
	if (!mul_add(&v, pow10[n], digits_head(w, n)))
		return false;
	*ret = v;
	*pp = p + n;
	return true;
}

/*
 * fast_digits() for a number whose value is not wanted: true for exactly
 * the runs of digits fast_digits() takes, *pp moved past them.  Up to 19
 * digits always fit in 64 bits, so only their end is looked for; a longer
 * run, or one near the end of the buffer, is left to fast_digits().
 */
static inline __attribute__((always_inline)) bool
fast_skip_digits(const char **pp, const char *end)
{
	const char *p = *pp;
	uint64_t unused;
	unsigned i;

	for (i = 0; i < 3 && end - p >= 24; i++) {
		uint64_t m = non_digits(load8(p + (size_t)8 * i));

		if (m != 0) {
			unsigned n = 8 * i + first_marked(m);

			if (n == 0 || n > 19)
				break;
			*pp = p + n;
			return true;
		}
	}
	return fast_digits(pp, end, &unused);
}

/* A header line as Lustre 2.10 and later print it, from the spaces after
 * its name: "<spaces>1712345678.123456789 secs.nsecs\n".  Returns its
 * '\n', or NULL. */
static const char *
fast_header(struct lstats *st, struct lstats_time *slot, const char *q,
    const char *end)
{
	uint64_t sec, frac;
	const char *f;

	if (slot->present)
		return NULL;
	q = skip_spaces(q, end);
	if (!fast_digits(&q, end, &sec) || end - q < 22 || *q != '.')
		return NULL;
	f = ++q;
	if (!fast_digits(&q, end, &frac) || q - f != 9 ||
	    load8(q) != load8(" secs.ns") || memcmp(q + 8, "ecs\n", 4) != 0)
		return NULL;
	slot->sec = sec;
	slot->nsec = (uint32_t)frac;
	slot->present = true;
	if (slot == &st->snapshot)
		st->time_unit = LSTATS_TU_NSECS;
	return q + 11;
}

/* The numbers of a counter line after its unit (at q: ' ' or '\n'), up
 * to '\n'; returns the end of the line, or NULL.  With sum_only, min, max
 * and sumsq (vals[0], [1], [3]) are checked but left as they are. */
static const char *
fast_values(const char *q, const char *end, uint64_t vals[4], bool sum_only,
    unsigned *ret_n)
{
	unsigned n = 0;

	while (*q == ' ' && n < 4) {
		q++;
		if (!(sum_only && n != 2 ? fast_skip_digits(&q, end) :
		                           fast_digits(&q, end, &vals[n])) ||
		    q == end || (*q != ' ' && *q != '\n'))
			return NULL;
		n++;
	}
	if (*q != '\n' || n == 1 || n == 2)
		return NULL;
	*ret_n = n;
	return q;
}

/* A counter line from its count at q: vals (all five set), *unit and
 * *ret_n filled, nothing stored.  Returns its '\n', or NULL. */
static inline __attribute__((always_inline)) const char *
fast_counter(const char *q, const char *end, unsigned flags, uint64_t vals[5],
    struct token *unit, unsigned *ret_n)
{
	memset(vals, 0, 5 * sizeof(vals[0]));
	if (!fast_digits(&q, end, &vals[0]) || end - q < 10 ||
	    load8(q) != load8(" samples") || q[8] != ' ' || q[9] != '[')
		return NULL;
	unit->p = q + 9;
	q = fast_field_end(unit->p, end);
	unit->n = (size_t)(q - unit->p);
	if (q == end || !unit_ok(unit))
		return NULL;
	return fast_values(q, end, &vals[1],
	    (flags & LSTATS_PARSE_NO_MINMAX) != 0, ret_n);
}

/* The line at p, stored; returns its '\n', or NULL to leave the line to
 * the general way. */
static const char *
fast_line(struct lstats *st, const char *p, const char *end, unsigned lineno,
    unsigned flags, uint64_t *seen)
{
	uint64_t vals[5];
	struct lstats_time *slot;
	struct token name, unit;
	unsigned nvals = 0;
	const char *q, *nl;
	bool colon;

	q = fast_field_end(p, end);
	if (q == p || q == end || *q != ' ')
		return NULL;
	name.p = p;
	name.n = (size_t)(q - p);
	slot = header_slot(st, &name, &colon);
	if (slot != NULL)
		return colon ? NULL : fast_header(st, slot, q, end);
	if (name.n >= LSTATS_NAME_MAX || st->ncounters == LSTATS_COUNTERS_MAX)
		return NULL;
	/*
	 * Lustre pads a name to 25 columns and one space ("%-25s "), so the
	 * count of nearly every line starts at column 26.  When the bytes
	 * there say so, the count is read from that column at once, and the
	 * spaces before it are found beside it: off the chain of loads in
	 * which each field's end is found from the last one's, which is
	 * what a line costs.  When they end elsewhere (a short line, not
	 * padded), the line is read again from there.
	 */
	if (end - p > LSTATS_NAME_COLUMN && p[LSTATS_NAME_COLUMN - 1] == ' ' &&
	    p[LSTATS_NAME_COLUMN] != ' ') {
		const char *s = skip_spaces(q, end);

		nl = fast_counter(p + LSTATS_NAME_COLUMN, end, flags, vals,
		    &unit, &nvals);
		if (s != p + LSTATS_NAME_COLUMN)
			nl = fast_counter(s, end, flags, vals, &unit, &nvals);
	} else {
		nl = fast_counter(skip_spaces(q, end), end, flags, vals, &unit,
		    &nvals);
	}
	if (nl == NULL)
		return NULL;
	counter_store(st, seen, &name, &unit, vals, nvals, 0, lineno, end);
	return nl;
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

/* The general way's entries (statsparse_int.h) to the steps the fast
 * path inlines. */
struct lstats_time *
sp_header_slot(struct lstats *st, const struct token *t, bool *ret_colon)
{
	return header_slot(st, t, ret_colon);
}

bool
sp_unit_ok(const struct token *unit)
{
	return unit_ok(unit);
}

void
sp_counter_store(struct lstats *st, uint64_t *seen, const struct token *name,
    const struct token *unit, const uint64_t vals[5], unsigned nvals,
    unsigned neg, unsigned lineno, const char *end)
{
	counter_store(st, seen, name, unit, vals, nvals, neg, lineno, end);
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
		const char *nl;

		lineno++;
		nl = fast_line(st, p, end, lineno, flags, &seen);
		if (nl != NULL) {
			p = nl + 1;
			continue;
		}
		nl = memchr(p, '\n', (size_t)(end - p));
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
		rc = sp_parse_line(st, p, nl, lineno, &seen, err);
		if (rc < 0)
			goto fail;
		p = nl < end ? nl + 1 : end;
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
	size_t n = strlen(name);
	unsigned i;

	if (n >= LSTATS_NAME_MAX)
		return NULL;
	for (i = 0; i < st->ncounters; i++) {
		const struct lstats_counter *c = &st->counters[i];

		if (c->name_len == n && memcmp(c->name, name, n) == 0)
			return c;
	}
	return NULL;
}
