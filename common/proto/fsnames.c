/* SPDX-License-Identifier: BSD-2-Clause */
/* Filesystem names by index (fsnames.h). */
#include <errno.h>
#include <string.h>

#include "fsnames.h"

int
fsnames_index(struct fsnames *f, const char *fs, uint16_t *ret)
{
	uint16_t i;

	/* A few filesystems at most: a scan will do. */
	for (i = 0; i < f->n; i++) {
		if (strcmp(f->v[i], fs) == 0)
			break;
	}
	if (i == f->n) {
		if (f->n == MSG_SWEEP_FS_MAX)
			return -E2BIG;
		memcpy(f->v[f->n++], fs, strlen(fs) + 1);
	}
	*ret = i;
	return 0;
}
