/* SPDX-License-Identifier: BSD-2-Clause */
/* Small helpers shared by the Check suites. */
#ifndef LH_TESTUTIL_H
#define LH_TESTUTIL_H

#include <stddef.h>

/* Read a whole file; the buffer is NUL-terminated (not counted in len).
 * Aborts the test on failure.  Free with free(). */
char *tu_read_file(const char *path, size_t *ret_len);

/* Path of a fixture below tests/fixtures/lustre, in a static buffer. */
const char *tu_fixture(const char *rel);

/* Run the suite, print Check's summary, return the exit status. */
struct Suite;
int tu_run(struct Suite *s);

#endif
