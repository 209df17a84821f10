/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The consumer registry (daemon/consumer.c): every output sees the same
 * rows and the same closed sweep; a batch is acknowledged only when every
 * output committed it; the acknowledgements an output holds back are
 * matched to resends and released with the first sweep all outputs save;
 * a reload one output refuses is aborted in all of them.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* By path: daemon/check.h would hide Check's <check.h>. */
#include "../../daemon/consumer.h"
#include "../../daemon/log.h"
#include "sweeps.h"
#include "testutil.h"

/* A test output: what it was given, and whether its save succeeds. */
struct fake {
	size_t rows, published, aborted, applied;
	char nids[8][32];
	bool save_fails;
	int reload_rc;
	size_t saved_acks; /* acks given to the last save */
};

static struct fake fakes[2];
static size_t nopened;

static void
fake_row(void *ctx, const struct consumer_row *r)
{
	struct fake *f = ctx;

	if (f->rows < 8)
		(void)snprintf(f->nids[f->rows], sizeof(f->nids[0]), "%s|%s",
		    r->c->nid, r->host != NULL ? r->host : "-");
	f->rows++;
}

static int
fake_save(void *ctx, uint64_t sweep_id, const struct sweeps_ack *acks,
    size_t nacks)
{
	struct fake *f = ctx;

	(void)sweep_id;
	(void)acks;
	f->saved_acks = nacks;
	return f->save_fails ? -1 : 0;
}

static void
fake_publish(void *ctx, const struct consumer_sweep *s)
{
	struct fake *f = ctx;

	(void)s;
	f->published++;
}

static int
fake_prepare(void *ctx, const struct lh_config *old,
    const struct lh_config *cfg)
{
	(void)old;
	(void)cfg;
	return ((struct fake *)ctx)->reload_rc;
}

static void
fake_apply(void *ctx, const struct lh_config *cfg, struct event_base *base)
{
	(void)cfg;
	(void)base;
	((struct fake *)ctx)->applied++;
}

static void
fake_abort(void *ctx)
{
	((struct fake *)ctx)->aborted++;
}

static void
fake_free(void *ctx)
{
	(void)ctx;
}

static const struct consumer_ops fake_ops = {
    .name = "fake",
    .row = fake_row,
    .save = fake_save,
    .publish = fake_publish,
    .reload_prepare = fake_prepare,
    .reload_apply = fake_apply,
    .reload_abort = fake_abort,
    .free = fake_free,
};

static int
fake_open(const struct consumer_env *env, struct consumer *ret)
{
	(void)env;
	ret->ops = &fake_ops;
	ret->ctx = &fakes[nopened++];
	return 0;
}

static void
setup(struct consumers *cs)
{
	static const struct consumer_kind open[] = {{fake_open, NULL},
	    {fake_open, NULL}};
	struct consumer_env env = {0};

	memset(fakes, 0, sizeof(fakes));
	nopened = 0;
	memset(cs, 0, sizeof(*cs));
	ck_assert_int_eq(consumers_open(cs, open, 2, &env), 0);
	ck_assert_uint_eq(cs->n, 2);
}

static struct sweeps_ack
ack(const char *sender, uint64_t batch, uint64_t peer, uint64_t seq)
{
	struct sweeps_ack a;

	memset(&a, 0, sizeof(a));
	(void)snprintf(a.sender, sizeof(a.sender), "%s", sender);
	a.batch = batch;
	a.peer = peer;
	a.seq = seq;
	return a;
}

START_TEST(same_rows)
{
	struct consumers cs;
	struct sweeps_client c[2];
	struct consumer_row r;
	struct consumer_sweep sw = {60, NULL, 0, NULL, 0};
	size_t i;

	setup(&cs);
	memset(c, 0, sizeof(c));
	c[0].fs = "scratch";
	c[0].nid = "10.0.0.1@tcp";
	c[1].fs = "scratch";
	c[1].nid = "12@gni";
	for (i = 0; i < 2; i++) {
		r = (struct consumer_row){60, 30, &c[i],
		    i == 0 ? "node1" : NULL};
		consumers_row(&cs, &r);
	}
	consumers_publish(&cs, &sw);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(fakes[i].rows, 2);
		ck_assert_uint_eq(fakes[i].published, 1);
		ck_assert_str_eq(fakes[i].nids[0], "10.0.0.1@tcp|node1");
		ck_assert_str_eq(fakes[i].nids[1], "12@gni|-");
	}
	consumers_free(&cs);
}
END_TEST

