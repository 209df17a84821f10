/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the stats parser (statsparse.h), shared by its files:
 * statsparse.c (the fast path and the parse loop) and statsparse_line.c
 * (the general way, for any line the fast path does not take).  Not for
 * other modules.
 */
#ifndef LH_STATSPARSE_INT_H
#define LH_STATSPARSE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "statsparse.h"

struct lh_err;

/* A counter line has 4, 7 or 8 fields; a header line 2 to 4. */
#define LINE_TOKENS_MAX 10

struct token {
	const char *p;
	size_t n;
};

struct line {
	struct token tok[LINE_TOKENS_MAX];
	unsigned ntok;
	bool overflow;   /* more than LINE_TOKENS_MAX fields */
	const char *end; /* its end: '\n' or the end of the buffer */
};

static inline bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline bool
tok_is(const struct token *t, const char *s, size_t n)
{
	return t->n == n && memcmp(t->p, s, n) == 0;
}

/* A field against a string literal, its length known at compile time. */
#define TOK_IS(t, lit) tok_is((t), (lit), sizeof(lit) - 1)

/*
 * The steps both ways share, defined in statsparse.c: the fast path calls
 * them there, where they are static and inlined; these are the general
 * way's entries to the same code.
 */

/* The header names, with or without a colon.  The slot or NULL. */
struct lstats_time *
sp_header_slot(struct lstats *st, const struct token *t, bool *ret_colon);

/* A unit field: "[...]" of 1 to LSTATS_UNIT_MAX - 1 characters. */
bool sp_unit_ok(const struct token *unit);

/* Store a counter line whose fields passed every check. */
void sp_counter_store(struct lstats *st, uint64_t *seen,
    const struct token *name, const struct token *unit, const uint64_t vals[5],
    unsigned nvals, unsigned neg, unsigned lineno, const char *end);

/* The general way (statsparse_line.c): the line [p, end), stored or
 * counted as skipped.  Returns 0, -EBADMSG or -E2BIG with err set. */
int sp_parse_line(struct lstats *st, const char *p, const char *end,
    unsigned lineno, uint64_t *seen, struct lh_err *err);

#endif
