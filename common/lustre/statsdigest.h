/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An export stats file read straight into what a gatherer counts, without
 * keeping its lines: the same numbers as lstats_parse() followed by
 * iocount_from_stats() and mdops_from_stats(), for files exactly as
 * Lustre 2.10 and later print them (nearly every file a gatherer reads),
 * in about half the time.  For anything else (an older header, a tab, a
 * CR, a sign, a line it does not know...) it gives up, and the file is
 * parsed the general way: lstats_digest() never reads a file differently,
 * it only declines it.  tests/unit/test_statsdigest.c and
 * tests/fuzz/fuzz_statsdigest.c hold the two ways against each other.
 */
#ifndef LH_STATSDIGEST_H
#define LH_STATSDIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "iocount.h"
#include "mdops.h"
#include "statsparse.h"

struct lstats_digest {
	struct lstats_time snapshot; /* as lstats_parse() reads them */
	struct lstats_time start;
	uint64_t samples;  /* every counter's count, repeated names too */
	struct iocount io; /* iocount_from_stats() */
	struct mdops ops;  /* mdops_from_stats(); an MDT's only (not set for
	                    * an OST) */
};

/*
 * The len bytes at buf, read from a target of the given kind, into d.
 * Returns 0, or -EAGAIN when it is not sure: then d means nothing, and
 * the file must go through lstats_parse() (which also says what is wrong
 * with it, if anything is).
 */
int lstats_digest(struct lstats_digest *d, const char *buf, size_t len,
    enum lh_target_kind kind);

#endif
