/* SPDX-License-Identifier: BSD-2-Clause */
/* A snapshot of what the role says of itself (status.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "consumer.h"
#include "status.h"

int
status_collect(const struct status_board *b, struct lh_status *st)
{
	memset(st, 0, sizeof(*st));
	if (b->fill != NULL)
		b->fill(b->arg, st);
	if (b->outs != NULL)
		consumers_status(b->outs, st);
	/* A filler out of memory leaves its count with a NULL array. */
	if ((st->ngatherers > 0 && st->gatherers == NULL) ||
	    (st->nroutes > 0 && st->routes == NULL)) {
		status_release(st);
		return -ENOMEM;
	}
	return 0;
}

void
status_release(struct lh_status *st)
{
	free(st->gatherers);
	free(st->routes);
	memset(st, 0, sizeof(*st));
}
