/* SPDX-License-Identifier: BSD-2-Clause */
/* Payload encoders and decoders (docs/protocol.md, "Messages"): the
 * small messages here, the SWEEP in msg_sweep_enc.c and msg_sweep_dec.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "msg.h"
#include "msg_int.h"
#include "wire.h"

unsigned
msg_fs_repeated(const void *fs, unsigned n)
{
	const char *names = fs;
	unsigned i, j;

	for (i = 1; i < n; i++) {
		for (j = 0; j < i; j++) {
			if (strcmp(names + (size_t)i * MSG_FS_MAX,
			        names + (size_t)j * MSG_FS_MAX) == 0)
				return i;
		}
	}
	return n;
}

bool
msg_fs_name_ok(const char *fs)
{
	/* What a Ganglia metric name may hold (gmetric/gcache.c), as a
	 * filesystem's name is the default prefix of its metrics. */
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz"
	                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-";

	return fs[0] != '\0' && strspn(fs, ok) == strlen(fs);
}

static bool
role_ok(uint8_t role)
{
	return role >= MSG_ROLE_GATHERER && role <= MSG_ROLE_RELAY;
}

static int
get_text(struct rbuf *r, char *out, size_t size)
{
	if (rbuf_get_str8(r, out, size) < 0 || !msg_printable(out, true))
		return -1;
	return 0;
}

int
msg_done(const struct rbuf *r, struct lh_err *err, const char *what)
{
	if (r->len != 0)
		return lh_err_set(err, 0, -EBADMSG,
		    "%s: %zu bytes of trailing "
		    "garbage",
		    what, r->len);
	return 0;
}

/* ---- CHALLENGE ------------------------------------------------------ */

int
msg_challenge_encode(struct wbuf *w, const struct msg_challenge *m)
{
	(void)wbuf_put(w, m->nonce, MSG_NONCE_LEN);
	(void)wbuf_put_be64(w, m->time_ns);
	(void)wbuf_put_be64(w, m->caps);
	(void)wbuf_put_u8(w, m->role);
	(void)wbuf_put_str8(w, m->name);
	return wbuf_status(w);
}

int
msg_challenge_decode(struct msg_challenge *m, const uint8_t *p, size_t n,
    struct lh_err *err)
{
	struct rbuf r;

	rbuf_init(&r, p, n);
	if (rbuf_get(&r, m->nonce, MSG_NONCE_LEN) < 0 ||
	    rbuf_get_be64(&r, &m->time_ns) < 0 ||
	    rbuf_get_be64(&r, &m->caps) < 0 || rbuf_get_u8(&r, &m->role) < 0 ||
	    msg_get_name(&r, m->name, sizeof(m->name)) < 0)
		return BAD(err, "CHALLENGE: truncated, or a bad name");
	if (!role_ok(m->role))
		return lh_err_set(err, 0, -EBADMSG,
		    "CHALLENGE: role %u (1 gatherer, 2 aggregator, 3 relay)",
		    m->role);
	return msg_done(&r, err, "CHALLENGE");
}

/* ---- HELLO ---------------------------------------------------------- */

int
msg_hello_encode(struct wbuf *w, const struct msg_hello *m)
{
	unsigned i;

	if (m->nfs > MSG_HELLO_FS_MAX || m->ntargets > MSG_HELLO_TGT_MAX)
		return -EINVAL;
	(void)wbuf_put(w, m->nonce, MSG_NONCE_LEN);
	(void)wbuf_put_u8(w, m->role);
	(void)wbuf_put_str8(w, m->software);
	(void)wbuf_put_be64(w, m->time_ns);
	(void)wbuf_put_be32(w, m->interval);
	(void)wbuf_put_be64(w, m->caps);
	(void)wbuf_put_str8(w, m->name);
	(void)wbuf_put_varint(w, m->nfs);
	for (i = 0; i < m->nfs; i++)
		(void)wbuf_put_str8(w, m->fs[i]);
	(void)wbuf_put_varint(w, m->ntargets);
	for (i = 0; i < m->ntargets; i++) {
		if (m->targets[i].fs >= m->nfs)
			return -EINVAL;
		(void)wbuf_put_varint(w, m->targets[i].fs);
		(void)wbuf_put_str8(w, m->targets[i].name);
	}
	return wbuf_status(w);
}

int
msg_hello_decode(struct msg_hello *m, const uint8_t *p, size_t n,
    struct lh_err *err)
{
	uint64_t nfs, nt, fs;
	struct rbuf r;
	unsigned i;

