/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: any bytes into the stats parser and the counter
 * semantics.  The input is copied into a buffer of exactly its size so
 * ASan sees any read past the end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "iocount.h"
#include "statsparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct lstats st;
	struct iocount io;
	struct lh_err err;
	char *buf = malloc(size > 0 ? size : 1);
	unsigned flags;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	for (flags = 0; flags <= LSTATS_PARSE_UNTERMINATED_OK; flags++) {
		if (lstats_parse(&st, buf, size, flags, &err) == 0) {
			iocount_from_stats(&io, &st, LH_TARGET_OST);
			iocount_from_stats(&io, &st, LH_TARGET_MDT);
			(void)lstats_find(&st, "read_bytes");
		} else if (err.reason[0] == '\0') {
			abort(); /* every failure must say why */
		}
	}
	free(buf);
	return 0;
}