START_TEST(failed_save_holds_acks)
{
	struct consumers cs;
	struct sweeps_ack a1[2] = {ack("oss1", 10, 1, 100),
	    ack("oss2", 20, 2, 200)};
	struct sweeps_ack a2[1] = {ack("oss1", 11, 1, 101)};
	const struct sweeps_ack *held;
	size_t n;

	setup(&cs);
	/* One output cannot commit: nothing may be acknowledged. */
	fakes[1].save_fails = true;
	ck_assert_int_eq(consumers_save(&cs, 60, a1, 2), 0);
	held = consumers_held(&cs, &n);
	ck_assert_uint_eq(n, 2);
	/* The next sweep's acks join them; both outputs see all. */
	ck_assert_int_eq(consumers_save(&cs, 90, a2, 1), 0);
	ck_assert_uint_eq(fakes[0].saved_acks, 3);
	ck_assert_uint_eq(fakes[1].saved_acks, 3);
	/* oss2 resends batch 20 on a new connection: it is one of them,
	 * and will be acknowledged there; a newer batch is not. */
	ck_assert(consumers_held_resend(&cs, "oss2", 20, 7, 700));
	ck_assert(!consumers_held_resend(&cs, "oss2", 21, 7, 701));
	ck_assert(!consumers_held_resend(&cs, "mds1", 5, 8, 800));
	/* Both commit: every held ack goes, oss2's on its new connection. */
	fakes[1].save_fails = false;
	ck_assert_int_eq(consumers_save(&cs, 120, NULL, 0), 1);
	held = consumers_held(&cs, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(held[1].sender, "oss2");
	ck_assert_uint_eq(held[1].peer, 7);
	ck_assert_uint_eq(held[1].seq, 700);
	consumers_release(&cs);
	(void)consumers_held(&cs, &n);
	ck_assert_uint_eq(n, 0);
	consumers_free(&cs);
}
END_TEST

START_TEST(all_commit_acks_at_once)
{
	struct consumers cs;
	struct sweeps_ack a1[1] = {ack("oss1", 10, 1, 100)};
	size_t n;

	setup(&cs);
	ck_assert_int_eq(consumers_save(&cs, 60, a1, 1), 1);
	(void)consumers_held(&cs, &n);
	ck_assert_uint_eq(n, 1);
	consumers_release(&cs);
	ck_assert(!consumers_held_resend(&cs, "oss1", 10, 1, 100));
	consumers_free(&cs);
}
END_TEST

START_TEST(reload_refused_by_one)
{
	struct consumers cs;

	setup(&cs);
	fakes[1].reload_rc = -1;
	ck_assert_int_eq(consumers_reload_prepare(&cs, NULL, NULL), -1);
	ck_assert_uint_eq(fakes[0].aborted, 1);
	ck_assert_uint_eq(fakes[1].aborted, 1);
	fakes[1].reload_rc = 1; /* replaces what it runs: save first */
	ck_assert_int_eq(consumers_reload_prepare(&cs, NULL, NULL), 1);
	consumers_reload_apply(&cs, NULL, NULL);
	ck_assert_uint_eq(fakes[0].applied, 1);
	ck_assert_uint_eq(fakes[1].applied, 1);
	consumers_free(&cs);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("consumer");
	TCase *tc = tcase_create("core");

	log_init("test_consumer", true, 0);
	tcase_add_test(tc, same_rows);
	tcase_add_test(tc, failed_save_holds_acks);
	tcase_add_test(tc, all_commit_acks_at_once);
	tcase_add_test(tc, reload_refused_by_one);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
