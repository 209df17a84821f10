/* SPDX-License-Identifier: BSD-2-Clause */
/* The gatherer's state file: round trip, and every damage refused. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "gstate.h"
#include "gtable.h"
#include "outbox.h"
#include "testutil.h"
#include "wire.h"

#define S  1000000000ULL
#define T0 (1700000000ULL * S)

static struct delta_sample
sample(uint64_t rb, uint64_t snap_ns)
{
	struct delta_sample s;

	memset(&s, 0, sizeof(s));
	s.c.read_bytes = rb;
	s.c.oss_ops = rb / 100;
	s.samples = rb / 100;
	s.snap_ns = snap_ns;
	s.start_ns = T0 - 3600 * S;
	return s;
}

static int
to_outbox(void *arg, const struct gt_record *r)
{
	return outbox_add(arg, r->fs, r->nid, &r->d, r->span_us, r->cspan_us,
	    T0 / S, r->start_ns);
}

/* Two sweeps over two targets, a peer and a stale export; the first
 * sweep's batch in flight, the second's pending. */
static void
build(struct gtable *t, struct outbox *ob)
{
	static const char *nids[] = {"10.1.0.1@o2ib", "10.2.0.9@o2ib2",
	    "27@gni", "2001:db8::17@tcp", "10.0.0.1@o2ib"};
	struct gt_target *tg[2];
	struct gt_export *e;
	struct wbuf w;
	uint64_t batch, sw;
	unsigned k, i, n;
	int rc;

	gtable_init(t);
	outbox_init(ob, 41);
	for (k = 0; k < 2; k++) {
		gtable_sweep_begin(t, T0 + k * 20 * S, 20 * S);
		tg[0] = gtable_target(t, "scratch-OST0000", "scratch",
		    LH_TARGET_OST, 5, 10);
		tg[1] = gtable_target(t, "scratch-MDT0000", "scratch",
		    LH_TARGET_MDT, 5, 11);
		for (i = 0; i < 2; i++) {
			gtable_target_listed(tg[i]);
			for (n = 0; n < 5; n++) {
				struct delta_sample s =
				    sample(1000 * (n + 1) * (k + 1),
				        T0 + k * 20 * S);

				e = gtable_export(t, tg[i], nids[n], 100 + n,
				    &rc);
				ck_assert_ptr_nonnull(e);
				if (gtable_needs_uuid(e, &s))
					gtable_classify(t, e,
					    n == 4     ? LTREE_PEER_SERVER :
					        n == 3 ? LTREE_PEER_STALE :
					                 LTREE_PEER_CLIENT);
				gtable_observe(t, e, &s);
			}
		}
		ck_assert_int_eq(gtable_sweep_end(t, to_outbox, ob), 0);
		outbox_seal(ob);
		if (k == 0) {
			wbuf_init(&w, 0);
			ck_assert_int_eq(outbox_next(ob, &w, &batch, &sw), 0);
			ck_assert_uint_eq(batch, 42);
			wbuf_free(&w);
		}
	}
}

static char *
tmpdir(void)
{
	char tmpl[] = "/tmp/test_gstate.XXXXXX";
	char *d = mkdtemp(tmpl);

	ck_assert_ptr_nonnull(d);
	return strdup(d);
}

static void
encode_outbox(struct outbox *ob, struct wbuf *w)
{
	uint64_t batch, sw;

	wbuf_init(w, 0);
	ck_assert_int_eq(outbox_next(ob, w, &batch, &sw), 0);
}

