/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the stats parser: the steps of a line as Lustre prints it, eight
 * bytes at a time, shared by the parser's fast path (statsparse.c) and
 * the export digest (statsdigest.c), so that the two read such a line the
 * same way.  Each step gives up (false or NULL) on anything it is not
 * sure of, and never reads past end.  Not for other modules.
 */
#ifndef LH_STATSPARSE_FAST_H
#define LH_STATSPARSE_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

static inline uint64_t
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
static inline unsigned
first_marked(uint64_t m)
{
	return (unsigned)__builtin_ctzll(m) / 8;
}

/* The bytes of w below 0x21 (blanks, '\n', NUL, other controls), each
 * marked by its top bit.  Only the lowest mark is exact (a borrow may
 * mark bytes above it), and only the lowest is ever used. */
static inline uint64_t
bytes_below_0x21(uint64_t w)
{
	return (w - ONES8 * 0x21) & ~w & ONES8 * 0x80;
}

/* The bytes of w that are not decimal digits, marked the same way. */
static inline uint64_t
non_digits(uint64_t w)
{
	uint64_t x = w ^ ONES8 * '0'; /* digits become 0..9 */

	return ((x + ONES8 * 0x76) | x) & ONES8 * 0x80;
}

/* The value of 8 digits read with load8(); 0 bytes count as leading
 * zeros. */
static inline uint64_t
digits8_value(uint64_t w)
{
	w = ((w & ONES8 * 0x0f) * (1 + (10 << 8))) >> 8;
	w = ((w & 0x00ff00ff00ff00ffULL) * (1 + (100 << 16))) >> 16;
	return ((w & 0x0000ffff0000ffffULL) * (1 + (10000ULL << 32))) >> 32;
}

/* Past the spaces at p.  Lustre pads names to a 25 or 35 column. */
static inline const char *
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

static inline bool
unit_ok(const struct token *unit)
{
	return unit->n >= 3 && unit->p[0] == '[' &&
	    unit->p[unit->n - 1] == ']' && unit->n - 2 < LSTATS_UNIT_MAX;
}

/* The end of the run of bytes above 0x20 at p (or end). */
static inline const char *
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
static inline bool
mul_add(uint64_t *v, uint64_t pow, uint64_t add)
{
	return !__builtin_mul_overflow(*v, pow, v) &&
	    !__builtin_add_overflow(*v, add, v);
}

/* fast_digits() near the end of the buffer: digit by digit, going on
 * from v. */
static inline bool
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
static inline __attribute__((always_inline)) uint64_t
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

/* A header's time as Lustre 2.10 and later print it, from the spaces
 * after its name: "<spaces>1712345678.123456789 secs.nsecs\n", into
 * slot (which must not be present yet).  Returns its '\n', or NULL with
 * slot unchanged. */
static inline const char *
fast_time(struct lstats_time *slot, const char *q, const char *end)
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
	return q + 11;
}

/* fast_values() a number at a time: the way for a line near the end of
 * the buffer, and for any line fast_values_masked() is not sure of. */
static inline const char *
fast_values_each(const char *q, const char *end, uint64_t vals[4],
    unsigned want, unsigned *ret_n)
{
	unsigned n = 0;

	while (*q == ' ' && n < 4) {
		q++;
		if (!((want >> n & 1u) == 0 ? fast_skip_digits(&q, end) :
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

#if defined(__SSE2__)
/* How far fast_values_masked() looks: the longest tail it reads is 63
 * bytes and its '\n' (four numbers of 20 digits would need 84: such a
 * line is read the other way). */
#define FAST_TAIL_WINDOW 64

/* Bit i set where byte i of the 16 in v is c. */
static inline uint64_t
vec_eq(__m128i v, char c)
{
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c)));
}

/* Bit i set where byte i of the 16 in v is a decimal digit (bytes above
 * 0x7f compare as negative, so they are not). */
static inline uint64_t
vec_digits(__m128i v)
{
	return (unsigned)_mm_movemask_epi8(
	    _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
	        _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1))));
}

/* The spaces, digits and '\n' of the FAST_TAIL_WINDOW bytes at q, a bit
 * a byte. */
