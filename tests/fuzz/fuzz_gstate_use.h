/* SPDX-License-Identifier: BSD-2-Clause */
/* What the gatherer-state fuzzers (fuzz_gstate.c, fuzz_gjournal.c) check
 * of a state they decoded.  Each aborts where the check fails. */
#ifndef LH_TESTS_FUZZ_GSTATE_USE_H
#define LH_TESTS_FUZZ_GSTATE_USE_H

#include "err.h"
#include "gtable.h"
#include "outbox.h"

/* rc: a decoder's verdict on t and ob.  A state that decoded must sweep
 * (nothing listed: every client forgotten) and resend its batch in
 * flight; a refusal must say why (err). */
void fuzz_gstate_use(struct gtable *t, struct outbox *ob, int rc,
    const struct lh_err *err);

/* A second load of the same state (from a file, a window at a time)
 * gave rc and err into t and ob: the same verdict and reason as the
 * first, and when it loaded, the same tables. */
void fuzz_gstate_same(int rc, const struct lh_err *err, const struct gtable *t,
    const struct outbox *ob, int want_rc, const struct lh_err *want_err,
    const struct gtable *want_t, const struct outbox *want_ob);

#endif
