/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The counters' file (hosttotals.h; the format is in docs/reliability.md):
 * the marks, every name once, then the filesystems' and the rows'
 * counters by name index, all as varints (most op counters are small,
 * most rows were in the last sweep).  The last sweep's rates are not
 * kept: a process that starts has not seen that sweep.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "hostsum.h"
#include "hosttotals_int.h"
#include "statefile.h"
#include "wire.h"

#define HT_MAGIC   "LHHT"
#define HT_VERSION 1
#define HT_HAS_OPS 0x01 /* the metadata op counters follow */
#define NAME_BUF   256  /* any str8 */

#define BAD(err, what) lh_err_set((err), 0, -EBADMSG, "damaged: %s", (what))

/* The counters: six varints, a flags byte, the op counters if any. */
static void
put_counts(struct wbuf *w, const struct iocount *c, const uint64_t *ops)
{
	uint64_t v[IOCOUNT_N];
	bool any = false;
	unsigned i;

	iocount_to_array(c, v);
	for (i = 0; i < IOCOUNT_N; i++)
		(void)wbuf_put_varint(w, v[i]);
	for (i = 0; i < MDOPS_N; i++)
		any = any || ops[i] != 0;
	(void)wbuf_put_u8(w, any ? HT_HAS_OPS : 0);
	for (i = 0; i < MDOPS_N && any; i++)
		(void)wbuf_put_varint(w, ops[i]);
}

static uint32_t
name_idx(const struct hosttotals *t, const char *s)
{
	uint32_t i = 0;

	(void)ht_strs_find(&t->strs, s, &i);
	return i;
}

static void
put_body(struct statefile_out *o, const struct hosttotals *t)
{
	struct wbuf *w = statefile_buf(o);
	size_t i;

	(void)wbuf_put(w, HT_MAGIC, 4);
	(void)wbuf_put_be32(w, HT_VERSION);
	(void)wbuf_put_be64(w, clock_realtime_ns());
	(void)wbuf_put_varint(w, t->last_sweep);
	(void)wbuf_put_varint(w, t->nmarks);
	for (i = 0; i < t->nmarks; i++) {
		(void)wbuf_put_str8(w, t->marks[i].sender);
		(void)wbuf_put_varint(w, t->marks[i].batch);
	}
	(void)wbuf_put_varint(w, t->strs.n);
	for (i = 0; i < t->strs.n; i++) {
		(void)wbuf_put_str8(w, t->strs.v[i]);
		statefile_maybe_flush(o);
	}
	(void)wbuf_put_varint(w, t->nfs);
	for (i = 0; i < t->nfs; i++) {
		const struct hosttotals_fs *f = &t->fss[i];

		(void)wbuf_put_varint(w, name_idx(t, f->fs));
		(void)wbuf_put_varint(w, t->last_sweep - f->last_sweep);
		(void)wbuf_put_varint(w, f->clients);
		put_counts(w, &f->total, f->op_total);
	}
	(void)wbuf_put_varint(w, t->n);
	for (i = 0; i < t->n; i++) {
		const struct hosttotals_row *r = &t->rows[i];

		(void)wbuf_put_varint(w, name_idx(t, r->host));
		(void)wbuf_put_varint(w, name_idx(t, r->fs));
		(void)wbuf_put_varint(w, t->last_sweep - r->last_sweep);
		put_counts(w, &r->total, r->op_total);
		statefile_maybe_flush(o);
	}
}

int
hosttotals_save(const struct hosttotals *t, const char *path,
    struct lh_err *err)
{
	struct statefile_out *o;
	int rc;

	rc = statefile_create(path, &o, err);
	if (rc < 0)
		return rc;
	put_body(o, t);
	return statefile_commit(o, err);
}

static int
get_counts(struct rbuf *r, struct iocount *c, uint64_t *ops)
{
	uint64_t v[IOCOUNT_N];
	uint8_t flags;
	unsigned i;

	for (i = 0; i < IOCOUNT_N; i++)
		if (rbuf_get_varint(r, &v[i]) < 0)
			return -1;
	iocount_from_array(c, v);
	if (rbuf_get_u8(r, &flags) < 0 || (flags & ~HT_HAS_OPS) != 0)
		return -1;
	for (i = 0; i < MDOPS_N && (flags & HT_HAS_OPS) != 0; i++)
		if (rbuf_get_varint(r, &ops[i]) < 0)
			return -1;
	return 0;
}

/* A name index, and how far behind the last sweep. */
static int
get_ref(struct rbuf *r, const struct hosttotals *t, const char **ret)
{
	uint64_t i;

	if (rbuf_get_varint(r, &i) < 0 || i >= t->strs.n)
		return -1;
	*ret = t->strs.v[i];
	return 0;
}

static int
get_age(struct rbuf *r, const struct hosttotals *t, uint64_t *ret)
{
	uint64_t age;

	if (rbuf_get_varint(r, &age) < 0 || age > t->last_sweep)
		return -1;
	*ret = t->last_sweep - age;
	return 0;
}

