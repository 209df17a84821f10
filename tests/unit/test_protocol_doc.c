/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * docs/protocol.md's worked example is real: rebuild every frame of it
 * from the documented inputs and compare byte for byte, and run the
 * documented bytes through both ends of a session.  A change to the wire
 * format that forgets the document fails here.
 *
 * To regenerate the example after a change of the format, run
 * `LH_PROTOCOL_DOC_PRINT=1 build/tests/test_protocol_doc`: it prints every
 * block as section 7 shows it, ready to paste, and the session keys.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hmac.h"
#include "keyfile.h"
#include "msg.h"
#include "session.h"
#include "testutil.h"
#include "wire.h"

#define DOC LH_CONF_DIR "/../docs/protocol.md"
#define KEY "lharvestd-example-key-0123456789\n"
#define T0  1700000000000000000ULL

struct block {
	uint8_t b[512];
	size_t n;
};

/* The hex dump under the heading that starts with title. */
static void
doc_block(const char *doc, const char *title, struct block *out)
{
	const char *p = strstr(doc, title), *end;

	ck_assert_msg(p != NULL, "no '%s' in %s", title, DOC);
	p = strstr(p, "```\n");
	ck_assert_ptr_nonnull(p);
	p += 4;
	end = strstr(p, "```");
	ck_assert_ptr_nonnull(end);
	out->n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *q = p + 4; /* skip the offset */

		while (q < nl) {
			unsigned v;
			char hex[3];

			while (q < nl && *q == ' ')
				q++;
			if (q + 2 > nl)
				break;
			hex[0] = q[0];
			hex[1] = q[1];
			hex[2] = '\0';
			v = (unsigned)strtoul(hex, NULL, 16);
			ck_assert_uint_lt(out->n, sizeof(out->b));
			out->b[out->n++] = (uint8_t)v;
			q += 2;
		}
		p = nl + 1;
	}
}

/* The block as the document shows it, on stdout, when asked. */
static void
print_block(const struct wbuf *w, const char *what)
{
	size_t i;

	if (getenv("LH_PROTOCOL_DOC_PRINT") == NULL)
		return;
	(void)printf("#### %s (%zu bytes)\n\n```\n", what, w->len);
	for (i = 0; i < w->len; i++) {
		if (i % 16 == 0)
			(void)printf("%s%04zx ", i > 0 ? "\n" : "", i);
		(void)printf(" %02x", w->data[i]);
	}
	(void)printf("\n```\n\n");
	(void)fflush(stdout);
}

static void
same(const struct wbuf *w, struct block *b, const char *what)
{
	print_block(w, what);
	/* Printing: go on with the new bytes, to print every block. */
	if (getenv("LH_PROTOCOL_DOC_PRINT") != NULL) {
		ck_assert_uint_le(w->len, sizeof(b->b));
		memcpy(b->b, w->data, w->len);
		b->n = w->len;
	}
	ck_assert_msg(w->len == b->n && memcmp(w->data, b->b, b->n) == 0,
	    "%s: the code no longer produces the documented bytes", what);
}

/* The session keys the document gives, as the code derives them. */
static void
same_keys(const char *doc, const struct session *s)
{
	static const char *const labels[2] = {"connector to listener `",
	    "listener to connector `"};
	const uint8_t *keys[2] = {s->skey, s->skey_l2c};
	char hex[2 * HMAC_LEN + 1];
	int k, i;

	for (k = 0; k < 2; k++) {
		const char *p = strstr(doc, labels[k]);

		for (i = 0; i < HMAC_LEN; i++)
			(void)snprintf(hex + 2 * i, 3, "%02x", keys[k][i]);
		if (getenv("LH_PROTOCOL_DOC_PRINT") != NULL)
			(void)printf("%s%s`\n", labels[k], hex);
		if (getenv("LH_PROTOCOL_DOC_PRINT") != NULL)
			continue;
		ck_assert_msg(p != NULL, "no session key in %s", DOC);
		ck_assert_msg(strncmp(p + strlen(labels[k]), hex,
		                  2 * HMAC_LEN) == 0,
		    "%s: the document's session key is not the code's",
		    labels[k]);
	}
}

