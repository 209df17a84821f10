/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Export stats text -> what a gatherer counts, one line at a time (see
 * statsdigest.h).  A line is read by the steps the parser's fast path uses
 * (statsparse_fast.h), then counted at once: nothing is copied or kept
 * but the names already seen, as pointers into the buffer, so that a
 * repeated name counts once, as iocount_from_stats() counts it.  The
 * sum of a line is converted only where it is counted (read_bytes,
 * write_bytes); every other number is checked and skipped.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "statsdigest.h"
#include "statsparse_fast.h"

struct digest {
	struct lstats_digest *d;
	enum lh_target_kind kind;
	struct iocount_acc acc;
	struct lstats_time elapsed; /* read to be checked, not counted */
	uint64_t buckets;           /* name_bucket() of every name seen */
	unsigned n;                 /* counter lines so far */
	struct token names[LSTATS_COUNTERS_MAX];
};

/* The header's slot, or NULL for a counter. */
static struct lstats_time *
header_slot(struct digest *g, const struct token *name)
{
	switch (header_of(name)) {
	case SP_SNAPSHOT:
		return &g->d->snapshot;
	case SP_START:
		return &g->d->start;
	case SP_ELAPSED:
		return &g->elapsed;
	default:
		return NULL;
	}
}

/* Whether name was seen before in this file; remembered either way. */
static bool
repeated(struct digest *g, const struct token *name)
{
	uint64_t bit = (uint64_t)1 << name_bucket(name);
	bool seen = false;

	if ((g->buckets & bit) != 0) {
		for (unsigned i = 0; i < g->n && !seen; i++)
			seen = g->names[i].n == name->n &&
			    memcmp(g->names[i].p, name->p, name->n) == 0;
	}
	g->buckets |= bit;
	g->names[g->n++] = *name;
	return seen;
}

/* The line at p, counted; returns its '\n', or NULL to give up. */
static const char *
digest_line(struct digest *g, const char *p, const char *end)
{
	struct lstats_digest *d = g->d;
	struct lstats_time *slot;
	struct token name, unit;
	enum iocount_role role;
	uint64_t vals[5];
	unsigned nvals = 0;
	const char *q, *nl;

	q = fast_field_end(p, end);
	if (q == p || q == end || *q != ' ')
		return NULL;
	name.p = p;
	name.n = (size_t)(q - p);
	slot = header_slot(g, &name);
	if (slot != NULL)
		return fast_time(slot, q, end);
	/* "snapshot_time:" is a header to lstats_parse(); no counter of
	 * Lustre's ends with a colon. */
	if (p[name.n - 1] == ':' || name.n >= LSTATS_NAME_MAX ||
	    g->n == LSTATS_COUNTERS_MAX)
		return NULL;
	role = iocount_role(name.p, name.n);
	nl = fast_counter_line(p, q, end,
	    FAST_BY_MASKS |
	        (role == IOCOUNT_READ || role == IOCOUNT_WRITE ? 1u << 2 : 0),
	    vals, &unit, &nvals);
	if (nl == NULL)
		return NULL;
	d->samples += vals[0];
	if (!repeated(g, &name)) {
		iocount_acc_line(&g->acc, role, vals[0],
		    nvals >= 3 ? vals[3] : 0);
		if (g->kind == LH_TARGET_MDT) {
			int op = mdops_lookup_n(name.p, name.n);

			if (op >= 0)
				d->ops.v[op] = vals[0];
		}
	}
	return nl;
}

int
lstats_digest(struct lstats_digest *d, const char *buf, size_t len,
    enum lh_target_kind kind)
{
	const char *p = buf, *end = buf + len;
	struct digest g;

	if (len == 0)
		return -EAGAIN;
	/* Field by field: a memset of the whole of d costs more than the
	 * smallest files' lines. */
	d->snapshot.present = false;
	d->start.present = false;
	d->samples = 0;
	if (kind == LH_TARGET_MDT)
		memset(&d->ops, 0, sizeof(d->ops));
	g.d = d;
	g.kind = kind;
	iocount_acc_init(&g.acc, kind);
	g.elapsed.present = false;
	g.buckets = 0;
	g.n = 0;
	while (p < end) {
		const char *nl = digest_line(&g, p, end);

		if (nl == NULL)
			return -EAGAIN;
		p = nl + 1;
	}
	iocount_acc_end(&g.acc, &d->io);
	return 0;
}
