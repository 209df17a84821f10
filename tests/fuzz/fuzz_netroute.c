/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: the relay's route patterns and lookups.  Each line
 * is a pattern for route (line number mod 5), or, after a '?', a NID or
 * network to look up.  A pattern is refused by netroute_add() as not a
 * pattern exactly when netroute_pattern_check() refuses it, and a lookup
 * only ever answers a route that was added. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netroute.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct netroute *t = netroute_new();
	char *s = malloc(size + 1), *line, *next;
	bool used[5] = {false, false, false, false, false};
	unsigned n = 0;

	if (s == NULL || t == NULL)
		goto out;
	memcpy(s, data, size);
	s[size] = '\0';
	for (line = s; line != NULL; line = next, n++) {
		int rc, ok, r;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (line[0] == '?') {
			r = netroute_lookup(t, line + 1);
			if (r >= 5 || (r >= 0 && !used[r]))
				abort();
			continue;
		}
		ok = netroute_pattern_check(line, NULL);
		rc = netroute_add(t, n % 5, line, NULL);
		if ((ok == 0) != (rc != -EINVAL))
			abort();
		if (rc == 0) {
			used[n % 5] = true;
			/* A bare network it names routes to it. */
			r = netroute_lookup(t, line);
			if (r >= 0 && r != (int)(n % 5) && !used[r])
				abort();
		}
	}
out:
	free(s);
	netroute_free(t);
	return 0;
}
