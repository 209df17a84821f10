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
#include "statsparse_fast.h"
#include "statsparse_int.h"

/* The header names, with or without a colon ("snapshot_time:" in brw_stats
 * and some vendor builds).  Returns the slot or NULL. */
static struct lstats_time *
header_slot(struct lstats *st, const struct token *t, bool *ret_colon)
{
	struct token name = *t;

	*ret_colon = name.n > 0 && name.p[name.n - 1] == ':';
	if (*ret_colon)
		name.n--;
	switch (header_of(&name)) {
	case SP_SNAPSHOT:
		return &st->snapshot;
	case SP_START:
		return &st->start;
	case SP_ELAPSED:
		return &st->elapsed;
	default:
		return NULL;
	}
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

/* A header line from the spaces after its name: fast_time(), and the
 * unit of the snapshot's fraction.  Returns its '\n', or NULL. */
static const char *
fast_header(struct lstats *st, struct lstats_time *slot, const char *q,
    const char *end)
{
	q = fast_time(slot, q, end);
	if (q != NULL && slot == &st->snapshot)
		st->time_unit = LSTATS_TU_NSECS;
	return q;
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
	nl = fast_counter_line(p, q, end,
	    (flags & LSTATS_PARSE_NO_MINMAX) != 0 ? 1u << 2 : 0xfu, vals, &unit,
	    &nvals);
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
