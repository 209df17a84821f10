/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: any bytes as the body of a relay state file (the
 * trailing SHA-256 is appended here, so that mutations reach the decoder
 * behind it).  Every route's outbox that decodes must be one a sender can
 * deliver: its batch in flight encodes, with and without op counts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hmac.h"
#include "outbox.h"
#include "rstate.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
on_ledger(void *arg, const char *sender, uint64_t batch)
{
	(void)arg;
	if (sender[0] == '\0' || batch == 0)
		abort();
	return 0;
}

static int
on_route(void *arg, const char *name, struct outbox *ob)
{
	uint64_t batch, sweep;
	struct wbuf w;

	(void)arg;
	if (name[0] == '\0')
		abort();
	wbuf_init(&w, 0);
	if (ob->have_inflight &&
	    (outbox_next(ob, &w, true, &batch, &sweep) != 0 ||
	        outbox_next(ob, &w, false, &batch, &sweep) != 0))
		abort();
	wbuf_free(&w);
	outbox_free(ob);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + SHA256_LEN);
	const struct rstate_cb cb = {on_ledger, on_route, NULL};
	struct lh_err err;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	if (sha256(buf, size, buf + size) < 0)
		abort();
	lh_err_clear(&err);
	if (rstate_decode(buf, size + SHA256_LEN, &cb, &err) < 0 &&
	    err.reason[0] == '\0')
		abort(); /* every refusal says why */
	free(buf);
	return 0;
}
