/* SPDX-License-Identifier: BSD-2-Clause */
/* The cost check of a rewrite rule's regex: what regcomp() would make of
 * it, estimated before regcomp() sees it (the why is below). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hostmap_int.h"

/*
 * glibc's regcomp() copies a repeated subexpression once per repetition
 * ("x{3}" is "xxx", "x+" is "xx*") and then computes, for every node, the
 * nodes it reaches without consuming input.  Both explode: 20 characters
 * of "a++++..." take a gigabyte, and "((a?)+){500}" takes 15 seconds,
 * which would stall the aggregator at start-up.  So before regcomp() a
 * rule's regex is refused when it stacks two repetition operators (POSIX
 * leaves "a+*" undefined anyway), repeats with + or {} something that can
 * match nothing (x* or {0,n} say the same), or makes more than
 * HM_RE_COST_MAX copies.  Optional copies cost more than that: "x{0,n}"
 * becomes n nested "(x...)?" whose closures are computed for every node,
 * so memory grows with the square of the optional copies ("i{18,4474}"
 * took 154 MB, "(i{0,255}){0,39}" 66 MB, found by the PTR-name fuzzer);
 * so they are counted apart (every copy a ?, *, + or the range of {m,n}
 * makes optional, multiplied out through nesting) and at most
 * HM_RE_OPTIONAL_MAX are allowed (1,000 optional copies take under 10 MB).
 * Back-references are refused too: POSIX ERE has none, and glibc's, which
 * backtrack, take seconds on a 77-character name with
 * "(.*)(.*)(.*)(.*)(.*)\5\4\3\2\1x".  So is an anchor (^ or $) that a
 * repetition applies to, alone or inside a group: it matches nothing,
 * so repeating it says nothing, and glibc's regexec() loops for good on
 * some ("(^||)*$" and "(^|^|^)*$" on any name, found by the PTR-name
 * fuzzer).
 */
#define HM_RE_COST_MAX     10000
#define HM_RE_OPTIONAL_MAX 1000
#define HM_RE_DEPTH        32 /* nested groups */
/* glibc's anchors beyond ^ and $ (\b, \B, \<, \>, \`, \'): they match
 * no character either, and "(\B||)*" loops as "(^||)*" does. */
#define HM_RE_GNU_ANCHORS  "bB<>`'"

struct hm_re_level {
	uint64_t sum;      /* copies in the group so far (every branch) */
	uint64_t last;     /* copies of its last piece */
	uint64_t opt_sum;  /* optional copies in the group so far */
	uint64_t last_opt; /* optional copies in its last piece */
	bool have_last;    /* a piece to repeat */
	bool last_quant;   /* the last thing read was a repetition */
	bool last_empty;   /* the last piece can match nothing */
	bool before_empty; /* the branch before the last piece can */
	bool branch_empty; /* the branch so far can */
	bool any_empty;    /* an earlier branch can */
	bool anchor;       /* the group so far holds an anchor */
	bool last_anchor;  /* its last piece does */
};

/* The multiplier of the interval at p ("{2}", "{1,5}", "{3,}"), its end
 * into *ret_end, whether it allows 0 into *ret_zero and how many of its
 * copies are optional into *ret_opt; 0 when p is no interval (regcomp()
 * then decides). */
static uint64_t
re_interval(const char *p, const char **ret_end, bool *ret_zero,
    uint64_t *ret_opt)
{
	uint64_t lo = 0, hi = 0;
	bool comma = false, hi_digits = false;

	for (p++; *p >= '0' && *p <= '9'; p++)
		lo = lo < 100000 ? lo * 10 + (uint64_t)(*p - '0') : lo;
	if (*p == ',') {
		comma = true;
		for (p++; *p >= '0' && *p <= '9'; p++, hi_digits = true)
			hi = hi < 100000 ? hi * 10 + (uint64_t)(*p - '0') : hi;
	}
	if (*p != '}')
		return 0;
	*ret_end = p;
	*ret_zero = lo == 0;
	*ret_opt = 0;
	if (!comma)
		return lo > 0 ? lo : 1;
	if (!hi_digits) {
		*ret_opt = 1;
		return lo + 1; /* "{3,}" is three copies and a star */
	}
	*ret_opt = hi > lo ? hi - lo : 0;
	return hi > 0 ? hi : 1;
}

/* The end of the bracket expression starting at p ("[]a]", "[[:alpha:]]"). */
static const char *
re_bracket(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	for (; *p != '\0' && *p != ']'; p++) {
		if (*p == '[' && (p[1] == ':' || p[1] == '=' || p[1] == '.')) {
			const char *e = strchr(p + 2, p[1]);

			while (e != NULL && e[1] != ']')
				e = strchr(e + 1, p[1]);
			if (e == NULL)
				return p + strlen(p) - 1;
			p = e + 1;
		}
	}
	return *p == '\0' ? p - 1 : p;
}

static void
re_level_init(struct hm_re_level *t)
{
	memset(t, 0, sizeof(*t));
	t->branch_empty = true;
	t->before_empty = true;
}

/* Add a piece of cost copies, opt of them optional, which can match
 * nothing or not. */
