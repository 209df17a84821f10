/* SPDX-License-Identifier: BSD-2-Clause */
/* What the outbox suite's two files share (test_outbox.c, outbox_split.c). */
#ifndef LH_TESTS_OUTBOX_TESTS_H
#define LH_TESTS_OUTBOX_TESTS_H

#include <check.h>
#include <stdint.h>

#include "iocount.h"

/* Counters of rb bytes read (test_outbox.c). */
struct iocount io(uint64_t rb);

/* The tests of batches split to fit a frame, added to tc. */
void outbox_split_tests(TCase *tc);

#endif