static inline __attribute__((always_inline)) void
tail_masks(const char *q, uint64_t *sp, uint64_t *dig, uint64_t *nl)
{
	unsigned i;

	for (i = 0; i < FAST_TAIL_WINDOW / 16; i++) {
		__m128i v = _mm_loadu_si128(
		    (const __m128i *)(const void *)(q + (size_t)16 * i));

		*sp |= vec_eq(v, ' ') << (16 * i);
		*nl |= vec_eq(v, '\n') << (16 * i);
		*dig |= vec_digits(v) << (16 * i);
	}
}

/*
 * fast_values() for the usual tail, read as three 64-bit masks (spaces,
 * digits, '\n') of the 64 bytes at q, without a branch per number on
 * where it ends (numbers' lengths vary from line to line, and the
 * branches with them), and converting only the numbers wanted (the
 * digest wants one on two lines of a file).  The tail fast_values_each()
 * takes is "\n", or " <digits>" three or four times and then "\n"; here
 * that is: no byte before the '\n' but spaces and digits, no two spaces
 * side by side, the first byte a space and the last a digit, three or
 * four spaces, no number over 2^64-1 (one of 20 digits, as a sum of
 * squares often is, when its text is at most 18446744073709551615; one
 * of more only with zeros leading).  Returns the '\n', NULL where
 * fast_values_each() would refuse too, or q itself when it cannot say (no
 * '\n' in the window, a run of more than 20 digits, or a tail of no
 * numbers at all, which is its own '\n'): then the caller asks
 * fast_values_each().  Needs end - q >= FAST_TAIL_WINDOW.
 */
static inline __attribute__((always_inline)) const char *
fast_values_masked(const char *q, const char *end, uint64_t vals[4],
    unsigned want, unsigned *ret_n)
{
	uint64_t sp = 0, dig = 0, nl = 0, before, run;
	unsigned i, len, n;

	tail_masks(q, &sp, &dig, &nl);
	if (nl == 0)
		return q;
	len = (unsigned)__builtin_ctzll(nl);
	before = ((uint64_t)1 << len) - 1;
	sp &= before;
	dig &= before;
	if ((sp | dig) != before)
		return NULL;
	/* A bit that stays set starts a run of at least 2, 4, 8, 16, then
	 * 20 digits (20: see above). */
	run = dig & dig >> 1;
	run &= run >> 2;
	run &= run >> 4;
	run &= run >> 8;
	run &= run >> 4;
	if (run != 0) {
		if ((run & run >> 1) != 0)
			return q;
		for (; run != 0; run &= run - 1) {
			if (memcmp(q + __builtin_ctzll(run),
			        "18446744073709551615", 20) > 0)
				return NULL;
		}
	}
	if (sp == 0)
		return len == 0 ? q : NULL;
	/* Three or four spaces: the third lowest is there, and at most one
	 * above it (no popcount: it is a call without -mpopcnt). */
	run = sp & (sp - 1);
	run &= run - 1; /* the third space and above */
	if (run == 0)
		return NULL;
	run &= run - 1; /* the fourth and above */
	n = run == 0 ? 3 : 4;
	if ((run & (run - 1)) != 0)
		return NULL;
	if ((sp & 1) == 0 || (sp & sp >> 1) != 0 || (sp >> (len - 1) & 1) != 0)
		return NULL;
	/* The numbers wanted (often none), each after its space: the
	 * (i+1)th space is the lowest once i are cleared. */
	i = 0;
	for (want &= (1u << n) - 1; want != 0; want &= want - 1) {
		const char *v;

		for (; i < (unsigned)__builtin_ctz(want); i++)
			sp &= sp - 1;
		v = q + __builtin_ctzll(sp) + 1;
		(void)fast_digits(&v, end, &vals[i]);
	}
	*ret_n = n;
	return q + len;
}
#endif

/* In want (fast_values() and the steps that call it): read the tail by
 * masks (fast_values_masked()) where the host can.  The export digest
 * asks, as it wants one number on two lines of a file; the parser, which
 * keeps a number of every line, measured slower with it, and reading the
 * tails its own way lets the tests and fuzzers hold the two against each
 * other. */
