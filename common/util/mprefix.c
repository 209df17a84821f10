/* SPDX-License-Identifier: BSD-2-Clause */
/* Metric name prefixes (mprefix.h). */
#include <string.h>

#include "mprefix.h"

bool
mprefix_ok(const char *prefix)
{
	size_t n = strlen(prefix);

	return n >= 1 && n <= MPREFIX_MAX &&
	    strspn(prefix,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789_-.") == n;
}