START_TEST(round_trip)
{
	struct gtable t, t2;
	struct outbox ob, ob2;
	struct lh_err err;
	struct wbuf w1, w2;
	uint64_t scope = 0;
	char *dir = tmpdir();
	char path[256];
	size_t i, j;

	(void)snprintf(path, sizeof(path), "%s/gatherer.state", dir);
	build(&t, &ob);
	ck_assert_int_eq(gstate_save(path, 77, &t, &ob, &err), 0);
	gtable_init(&t2);
	outbox_init(&ob2, 0);
	ck_assert_msg(gstate_load(path, &scope, &t2, &ob2, &err) == 0, "%s",
	    err.reason);
	ck_assert_uint_eq(scope, 77);
	ck_assert(t2.history);
	ck_assert_uint_eq(t2.last_sweep_ns, t.last_sweep_ns);
	ck_assert_uint_eq(t2.ntargets, 2);
	for (i = 0; i < 2; i++) {
		ck_assert_str_eq(t2.targets[i]->name, t.targets[i]->name);
		ck_assert_uint_eq(t2.targets[i]->ino, t.targets[i]->ino);
		ck_assert_uint_eq(t2.targets[i]->nexp, t.targets[i]->nexp);
		for (j = 0; j < t.targets[i]->nexp; j++) {
			const struct gt_export *a = &t.targets[i]->exp[j];
			const struct gt_export *b = &t2.targets[i]->exp[j];

			ck_assert_str_eq(t2.clients[b->client].nid,
			    t.clients[a->client].nid);
			ck_assert_uint_eq(b->cls, a->cls);
			ck_assert_uint_eq(b->ino, a->ino);
			ck_assert(
			    memcmp(&b->prev, &a->prev, sizeof(a->prev)) == 0);
		}
	}
	ck_assert_uint_eq(t2.nclients, t.nclients);
	/* The peer is still a peer. */
	for (i = 0; i < t2.nclients; i++)
		ck_assert_int_eq(t2.clients[i].peer,
		    strcmp(t2.clients[i].nid, "10.0.0.1@o2ib") == 0);
	/* The outbox: same number, same bytes, in flight and pending. */
	ck_assert_uint_eq(ob2.last_batch, 42);
	ck_assert(ob2.have_inflight);
	encode_outbox(&ob, &w1);
	encode_outbox(&ob2, &w2);
	ck_assert_uint_eq(w1.len, w2.len);
	ck_assert(memcmp(w1.data, w2.data, w1.len) == 0);
	wbuf_free(&w1);
	wbuf_free(&w2);
	ck_assert_int_eq(outbox_acked(&ob, 42), 0);
	ck_assert_int_eq(outbox_acked(&ob2, 42), 0);
	outbox_seal(&ob);
	outbox_seal(&ob2);
	encode_outbox(&ob, &w1);
	encode_outbox(&ob2, &w2);
	ck_assert_uint_eq(w1.len, w2.len);
	ck_assert(memcmp(w1.data, w2.data, w1.len) == 0);
	wbuf_free(&w1);
	wbuf_free(&w2);

	gtable_free(&t);
	gtable_free(&t2);
	outbox_free(&ob);
	outbox_free(&ob2);
	(void)unlink(path);
	(void)rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(missing_is_enoent)
{
	struct gtable t;
	struct outbox ob;
	struct lh_err err;
	uint64_t scope;

	gtable_init(&t);
	outbox_init(&ob, 0);
	ck_assert_int_eq(gstate_load("/nonexistent/gatherer.state", &scope, &t,
	                     &ob, &err),
	    -ENOENT);
	gtable_free(&t);
	outbox_free(&ob);
}
END_TEST

static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(1 << 20);

	ck_assert_ptr_nonnull(f);
	*len = fread(buf, 1, 1 << 20, f);
	(void)fclose(f);
	return buf;
}

/* Every flipped byte and every truncation is refused whole. */
START_TEST(damage_refused)
{
	struct gtable t;
	struct outbox ob;
	struct lh_err err;
	char *dir = tmpdir();
	char path[256];
	uint8_t *buf;
	size_t len, i;
	uint64_t scope;

	(void)snprintf(path, sizeof(path), "%s/gatherer.state", dir);
	build(&t, &ob);
	ck_assert_int_eq(gstate_save(path, 77, &t, &ob, &err), 0);
	gtable_free(&t);
	outbox_free(&ob);
	buf = slurp(path, &len);
	ck_assert_uint_gt(len, 100);
	for (i = 0; i < len; i++) {
		buf[i] ^= 0x20;
		gtable_init(&t);
		outbox_init(&ob, 0);
		ck_assert_int_eq(gstate_decode(buf, len, &scope, &t, &ob, &err),
		    -EBADMSG);
		gtable_free(&t);
		outbox_free(&ob);
		buf[i] ^= 0x20;
	}
	for (i = 0; i < len; i += 7) {
		gtable_init(&t);
		outbox_init(&ob, 0);
		ck_assert_int_eq(gstate_decode(buf, i, &scope, &t, &ob, &err),
		    -EBADMSG);
		gtable_free(&t);
		outbox_free(&ob);
	}
	free(buf);
	(void)unlink(path);
	(void)rmdir(dir);
	free(dir);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gstate");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, missing_is_enoent);
	tcase_add_test(tc, damage_refused);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
