/* SPDX-License-Identifier: BSD-2-Clause */
/* The digest against the general way (digest_agree.h). */
#include <stdio.h>
#include <string.h>

#include "delta.h"
#include "digest_agree.h"
#include "err.h"
#include "iocount.h"
#include "mdops.h"
#include "statsdigest.h"

static bool
time_eq(const struct lstats_time *a, const struct lstats_time *b)
{
	return a->present == b->present &&
	    (!a->present || (a->sec == b->sec && a->nsec == b->nsec));
}

const char *
digest_disagrees(const char *buf, size_t len, enum lh_target_kind kind,
    bool *ret_taken)
{
	static struct lstats st;
	static char why[256];
	struct lstats_digest d;
	struct delta_sample ds, gs;
	struct iocount io;
	struct mdops ops;
	struct lh_err err;

	*ret_taken = lstats_digest(&d, buf, len, kind) == 0;
	if (!*ret_taken)
		return NULL;
	if (lstats_parse(&st, buf, len, LSTATS_PARSE_NO_MINMAX, &err) != 0) {
		(void)snprintf(why, sizeof(why),
		    "digest took what the parser refuses: %s", err.reason);
		return why;
	}
	iocount_from_stats(&io, &st, kind);
	delta_sample_from(&gs, &st, &io);
	delta_sample_make(&ds, &d.io, d.samples, &d.snapshot, &d.start);
	if (memcmp(&d.io, &io, sizeof(io)) != 0) {
		(void)snprintf(why, sizeof(why),
		    "counters differ (read_bytes %llu/%llu, oss_ops %llu/%llu, "
		    "mds_ops %llu/%llu)",
		    (unsigned long long)d.io.read_bytes,
		    (unsigned long long)io.read_bytes,
		    (unsigned long long)d.io.oss_ops,
		    (unsigned long long)io.oss_ops,
		    (unsigned long long)d.io.mds_ops,
		    (unsigned long long)io.mds_ops);
		return why;
	}
	if (d.samples != gs.samples) {
		(void)snprintf(why, sizeof(why), "samples %llu, not %llu",
		    (unsigned long long)d.samples,
		    (unsigned long long)gs.samples);
		return why;
	}
	if (!time_eq(&d.snapshot, &st.snapshot) ||
	    !time_eq(&d.start, &st.start))
		return "header times differ";
	if (memcmp(&ds, &gs, sizeof(ds)) != 0)
		return "delta samples differ";
	if (kind == LH_TARGET_MDT) {
		mdops_from_stats(&ops, &st);
		if (memcmp(&d.ops, &ops, sizeof(ops)) != 0)
			return "op counts differ";
	}
	return NULL;
}
