/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rate-limited log lines: the counting half (the caller logs and owns the
 * timer).
 */
#include "ratelog.h"

bool
ratelog_take(struct ratelog *rl, uint64_t now_ns, uint64_t period_ns)
{
	if (now_ns >= rl->until_ns && rl->suppressed == 0) {
		rl->until_ns = now_ns + period_ns;
		return true;
	}
	rl->suppressed++;
	return false;
}

unsigned
ratelog_flush(struct ratelog *rl, uint64_t now_ns, uint64_t period_ns)
{
	unsigned n = rl->suppressed;

	if (n == 0 || now_ns < rl->until_ns)
		return 0;
	rl->suppressed = 0;
	rl->until_ns = now_ns + period_ns;
	return n;
}

uint64_t
ratelog_due(const struct ratelog *rl)
{
	return rl->suppressed > 0 ? rl->until_ns : 0;
}
