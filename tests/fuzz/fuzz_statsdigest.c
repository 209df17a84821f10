/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: any bytes into the export digest, held to the general
 * way.  The input is copied into a buffer of exactly its size so ASan
 * sees any read past the end.  Whatever the digest takes, for either kind
 * of target, lstats_parse() must take too, and iocount_from_stats(),
 * mdops_from_stats() and delta_sample_from() must give the same numbers
 * (digest_agree.h); any difference aborts. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "digest_agree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size > 0 ? size : 1);
	bool taken;

	if (buf == NULL)
		return 0;
	if (size > 0)
		memcpy(buf, data, size);
	if (digest_disagrees(buf, size, LH_TARGET_OST, &taken) != NULL ||
	    digest_disagrees(buf, size, LH_TARGET_MDT, &taken) != NULL)
		abort();
	free(buf);
	return 0;
}