static int
rec_cb(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	int *n = arg;

	(void)h;
	if (strcmp(r->nid, "27@gni") == 0) {
		ck_assert_uint_eq(r->d.write_bytes, 8388608);
		ck_assert_uint_eq(r->d.write_ops, 2);
		ck_assert_uint_eq(r->d.oss_ops, 2);
		ck_assert_uint_eq(r->span_us, 19999500);
	} else if (strcmp(r->nid, "10.1.2.3@o2ib") == 0) {
		ck_assert_uint_eq(r->d.read_bytes, 4194304);
		ck_assert_uint_eq(r->d.write_bytes, 1048576);
		ck_assert_uint_eq(r->d.oss_ops, 3);
		ck_assert_uint_eq(r->span_us, 20000000);
	} else {
		ck_assert_str_eq(r->nid, "10.1.2.5@o2ib");
		ck_assert_uint_eq(r->d.read_bytes + r->d.oss_ops, 0);
	}
	(*n)++;
	return 0;
}

START_TEST(worked_example)
{
	static struct msg_hello hello;
	struct block chal, hel, ack1, sweep, ack2;
	struct session L, C;
	struct session_frame f;
	struct msg_challenge ch;
	struct msg_sweep sw;
	struct msg_ack a;
	struct keyring kr;
	struct hmac_ctx *h = hmac_new();
	struct wbuf w, pl;
	struct lh_err err;
	size_t len, need;
	char *doc = tu_read_file(DOC, &len);
	int i, nrec = 0;
	struct msg_rec recs[3] = {
	    {0, "10.1.2.3@o2ib", {4194304, 1048576, 1, 1, 3, 0}, 20000000, {0},
	        false, NULL},
	    {0, "10.1.2.5@o2ib", {0, 0, 0, 0, 0, 0}, 20000000, {0}, false,
	        NULL},
	    {0, "27@gni", {0, 8388608, 0, 2, 2, 0}, 19999500, {0}, false, NULL},
	};

	doc_block(doc, "#### CHALLENGE", &chal);
	doc_block(doc, "#### HELLO", &hel);
	doc_block(doc, "#### ACK of HELLO", &ack1);
	doc_block(doc, "#### SWEEP", &sweep);
	doc_block(doc, "#### ACK of the SWEEP", &ack2);
	ck_assert_int_eq(keyring_parse(&kr, KEY, strlen(KEY), &err), 0);
	ck_assert_uint_eq(kr.keys[0].id, 0x8a3d3ec4);
	ck_assert_int_eq(session_init(&L, SESSION_LISTENER, &kr, h, "head1", 0),
	    0);
	ck_assert_int_eq(session_init(&C, SESSION_CONNECTOR, &kr, h, "oss1", 0),
	    0);
	wbuf_init(&w, 0);
	wbuf_init(&pl, 0);

	memset(&ch, 0, sizeof(ch));
	for (i = 0; i < MSG_NONCE_LEN; i++)
		ch.nonce[i] = (uint8_t)i;
	(void)snprintf(ch.name, sizeof(ch.name), "head1");
	ch.role = MSG_ROLE_AGGREGATOR;
	ch.caps = MSG_CAP_SWEEP;
	ch.time_ns = T0;
	ck_assert_int_eq(session_challenge(&L, &ch, &w), 0);
	same(&w, &chal, "CHALLENGE, head1 to oss1");
	ck_assert_int_eq(session_input(&C, chal.b, chal.n, &f, &need, &err),
	    (int)chal.n);

	memset(&hello, 0, sizeof(hello));
	for (i = 0; i < MSG_NONCE_LEN; i++)
		hello.nonce[i] = (uint8_t)(0x20 + i);
	(void)snprintf(hello.name, sizeof(hello.name), "oss1");
	(void)snprintf(hello.software, sizeof(hello.software),
	    "lharvestd 0.1.0");
	hello.role = MSG_ROLE_GATHERER;
	hello.time_ns = T0 + 250000000;
	hello.interval = 20;
	hello.caps = MSG_CAP_SWEEP;
	hello.nfs = 1;
	(void)snprintf(hello.fs[0], sizeof(hello.fs[0]), "scratch");
	hello.ntargets = 2;
	(void)snprintf(hello.targets[0].name, MSG_TARGET_MAX,
	    "scratch-OST0000");
	(void)snprintf(hello.targets[1].name, MSG_TARGET_MAX,
	    "scratch-OST0001");
	wbuf_reset(&w);
	ck_assert_int_eq(session_hello(&C, &hello, &w), 0);
	same(&w, &hel, "HELLO, oss1 to head1");
	ck_assert_int_eq(session_input(&L, hel.b, hel.n, &f, &need, &err),
	    (int)hel.n);
	ck_assert_str_eq(L.hello->name, "oss1");

	a = (struct msg_ack){MSG_ACK_HELLO, f.hdr.seq, 0, T0 + 300000000};
	ck_assert_int_eq(msg_ack_encode(&pl, &a), 0);
	wbuf_reset(&w);
	ck_assert_int_eq(session_send(&L, FRAME_ACK, 0, 0, pl.data, pl.len, &w),
	    0);
	same(&w, &ack1, "ACK of HELLO, head1 to oss1");
	same_keys(doc, &L);
	ck_assert_int_eq(session_input(&C, ack1.b, ack1.n, &f, &need, &err),
	    (int)ack1.n);
	ck_assert_int_eq(C.state, SESSION_OPEN);

	memset(&sw, 0, sizeof(sw));
	sw.batch = 1;
	sw.first_sweep = 1700000020;
	sw.start_ns = T0 + 12345000;
	sw.span_us = 20000000;
	sw.nfs = 1;
	(void)snprintf(sw.fs[0], sizeof(sw.fs[0]), "scratch");
	wbuf_reset(&pl);
	ck_assert_int_eq(msg_sweep_encode(&pl, &sw, recs, 3), 0);
	wbuf_reset(&w);
	ck_assert_int_eq(session_send(&C, FRAME_SWEEP, 0, 1700000020, pl.data,
	                     pl.len, &w),
	    0);
	same(&w, &sweep, "SWEEP, oss1 to head1");
	ck_assert_int_eq(session_input(&L, sweep.b, sweep.n, &f, &need, &err),
	    (int)sweep.n);
	ck_assert_int_eq(msg_sweep_decode(&sw, f.payload, f.hdr.len, rec_cb,
	                     &nrec, &err),
	    0);
	ck_assert_int_eq(nrec, 3);

	a = (struct msg_ack){MSG_ACK_SWEEP, f.hdr.seq, 1, T0 + 21000000000ULL};
	wbuf_reset(&pl);
	ck_assert_int_eq(msg_ack_encode(&pl, &a), 0);
	wbuf_reset(&w);
	ck_assert_int_eq(session_send(&L, FRAME_ACK, 0, 0, pl.data, pl.len, &w),
	    0);
	same(&w, &ack2, "ACK of the SWEEP, head1 to oss1");
	ck_assert_int_eq(session_input(&C, ack2.b, ack2.n, &f, &need, &err),
	    (int)ack2.n);

	wbuf_free(&w);
	wbuf_free(&pl);
	session_clear(&L);
	session_clear(&C);
	keyring_clear(&kr);
	hmac_free(h);
	free(doc);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("protocol_doc");
	TCase *tc = tcase_create("example");

	tcase_add_test(tc, worked_example);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
