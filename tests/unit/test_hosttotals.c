/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Counters since they began (common/sweep/hosttotals.c): per (host, fs)
 * sums of exact deltas, the cap, the filesystems' totals, the marks, and
 * the file: a round trip, damaged and truncated files, a newer format.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "hostsum.h"
#include "hosttotals.h"
#include "statefile.h"
#include "testutil.h"
#include "wire.h"

static void
mkrow(struct hostsum_row *r, const char *host, const char *fs,
    uint64_t read_bytes, uint64_t opens)
{
	memset(r, 0, sizeof(*r));
	(void)snprintf(r->host, sizeof(r->host), "%s", host);
	(void)snprintf(r->fs, sizeof(r->fs), "%s", fs);
	r->d.read_bytes = read_bytes;
	r->d.write_ops = 1;
	r->rate[0] = (double)read_bytes / 20;
	r->dops.v[MDOPS_OPEN] = opens;
	r->oprate[MDOPS_OPEN] = (double)opens / 20;
}

static void
add(struct hosttotals *t, uint64_t sweep, const char *host, const char *fs,
    uint64_t read_bytes, uint64_t opens)
{
	struct hostsum_row r;

	mkrow(&r, host, fs, read_bytes, opens);
	ck_assert_int_eq(hosttotals_add(t, sweep, &r), 0);
}

static const struct hosttotals_row *
get(const struct hosttotals *t, const char *host, const char *fs)
{
	const struct hosttotals_row *r = hosttotals_find(t, host, fs);

	ck_assert_msg(r != NULL, "no row %s %s", host, fs);
	return r;
}

