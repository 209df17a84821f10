/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The export digest held to the general way on one buffer, the check
 * tests/unit/test_statsdigest.c and tests/fuzz/fuzz_statsdigest.c share:
 * whatever lstats_digest() takes, lstats_parse() must take too, and
 * iocount_from_stats(), mdops_from_stats() (an MDT's) and
 * delta_sample_from() must give the same numbers.
 */
#ifndef LH_DIGEST_AGREE_H
#define LH_DIGEST_AGREE_H

#include <stdbool.h>
#include <stddef.h>

#include "iocount.h" /* enum lh_target_kind */

/*
 * buf[0..len) read both ways for a target of the given kind: NULL when
 * they agree (*ret_taken: whether the digest took it), or what differs,
 * in a buffer of its own that the next call reuses.
 */
const char *digest_disagrees(const char *buf, size_t len,
    enum lh_target_kind kind, bool *ret_taken);

#endif
