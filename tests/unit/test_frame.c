/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The 40-byte frame header: its exact layout, and every check that must
 * happen before a receiver buffers the payload.  Sender ids were computed
 * with `printf %s NAME | sha256sum`.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "err.h"
#include "frame.h"
#include "hmac.h"
#include "testutil.h"
#include "wire.h"

static const struct frame_hdr sample = {
    .version = FRAME_VERSION,
    .type = FRAME_SWEEP,
    .flags = 0,
    .len = 0x01020304u,
    .key_id = 0xa1b2c3d4u,
    .sender_id = 0x1112131415161718ull,
    .seq = 0x2122232425262728ull,
    .sweep_id = 0x3132333435363738ull,
};

static const uint8_t sample_bytes[FRAME_HDR_LEN] = {
    0x4c, 0x48, 0x56, 0x44,                         /* "LHVD" */
    0x02, 0x04, 0x00, 0x00,                         /* version, type, flags */
    0x01, 0x02, 0x03, 0x04,                         /* len */
    0xa1, 0xb2, 0xc3, 0xd4,                         /* key id */
    0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, /* sender */
    0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, /* seq */
    0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, /* sweep id */
};

static void
assert_hdr_eq(const struct frame_hdr *a, const struct frame_hdr *b)
{
	ck_assert_uint_eq(a->version, b->version);
	ck_assert_uint_eq(a->type, b->type);
	ck_assert_uint_eq(a->flags, b->flags);
	ck_assert_uint_eq(a->len, b->len);
	ck_assert_uint_eq(a->key_id, b->key_id);
	ck_assert_uint_eq(a->sender_id, b->sender_id);
	ck_assert_uint_eq(a->seq, b->seq);
	ck_assert_uint_eq(a->sweep_id, b->sweep_id);
}

START_TEST(layout)
{
	uint8_t out[FRAME_HDR_LEN];
	struct frame_hdr h;
	struct lh_err err;

	memset(out, 0xee, sizeof(out));
	frame_hdr_encode(&sample, out);
	ck_assert(memcmp(out, sample_bytes, FRAME_HDR_LEN) == 0);
	memset(&h, 0, sizeof(h));
	lh_err_clear(&err);
	ck_assert_int_eq(frame_hdr_decode(&h, sample_bytes, FRAME_MAX_LIMIT,
	                     &err),
	    0);
	assert_hdr_eq(&h, &sample);
}
END_TEST

static const struct frame_hdr round_trips[] = {
    {FRAME_VERSION, FRAME_CHALLENGE, 0, 0, 0, 0, 0, 0},
    {FRAME_VERSION, FRAME_HELLO, 0, 200, 0xffffffffu, UINT64_MAX, 1, 0},
    {FRAME_VERSION, FRAME_ACK, 0, 25, 1, 2, 3, 4},
    {FRAME_VERSION, FRAME_BYE, FRAME_F_IGNORABLE, 1, 5, 6, 7, 8},
    {FRAME_VERSION, 127, FRAME_F_IGNORABLE, 4096 - FRAME_OVERHEAD, 0x80000000u,
        0x8000000000000000ull, UINT64_MAX, UINT64_MAX},
    {FRAME_VERSION, 255, 0, 0, 0, 0, 0, 0},
};

START_TEST(round_trip)
{
	const struct frame_hdr *want = &round_trips[_i];
	uint8_t buf[FRAME_HDR_LEN];
	struct frame_hdr h;
	struct lh_err err;

	frame_hdr_encode(want, buf);
	ck_assert_uint_eq(wire_be32(buf), FRAME_MAGIC);
	memset(&h, 0x5a, sizeof(h));
	lh_err_clear(&err);
	ck_assert_msg(frame_hdr_decode(&h, buf, FRAME_MIN_MAX, &err) == 0, "%s",
	    err.reason);
	assert_hdr_eq(&h, want);
	ck_assert_ptr_nonnull(frame_type_name(want->type));
}
END_TEST

struct bad_hdr {
	const char *what;
	size_t off; /* byte to change */
	uint8_t val;
	int want;
};

static const struct bad_hdr bad_hdrs[] = {
    {"magic byte 0", 0, 0x4d, -EBADMSG},
    {"magic byte 3", 3, 0x00, -EBADMSG},
    {"magic lower case", 1, 'h', -EBADMSG},
    {"version 0", 4, 0, -EPROTONOSUPPORT},
    {"version 1", 4, 1, -EPROTONOSUPPORT},
    {"version 3", 4, 3, -EPROTONOSUPPORT},
    {"version 255", 4, 255, -EPROTONOSUPPORT},
    {"flag bit 1", 7, 0x02, -EBADMSG},
    {"flag bit 15", 6, 0x80, -EBADMSG},
    {"flag bit 8", 6, 0x01, -EBADMSG},
    {"len top byte", 8, 0x01, -EMSGSIZE},
    {"len all ones", 8, 0xff, -EMSGSIZE},
};

