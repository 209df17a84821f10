/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: lctl get_param output split into blocks, each block
 * then parsed as stats. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "lctlout.h"
#include "statsparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct lstats st;
	struct lctl_block b;
	struct lh_err err;
	char *buf = malloc(size > 0 ? size : 1);
	size_t pos = 0, last = 0;
	unsigned line = 0;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	while (lctlout_next(buf, size, &pos, &line, &b, &err) == 1) {
		if (pos <= last && pos != size)
			abort(); /* must always make progress */
		last = pos;
		if (b.value < buf || b.value + b.value_len > buf + size)
			abort();
		(void)lstats_parse(&st, b.value, b.value_len,
		    LSTATS_PARSE_UNTERMINATED_OK, &err);
	}
	free(buf);
	return 0;
}
