/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: any bytes into the export digest, held to the general
 * way.  The input is copied into a buffer of exactly its size so ASan
 * sees any read past the end.  Whatever the digest takes, for either kind
 * of target, lstats_parse() must take too, and iocount_from_stats(),
 * mdops_from_stats() and delta_sample_from() must give the same numbers;
 * any difference aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "delta.h"
#include "err.h"
#include "iocount.h"
#include "mdops.h"
#include "statsdigest.h"
#include "statsparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(const char *buf, size_t len, enum lh_target_kind kind)
{
	static struct lstats st;
	struct lstats_digest d;
	struct delta_sample ds, gs;
	struct iocount io;
	struct mdops ops;
	struct lh_err err;

	if (lstats_digest(&d, buf, len, kind) != 0)
		return;
	if (lstats_parse(&st, buf, len, LSTATS_PARSE_NO_MINMAX, &err) != 0)
		abort();
	iocount_from_stats(&io, &st, kind);
	delta_sample_from(&gs, &st, &io);
	delta_sample_make(&ds, &d.io, d.samples, &d.snapshot, &d.start);
	if (memcmp(&d.io, &io, sizeof(io)) != 0 ||
	    memcmp(&ds, &gs, sizeof(ds)) != 0 ||
	    d.snapshot.present != st.snapshot.present ||
	    d.start.present != st.start.present)
		abort();
	if (kind == LH_TARGET_MDT) {
		mdops_from_stats(&ops, &st);
		if (memcmp(&d.ops, &ops, sizeof(ops)) != 0)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size > 0 ? size : 1);

	if (buf == NULL)
		return 0;
	if (size > 0)
		memcpy(buf, data, size);
	check(buf, size, LH_TARGET_OST);
	check(buf, size, LH_TARGET_MDT);
	free(buf);
	return 0;
}