START_TEST(rejects)
{
	const struct bad_hdr *c = &bad_hdrs[_i];
	struct frame_hdr h = sample;
	uint8_t buf[FRAME_HDR_LEN];
	struct lh_err err;
	int rc;

	h.len = 100;
	frame_hdr_encode(&h, buf);
	buf[c->off] = c->val;
	if (c->off == 8 && c->val == 0xff)
		memset(buf + 8, 0xff, 4);
	memset(&h, 0x5a, sizeof(h));
	lh_err_clear(&err);
	rc = frame_hdr_decode(&h, buf, FRAME_MAX_DEFAULT, &err);
	ck_assert_msg(rc == c->want, "%s: %d, expected %d", c->what, rc,
	    c->want);
	ck_assert_msg(err.reason[0] != '\0', "%s: no reason", c->what);
}
END_TEST

/* A version 1 peer is told what to do (issue 15, item 6). */
START_TEST(version_1_line)
{
	struct frame_hdr h = sample;
	uint8_t buf[FRAME_HDR_LEN];
	struct lh_err err;

	frame_hdr_encode(&h, buf);
	buf[4] = 1;
	lh_err_clear(&err);
	ck_assert_int_eq(frame_hdr_decode(&h, buf, FRAME_MAX_DEFAULT, &err),
	    -EPROTONOSUPPORT);
	ck_assert_str_eq(err.reason,
	    "protocol version 1: upgrade this peer to lharvestd with "
	    "protocol 2");
}
END_TEST

/* The length is checked against max_frame from the header alone, with the
 * header and MAC counted in. */
START_TEST(length_limit)
{
	static const size_t maxes[] = {FRAME_MIN_MAX, 65536, FRAME_MAX_DEFAULT,
	    FRAME_MAX_LIMIT};
	struct frame_hdr h = sample, out;
	uint8_t buf[FRAME_HDR_LEN];
	struct lh_err err;
	size_t i;

	for (i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		h.len = (uint32_t)(maxes[i] - FRAME_OVERHEAD);
		frame_hdr_encode(&h, buf);
		ck_assert_int_eq(frame_hdr_decode(&out, buf, maxes[i], &err),
		    0);
		ck_assert_uint_eq(out.len, h.len);
		h.len++;
		frame_hdr_encode(&h, buf);
		lh_err_clear(&err);
		ck_assert_int_eq(frame_hdr_decode(&out, buf, maxes[i], &err),
		    -EMSGSIZE);
		ck_assert(err.reason[0] != '\0');
	}
	/* A length that would wrap a 32-bit sum. */
	h.len = UINT32_MAX;
	frame_hdr_encode(&h, buf);
	ck_assert_int_eq(frame_hdr_decode(&out, buf, FRAME_MAX_LIMIT, &err),
	    -EMSGSIZE);
	h.len = UINT32_MAX - FRAME_OVERHEAD + 1;
	frame_hdr_encode(&h, buf);
	ck_assert_int_eq(frame_hdr_decode(&out, buf, FRAME_MAX_LIMIT, &err),
	    -EMSGSIZE);
	/* Any type number passes the header check: the session decides. */
	h.len = 0;
	h.type = 200;
	frame_hdr_encode(&h, buf);
	ck_assert_int_eq(frame_hdr_decode(&out, buf, FRAME_MIN_MAX, &err), 0);
}
END_TEST

START_TEST(sender_id)
{
	uint8_t d[SHA256_LEN];
	uint64_t want = 0;
	int i;

	/* printf %s oss1 | sha256sum: 00bab0664ee5480b... */
	ck_assert_uint_eq(frame_sender_id("oss1"), 0x00bab0664ee5480bull);
	ck_assert_uint_eq(frame_sender_id("oss1"), frame_sender_id("oss1"));
	/* printf %s '' | sha256sum: e3b0c44298fc1c14... */
	ck_assert_uint_eq(frame_sender_id(""), 0xe3b0c44298fc1c14ull);
	ck_assert_uint_ne(frame_sender_id("oss1"), frame_sender_id("oss2"));
	ck_assert_int_eq(sha256("mds-a.example.org", 17, d), 0);
	for (i = 0; i < 8; i++)
		want = want << 8 | d[i];
	ck_assert_uint_eq(frame_sender_id("mds-a.example.org"), want);
}
END_TEST

START_TEST(type_names)
{
	static const uint8_t types[] = {FRAME_CHALLENGE, FRAME_HELLO, FRAME_ACK,
	    FRAME_SWEEP, FRAME_BYE, 0, 6, 127, 255};
	size_t i, j;

	for (i = 0; i < sizeof(types); i++)
		ck_assert_ptr_nonnull(frame_type_name(types[i]));
	for (i = 0; i < 5; i++)
		for (j = i + 1; j < 5; j++)
			ck_assert_str_ne(frame_type_name(types[i]),
			    frame_type_name(types[j]));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, layout);
	tcase_add_loop_test(tc, round_trip, 0,
	    sizeof(round_trips) / sizeof(round_trips[0]));
	tcase_add_test(tc, version_1_line);
	tcase_add_loop_test(tc, rejects, 0,
	    sizeof(bad_hdrs) / sizeof(bad_hdrs[0]));
	tcase_add_test(tc, length_limit);
	tcase_add_test(tc, sender_id);
	tcase_add_test(tc, type_names);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
