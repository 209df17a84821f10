/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: any bytes into the stats parser and the counter
 * semantics.  The input is copied into a buffer of exactly its size so
 * ASan sees any read past the end.  A parse without min, max and sumsq
 * (the gatherer's) must give the same as a full one in every other
 * field, error included.  And the fast path must read every line as the
 * general way does: the input with "\r\n" line ends, where a CR sends
 * every line the general way (it is a blank there), must parse the same,
 * min, max and sumsq included. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "iocount.h"
#include "statsparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_same(const struct lstats *a, const struct lstats *b, bool minmax)
{
	unsigned i;

	if (a->ncounters != b->ncounters || a->nskipped != b->nskipped ||
	    a->first_skipped != b->first_skipped ||
	    a->time_unit != b->time_unit ||
	    memcmp(&a->snapshot, &b->snapshot, sizeof(a->snapshot)) != 0 ||
	    memcmp(&a->start, &b->start, sizeof(a->start)) != 0 ||
	    memcmp(&a->elapsed, &b->elapsed, sizeof(a->elapsed)) != 0)
		abort();
	for (i = 0; i < a->ncounters; i++) {
		const struct lstats_counter *x = &a->counters[i];
		const struct lstats_counter *y = &b->counters[i];

		if (strcmp(x->name, y->name) != 0 || strcmp(x->unit, y->unit) ||
		    x->name_len != y->name_len || x->count != y->count ||
		    x->sum != y->sum || x->line != y->line ||
		    x->flags != y->flags || x->neg != y->neg ||
		    (minmax &&
		        (x->min != y->min || x->max != y->max ||
		            x->sumsq != y->sumsq)))
			abort();
	}
}

/* buf (size bytes, no CR in it) with a CR before every '\n', into a
 * buffer of exactly its size; *ret_size its size.  NULL without memory. */
static char *
with_crlf(const char *buf, size_t size, size_t *ret_size)
{
	size_t i, n = size;
	char *out;

	for (i = 0; i < size; i++)
		n += buf[i] == '\n';
	out = malloc(n > 0 ? n : 1);
	if (out == NULL)
		return NULL;
	for (i = 0, n = 0; i < size; i++) {
		if (buf[i] == '\n')
			out[n++] = '\r';
		out[n++] = buf[i];
	}
	*ret_size = n;
	return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct lstats st, lean;
	struct iocount io;
	struct lh_err err, err2;
	char *buf = malloc(size > 0 ? size : 1), *crlf = NULL;
	size_t crlf_size = 0;
	unsigned flags;
	int rc;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	/* An input with a CR of its own would read differently with more:
	 * only those without are compared. */
	if (memchr(buf, '\r', size) == NULL)
		crlf = with_crlf(buf, size, &crlf_size);
	for (flags = 0; flags <= LSTATS_PARSE_UNTERMINATED_OK; flags++) {
		rc = lstats_parse(&st, buf, size, flags, &err);
		if (rc == 0) {
			iocount_from_stats(&io, &st, LH_TARGET_OST);
			iocount_from_stats(&io, &st, LH_TARGET_MDT);
			(void)lstats_find(&st, "read_bytes");
		} else if (err.reason[0] == '\0') {
			abort(); /* every failure must say why */
		}
		if (lstats_parse(&lean, buf, size,
		        flags | LSTATS_PARSE_NO_MINMAX, &err2) != rc ||
		    strcmp(err.reason, err2.reason) != 0)
			abort();
		if (rc == 0)
			check_same(&st, &lean, false);
		if (crlf != NULL) {
			if (lstats_parse(&lean, crlf, crlf_size, flags,
			        &err2) != rc ||
			    err.line != err2.line ||
			    strcmp(err.reason, err2.reason) != 0)
				abort();
			if (rc == 0)
				check_same(&st, &lean, true);
		}
	}
	free(crlf);
	free(buf);
	return 0;
}
