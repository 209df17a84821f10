/* SPDX-License-Identifier: BSD-2-Clause */
/* The gatherer's and its stats reader's messages: each kind end to end,
 * and what either side must refuse (paths in NID names, lengths out of
 * bounds, bytes beside a failed read, anything cut or left over). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "statsfeed.h"
#include "testutil.h"
#include "wire.h"

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The body of the only message in w, checked against its header. */
static const uint8_t *
body(const struct wbuf *w, size_t *ret_len)
{
	size_t len;

	ck_assert_int_eq(sfeed_msg_len(w->data, w->len, &len), 0);
	ck_assert_uint_eq(len + 4, w->len);
	*ret_len = len;
	return w->data + 4;
}

START_TEST(requests)
{
	struct sfeed_req q;
	struct wbuf w;
	struct rbuf r;
	char nid[LTREE_NID_MAX];
	const uint8_t *b;
	size_t len, off;

	wbuf_init(&w, 0);
	ck_assert_int_eq(sfeed_put_req(&w, SFEED_REQ_TARGETS, 0, false), 0);
	b = body(&w, &len);
	ck_assert_int_eq(sfeed_decode_req(b, len, &q, NULL), 0);
	ck_assert_int_eq(q.type, SFEED_REQ_TARGETS);

	wbuf_reset(&w);
	ck_assert_int_eq(sfeed_put_req(&w, SFEED_REQ_EXPORTS, 7, true), 0);
	b = body(&w, &len);
	ck_assert_int_eq(sfeed_decode_req(b, len, &q, NULL), 0);
	ck_assert_int_eq(q.type, SFEED_REQ_EXPORTS);
	ck_assert_uint_eq(q.target, 7);
	ck_assert(q.with_uuid);

	wbuf_reset(&w);
	ck_assert_int_eq(sfeed_begin_nids(&w, 3, &off), 0);
	ck_assert_int_eq(sfeed_add_nid(&w, "10.1.0.1@o2ib"), 0);
	ck_assert_int_eq(sfeed_add_nid(&w, "12@gni"), 0);
	ck_assert_int_eq(sfeed_add_nid(&w, ".."), -EINVAL);
	ck_assert_int_eq(sfeed_add_nid(&w, "a/b"), -EINVAL);
	ck_assert_int_eq(sfeed_end_nids(&w, off), 0);
	b = body(&w, &len);
	ck_assert_int_eq(sfeed_decode_req(b, len, &q, NULL), 0);
	ck_assert_int_eq(q.type, SFEED_REQ_NIDS);
	ck_assert_uint_eq(q.target, 3);
	rbuf_init(&r, q.nids, q.nids_len);
	ck_assert_int_eq(sfeed_next_nid(&r, nid, sizeof(nid)), 0);
	ck_assert_str_eq(nid, "10.1.0.1@o2ib");
	ck_assert_int_eq(sfeed_next_nid(&r, nid, sizeof(nid)), 0);
	ck_assert_str_eq(nid, "12@gni");
	ck_assert_int_eq(sfeed_next_nid(&r, nid, sizeof(nid)), 1);
	wbuf_free(&w);
}
END_TEST