#define FAST_BY_MASKS 0x100u

/* The numbers of a counter line after its unit (at q: ' ' or '\n'), up
 * to '\n'; returns the end of the line, or NULL.  vals[i] (min, max, sum,
 * sumsq) is converted when bit i of want is set; the others are checked
 * as always but left as they are. */
static inline __attribute__((always_inline)) const char *
fast_values(const char *q, const char *end, uint64_t vals[4], unsigned want,
    unsigned *ret_n)
{
	bool masks = (want & FAST_BY_MASKS) != 0;

	want &= 0xfu;
#if defined(__SSE2__)
	if (masks) {
		const char *nl;

		if (end - q >= FAST_TAIL_WINDOW) {
			nl = fast_values_masked(q, end, vals, want, ret_n);
		} else {
			/* A file's last line: its tail copied where the masks
			 * may read a whole window (NULs after it, which are
			 * neither spaces, digits nor '\n'). */
			char tail[FAST_TAIL_WINDOW] = {0};

			memcpy(tail, q, (size_t)(end - q));
			nl = fast_values_masked(tail, tail + sizeof(tail), vals,
			    want, ret_n);
			nl = nl == NULL ? NULL : q + (nl - tail);
		}
		if (nl != q)
			return nl;
	}
#else
	(void)masks;
#endif
	return fast_values_each(q, end, vals, want, ret_n);
}

/* The header lines, by their name (without a colon). */
enum sp_header {
	SP_NOT_HEADER = 0, /* a counter, or anything else */
	SP_SNAPSHOT,       /* snapshot_time */
	SP_START,          /* start_time (2.15+) */
	SP_ELAPSED,        /* elapsed_time (2.15+) */
};

static inline enum sp_header
header_of(const struct token *name)
{
	if (TOK_IS(name, "snapshot_time"))
		return SP_SNAPSHOT;
	if (TOK_IS(name, "start_time"))
		return SP_START;
	if (TOK_IS(name, "elapsed_time"))
		return SP_ELAPSED;
	return SP_NOT_HEADER;
}

/* A cheap bucket for spotting repeated names without comparing every
 * counter with every other. */
static inline unsigned
name_bucket(const struct token *t)
{
	return ((unsigned)t->n * 31u + (unsigned char)t->p[0] +
	           (unsigned char)t->p[t->n - 1] * 7u) &
	    63u;
}

/* A counter line from its count at q: vals (all five set: want as in
 * fast_values(), for vals[1..4]), *unit and *ret_n filled.  Returns its
 * '\n', or NULL. */
static inline __attribute__((always_inline)) const char *
fast_counter(const char *q, const char *end, unsigned want, uint64_t vals[5],
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
	return fast_values(q, end, &vals[1], want, ret_n);
}

/*
 * A counter line at p whose name ends at q (a ' '): fast_counter() from
 * its count.  Lustre pads a name to 25 columns and one space ("%-25s "),
 * so the count of nearly every line starts at column 26.  When the bytes
 * there say so, the count is read from that column at once, and the
 * spaces before it are found beside it: off the chain of loads in which
 * each field's end is found from the last one's, which is what a line
 * costs.  When they end elsewhere (a short line, not padded), the line is
 * read again from there.
 */
static inline __attribute__((always_inline)) const char *
fast_counter_line(const char *p, const char *q, const char *end, unsigned want,
    uint64_t vals[5], struct token *unit, unsigned *ret_n)
{
	if (end - p > LSTATS_NAME_COLUMN && p[LSTATS_NAME_COLUMN - 1] == ' ' &&
	    p[LSTATS_NAME_COLUMN] != ' ') {
		const char *s = skip_spaces(q, end);
		const char *nl = fast_counter(p + LSTATS_NAME_COLUMN, end, want,
		    vals, unit, ret_n);

		if (s != p + LSTATS_NAME_COLUMN)
			nl = fast_counter(s, end, want, vals, unit, ret_n);
		return nl;
	}
	return fast_counter(skip_spaces(q, end), end, want, vals, unit, ret_n);
}

#endif
