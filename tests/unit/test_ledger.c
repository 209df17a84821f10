/* SPDX-License-Identifier: BSD-2-Clause */
/* A receiver's per-sender highest safe batch, in memory and on disk. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "ledger.h"
#include "testutil.h"

START_TEST(memory_and_disk)
{
	char tmpl[] = "/tmp/lh-ledger-XXXXXX", path[256], cmd[300];
	char *dir = mkdtemp(tmpl);
	struct ledger *l = NULL;
	struct lh_err err;
	FILE *f;

	ck_assert_ptr_nonnull(dir);
	ck_assert_int_eq(ledger_new(&l, NULL), 0);
	ck_assert_uint_eq(ledger_get(l, "oss1", NULL), 0);
	ck_assert_int_eq(ledger_set(l, "oss1", 7, NULL), 0);
	ck_assert_uint_eq(ledger_get(l, "oss1", NULL), 7);
	ledger_free(l);

	/* Kept across instances; names become hex file names. */
	ck_assert_int_eq(ledger_new(&l, dir), 0);
	ck_assert_int_eq(ledger_set(l, "a/b", 41, &err), 0);
	ck_assert_int_eq(ledger_set(l, "a/b", 42, &err), 0);
	ledger_free(l);
	(void)snprintf(path, sizeof(path), "%s/612f62.batch", dir);
	ck_assert_int_eq(access(path, R_OK), 0);
	ck_assert_int_eq(ledger_new(&l, dir), 0);
	ck_assert_uint_eq(ledger_get(l, "a/b", NULL), 42);
	ck_assert_uint_eq(ledger_get(l, "other", NULL), 0);
	ledger_free(l);

	/* A damaged file is reported and counts as nothing. */
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	(void)fputs("garbage\n", f);
	(void)fclose(f);
	ck_assert_int_eq(ledger_new(&l, dir), 0);
	lh_err_clear(&err);
	ck_assert_uint_eq(ledger_get(l, "a/b", &err), 0);
	ck_assert(strstr(err.reason, "not a batch number") != NULL);
	ledger_free(l);
	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

struct names {
	size_t n;
	char name[4][64];
	int64_t mtime[4];
};

static void
collect(void *arg, const char *sender, int64_t mtime)
{
	struct names *ns = arg;

	ck_assert_uint_lt(ns->n, 4);
	(void)snprintf(ns->name[ns->n], sizeof(ns->name[0]), "%s", sender);
	ns->mtime[ns->n++] = mtime;
}

/* The senders of a ledger directory, decoded; other files ignored. */
START_TEST(each_sender)
{
	char tmpl[] = "/tmp/lh-ledger-XXXXXX", path[256], cmd[300];
	char *dir = mkdtemp(tmpl);
	struct ledger *l = NULL;
	struct names ns;
	FILE *f;

	ck_assert_ptr_nonnull(dir);
	ck_assert_int_eq(ledger_new(&l, dir), 0);
	ck_assert_int_eq(ledger_set(l, "oss1", 3, NULL), 0);
	(void)snprintf(path, sizeof(path), "%s/zz.batch", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	(void)fclose(f);
	memset(&ns, 0, sizeof(ns));
	ck_assert_int_eq(ledger_each(l, collect, &ns), 1);
	ck_assert_str_eq(ns.name[0], "oss1");
	ck_assert(ns.mtime[0] > 1700000000);
	ledger_free(l);
	ck_assert_int_eq(ledger_new(&l, NULL), 0);
	ck_assert_int_eq(ledger_each(l, collect, &ns), 0);
	ledger_free(l);
	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ledger");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, memory_and_disk);
	tcase_add_test(tc, each_sender);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
