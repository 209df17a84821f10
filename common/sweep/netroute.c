/* SPDX-License-Identifier: BSD-2-Clause */
/* LNet network patterns and the relay's routing table (netroute.h). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "err.h"
#include "netroute.h"
#include "nid.h"

struct range {
	uint32_t lo, hi;
};

struct pattern {
	char lnd[NID_NET_MAX];
	char text[NID_NET_MAX + 8 * NETROUTE_MAX_RANGES];
	struct range r[NETROUTE_MAX_RANGES];
	unsigned nr;
	unsigned route;
};

struct netroute {
	struct pattern *p;
	size_t n, cap;
};

/* A decimal number of at most 10 digits that fits 32 bits: the digits
 * [s, e), all digits.  Returns 0 or -1. */
static int
number(const char *s, const char *e, uint32_t *ret)
{
	uint64_t v = 0;

	if (s == e || e - s > 10)
		return -1;
	for (; s < e; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v > UINT32_MAX)
		return -1;
	*ret = (uint32_t)v;
	return 0;
}

/* An LND name: letters and digits, starting with a letter and ending
 * with one (the trailing digits are the network number). */
static bool
lnd_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= NID_NET_MAX || !islower((unsigned char)s[0]) ||
	    !islower((unsigned char)s[n - 1]))
		return false;
	for (i = 0; i < n; i++) {
		if (!islower((unsigned char)s[i]) &&
		    !isdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

/* "5" or "1-3", the text [s, e). */
static int
parse_range(const char *s, const char *e, struct range *r)
{
	const char *dash = memchr(s, '-', (size_t)(e - s));

	if (dash == NULL) {
		if (number(s, e, &r->lo) < 0)
			return -1;
		r->hi = r->lo;
		return 0;
	}
	return number(s, dash, &r->lo) < 0 || number(dash + 1, e, &r->hi) < 0 ?
	    -1 :
	    0;
}

/* Where the trailing digits of the n bytes at s (the network number)
 * start: n when there are none. */
static size_t
number_start(const char *s, size_t n)
{
	while (n > 0 && isdigit((unsigned char)s[n - 1]))
		n--;
	return n;
}

/* "1-3,5" (between the brackets, [s, e)) into p's ranges. */
static int
parse_ranges(const char *s, const char *e, struct pattern *p,
    struct lh_err *err)
{
	while (s < e) {
		const char *comma = memchr(s, ',', (size_t)(e - s));
		const char *end = comma != NULL ? comma : e;
		struct range r;

		if (p->nr == NETROUTE_MAX_RANGES)
			return lh_err_set(err, 0, -EINVAL,
			    "more than %d ranges", NETROUTE_MAX_RANGES);
		if (parse_range(s, end, &r) < 0)
			return lh_err_set(err, 0, -EINVAL,
			    "'%.*s' is not a number or a range a-b",
			    (int)(end - s), s);
		if (r.hi < r.lo)
			return lh_err_set(err, 0, -EINVAL,
			    "range %u-%u goes down", r.lo, r.hi);
		p->r[p->nr++] = r;
		if (comma == NULL)
			break;
		s = comma + 1;
		if (s == e)
			return lh_err_set(err, 0, -EINVAL, "a trailing ','");
	}
	return 0;
}

static int
parse_pattern(const char *text, struct pattern *p, struct lh_err *err)
{
	size_t n = strlen(text), lnd;
	const char *bracket;

	memset(p, 0, sizeof(*p));
	if (n == 0 || n >= sizeof(p->text))
		return lh_err_set(err, 0, -EINVAL,
		    "'%.40s': not 1-%zu characters", text, sizeof(p->text) - 1);
	bracket = strchr(text, '[');
	if (bracket != NULL) {
		if (text[n - 1] != ']' || bracket + 1 == text + n - 1)
			return lh_err_set(err, 0, -EINVAL,
			    "'%s': a '[' without numbers and a closing ']'",
			    text);
		lnd = (size_t)(bracket - text);
		if (parse_ranges(bracket + 1, text + n - 1, p, err) < 0)
			return -EINVAL;
	} else if (text[n - 1] == '*') {
		lnd = n - 1;
		p->r[0].lo = 0;
		p->r[0].hi = UINT32_MAX;
		p->nr = 1;
	} else {
		lnd = number_start(text, n);
		p->r[0].lo = 0;
		if (lnd < n && number(text + lnd, text + n, &p->r[0].lo) < 0)
			return lh_err_set(err, 0, -EINVAL,
			    "'%s': network number too large", text);
		p->r[0].hi = p->r[0].lo;
		p->nr = 1;
	}
	if (!lnd_ok(text, lnd))
		return lh_err_set(err, 0, -EINVAL,
		    "'%s' is not an LNet network pattern (o2ib, o2ib2, tcp*, "
		    "tcp[100-199])",
		    text);
	memcpy(p->lnd, text, lnd);
	p->lnd[lnd] = '\0';
	memcpy(p->text, text, n + 1);
	return 0;
}

int
netroute_pattern_check(const char *text, struct lh_err *err)
{
	struct pattern p;

	return parse_pattern(text, &p, err);
}

struct netroute *
netroute_new(void)
{
	return calloc(1, sizeof(struct netroute));
}

void
netroute_free(struct netroute *t)
{
	if (t == NULL)
		return;
	free(t->p);
	free(t);
}

static bool
overlap(const struct pattern *a, const struct pattern *b)
{
	unsigned i, j;

	if (strcmp(a->lnd, b->lnd) != 0)
		return false;
	for (i = 0; i < a->nr; i++) {
		for (j = 0; j < b->nr; j++) {
			const struct range *x = &a->r[i], *y = &b->r[j];

			if (x->lo <= y->hi && y->lo <= x->hi)
				return true;
		}
	}
	return false;
}

int
netroute_add(struct netroute *t, unsigned route, const char *pattern,
    struct lh_err *err)
{
	struct pattern p;
	size_t i;

	if (route >= NETROUTE_MAX_ROUTES)
		return lh_err_set(err, 0, -EINVAL, "too many routes");
	if (parse_pattern(pattern, &p, err) < 0)
		return -EINVAL;
	p.route = route;
	for (i = 0; i < t->n; i++) {
		if (t->p[i].route != route && overlap(&t->p[i], &p))
			return lh_err_set(err, 0, -EEXIST,
			    "'%s' overlaps '%s' of another route", pattern,
			    t->p[i].text);
	}
	if (t->n == t->cap) {
		struct pattern *v = array_grow(t->p, &t->cap, t->n, sizeof(*v));

		if (v == NULL)
			return lh_err_set(err, 0, -ENOMEM, "out of memory");
		t->p = v;
	}
	t->p[t->n++] = p;
	return 0;
}

int
netroute_lookup(const struct netroute *t, const char *nid_or_net)
{
	const char *net = strrchr(nid_or_net, '@');
	size_t n, lnd;
	uint32_t num = 0;
	size_t i;
	unsigned k;

	net = net != NULL ? net + 1 : nid_or_net;
	n = strlen(net);
	lnd = number_start(net, n);
	if (lnd == 0 || lnd >= NID_NET_MAX ||
	    (lnd < n && number(net + lnd, net + n, &num) < 0))
		return -1;
	for (i = 0; i < t->n; i++) {
		const struct pattern *p = &t->p[i];

		if (strlen(p->lnd) != lnd || memcmp(p->lnd, net, lnd) != 0)
			continue;
		for (k = 0; k < p->nr; k++) {
			if (p->r[k].lo <= num && num <= p->r[k].hi)
				return (int)p->route;
		}
	}
	return -1;
}