START_TEST(sums_rows)
{
	struct hosttotals *t;
	const struct hosttotals_row *v;
	size_t n;

	ck_assert_int_eq(hosttotals_new(0, &t), 0);
	ck_assert_uint_eq(hosttotals_last_sweep(t), 0);
	add(t, 100, "n1", "scratch", 1000, 3);
	add(t, 100, "n1", "home", 10, 0);
	add(t, 120, "n1", "scratch", 500, 0);
	add(t, 120, "n2", "scratch", 7, 1);
	ck_assert_uint_eq(hosttotals_last_sweep(t), 120);
	ck_assert_uint_eq(get(t, "n1", "scratch")->total.read_bytes, 1500);
	ck_assert_uint_eq(get(t, "n1", "scratch")->total.write_ops, 2);
	ck_assert_uint_eq(get(t, "n1", "scratch")->op_total[MDOPS_OPEN], 3);
	ck_assert(get(t, "n1", "scratch")->rate[0] == 25);
	ck_assert(get(t, "n1", "scratch")->oprate[MDOPS_OPEN] == 0);
	ck_assert_uint_eq(get(t, "n1", "scratch")->last_sweep, 120);
	ck_assert_uint_eq(get(t, "n1", "home")->last_sweep, 100);
	ck_assert_ptr_null(hosttotals_find(t, "n2", "home"));
	ck_assert_ptr_null(hosttotals_find(t, "n3", "scratch"));
	v = hosttotals_rows(t, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(v[0].host, "n1");
	ck_assert_str_eq(v[0].fs, "scratch");
	ck_assert_str_eq(v[2].host, "n2");
	/* Interned: one copy of each name. */
	ck_assert_ptr_eq(v[0].host, v[1].host);
	ck_assert_ptr_eq(v[0].fs, v[2].fs);
	/* No row without a name (the file could not be read back). */
	add(t, 120, "", "scratch", 5, 0);
	(void)hosttotals_rows(t, &n);
	ck_assert_uint_eq(n, 3);
	/* An empty sweep closes: no row is in it. */
	hosttotals_closed(t, 140);
	ck_assert_uint_eq(hosttotals_last_sweep(t), 140);
	hosttotals_closed(t, 100); /* never back */
	ck_assert_uint_eq(hosttotals_last_sweep(t), 140);
	ck_assert_uint_eq(get(t, "n1", "scratch")->last_sweep, 120);
	hosttotals_free(t);
}
END_TEST

START_TEST(cap)
{
	struct hosttotals *t;
	struct hostsum_row r;
	size_t n;

	ck_assert_int_eq(hosttotals_new(2, &t), 0);
	add(t, 20, "a", "fs", 1, 0);
	add(t, 20, "b", "fs", 1, 0);
	mkrow(&r, "c", "fs", 5, 0);
	ck_assert_int_eq(hosttotals_add(t, 20, &r), 1);
	ck_assert_int_eq(hosttotals_add(t, 40, &r), 1);
	mkrow(&r, "d", "fs", 5, 0);
	ck_assert_int_eq(hosttotals_add(t, 40, &r), 1);
	ck_assert_uint_eq(hosttotals_refused(t), 2); /* each (host, fs) once */
	add(t, 40, "a", "fs", 1, 0);                 /* rows kept go on */
	ck_assert_uint_eq(get(t, "a", "fs")->total.read_bytes, 2);
	(void)hosttotals_rows(t, &n);
	ck_assert_uint_eq(n, 2);
	/* A lower cap keeps the rows over it; a higher one makes room. */
	hosttotals_set_max(t, 1);
	add(t, 60, "b", "fs", 1, 0);
	hosttotals_set_max(t, 3);
	add(t, 60, "c", "fs", 1, 0);
	(void)hosttotals_rows(t, &n);
	ck_assert_uint_eq(n, 3);
	hosttotals_free(t);
}
END_TEST

static void
mkfs(struct sweeps_fs_total *f, const char *fs, uint64_t wb, size_t clients)
{
	memset(f, 0, sizeof(*f));
	f->fs = fs;
	f->d.write_bytes = wb;
	f->rate[1] = (double)wb / 20;
	f->ops.d.v[MDOPS_MKDIR] = 2;
	f->nclients = clients;
}

START_TEST(fs_totals)
{
	struct hosttotals *t;
	const struct hosttotals_fs *f;
	struct sweeps_fs_total ft;
	size_t n;

	ck_assert_int_eq(hosttotals_new(0, &t), 0);
	mkfs(&ft, "scratch", 100, 3);
	ck_assert_int_eq(hosttotals_add_fs(t, 20, &ft), 0);
	mkfs(&ft, "home", 1, 1);
	ck_assert_int_eq(hosttotals_add_fs(t, 20, &ft), 0);
	mkfs(&ft, "scratch", 40, 2);
	ck_assert_int_eq(hosttotals_add_fs(t, 40, &ft), 0);
	f = hosttotals_fss(t, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(f[0].fs, "scratch");
	ck_assert_uint_eq(f[0].total.write_bytes, 140);
	ck_assert_uint_eq(f[0].op_total[MDOPS_MKDIR], 4);
	ck_assert_uint_eq(f[0].clients, 2);
	ck_assert(f[0].rate[1] == 2);
	ck_assert_uint_eq(f[0].last_sweep, 40);
	ck_assert_uint_eq(f[1].last_sweep, 20);
	ck_assert_uint_eq(hosttotals_last_sweep(t), 40);
	hosttotals_free(t);
}
END_TEST

struct marks {
	char names[4][64];
	uint64_t batch[4];
	size_t n;
};

static void
on_mark(void *arg, const char *sender, uint64_t batch)
{
	struct marks *m = arg;

	ck_assert_uint_lt(m->n, 4);
	(void)snprintf(m->names[m->n], sizeof(m->names[0]), "%s", sender);
	m->batch[m->n++] = batch;
}

START_TEST(marks)
{
	struct hosttotals *t;
	struct marks m;

	ck_assert_int_eq(hosttotals_new(0, &t), 0);
	ck_assert_int_eq(hosttotals_mark(t, "oss1", 5), 0);
	ck_assert_int_eq(hosttotals_mark(t, "oss2", 9), 0);
	ck_assert_int_eq(hosttotals_mark(t, "oss1", 7), 0);
	ck_assert_int_eq(hosttotals_mark(t, "oss1", 6), 0); /* never lower */
	memset(&m, 0, sizeof(m));
	hosttotals_each_mark(t, on_mark, &m);
	ck_assert_uint_eq(m.n, 2);
	ck_assert_str_eq(m.names[0], "oss1");
	ck_assert_uint_eq(m.batch[0], 7);
	ck_assert_uint_eq(m.batch[1], 9);
	hosttotals_free(t);
}
END_TEST

struct tmp {
	char d[64];
	char path[128];
};

static void
tmp_make(struct tmp *x)
{
	(void)snprintf(x->d, sizeof(x->d), "/tmp/test_hosttotals.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(x->d));
	(void)snprintf(x->path, sizeof(x->path), "%s/totals", x->d);
}

static void
tmp_clean(struct tmp *x)
{
	char cmd[160];

	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", x->d);
	ck_assert_int_eq(system(cmd), 0);
}

/* A table with rows, op counters in one, filesystems and marks. */
static struct hosttotals *
filled(void)
{
	struct hosttotals *t;
	struct sweeps_fs_total ft;

	ck_assert_int_eq(hosttotals_new(0, &t), 0);
	add(t, 100, "n1", "scratch", 1000, 3);
	add(t, 120, "n1", "home", 1ULL << 50, 0);
	add(t, 120, "n2", "scratch", 7, 0);
	mkfs(&ft, "scratch", 100, 3);
	ck_assert_int_eq(hosttotals_add_fs(t, 120, &ft), 0);
	ck_assert_int_eq(hosttotals_mark(t, "oss1", 42), 0);
	ck_assert_int_eq(hosttotals_mark(t, "mds1", 1ULL << 40), 0);
	return t;
}

START_TEST(round_trip)
{
	struct hosttotals *t = filled(), *u;
	const struct hosttotals_row *r;
	const struct hosttotals_fs *f;
	struct lh_err err;
	struct marks m;
	struct tmp x;
	size_t n;

	tmp_make(&x);
	ck_assert_int_eq(hosttotals_new(0, &u), 0);
	ck_assert_int_eq(hosttotals_load(u, x.path, &err), -ENOENT);
	ck_assert_int_eq(hosttotals_save(t, x.path, &err), 0);
	add(u, 20, "old", "fs", 1, 0); /* replaced by the load */
	ck_assert_int_eq(hosttotals_load(u, x.path, &err), 0);
	ck_assert_uint_eq(hosttotals_last_sweep(u), 120);
	(void)hosttotals_rows(u, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_ptr_null(hosttotals_find(u, "old", "fs"));
	r = get(u, "n1", "scratch");
	ck_assert_uint_eq(r->total.read_bytes, 1000);
	ck_assert_uint_eq(r->total.write_ops, 1);
	ck_assert_uint_eq(r->op_total[MDOPS_OPEN], 3);
	ck_assert_uint_eq(r->last_sweep, 100);
	ck_assert(r->rate[0] == 0); /* the last sweep's rates are not kept */
	ck_assert_uint_eq(get(u, "n1", "home")->total.read_bytes, 1ULL << 50);
	f = hosttotals_fss(u, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(f[0].total.write_bytes, 100);
	ck_assert_uint_eq(f[0].op_total[MDOPS_MKDIR], 2);
	ck_assert_uint_eq(f[0].clients, 3);
	memset(&m, 0, sizeof(m));
	hosttotals_each_mark(u, on_mark, &m);
	ck_assert_uint_eq(m.n, 2);
	ck_assert_uint_eq(m.batch[1], 1ULL << 40);
	/* And it goes on counting from there. */
	add(u, 140, "n2", "scratch", 3, 0);
	ck_assert_uint_eq(get(u, "n2", "scratch")->total.read_bytes, 10);
	hosttotals_free(t);
	hosttotals_free(u);
	tmp_clean(&x);
}
END_TEST

/* The saved bytes of filled(). */
static uint8_t *
saved(size_t *ret_n)
{
	struct hosttotals *t = filled();
	struct lh_err err;
	uint8_t *buf;
	struct tmp x;

	tmp_make(&x);
	ck_assert_int_eq(hosttotals_save(t, x.path, &err), 0);
	ck_assert_int_eq(statefile_read(x.path, &buf, ret_n, &err), 0);
	hosttotals_free(t);
	tmp_clean(&x);
	return buf;
}

START_TEST(damaged)
{
	struct hosttotals *u;
	struct lh_err err;
	uint8_t *buf;
	size_t n, i;

	buf = saved(&n);
	ck_assert_int_eq(hosttotals_new(0, &u), 0);
	ck_assert_int_eq(hosttotals_decode(u, buf, n, &err), 0);
	/* Any byte flipped, any length cut: refused whole, table empty. */
	for (i = 0; i < n; i++) {
		buf[i] ^= 0x20;
		ck_assert_int_eq(hosttotals_decode(u, buf, n, &err), -EBADMSG);
		ck_assert_uint_eq(hosttotals_last_sweep(u), 0);
		buf[i] ^= 0x20;
	}
	for (i = 0; i < n; i++)
		ck_assert_int_eq(hosttotals_decode(u, buf, i, &err), -EBADMSG);
	ck_assert_ptr_null(hosttotals_find(u, "n1", "scratch"));
	free(buf);
	hosttotals_free(u);
}
END_TEST

START_TEST(newer_version)
{
	struct hosttotals *t, *u;
	struct statefile_out *o;
	struct lh_err err;
	struct tmp x;
	uint8_t hdr[8] = {'L', 'H', 'H', 'T', 0, 0, 0, 2};

	tmp_make(&x);
	ck_assert_int_eq(statefile_create(x.path, &o, &err), 0);
	ck_assert_int_eq(wbuf_put(statefile_buf(o), hdr, sizeof(hdr)), 0);
	ck_assert_int_eq(statefile_commit(o, &err), 0);
	t = filled();
	ck_assert_int_eq(hosttotals_new(0, &u), 0);
	ck_assert_int_eq(hosttotals_load(u, x.path, &err), -EBADMSG);
	ck_assert_msg(strstr(err.reason, "newer") != NULL, "%s", err.reason);
	ck_assert_uint_eq(hosttotals_last_sweep(u), 0);
	hosttotals_free(t);
	hosttotals_free(u);
	tmp_clean(&x);
}
END_TEST

/* 20,000 hosts in 4 filesystems: every row found, a save and a load. */
START_TEST(many)
{
	struct hosttotals *t, *u;
	struct lh_err err;
	const char *fss[4] = {"scratch", "home", "proj", "work"};
	char host[32];
	struct tmp x;
	size_t i, n;

	ck_assert_int_eq(hosttotals_new(1000000, &t), 0);
	for (i = 0; i < 80000; i++) {
		(void)snprintf(host, sizeof(host), "node%05zu", i / 4);
		add(t, 20, host, fss[i % 4], i, i % 7);
	}
	(void)hosttotals_rows(t, &n);
	ck_assert_uint_eq(n, 80000);
	tmp_make(&x);
	ck_assert_int_eq(hosttotals_save(t, x.path, &err), 0);
	ck_assert_int_eq(hosttotals_new(0, &u), 0);
	ck_assert_int_eq(hosttotals_load(u, x.path, &err), 0);
	ck_assert_uint_eq(get(u, "node19999", "work")->total.read_bytes, 79999);
	hosttotals_free(t);
	hosttotals_free(u);
	tmp_clean(&x);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hosttotals");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sums_rows);
	tcase_add_test(tc, cap);
	tcase_add_test(tc, fs_totals);
	tcase_add_test(tc, marks);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, damaged);
	tcase_add_test(tc, newer_version);
	tcase_add_test(tc, many);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
