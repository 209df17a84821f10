/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: any bytes as the body of a gatherer state file.  The
 * trailing SHA-256 is appended here, or no mutation would ever get past
 * it; what is fuzzed is the decoder behind the checksum.  A state that
 * decodes must be one the tables can sweep on and save again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gstate.h"
#include "gtable.h"
#include "hmac.h"
#include "outbox.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
emit(void *arg, const struct gt_record *r)
{
	(void)arg;
	if (r->fs[0] == '\0' || r->nid[0] == '\0')
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + SHA256_LEN);
	struct gtable t;
	struct outbox ob;
	struct lh_err err;
	struct wbuf w;
	uint64_t batch, sweep, scope;
	int rc;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	if (sha256(buf, size, buf + size) < 0)
		abort();
	gtable_init(&t);
	outbox_init(&ob, 0);
	lh_err_clear(&err);
	rc = gstate_decode(buf, size + SHA256_LEN, &scope, &t, &ob, &err);
	if (rc == 0) {
		/* Usable: one sweep that lists nothing, and a resend. */
		gtable_sweep_begin(&t, t.last_sweep_ns + 1000000000u,
		    20000000000u);
		if (gtable_sweep_end(&t, emit, NULL) != 0 || t.nclients != 0)
			abort();
		wbuf_init(&w, 0);
		if (ob.have_inflight &&
		    outbox_next(&ob, &w, true, &batch, &sweep) != 0)
			abort();
		wbuf_free(&w);
	} else if (err.reason[0] == '\0') {
		abort(); /* every refusal says why */
	}
	gtable_free(&t);
	outbox_free(&ob);
	free(buf);
	return 0;
}
