/* SPDX-License-Identifier: BSD-2-Clause */
/* Checks of a decoded gatherer state (fuzz_gstate_use.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_gstate_use.h"
#include "wire.h"

static int
emit(void *arg, const struct gt_record *r)
{
	(void)arg;
	if (r->fs[0] == '\0' || r->nid[0] == '\0')
		abort();
	return 0;
}

void
fuzz_gstate_use(struct gtable *t, struct outbox *ob, int rc,
    const struct lh_err *err)
{
	uint64_t batch, sweep;
	struct wbuf w;

	if (rc != 0) {
		if (err->reason[0] == '\0')
			abort(); /* every refusal says why */
		return;
	}
	gtable_sweep_begin(t, t->last_sweep_ns + 1000000000u, 20000000000u);
	if (gtable_sweep_end(t, emit, NULL) != 0 || t->nclients != 0)
		abort();
	wbuf_init(&w, 0);
	if (ob->have_inflight && outbox_next(ob, &w, true, &batch, &sweep) != 0)
		abort();
	wbuf_free(&w);
}

void
fuzz_gstate_same(int rc, const struct lh_err *err, const struct gtable *t,
    const struct outbox *ob, int want_rc, const struct lh_err *want_err,
    const struct gtable *want_t, const struct outbox *want_ob)
{
	if (rc != want_rc || strcmp(err->reason, want_err->reason) != 0)
		abort();
	if (rc == 0 &&
	    (t->ntargets != want_t->ntargets ||
	        gtable_nexports(t) != gtable_nexports(want_t) ||
	        t->nclients != want_t->nclients ||
	        ob->pending.n != want_ob->pending.n ||
	        ob->have_inflight != want_ob->have_inflight ||
	        ob->last_batch != want_ob->last_batch))
		abort();
}
