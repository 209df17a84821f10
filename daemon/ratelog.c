/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rate-limited complaints: the deciding and counting half (ratelog.h);
 * the caller logs and owns any timer.
 */
#include <stddef.h>

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

uint64_t
ratelog_flush(struct ratelog *rl, uint64_t now_ns, uint64_t period_ns)
{
	uint64_t n = rl->suppressed;

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

bool
ratelog_burst(struct ratelog *rl, uint64_t now_ns, uint64_t period_ns,
    unsigned burst, uint64_t *ret_held)
{
	*ret_held = 0;
	if (rl->until_ns == 0 || now_ns >= rl->until_ns) {
		*ret_held = ratelog_drain(rl);
		rl->until_ns = now_ns + period_ns;
		rl->lines = 0;
	}
	if (rl->lines >= burst) {
		rl->suppressed++;
		return false;
	}
	rl->lines++;
	return true;
}

uint64_t
ratelog_drain(struct ratelog *rl)
{
	uint64_t n = rl->suppressed;

	rl->suppressed = 0;
	return n;
}

bool
ratelog_every(struct ratelog *rl, uint64_t now_ns, uint64_t period_ns,
    uint64_t *ret_skipped)
{
	if (rl->until_ns != 0 && now_ns < rl->until_ns) {
		rl->suppressed++;
		return false;
	}
	if (ret_skipped != NULL)
		*ret_skipped = rl->suppressed;
	rl->suppressed = 0;
	rl->until_ns = now_ns + period_ns;
	return true;
}

bool
ratelog_fail(struct ratelog *rl)
{
	bool first = !rl->failing;

	rl->failing = true;
	return first;
}

bool
ratelog_recover(struct ratelog *rl)
{
	bool was = rl->failing;

	rl->failing = false;
	return was;
}