START_TEST(bad_requests)
{
	/* A gatherer that asks the reader for a path: "../../etc/shadow"
	 * as a NID, written by hand since sfeed_add_nid() refuses it. */
	static const uint8_t path_nid[] = {SFEED_REQ_NIDS, 0, 0, 0, 0, 16, '.',
	    '.', '/', '.', '.', '/', 'e', 't', 'c', '/', 's', 'h', 'a', 'd',
	    'o', 'w'};
	static const uint8_t dotdot[] = {SFEED_REQ_NIDS, 0, 0, 0, 0, 2, '.',
	    '.'};
	static const uint8_t flag2[] = {SFEED_REQ_EXPORTS, 0, 0, 0, 1, 2};
	static const uint8_t extra[] = {SFEED_REQ_TARGETS, 0};
	static const uint8_t unknown[] = {SFEED_EXPORT};
	static const uint8_t cut[] = {SFEED_REQ_EXPORTS, 0, 0};
	char nid[LTREE_NID_MAX];
	struct sfeed_req q;
	struct lh_err err;
	struct rbuf r;

	ck_assert_int_eq(sfeed_decode_req(path_nid, sizeof(path_nid), &q, NULL),
	    0);
	rbuf_init(&r, q.nids, q.nids_len);
	ck_assert_int_eq(sfeed_next_nid(&r, nid, sizeof(nid)), -EBADMSG);
	ck_assert_int_eq(sfeed_decode_req(dotdot, sizeof(dotdot), &q, NULL), 0);
	rbuf_init(&r, q.nids, q.nids_len);
	ck_assert_int_eq(sfeed_next_nid(&r, nid, sizeof(nid)), -EBADMSG);
	ck_assert_int_eq(sfeed_decode_req(flag2, sizeof(flag2), &q, &err),
	    -EBADMSG);
	ck_assert_str_eq(err.reason, "malformed exports request");
	ck_assert_int_eq(sfeed_decode_req(extra, sizeof(extra), &q, &err),
	    -EBADMSG);
	ck_assert_str_eq(err.reason, "1 bytes after a request");
	ck_assert_int_eq(sfeed_decode_req(unknown, sizeof(unknown), &q, &err),
	    -EBADMSG);
	ck_assert_str_eq(err.reason, "unknown request type 17");
	ck_assert_int_eq(sfeed_decode_req(cut, sizeof(cut), &q, NULL),
	    -EBADMSG);
	ck_assert_int_eq(sfeed_decode_req(cut, 0, &q, NULL), -EBADMSG);
}
END_TEST

START_TEST(records)
{
	static const char stats[] = "snapshot_time 1.5 secs.nsecs\n";
	static const char uuid[] = "c5f1e1a0-0000\n";
	struct sfeed_target t, *rt;
	struct sfeed_export e;
	struct sfeed_rec rec;
	struct wbuf w;
	const uint8_t *b;
	size_t len;

	memset(&t, 0, sizeof(t));
	(void)snprintf(t.name, sizeof(t.name), "scratch-OST0001");
	(void)snprintf(t.fs, sizeof(t.fs), "scratch");
	t.kind = LH_TARGET_OST;
	t.dev = 0x801;
	t.ino = 1ULL << 40;
	(void)snprintf(t.path, sizeof(t.path),
	    "/sys/kernel/debug/lustre/obdfilter/scratch-OST0001/exports");
	wbuf_init(&w, 0);
	ck_assert_int_eq(sfeed_put_target(&w, &t), 0);
	b = body(&w, &len);
	ck_assert_int_eq(sfeed_decode_rec(b, len, &rec, NULL), 0);
	ck_assert_int_eq(rec.type, SFEED_TARGET);
	rt = &rec.target;
	ck_assert_str_eq(rt->name, t.name);
	ck_assert_str_eq(rt->fs, t.fs);
	ck_assert_int_eq(rt->kind, LH_TARGET_OST);
	ck_assert_uint_eq(rt->dev, t.dev);
	ck_assert_uint_eq(rt->ino, t.ino);
	ck_assert_str_eq(rt->path, t.path);

	memset(&e, 0, sizeof(e));
	(void)snprintf(e.nid, sizeof(e.nid), "10.1.0.1@o2ib");
	e.ino = 42;
	e.stats = stats;
	e.stats_len = sizeof(stats) - 1;
	e.has_uuid = true;
	e.uuid = uuid;
	e.uuid_len = sizeof(uuid) - 1;
	wbuf_reset(&w);
	ck_assert_int_eq(sfeed_put_export(&w, &e), 0);
	b = body(&w, &len);
	ck_assert_int_eq(sfeed_decode_rec(b, len, &rec, NULL), 0);
	ck_assert_int_eq(rec.type, SFEED_EXPORT);
	ck_assert_str_eq(rec.exp.nid, "10.1.0.1@o2ib");
	ck_assert_uint_eq(rec.exp.ino, 42);
	ck_assert_int_eq(rec.exp.stats_rc, 0);
	ck_assert_uint_eq(rec.exp.stats_len, e.stats_len);
	ck_assert(memcmp(rec.exp.stats, stats, e.stats_len) == 0);
	ck_assert(rec.exp.has_uuid);
	ck_assert_uint_eq(rec.exp.uuid_len, e.uuid_len);
	ck_assert(memcmp(rec.exp.uuid, uuid, e.uuid_len) == 0);

	/* A failed read carries its errno and no bytes. */
	e.stats_rc = -ENOENT;
	e.has_uuid = false;
	wbuf_reset(&w);
	ck_assert_int_eq(sfeed_put_export(&w, &e), 0);
	b = body(&w, &len);
	ck_assert_int_eq(sfeed_decode_rec(b, len, &rec, NULL), 0);
	ck_assert_int_eq(rec.exp.stats_rc, -ENOENT);
	ck_assert_uint_eq(rec.exp.stats_len, 0);
	ck_assert(!rec.exp.has_uuid);

	wbuf_reset(&w);
	ck_assert_int_eq(sfeed_put_end(&w, -EACCES), 0);
	b = body(&w, &len);
	ck_assert_int_eq(sfeed_decode_rec(b, len, &rec, NULL), 0);
	ck_assert_int_eq(rec.type, SFEED_END);
	ck_assert_int_eq(rec.end_rc, -EACCES);
	wbuf_free(&w);
}
END_TEST

