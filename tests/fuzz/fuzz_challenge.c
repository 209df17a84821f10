/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: any bytes into the CHALLENGE decoder; what decodes
 * must encode and decode to the same message.  The input is copied into a
 * buffer of exactly its size so ASan sees any read past the end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "msg.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msg_challenge m, m2;
	struct lh_err err;
	struct wbuf w;
	uint8_t *buf = malloc(size > 0 ? size : 1);

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	lh_err_clear(&err);
	if (msg_challenge_decode(&m, buf, size, &err) < 0) {
		if (err.reason[0] == '\0')
			abort(); /* every failure must say why */
		free(buf);
		return 0;
	}
	wbuf_init(&w, 0);
	if (msg_challenge_encode(&w, &m) != 0 ||
	    msg_challenge_decode(&m2, w.data, w.len, NULL) != 0 ||
	    memcmp(m.nonce, m2.nonce, sizeof(m.nonce)) != 0 ||
	    m.time_ns != m2.time_ns || m.caps != m2.caps || m.role != m2.role ||
	    strcmp(m.name, m2.name) != 0)
		abort();
	wbuf_free(&w);
	free(buf);
	return 0;
}
