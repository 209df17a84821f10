/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: lharvest's reading of an answer's envelope
 * (daemon/lharvest_envelope.c), whose bytes come from the network.  An
 * answer taken is an envelope that succeeded, with data (null at least)
 * and a message that fits, NUL-terminated, in the buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lharvest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[16];
	json_t *d = NULL;
	int rc;

	memset(msg, 'x', sizeof(msg));
	rc = lhc_envelope((const char *)data, size, &d, msg, sizeof(msg));
	if (rc == 0 && d == NULL)
		abort();
	if (rc != 0 && d != NULL)
		abort();
	if (rc != -2 && memchr(msg, '\0', sizeof(msg)) == NULL)
		abort();
	json_decref(d);
	return 0;
}