static void
re_piece(struct hm_re_level *t, uint64_t cost, uint64_t opt, bool empty)
{
	t->before_empty = t->branch_empty;
	t->branch_empty = t->branch_empty && empty;
	t->last = cost;
	t->sum += cost;
	t->last_opt = opt;
	t->opt_sum += opt;
	t->have_last = true;
	t->last_quant = false;
	t->last_empty = empty;
	t->last_anchor = false;
}

/* The last piece added holds an anchor. */
static void
re_anchored(struct hm_re_level *t)
{
	t->last_anchor = true;
	t->anchor = true;
}

/* Repeat the last piece mult times, opt of the copies optional; it can
 * match nothing if empty. */
static const char *
re_repeat(struct hm_re_level *t, uint64_t mult, uint64_t opt, bool empty)
{
	uint64_t last_opt;

	if (!t->have_last)
		return NULL; /* regcomp() takes it literally or refuses it */
	if (t->last_quant)
		return "two repetition operators in a row";
	if (mult > 1 && t->last_empty)
		return "+ or {} repeats what can match nothing (use * or {0,n})";
	if (t->last_anchor)
		return "a repetition of an anchor (^ or $, alone or in a group)";
	if (mult > 1 && t->last > HM_RE_COST_MAX / mult)
		return "too complex";
	/* Both factors are bounded by HM_RE_COST_MAX here: no overflow. */
	last_opt = t->last_opt * mult + t->last * opt;
	if (t->opt_sum - t->last_opt + last_opt > HM_RE_OPTIONAL_MAX)
		return "too complex (too many optional copies: "
		       "?, *, + and {m,n} nested or with a wide range)";
	t->opt_sum += last_opt - t->last_opt;
	t->last_opt = last_opt;
	t->sum += t->last * (mult - 1);
	t->last *= mult;
	t->last_empty = t->last_empty || empty;
	t->branch_empty = t->before_empty && t->last_empty;
	t->last_quant = true;
	return t->sum > HM_RE_COST_MAX ? "too complex" : NULL;
}

/* A '(', ')' or '|' at lv[*depth]: a group opened or closed, a branch
 * started. */
static const char *
re_group(struct hm_re_level *lv, size_t *depth, char c)
{
	struct hm_re_level *t = &lv[*depth];
	uint64_t mult, opt;
	bool empty;

	if (c == '(') {
		if (*depth == HM_RE_DEPTH)
			return "groups nested too deep";
		re_level_init(&lv[++*depth]);
	} else if (c == ')') {
		if (*depth == 0) {
			re_piece(t, 1, 0, false); /* regcomp() decides */
			return NULL;
		}
		empty = t->any_empty || t->branch_empty;
		mult = t->sum > 0 ? t->sum : 1;
		opt = t->opt_sum;
		re_piece(&lv[--*depth], mult, opt, empty);
		if (t->anchor)
			re_anchored(&lv[*depth]);
	} else {
		t->any_empty = t->any_empty || t->branch_empty;
		t->branch_empty = t->before_empty = true;
		t->have_last = t->last_quant = false;
	}
	return NULL;
}

/* A '{' at *pp: an interval (*pp moved to its '}'), or when it is none a
 * literal. */
static const char *
re_brace(struct hm_re_level *t, const char **pp)
{
	const char *end = *pp;
	bool empty = false;
	uint64_t mult, opt = 0;

	mult = re_interval(*pp, &end, &empty, &opt);
	if (mult == 0) {
		re_piece(t, 1, 0, false);
		return NULL;
	}
	*pp = end;
	return re_repeat(t, mult, opt, empty);
}

/* Why regcomp() must not see re (see above), or NULL. */
const char *
hm_re_check(const char *re)
{
	struct hm_re_level lv[HM_RE_DEPTH + 1];
	const char *p, *why = NULL;
	size_t depth = 0;
	bool anchor;

	re_level_init(&lv[0]);
	for (p = re; *p != '\0' && why == NULL; p++) {
		struct hm_re_level *t = &lv[depth];

		switch (*p) {
		case '(':
		case ')':
		case '|':
			why = re_group(lv, &depth, *p);
			break;
		case '*':
		case '?':
			why = re_repeat(t, 1, 1, true);
			break;
		case '+':
			why = re_repeat(t, 2, 1, false);
			break;
		case '{':
			why = re_brace(t, &p);
			break;
		case '^':
		case '$':
			re_piece(t, 1, 0,
			    true); /* anchors match no character */
			re_anchored(t);
			break;
		case '[':
			p = re_bracket(p);
			re_piece(t, 1, 0, false);
			break;
		case '\\':
			if (p[1] >= '1' && p[1] <= '9')
				return "back-references are not ERE";
			if (p[1] == '\0') {
				re_piece(t, 1, 0, false);
				break;
			}
			p++;
			anchor = strchr(HM_RE_GNU_ANCHORS, *p) != NULL;
			re_piece(t, 1, 0, anchor);
			if (anchor)
				re_anchored(t);
			break;
		default:
			re_piece(t, 1, 0, false);
			break;
		}
	}
	return why;
}