	rbuf_init(&r, p, n);
	if (rbuf_get(&r, m->nonce, MSG_NONCE_LEN) < 0 ||
	    rbuf_get_u8(&r, &m->role) < 0 ||
	    get_text(&r, m->software, sizeof(m->software)) < 0 ||
	    rbuf_get_be64(&r, &m->time_ns) < 0 ||
	    rbuf_get_be32(&r, &m->interval) < 0 ||
	    rbuf_get_be64(&r, &m->caps) < 0 ||
	    msg_get_name(&r, m->name, sizeof(m->name)) < 0 ||
	    rbuf_get_varint(&r, &nfs) < 0)
		return BAD(err, "HELLO: truncated, or a bad name");
	if (!role_ok(m->role))
		return lh_err_set(err, 0, -EBADMSG,
		    "HELLO: role %u (1 gatherer, 2 aggregator, 3 relay)",
		    m->role);
	if (nfs > MSG_HELLO_FS_MAX)
		return BAD(err, "HELLO: too many filesystems");
	m->nfs = (uint16_t)nfs;
	for (i = 0; i < m->nfs; i++) {
		if (msg_get_name(&r, m->fs[i], sizeof(m->fs[i])) < 0)
			return BAD(err, "HELLO: bad filesystem name");
		/* Printable, so safe in the line. */
		if (!msg_fs_name_ok(m->fs[i]))
			return lh_err_set(err, 0, -EBADMSG,
			    "HELLO: filesystem name '%s' cannot be a Ganglia "
			    "metric name",
			    m->fs[i]);
	}
	if (msg_fs_repeated(m->fs, m->nfs) < m->nfs)
		return lh_err_set(err, 0, -EBADMSG,
		    "HELLO: filesystem '%s' named twice",
		    m->fs[msg_fs_repeated(m->fs, m->nfs)]);
	if (rbuf_get_varint(&r, &nt) < 0 || nt > MSG_HELLO_TGT_MAX)
		return BAD(err, "HELLO: bad target count");
	m->ntargets = (uint16_t)nt;
	for (i = 0; i < m->ntargets; i++) {
		if (rbuf_get_varint(&r, &fs) < 0 || fs >= m->nfs ||
		    msg_get_name(&r, m->targets[i].name,
		        sizeof(m->targets[i].name)) < 0)
			return BAD(err, "HELLO: bad target");
		m->targets[i].fs = (uint16_t)fs;
	}
	return msg_done(&r, err, "HELLO");
}

/* ---- ACK, BYE ------------------------------------------------------- */

int
msg_ack_encode(struct wbuf *w, const struct msg_ack *m)
{
	(void)wbuf_put_u8(w, m->kind);
	(void)wbuf_put_be64(w, m->seq);
	(void)wbuf_put_be64(w, m->batch);
	(void)wbuf_put_be64(w, m->time_ns);
	return wbuf_status(w);
}

int
msg_ack_decode(struct msg_ack *m, const uint8_t *p, size_t n,
    struct lh_err *err)
{
	struct rbuf r;

	rbuf_init(&r, p, n);
	if (rbuf_get_u8(&r, &m->kind) < 0 || rbuf_get_be64(&r, &m->seq) < 0 ||
	    rbuf_get_be64(&r, &m->batch) < 0 ||
	    rbuf_get_be64(&r, &m->time_ns) < 0)
		return BAD(err, "ACK: truncated");
	if (m->kind < MSG_ACK_HELLO || m->kind > MSG_ACK_DUPLICATE)
		return lh_err_set(err, 0, -EBADMSG, "ACK: unknown kind %u",
		    m->kind);
	return msg_done(&r, err, "ACK");
}

int
msg_bye_encode(struct wbuf *w, const struct msg_bye *m)
{
	(void)wbuf_put_u8(w, m->reason);
	(void)wbuf_put_str8(w, m->text);
	return wbuf_status(w);
}

int
msg_bye_decode(struct msg_bye *m, const uint8_t *p, size_t n,
    struct lh_err *err)
{
	struct rbuf r;

	rbuf_init(&r, p, n);
	if (rbuf_get_u8(&r, &m->reason) < 0 ||
	    get_text(&r, m->text, sizeof(m->text)) < 0)
		return BAD(err, "BYE: truncated or malformed");
	return msg_done(&r, err, "BYE");
}

int
msg_rec_check(const char *fs, const char *nid)
{
	static const struct msg_sweep zero;
	struct msg_sweep h = zero, back;
	struct msg_rec r;
	struct wbuf w;
	int rc;

	if (strlen(fs) >= sizeof(h.fs[0]))
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	h.batch = 1;
	h.nfs = 1;
	memcpy(h.fs[0], fs, strlen(fs) + 1);
	r.nid = nid;
	wbuf_init(&w, 0);
	rc = msg_sweep_encode(&w, &h, &r, 1);
	if (rc == 0)
		rc = msg_sweep_decode(&back, w.data, w.len, NULL, NULL, NULL);
	if (rc == 0 && back.ndropped != 0)
		rc = -EINVAL;
	wbuf_free(&w);
	return rc == -ENOMEM ? rc : rc < 0 ? -EINVAL : 0;
}
