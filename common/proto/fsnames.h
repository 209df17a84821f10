/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The filesystems a table of clients names, each once, by a small index:
 * at most as many as one SWEEP carries (MSG_SWEEP_FS_MAX), laid out as
 * struct msg_sweep's fs[] so that a batch's list is a SWEEP's as it is.
 */
#ifndef LH_FSNAMES_H
#define LH_FSNAMES_H

#include <stdint.h>

#include "msg.h"

struct fsnames {
	char v[MSG_SWEEP_FS_MAX][MSG_FS_MAX];
	uint16_t n;
};

/* The index of fs (shorter than MSG_FS_MAX), added if new.  Returns 0, or
 * -E2BIG: more filesystems than a SWEEP carries. */
int fsnames_index(struct fsnames *f, const char *fs, uint16_t *ret);

static inline const char *
fsnames_get(const struct fsnames *f, uint16_t i)
{
	return f->v[i];
}

#endif
