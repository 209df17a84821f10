/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The status snapshot (daemon/status.c): the role's part, then every
 * consumer's, released whole; a filler out of memory fails the snapshot.
 * And the role's gatherer records (daemon/roster.c): connections,
 * batches, missing and late gatherers, the names configured that never
 * connected, sorted by name.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* By path: daemon/check.h would hide Check's <check.h>. */
#include "../../daemon/consumer.h"
#include "../../daemon/log.h"
#include "../../daemon/roster.h"
#include "../../daemon/status.h"
#include "config.h"
#include "sweeps.h"
#include "testutil.h"

struct role {
	bool fail; /* leave the gatherers' array out */
};

static void
fill(void *arg, struct lh_status *st)
{
	struct role *r = arg;

	st->role = "aggregator";
	st->sweep_id = 1200;
	st->ngatherers = 2;
	if (r->fail)
		return;
	st->gatherers = calloc(2, sizeof(*st->gatherers));
	ck_assert_ptr_nonnull(st->gatherers);
	(void)snprintf(st->gatherers[1].name, STATUS_NAME_MAX, "oss2");
}

static void
out_status(void *ctx, struct lh_status *st)
{
	(void)ctx;
	st->ganglia.on = true;
	st->ganglia.values = 7;
	st->routes = calloc(1, sizeof(*st->routes));
	ck_assert_ptr_nonnull(st->routes);
	st->nroutes = 1;
	(void)snprintf(st->routes[0].dest, STATUS_ADDR_MAX, "head:8022");
}

static void
out_free(void *ctx)
{
	(void)ctx;
}

static const struct consumer_ops out_ops = {
    .name = "fake",
    .status = out_status,
    .free = out_free,
};

static int
out_open(const struct consumer_env *env, struct consumer *ret)
{
	(void)env;
	ret->ops = &out_ops;
	ret->ctx = NULL;
	return 0;
}

START_TEST(collect)
{
	const struct consumer_kind kinds[] = {{out_open, NULL}};
	struct consumers outs;
	struct consumer_env env;
	struct role role = {false};
	struct status_board b = {fill, &role, &outs};
	struct lh_status st;

	memset(&outs, 0, sizeof(outs));
	memset(&env, 0, sizeof(env));
	ck_assert_int_eq(consumers_open(&outs, kinds, 1, &env), 0);
	memset(&st, 0xa5, sizeof(st)); /* whatever was there goes */
	ck_assert_int_eq(status_collect(&b, &st), 0);
	ck_assert_str_eq(st.role, "aggregator");
	ck_assert_uint_eq(st.sweep_id, 1200);
	ck_assert_uint_eq(st.ngatherers, 2);
	ck_assert_str_eq(st.gatherers[1].name, "oss2");
	ck_assert(st.ganglia.on);
	ck_assert_uint_eq(st.ganglia.values, 7);
	ck_assert_uint_eq(st.nroutes, 1);
	ck_assert_str_eq(st.routes[0].dest, "head:8022");
	ck_assert(!st.dns.on);
	status_release(&st);
	ck_assert_ptr_null(st.gatherers);
	ck_assert_ptr_null(st.routes);
	ck_assert_uint_eq(st.ngatherers, 0);
	/* Out of memory in a filler: the whole snapshot fails, released. */
	role.fail = true;
	ck_assert_int_eq(status_collect(&b, &st), -ENOMEM);
	ck_assert_ptr_null(st.routes);
	ck_assert_uint_eq(st.nroutes, 0);
	consumers_free(&outs);
}
END_TEST

static void
report(struct sweeps_report *rep, uint64_t id, struct sweeps_ack *acks,
    size_t nacks, char (*missing)[MSG_NAME_MAX], size_t nmissing)
{
	memset(rep, 0, sizeof(*rep));
	rep->sweep_id = id;
	rep->acks = acks;
	rep->nacks = nacks;
	rep->missing = missing;
	rep->nmissing = nmissing;
}

START_TEST(gatherers)
{
	char n0[] = "oss0", n1[] = "oss1";
	char *names[] = {n0, n1};
	struct lh_config cfg;
	struct roster r;
	struct sweeps_report rep;
	struct sweeps_ack acks[2];
	char missing[1][MSG_NAME_MAX] = {"oss3"};
	struct lh_status st;

	memset(&cfg, 0, sizeof(cfg));
	cfg.interval = 20;
	cfg.gatherers = names; /* oss0 never connects */
	cfg.ngatherers = 2;
	memset(&r, 0, sizeof(r));
	memset(acks, 0, sizeof(acks));
	roster_connected(&r, "oss2", "10.0.0.2:4000");
	roster_connected(&r, "oss1", "10.0.0.1:4000");
	roster_connected(&r, "oss3", "10.0.0.3:4000");
	roster_closed(&r, "oss3");
	roster_counted(&r, "oss1", false);
	roster_counted(&r, "oss2", true);
	(void)snprintf(acks[0].sender, MSG_NAME_MAX, "oss1");
	(void)snprintf(acks[1].sender, MSG_NAME_MAX, "oss2");
	report(&rep, 100, acks, 2, missing, 1);
	roster_note(&r, &rep, 100000000000ULL);

	memset(&st, 0, sizeof(st));
	roster_status(&r, &cfg, &st);
	ck_assert_uint_eq(st.ngatherers, 4);
	ck_assert_str_eq(st.gatherers[0].name, "oss0");
	ck_assert(!st.gatherers[0].connected);
	ck_assert(st.gatherers[0].expected); /* configured */
	ck_assert_str_eq(st.gatherers[1].name, "oss1");
	ck_assert(st.gatherers[1].connected);
	ck_assert_str_eq(st.gatherers[1].addr, "10.0.0.1:4000");
	ck_assert_uint_eq(st.gatherers[1].batches, 1);
	ck_assert_uint_eq(st.gatherers[1].last_sweep, 100);
	ck_assert(!st.gatherers[1].late);
	ck_assert(st.gatherers[2].late);
	ck_assert(st.gatherers[2].expected); /* in the last sweep */
	ck_assert_str_eq(st.gatherers[3].name, "oss3");
	ck_assert(!st.gatherers[3].connected);
	ck_assert_str_eq(st.gatherers[3].addr, "");
	ck_assert(st.gatherers[3].missing);
	ck_assert_uint_eq(st.gatherers[3].sweeps_missed, 1);
	ck_assert_uint_eq(st.gatherers_connected, 2);
	ck_assert_uint_eq(st.gatherers_expected, 4);
	ck_assert_uint_eq(st.gatherers_missing, 1);
	ck_assert_uint_eq(st.gatherers_late, 1);
	status_release(&st);

	/* Four sweeps on, oss2 gone quiet: no longer expected, not late. */
	report(&rep, 180, acks, 1, NULL, 0);
	roster_note(&r, &rep, 180000000000ULL);
	roster_status(&r, &cfg, &st);
	ck_assert(!st.gatherers[2].expected);
	ck_assert(!st.gatherers[2].late);
	ck_assert(!st.gatherers[3].missing);
	ck_assert_uint_eq(st.gatherers[3].sweeps_missed, 1);
	status_release(&st);
	roster_free(&r);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("status");
	TCase *tc = tcase_create("core");

	log_init("test_status", true, 0);
	tcase_add_test(tc, collect);
	tcase_add_test(tc, gatherers);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
