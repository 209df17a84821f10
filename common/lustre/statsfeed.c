/* SPDX-License-Identifier: BSD-2-Clause */
/* The gatherer's and its stats reader's messages (statsfeed.h). */
#include <errno.h>
#include <string.h>

#include "err.h"
#include "statsfeed.h"
#include "wire.h"

bool
sfeed_nid_ok(const char *nid)
{
	size_t n = strnlen(nid, LTREE_NID_MAX);

	return n > 0 && n < LTREE_NID_MAX && strchr(nid, '/') == NULL &&
	    strcmp(nid, ".") != 0 && strcmp(nid, "..") != 0;
}

/* A message's length goes in front; it is known at the end. */
static size_t
msg_begin(struct wbuf *w, uint8_t type)
{
	size_t off = w->len;

	(void)wbuf_put_be32(w, 0);
	(void)wbuf_put_u8(w, type);
	return off;
}

static int
msg_end(struct wbuf *w, size_t off)
{
	if (wbuf_status(w) < 0)
		return wbuf_status(w);
	return wbuf_patch_be32(w, off, (uint32_t)(w->len - off - 4));
}

int
sfeed_put_req(struct wbuf *w, enum sfeed_type type, uint32_t target,
    bool with_uuid)
{
	size_t off = msg_begin(w, (uint8_t)type);

	if (type != SFEED_REQ_TARGETS) {
		(void)wbuf_put_be32(w, target);
		(void)wbuf_put_u8(w, with_uuid ? 1 : 0);
	}
	return msg_end(w, off);
}

int
sfeed_begin_nids(struct wbuf *w, uint32_t target, size_t *ret_off)
{
	*ret_off = msg_begin(w, SFEED_REQ_NIDS);
	(void)wbuf_put_be32(w, target);
	return wbuf_status(w);
}

int
sfeed_add_nid(struct wbuf *w, const char *nid)
{
	if (!sfeed_nid_ok(nid))
		return -EINVAL;
	return wbuf_put_str8(w, nid);
}

int
sfeed_end_nids(struct wbuf *w, size_t off)
{
	return msg_end(w, off);
}

/* A be32 errno (positive on the wire, so that 0 is success). */
static void
put_rc(struct wbuf *w, int rc)
{
	(void)wbuf_put_be32(w, (uint32_t)(rc < 0 ? -rc : 0));
}

static void
put_bytes(struct wbuf *w, const char *p, size_t len)
{
	(void)wbuf_put_be32(w, (uint32_t)len);
	(void)wbuf_put(w, p, len);
}

int
sfeed_put_target(struct wbuf *w, const struct sfeed_target *t)
{
	size_t off = msg_begin(w, SFEED_TARGET), plen = strlen(t->path);

	(void)wbuf_put_str8(w, t->name);
	(void)wbuf_put_str8(w, t->fs);
	(void)wbuf_put_u8(w, (uint8_t)t->kind);
	(void)wbuf_put_be64(w, t->dev);
	(void)wbuf_put_be64(w, t->ino);
	(void)wbuf_put_be16(w, (uint16_t)plen);
	(void)wbuf_put(w, t->path, plen);
	return msg_end(w, off);
}

int
sfeed_put_export(struct wbuf *w, const struct sfeed_export *e)
{
	size_t off = msg_begin(w, SFEED_EXPORT);

	if (e->stats_len > SFEED_FILE_MAX || e->uuid_len > SFEED_FILE_MAX)
		return -EMSGSIZE;
	(void)wbuf_put_str8(w, e->nid);
	(void)wbuf_put_be64(w, e->ino);
	put_rc(w, e->stats_rc);
	put_bytes(w, e->stats, e->stats_rc == 0 ? e->stats_len : 0);
	(void)wbuf_put_u8(w, e->has_uuid ? 1 : 0);
	if (e->has_uuid) {
		put_rc(w, e->uuid_rc);
		put_bytes(w, e->uuid, e->uuid_rc == 0 ? e->uuid_len : 0);
	}
	return msg_end(w, off);
}

int
sfeed_put_end(struct wbuf *w, int rc)
{
	size_t off = msg_begin(w, SFEED_END);

	put_rc(w, rc);
	return msg_end(w, off);
}

int
sfeed_msg_len(const uint8_t *p, size_t avail, size_t *ret_len)
{
	uint32_t n;

	if (avail < 4)
		return -EAGAIN;
	n = wire_be32(p);
	if (n == 0 || n > SFEED_MSG_MAX)
		return -EBADMSG;
	*ret_len = n;
	return 0;
}

int
sfeed_decode_req(const uint8_t *p, size_t len, struct sfeed_req *ret,
    struct lh_err *err)
{
	struct sfeed_req q;
	struct rbuf r;
	uint8_t type, flag = 0;

