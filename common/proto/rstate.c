/* SPDX-License-Identifier: BSD-2-Clause */
/* The relay's state file (rstate.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "msg.h"
#include "obstate.h"
#include "outbox.h"
#include "rstate.h"
#include "statefile.h"
#include "wire.h"

#define RSTATE_MAGIC   "LHRS"
#define RSTATE_VERSION 1
#define NAME_MAX_LEN   64 /* route and sender names, NUL included */

#define BAD(err, what) lh_err_set((err), 0, -EBADMSG, "damaged: %s", (what))

int
rstate_save(const char *path, const struct rstate_ledger *l, size_t nl,
    const struct rstate_route *r, size_t nr, struct lh_err *err)
{
	struct statefile_out *o;
	struct wbuf *w;
	size_t i;
	int rc;

	rc = statefile_create(path, &o, err);
	if (rc < 0)
		return rc;
	w = statefile_buf(o);
	(void)wbuf_put(w, RSTATE_MAGIC, 4);
	(void)wbuf_put_be32(w, RSTATE_VERSION);
	(void)wbuf_put_be64(w, clock_realtime_ns());
	(void)wbuf_put_varint(w, nl);
	for (i = 0; i < nl; i++) {
		(void)wbuf_put_str8(w, l[i].sender);
		(void)wbuf_put_varint(w, l[i].batch);
	}
	(void)wbuf_put_varint(w, nr);
	for (i = 0; i < nr; i++) {
		(void)wbuf_put_str8(w, r[i].name);
		(void)wbuf_put_be64(w, r[i].ob->last_batch);
		obstate_put(o, r[i].ob);
		statefile_maybe_flush(o);
	}
	return statefile_commit(o, err);
}

static int
get_route(struct rbuf *r, const struct rstate_cb *cb, struct lh_err *err)
{
	char name[NAME_MAX_LEN];
	struct statefile_src src = {r, NULL};
	uint64_t last;
	struct outbox ob;
	int rc;

	if (rbuf_get_str8(r, name, sizeof(name)) < 0 || name[0] == '\0' ||
	    rbuf_get_be64(r, &last) < 0)
		return BAD(err, "route");
	outbox_init(&ob, last);
	rc = obstate_get(&src, true, &ob, err);
	if (rc < 0) {
		outbox_free(&ob);
		return rc;
	}
	return cb->route(cb->arg, name, &ob);
}

int
rstate_decode(const void *p, size_t n, const struct rstate_cb *cb,
    struct lh_err *err)
{
	char sender[MSG_NAME_MAX];
	uint64_t saved, nl, nr, i, batch;
	uint8_t magic[4];
	uint32_t version;
	struct rbuf r;
	size_t body;
	int rc;

	rc = statefile_verify(p, n, &body, err);
	if (rc < 0)
		return rc;
	rbuf_init(&r, p, body);
	if (rbuf_get(&r, magic, 4) < 0 || memcmp(magic, RSTATE_MAGIC, 4) != 0)
		return BAD(err, "not a relay state file");
	if (rbuf_get_be32(&r, &version) < 0)
		return BAD(err, "header");
	if (version != RSTATE_VERSION)
		return lh_err_set(err, 0, -EBADMSG,
		    "%sstate format %u, this version reads %d",
		    version > RSTATE_VERSION ?
		        "written by a newer lharvestd: " :
		        "",
		    version, RSTATE_VERSION);
	if (rbuf_get_be64(&r, &saved) < 0 || rbuf_get_varint(&r, &nl) < 0 ||
	    nl > r.len / 2)
		return BAD(err, "header");
	for (i = 0; i < nl; i++) {
		if (rbuf_get_str8(&r, sender, sizeof(sender)) < 0 ||
		    sender[0] == '\0' || rbuf_get_varint(&r, &batch) < 0 ||
		    batch == 0)
			return BAD(err, "ledger entry");
		rc = cb->ledger(cb->arg, sender, batch);
		if (rc != 0)
			return rc;
	}
	if (rbuf_get_varint(&r, &nr) < 0 || nr > r.len / 8)
		return BAD(err, "route count");
	for (i = 0; i < nr; i++) {
		rc = get_route(&r, cb, err);
		if (rc != 0)
			return rc;
	}
	if (r.len != 0)
		return BAD(err, "trailing bytes");
	return 0;
}

int
rstate_load(const char *path, const struct rstate_cb *cb, struct lh_err *err)
{
	uint8_t *buf;
	size_t len;
	int rc;

	rc = statefile_read(path, &buf, &len, err);
	if (rc < 0)
		return rc;
	rc = rstate_decode(buf, len, cb, err);
	free(buf);
	return rc;
}
