/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: any bytes as a stream of statsfeed messages, decoded
 * both as the reader decodes requests and as the gatherer decodes
 * records.  Whatever decodes must stay inside the message: borrowed bytes
 * within it, NID names that are one path component; and a decoded record
 * must encode back to the very same bytes (one encoding per record). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "statsfeed.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
inside(const uint8_t *msg, size_t len, const char *p, size_t n)
{
	if (n > 0 &&
	    ((const uint8_t *)p < msg || (const uint8_t *)p + n > msg + len))
		abort();
}

static void
one(const uint8_t *msg, size_t len)
{
	char nid[LTREE_NID_MAX];
	struct sfeed_req q;
	struct sfeed_rec r;
	struct rbuf names;
	struct wbuf w;
	int rc;

	if (sfeed_decode_req(msg, len, &q, NULL) == 0 &&
	    q.type == SFEED_REQ_NIDS) {
		rbuf_init(&names, q.nids, q.nids_len);
		while ((rc = sfeed_next_nid(&names, nid, sizeof(nid))) == 0) {
			if (!sfeed_nid_ok(nid))
				abort();
		}
	}
	if (sfeed_decode_rec(msg, len, &r, NULL) != 0)
		return;
	wbuf_init(&w, 0);
	switch (r.type) {
	case SFEED_TARGET:
		rc = sfeed_put_target(&w, &r.target);
		break;
	case SFEED_EXPORT:
		if (!sfeed_nid_ok(r.exp.nid))
			abort();
		inside(msg, len, r.exp.stats, r.exp.stats_len);
		inside(msg, len, r.exp.uuid, r.exp.uuid_len);
		rc = sfeed_put_export(&w, &r.exp);
		break;
	default:
		rc = sfeed_put_end(&w, r.end_rc);
		break;
	}
	if (rc != 0 || w.len != len + 4 || memcmp(w.data + 4, msg, len) != 0)
		abort();
	wbuf_free(&w);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len;

	while (sfeed_msg_len(data, size, &len) == 0 && len <= size - 4) {
		one(data + 4, len);
		data += 4 + len;
		size -= 4 + len;
	}
	/* What is left, as one message body. */
	one(data, size);
	return 0;
}