	memset(&q, 0, sizeof(q));
	rbuf_init(&r, p, len);
	if (len > SFEED_REQ_MAX || rbuf_get_u8(&r, &type) < 0)
		return lh_err_set(err, 0, -EBADMSG, "request of %zu bytes",
		    len);
	q.type = (enum sfeed_type)type;
	switch (type) {
	case SFEED_REQ_TARGETS:
		break;
	case SFEED_REQ_EXPORTS:
		if (rbuf_get_be32(&r, &q.target) < 0 ||
		    rbuf_get_u8(&r, &flag) < 0 || flag > 1)
			return lh_err_set(err, 0, -EBADMSG,
			    "malformed exports request");
		q.with_uuid = flag == 1;
		break;
	case SFEED_REQ_NIDS:
		if (rbuf_get_be32(&r, &q.target) < 0)
			return lh_err_set(err, 0, -EBADMSG,
			    "malformed NIDs request");
		q.nids = r.p;
		q.nids_len = r.len;
		r.len = 0;
		break;
	default:
		return lh_err_set(err, 0, -EBADMSG, "unknown request type %u",
		    type);
	}
	if (r.len != 0)
		return lh_err_set(err, 0, -EBADMSG, "%zu bytes after a request",
		    r.len);
	*ret = q;
	return 0;
}

int
sfeed_next_nid(struct rbuf *r, char *out, size_t size)
{
	if (r->len == 0)
		return 1;
	if (rbuf_get_str8(r, out, size) < 0 || !sfeed_nid_ok(out))
		return -EBADMSG;
	return 0;
}

/* A be32 errno from the wire: 0, or a negative errno a read can give. */
static int
get_rc(struct rbuf *r, int *ret)
{
	uint32_t v;

	if (rbuf_get_be32(r, &v) < 0 || v > 4095)
		return -1;
	*ret = -(int)v;
	return 0;
}

/* Bytes borrowed from the message: at most SFEED_FILE_MAX, none unless
 * the read succeeded. */
static int
get_bytes(struct rbuf *r, int rc, const char **ret_p, size_t *ret_len)
{
	uint32_t n;

	if (rbuf_get_be32(r, &n) < 0 || n > SFEED_FILE_MAX || n > r->len ||
	    (rc != 0 && n != 0))
		return -1;
	*ret_p = (const char *)r->p;
	*ret_len = n;
	return rbuf_skip(r, n);
}

static int
decode_target(struct rbuf *r, struct sfeed_target *t, struct lh_err *err)
{
	uint16_t plen;
	uint8_t kind;

	if (rbuf_get_str8(r, t->name, sizeof(t->name)) < 0 ||
	    rbuf_get_str8(r, t->fs, sizeof(t->fs)) < 0 ||
	    rbuf_get_u8(r, &kind) < 0 || rbuf_get_be64(r, &t->dev) < 0 ||
	    rbuf_get_be64(r, &t->ino) < 0 || rbuf_get_be16(r, &plen) < 0 ||
	    plen >= sizeof(t->path) || rbuf_get(r, t->path, plen) < 0)
		return lh_err_set(err, 0, -EBADMSG, "malformed target");
	t->path[plen] = '\0';
	if ((kind != LH_TARGET_OST && kind != LH_TARGET_MDT) ||
	    t->name[0] == '\0' || strchr(t->name, '/') != NULL ||
	    memchr(t->path, '\0', plen) != NULL)
		return lh_err_set(err, 0, -EBADMSG, "malformed target %s",
		    t->name);
	t->kind = (enum lh_target_kind)kind;
	return 0;
}

static int
decode_export(struct rbuf *r, struct sfeed_export *e, struct lh_err *err)
{
	uint8_t has;

	if (rbuf_get_str8(r, e->nid, sizeof(e->nid)) < 0 ||
	    !sfeed_nid_ok(e->nid) || rbuf_get_be64(r, &e->ino) < 0 ||
	    get_rc(r, &e->stats_rc) < 0 ||
	    get_bytes(r, e->stats_rc, &e->stats, &e->stats_len) < 0 ||
	    rbuf_get_u8(r, &has) < 0 || has > 1)
		return lh_err_set(err, 0, -EBADMSG, "malformed export record");
	e->has_uuid = has == 1;
	if (e->has_uuid &&
	    (get_rc(r, &e->uuid_rc) < 0 ||
	        get_bytes(r, e->uuid_rc, &e->uuid, &e->uuid_len) < 0))
		return lh_err_set(err, 0, -EBADMSG,
		    "malformed export record for %s", e->nid);
	return 0;
}

int
sfeed_decode_rec(const uint8_t *p, size_t len, struct sfeed_rec *ret,
    struct lh_err *err)
{
	struct rbuf r;
	uint8_t type;
	int rc;

	rbuf_init(&r, p, len);
	if (len > SFEED_MSG_MAX || rbuf_get_u8(&r, &type) < 0)
		return lh_err_set(err, 0, -EBADMSG, "record of %zu bytes", len);
	memset(ret, 0, sizeof(*ret));
	ret->type = (enum sfeed_type)type;
	switch (type) {
	case SFEED_TARGET:
		rc = decode_target(&r, &ret->target, err);
		break;
	case SFEED_EXPORT:
		rc = decode_export(&r, &ret->exp, err);
		break;
	case SFEED_END:
		rc = get_rc(&r, &ret->end_rc) < 0 ?
		    lh_err_set(err, 0, -EBADMSG, "malformed end record") :
		    0;
		break;
	default:
		rc = lh_err_set(err, 0, -EBADMSG, "unknown record type %u",
		    type);
		break;
	}
	if (rc == 0 && r.len != 0)
		rc = lh_err_set(err, 0, -EBADMSG, "%zu bytes after a record",
		    r.len);
	return rc;
}
