/* SPDX-License-Identifier: BSD-2-Clause */
/* The relay's state file: ledger entries and routes' outboxes round trip
 * (the batch in flight keeps its number and bytes), every damage is
 * refused, another version is refused. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "mdops.h"
#include "outbox.h"
#include "rstate.h"
#include "statefile.h"
#include "testutil.h"
#include "wire.h"

#define SW 1700000000ULL

static void
fill(struct outbox *ob, unsigned n, uint64_t sweep, bool ops)
{
	struct mdops m;
	unsigned i;

	memset(&m, 0, sizeof(m));
	for (i = 0; i < n; i++) {
		struct iocount d = {1000ULL * (i + 1), 7, 1, 1, 3,
		    ops ? 40 : 0};
		uint64_t cspan[6] = {20000000, 0, 0, 0, 19999000, 20001000};
		char nid[32];

		m.v[MDOPS_OPEN] = 10 + i;
		m.v[MDOPS_GETATTR] = 30;
		(void)snprintf(nid, sizeof(nid), "10.1.0.%u@o2ib%u", i + 1,
		    i % 2);
		ck_assert_int_eq(outbox_add(ob, "site", nid, &d,
		                     ops ? &m : NULL, 20000000, cspan, sweep,
		                     sweep * 1000000000ULL),
		    0);
	}
}

/* Two routes: one with a batch in flight and a pending one, one idle. */
static void
make(struct outbox *a, struct outbox *b)
{
	outbox_init(a, 5000);
	outbox_init(b, 77);
	fill(a, 4, SW, true);
	outbox_seal(a);
	fill(a, 3, SW + 20, false);
	fill(b, 2, SW, false);
	outbox_seal(b);
	ck_assert_int_eq(outbox_acked(b, 78), 0);
}

struct got {
	char sender[4][64];
	uint64_t batch[4];
	unsigned nl;
	char route[4][64];
	struct outbox ob[4];
	unsigned nr;
};

static int
on_ledger(void *arg, const char *sender, uint64_t batch)
{
	struct got *g = arg;

	ck_assert_uint_lt(g->nl, 4);
	(void)snprintf(g->sender[g->nl], 64, "%s", sender);
	g->batch[g->nl++] = batch;
	return 0;
}

static int
on_route(void *arg, const char *name, struct outbox *ob)
{
	struct got *g = arg;

	ck_assert_uint_lt(g->nr, 4);
	(void)snprintf(g->route[g->nr], 64, "%s", name);
	g->ob[g->nr++] = *ob; /* moved */
	return 0;
}

static void
got_free(struct got *g)
{
	unsigned i;

	for (i = 0; i < g->nr; i++)
		outbox_free(&g->ob[i]);
	memset(g, 0, sizeof(*g));
}

/* The SWEEP of the batch in flight, or the pending one sealed. */
static void
payload(struct outbox *ob, struct wbuf *w, uint64_t *batch)
{
	uint64_t sweep;

	wbuf_init(w, 0);
	ck_assert_int_eq(outbox_next(ob, w, true, batch, &sweep), 0);
}

START_TEST(round_trip)
{
	const struct rstate_ledger l[2] = {{"oss1", 41}, {"mds1", 7}};
	struct outbox a, b;
	struct rstate_route r[2] = {{"alpha", &a}, {"beta", &b}};
	struct rstate_cb cb = {on_ledger, on_route, NULL};
	char path[] = "/tmp/test_rstate.XXXXXX";
	struct lh_err err;
	struct wbuf w1, w2;
	uint64_t b1, b2;
	struct got g;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	(void)close(fd);
	make(&a, &b);
	ck_assert_int_eq(rstate_save(path, l, 2, r, 2, &err), 0);
	memset(&g, 0, sizeof(g));
	cb.arg = &g;
	ck_assert_int_eq(rstate_load(path, &cb, &err), 0);
	ck_assert_uint_eq(g.nl, 2);
	ck_assert_str_eq(g.sender[1], "mds1");
	ck_assert_uint_eq(g.batch[0], 41);
	ck_assert_uint_eq(g.nr, 2);
	ck_assert_str_eq(g.route[0], "alpha");
	ck_assert_uint_eq(g.ob[0].last_batch, 5001);
	ck_assert(g.ob[0].have_inflight);
	ck_assert_uint_eq(g.ob[0].pending.n, 3);
	ck_assert(!g.ob[1].have_inflight);
	ck_assert_uint_eq(g.ob[1].last_batch, 78);
	ck_assert(!outbox_has_data(&g.ob[1]));
	/* The batch in flight is sent again byte for byte. */
	payload(&a, &w1, &b1);
	payload(&g.ob[0], &w2, &b2);
	ck_assert_uint_eq(b1, 5001);
	ck_assert_uint_eq(b2, 5001);
	ck_assert_uint_eq(w1.len, w2.len);
	ck_assert_mem_eq(w1.data, w2.data, w1.len);
	wbuf_free(&w1);
	wbuf_free(&w2);
	/* So is the pending one once sealed. */
	ck_assert_int_eq(outbox_acked(&a, 5001), 0);
	ck_assert_int_eq(outbox_acked(&g.ob[0], 5001), 0);
	outbox_seal(&a);
	outbox_seal(&g.ob[0]);
	payload(&a, &w1, &b1);
	payload(&g.ob[0], &w2, &b2);
	ck_assert_uint_eq(b2, 5002);
	ck_assert_mem_eq(w1.data, w2.data, w1.len);
	wbuf_free(&w1);
	wbuf_free(&w2);
	got_free(&g);
	outbox_free(&a);
	outbox_free(&b);
	(void)unlink(path);
}
END_TEST

/* Every flipped byte and every truncation refused; no callback before
 * the checksum is verified. */
START_TEST(damage)
{
	const struct rstate_ledger l[1] = {{"oss1", 41}};
	struct outbox a, b;
	struct rstate_route r[2] = {{"alpha", &a}, {"beta", &b}};
	struct rstate_cb cb = {on_ledger, on_route, NULL};
	char path[] = "/tmp/test_rstate.XXXXXX";
	struct lh_err err;
	uint8_t *buf;
	size_t len, i;
	struct got g;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	(void)close(fd);
	make(&a, &b);
	ck_assert_int_eq(rstate_save(path, l, 1, r, 2, &err), 0);
	ck_assert_int_eq(statefile_read(path, &buf, &len, &err), 0);
	cb.arg = &g;
	for (i = 0; i < len; i++) {
		memset(&g, 0, sizeof(g));
		buf[i] ^= 0x20;
		ck_assert_int_eq(rstate_decode(buf, len, &cb, &err), -EBADMSG);
		ck_assert_uint_eq(g.nl + g.nr, 0);
		buf[i] ^= 0x20;
		ck_assert_int_eq(rstate_decode(buf, i, &cb, &err), -EBADMSG);
		ck_assert_uint_eq(g.nl + g.nr, 0);
	}
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(rstate_decode(buf, len, &cb, &err), 0);
	got_free(&g);
	free(buf);
	ck_assert_int_eq(rstate_load("/nonexistent/rstate", &cb, &err),
	    -ENOENT);
	outbox_free(&a);
	outbox_free(&b);
	(void)unlink(path);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("rstate");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, damage);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
