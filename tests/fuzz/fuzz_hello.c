/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: any bytes into the HELLO decoder; what decodes must
 * be within the limits, and encode and decode to the same message.  The
 * input is copied into a buffer of exactly its size so ASan sees any read
 * past the end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "msg.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
hello_eq(const struct msg_hello *a, const struct msg_hello *b)
{
	size_t i;

	if (memcmp(a->nonce, b->nonce, sizeof(a->nonce)) != 0 ||
	    a->role != b->role || strcmp(a->software, b->software) != 0 ||
	    a->time_ns != b->time_ns || a->interval != b->interval ||
	    a->caps != b->caps || strcmp(a->name, b->name) != 0 ||
	    a->nfs != b->nfs || a->ntargets != b->ntargets)
		return 0;
	for (i = 0; i < a->nfs; i++)
		if (strcmp(a->fs[i], b->fs[i]) != 0)
			return 0;
	for (i = 0; i < a->ntargets; i++)
		if (strcmp(a->targets[i].name, b->targets[i].name) != 0 ||
		    a->targets[i].fs != b->targets[i].fs)
			return 0;
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct msg_hello m, m2;
	struct lh_err err;
	struct wbuf w;
	uint8_t *buf = malloc(size > 0 ? size : 1);
	size_t i;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	lh_err_clear(&err);
	if (msg_hello_decode(&m, buf, size, &err) < 0) {
		if (err.reason[0] == '\0')
			abort(); /* every failure must say why */
		free(buf);
		return 0;
	}
	if (m.nfs > MSG_HELLO_FS_MAX || m.ntargets > MSG_HELLO_TGT_MAX)
		abort();
	for (i = 0; i < m.ntargets; i++)
		if (m.targets[i].fs >= m.nfs)
			abort(); /* an index the receiver would trust */
	wbuf_init(&w, 0);
	if (msg_hello_encode(&w, &m) != 0 ||
	    msg_hello_decode(&m2, w.data, w.len, NULL) != 0 ||
	    !hello_eq(&m, &m2))
		abort();
	wbuf_free(&w);
	free(buf);
	return 0;
}