START_TEST(bad_records)
{
	/* Bytes beside a failed read; a length past the end; a NID that is
	 * a path; an errno out of range; a kind that is neither. */
	static const uint8_t bytes_on_error[] = {SFEED_EXPORT, 1, 'x', 0, 0, 0,
	    0, 0, 0, 0, 0,   /* ino */
	    0, 0, 0, 2,      /* ENOENT */
	    0, 0, 0, 1, 'a', /* a byte all the same */
	    0};
	static const uint8_t past_end[] = {SFEED_EXPORT, 1, 'x', 0, 0, 0, 0, 0,
	    0, 0, 0,          /* ino */
	    0, 0, 0, 0,       /* read */
	    0, 0, 0, 9, 'a'}; /* 9 bytes, 1 there */
	static const uint8_t path_nid[] = {SFEED_EXPORT, 3, '.', '.', '/', 0, 0,
	    0, 0, 0, 0, 0, 0,       /* ino */
	    0, 0, 0, 0, 0, 0, 0, 0, /* read, no bytes */
	    0};
	static const uint8_t big_errno[] = {SFEED_END, 0, 0, 0x10, 0};
	static const uint8_t bad_kind[] = {SFEED_TARGET, 1, 'a', 1, 'a', 7, 0,
	    0, 0, 0, 0, 0, 0, 0,    /* dev */
	    0, 0, 0, 0, 0, 0, 0, 0, /* ino */
	    0, 1, '/'};
	static const uint8_t trailing[] = {SFEED_END, 0, 0, 0, 0, 0};
	struct sfeed_rec rec;
	struct lh_err err;
	uint8_t hdr[4] = {0, 0, 0, 0};
	size_t len;

	ck_assert_int_eq(sfeed_decode_rec(bytes_on_error,
	                     sizeof(bytes_on_error), &rec, &err),
	    -EBADMSG);
	ck_assert_str_eq(err.reason, "malformed export record");
	ck_assert_int_eq(sfeed_decode_rec(past_end, sizeof(past_end), &rec,
	                     NULL),
	    -EBADMSG);
	ck_assert_int_eq(sfeed_decode_rec(path_nid, sizeof(path_nid), &rec,
	                     NULL),
	    -EBADMSG);
	ck_assert_int_eq(sfeed_decode_rec(big_errno, sizeof(big_errno), &rec,
	                     NULL),
	    -EBADMSG);
	ck_assert_int_eq(sfeed_decode_rec(bad_kind, sizeof(bad_kind), &rec,
	                     &err),
	    -EBADMSG);
	ck_assert_str_eq(err.reason, "malformed target a");
	ck_assert_int_eq(sfeed_decode_rec(trailing, sizeof(trailing), &rec,
	                     &err),
	    -EBADMSG);
	ck_assert_str_eq(err.reason, "1 bytes after a record");

	/* Message lengths: none, one too many, and a header not all there. */
	ck_assert_int_eq(sfeed_msg_len(hdr, 4, &len), -EBADMSG);
	put_be32(hdr, (uint32_t)SFEED_MSG_MAX + 1);
	ck_assert_int_eq(sfeed_msg_len(hdr, 4, &len), -EBADMSG);
	put_be32(hdr, (uint32_t)SFEED_MSG_MAX);
	ck_assert_int_eq(sfeed_msg_len(hdr, 4, &len), 0);
	ck_assert_uint_eq(len, SFEED_MSG_MAX);
	ck_assert_int_eq(sfeed_msg_len(hdr, 3, &len), -EAGAIN);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("statsfeed");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, requests);
	tcase_add_test(tc, bad_requests);
	tcase_add_test(tc, records);
	tcase_add_test(tc, bad_records);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