static int
get_marks(struct rbuf *r, struct hosttotals *t, struct lh_err *err)
{
	char sender[MSG_NAME_MAX];
	uint64_t n, i, batch;

	if (rbuf_get_varint(r, &n) < 0 || n > r->len / 2)
		return BAD(err, "mark count");
	for (i = 0; i < n; i++) {
		if (rbuf_get_str8(r, sender, sizeof(sender)) < 0 ||
		    sender[0] == '\0' || rbuf_get_varint(r, &batch) < 0 ||
		    batch == 0)
			return BAD(err, "mark");
		if (hosttotals_mark(t, sender, batch) < 0)
			return -ENOMEM;
		if (t->nmarks != i + 1)
			return BAD(err, "a sender marked twice");
	}
	return 0;
}

static int
get_names(struct rbuf *r, struct hosttotals *t, struct lh_err *err)
{
	char name[NAME_BUF];
	uint64_t n, i;

	if (rbuf_get_varint(r, &n) < 0 || n > r->len / 2)
		return BAD(err, "name count");
	for (i = 0; i < n; i++) {
		if (rbuf_get_str8(r, name, sizeof(name)) < 0 ||
		    name[0] == '\0' || strlen(name) >= HOSTSUM_HOST_MAX)
			return BAD(err, "name");
		if (ht_strs_add(&t->strs, name) == NULL)
			return -ENOMEM;
		if (t->strs.n != i + 1)
			return BAD(err, "a name twice");
	}
	return 0;
}

static int
get_fss(struct rbuf *r, struct hosttotals *t, struct lh_err *err)
{
	struct hosttotals_fs *f;
	uint64_t n, i, clients, last;
	const char *fs;

	if (rbuf_get_varint(r, &n) < 0 || n > r->len / 9)
		return BAD(err, "filesystem count");
	for (i = 0; i < n; i++) {
		if (get_ref(r, t, &fs) < 0 || strlen(fs) >= MSG_FS_MAX ||
		    get_age(r, t, &last) < 0 ||
		    rbuf_get_varint(r, &clients) < 0)
			return BAD(err, "filesystem");
		f = ht_fs_get(t, fs);
		if (f == NULL)
			return -ENOMEM;
		if (t->nfs != i + 1)
			return BAD(err, "a filesystem twice");
		f->last_sweep = last;
		f->clients = (size_t)clients;
		if (get_counts(r, &f->total, f->op_total) < 0)
			return BAD(err, "filesystem counters");
	}
	return 0;
}

static int
get_rows(struct rbuf *r, struct hosttotals *t, struct lh_err *err)
{
	struct hosttotals_row *e;
	const char *host, *fs;
	uint64_t n, i, last;

	if (rbuf_get_varint(r, &n) < 0 || n > r->len / 10)
		return BAD(err, "row count");
	for (i = 0; i < n; i++) {
		if (get_ref(r, t, &host) < 0 || get_ref(r, t, &fs) < 0 ||
		    strlen(fs) >= MSG_FS_MAX || get_age(r, t, &last) < 0)
			return BAD(err, "row");
		e = ht_row_get(t, host, fs);
		if (e == NULL)
			return -ENOMEM;
		if (t->n != i + 1)
			return BAD(err, "a row twice");
		e->last_sweep = last;
		if (get_counts(r, &e->total, e->op_total) < 0)
			return BAD(err, "row counters");
	}
	return 0;
}

static int
get_header(struct rbuf *r, struct hosttotals *t, struct lh_err *err)
{
	uint8_t magic[4];
	uint32_t version;
	uint64_t saved;

	if (rbuf_get(r, magic, 4) < 0 || memcmp(magic, HT_MAGIC, 4) != 0)
		return BAD(err, "not a counters file");
	if (rbuf_get_be32(r, &version) < 0)
		return BAD(err, "header");
	if (version != HT_VERSION)
		return lh_err_set(err, 0, -EBADMSG,
		    "%scounters format %u, this version reads %d",
		    version > HT_VERSION ? "written by a newer lharvestd: " :
		                           "",
		    version, HT_VERSION);
	if (rbuf_get_be64(r, &saved) < 0 ||
	    rbuf_get_varint(r, &t->last_sweep) < 0)
		return BAD(err, "header");
	return 0;
}

int
hosttotals_decode(struct hosttotals *t, const uint8_t *buf, size_t n,
    struct lh_err *err)
{
	struct rbuf r;
	size_t body;
	int rc;

	ht_clear(t);
	rc = statefile_verify(buf, n, &body, err);
	if (rc < 0)
		return rc;
	rbuf_init(&r, buf, body);
	rc = get_header(&r, t, err);
	if (rc == 0)
		rc = get_marks(&r, t, err);
	if (rc == 0)
		rc = get_names(&r, t, err);
	if (rc == 0)
		rc = get_fss(&r, t, err);
	if (rc == 0)
		rc = get_rows(&r, t, err);
	if (rc == 0 && r.len != 0)
		rc = BAD(err, "trailing bytes");
	if (rc == -ENOMEM)
		(void)lh_err_set(err, 0, -ENOMEM, "out of memory");
	if (rc < 0)
		ht_clear(t);
	return rc;
}

int
hosttotals_load(struct hosttotals *t, const char *path, struct lh_err *err)
{
	uint8_t *buf;
	size_t len;
	int rc;

	ht_clear(t);
	rc = statefile_read(path, &buf, &len, err);
	if (rc < 0)
		return rc;
	rc = hosttotals_decode(t, buf, len, err);
	free(buf);
	return rc;
}
