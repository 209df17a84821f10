/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stats parser against every stats-format fixture (each with a
 * hand-written .expect beside it) and against each parser quirk of
 * LUSTRE-FORMATS.md section 9.
 */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "iocount.h"
#include "lctlout.h"
#include "statsparse.h"
#include "testutil.h"

#define MAX_EXPECTS 256
static char *expect_paths[MAX_EXPECTS];
static int nexpects;

static int
collect_cb(const char *path, const struct stat *sb, int type, struct FTW *f)
{
	size_t n = strlen(path);

	(void)sb;
	(void)f;
	if (type == FTW_F && n > 7 && strcmp(path + n - 7, ".expect") == 0 &&
	    nexpects < MAX_EXPECTS)
		expect_paths[nexpects++] = strdup(path);
	return 0;
}

/* ---- the .expect reader ------------------------------------------- */

#define TOKS 10
struct toks {
	char *t[TOKS];
	int n;
};

static void
split(char *line, struct toks *tk)
{
	char *p = line;

	tk->n = 0;
	while (*p != '\0' && tk->n < TOKS) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		tk->t[tk->n++] = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		if (*p != '\0')
			*p++ = '\0';
	}
}

/* An expected number: "-" (absent, must be 0 and unflagged) or decimal
 * with an optional sign, compared in two's complement. */
static void
check_num(const char *where, const char *field, const char *want, uint64_t got,
    bool got_neg)
{
	uint64_t v;
	bool neg = want[0] == '-' && want[1] != '\0';
	char *end;

	if (strcmp(want, "-") == 0) {
		ck_assert_msg(got == 0 && !got_neg, "%s: %s should be absent",
		    where, field);
		return;
	}
	errno = 0;
	v = strtoull(neg ? want + 1 : want, &end, 10);
	ck_assert_msg(*end == '\0' && errno == 0, "%s: bad expect %s", where,
	    want);
	if (neg)
		v = (uint64_t)0 - v;
	ck_assert_msg(v == got && neg == got_neg,
	    "%s: %s is %llu%s, expected %s", where, field,
	    (unsigned long long)got, got_neg ? " (negative)" : "", want);
}

static void
check_time(const char *where, const struct toks *tk,
    const struct lstats_time *t)
{
	if (strcmp(tk->t[1], "absent") == 0) {
		ck_assert_msg(!t->present, "%s: %s should be absent", where,
		    tk->t[0]);
		return;
	}
	ck_assert_msg(tk->n == 3, "%s: bad expect line", where);
	ck_assert_msg(t->present, "%s: %s missing", where, tk->t[0]);
	ck_assert_msg(t->sec == strtoull(tk->t[1], NULL, 10) &&
	        t->nsec == strtoul(tk->t[2], NULL, 10),
	    "%s: %s is %llu.%09u, expected %s %s", where, tk->t[0],
	    (unsigned long long)t->sec, t->nsec, tk->t[1], tk->t[2]);
}

/* One parse result against the directives of one block. */
struct expect_state {
	const char *file;
	struct lstats st;
	int rc;
	struct lh_err err;
	unsigned next_counter;
};

static void
expect_finish(struct expect_state *es)
{
	if (es->rc == 0)
		ck_assert_msg(es->next_counter == es->st.ncounters,
		    "%s: parsed %u counters, expected %u", es->file,
		    es->st.ncounters, es->next_counter);
}

static void
expect_line(struct expect_state *es, struct toks *tk, unsigned lineno)
{
	char where[512];
	const char *d = tk->t[0];

	(void)snprintf(where, sizeof(where), "%s (expect line %u)", es->file,
	    lineno);
	if (strcmp(d, "result") == 0) {
		if (strcmp(tk->t[1], "ok") == 0) {
			ck_assert_msg(es->rc == 0, "%s: parse failed: %s",
			    where, es->err.reason);
		} else {
			ck_assert_msg(es->rc < 0, "%s: parse should fail",
			    where);
			ck_assert_uint_eq(es->err.line,
			    strtoul(tk->t[2], NULL, 10));
			ck_assert_uint_eq(es->st.ncounters, 0);
		}
	} else if (strcmp(d, "time_unit") == 0) {
		enum lstats_time_unit tu = strcmp(tk->t[1], "usecs") == 0 ?
		    LSTATS_TU_USECS :
		    strcmp(tk->t[1], "nsecs") == 0 ? LSTATS_TU_NSECS :
		                                     LSTATS_TU_NONE;
		ck_assert_msg(es->st.time_unit == tu, "%s: time unit", where);
	} else if (strcmp(d, "snapshot_time") == 0) {
		check_time(where, tk, &es->st.snapshot);
	} else if (strcmp(d, "start_time") == 0) {
		check_time(where, tk, &es->st.start);
	} else if (strcmp(d, "elapsed_time") == 0) {
		check_time(where, tk, &es->st.elapsed);
	} else if (strcmp(d, "counter") == 0 || strcmp(d, "dup") == 0) {
		const struct lstats_counter *c;

		ck_assert_msg(tk->n == 8, "%s: bad expect line", where);
		ck_assert_msg(es->next_counter < es->st.ncounters,
		    "%s: counter %s missing", where, tk->t[1]);
		c = &es->st.counters[es->next_counter++];
		ck_assert_msg(strcmp(c->name, tk->t[1]) == 0,
		    "%s: counter is %s, expected %s", where, c->name, tk->t[1]);
		ck_assert_msg(strcmp(c->unit, tk->t[3]) == 0,
		    "%s: unit is %s, expected %s", where, c->unit, tk->t[3]);
		ck_assert_msg(((c->flags & LSTATS_F_DUP) != 0) ==
		        (strcmp(d, "dup") == 0),
		    "%s: dup flag of %s", where, c->name);
		check_num(where, "count", tk->t[2], c->count,
		    (c->neg & LSTATS_NEG_COUNT) != 0);
		check_num(where, "min", tk->t[4], c->min,
		    (c->neg & LSTATS_NEG_MIN) != 0);
		check_num(where, "max", tk->t[5], c->max,
		    (c->neg & LSTATS_NEG_MAX) != 0);
		check_num(where, "sum", tk->t[6], c->sum,
		    (c->neg & LSTATS_NEG_SUM) != 0);
		check_num(where, "sumsq", tk->t[7], c->sumsq,
		    (c->neg & LSTATS_NEG_SUMSQ) != 0);
		ck_assert_msg(((c->flags & LSTATS_F_MINMAXSUM) != 0) ==
		        (strcmp(tk->t[6], "-") != 0),
		    "%s: min/max/sum presence of %s", where, c->name);
		ck_assert_msg(((c->flags & LSTATS_F_SUMSQ) != 0) ==
		        (strcmp(tk->t[7], "-") != 0),
		    "%s: sumsq presence of %s", where, c->name);
	} else {
		ck_abort_msg("%s: unknown directive %s", where, d);
	}
}

START_TEST(test_fixture)
{
	const char *epath = expect_paths[_i];
	char src[4096], *ebuf, *sbuf, *line, *next;
	struct expect_state *es = calloc(1, sizeof(*es));
	size_t elen, slen, pos = 0;
	bool lctl, started = false;
	unsigned lineno = 0, lctl_line = 0;
	struct lctl_block blk;

	ck_assert_ptr_nonnull(es);
	(void)snprintf(src, sizeof(src), "%.*s", (int)(strlen(epath) - 7),
	    epath);
	ebuf = tu_read_file(epath, &elen);
	sbuf = tu_read_file(src, &slen);
	lctl =
	    strstr(ebuf, "\nblock ") != NULL || strncmp(ebuf, "block ", 6) == 0;
	es->file = src;
	if (!lctl) {
		es->rc = lstats_parse(&es->st, sbuf, slen, 0, &es->err);
		started = true;
	}
	for (line = ebuf; line != NULL && *line != '\0'; line = next) {
		struct toks tk;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		lineno++;
		if (line[0] == '#')
			continue;
		split(line, &tk);
		if (tk.n == 0)
			continue;
		if (strcmp(tk.t[0], "block") == 0) {
			int r;

			if (started)
				expect_finish(es);
			r = lctlout_next(sbuf, slen, &pos, &lctl_line, &blk,
			    NULL);
			ck_assert_msg(r == 1, "%s: block %s missing", src,
			    tk.t[1]);
			ck_assert_msg(blk.param_len == strlen(tk.t[1]) &&
			        memcmp(blk.param, tk.t[1], blk.param_len) == 0,
			    "%s: block is %.*s, expected %s", src,
			    (int)blk.param_len, blk.param, tk.t[1]);
			/* lctl captures may lack the final newline. */
			es->rc = lstats_parse(&es->st, blk.value, blk.value_len,
			    LSTATS_PARSE_UNTERMINATED_OK, &es->err);
			es->next_counter = 0;
			started = true;
			continue;
		}
		ck_assert_msg(started, "%s: directive before block", epath);
		expect_line(es, &tk, lineno);
	}
	expect_finish(es);
	if (lctl)
		ck_assert_msg(lctlout_next(sbuf, slen, &pos, &lctl_line, &blk,
		                  NULL) == 0,
		    "%s: more blocks than expected", src);
	free(ebuf);
	free(sbuf);
	free(es);
}
END_TEST

/* ---- one test per parser quirk (LUSTRE-FORMATS.md section 9) ------ */

static struct lstats st; /* 12 KiB: not on the test's stack */

static void
parse_fixture(const char *rel, unsigned flags, int want_rc)
{
	struct lh_err err;
	size_t len;
	char *buf = tu_read_file(tu_fixture(rel), &len);
	int rc = lstats_parse(&st, buf, len, flags, &err);

	ck_assert_msg(rc == want_rc, "%s: rc %d (%s), expected %d", rel, rc,
	    err.reason, want_rc);
	free(buf);
}

static int
parse_str(const char *s, struct lh_err *err)
{
	return lstats_parse(&st, s, strlen(s), 0, err);
}

/* 1: "%lu.%lu secs.usecs": .12141 is 12141 us, not 0.12141 s. */
START_TEST(quirk01_unpadded_usecs)
{
	parse_fixture("2.7/ost-target-stats-pre2.10.txt", 0, 0);
	ck_assert_int_eq(st.time_unit, LSTATS_TU_USECS);
	ck_assert_uint_eq(st.snapshot.sec, 1497639750);
	ck_assert_uint_eq(st.snapshot.nsec, 12141000);
	parse_fixture("2.5/ost-export-stats.txt", 0, 0);
	ck_assert_uint_eq(st.snapshot.nsec, 45071000);
	/* A 9-digit usecs fraction cannot exist. */
	ck_assert_int_eq(parse_str("snapshot_time 1.123456789 secs.usecs\n",
	                     NULL),
	    -EBADMSG);
}
END_TEST

/* 2: three header lines (2.15+), or one (<= 2.14, 2.16 with
 * enable_stats_header=0). */
START_TEST(quirk02_header_lines)
{
	parse_fixture("2.15/ost-export-stats.txt", 0, 0);
	ck_assert(
	    st.snapshot.present && st.start.present && st.elapsed.present);
	ck_assert_int_eq(st.time_unit, LSTATS_TU_NSECS);
	ck_assert_uint_eq(st.start.sec, 1711740878);
	ck_assert_uint_eq(st.start.nsec, 4815162);
	parse_fixture("2.16/ost-export-stats-no-header.txt", 0, 0);
	ck_assert(
	    st.snapshot.present && !st.start.present && !st.elapsed.present);
	ck_assert_ptr_nonnull(lstats_find(&st, "read_bytes"));
}
END_TEST

/* 3: 2.15.0/2.15.1: monotonic times, start_time 0. */
START_TEST(quirk03_monotonic_start_zero)
{
	parse_fixture("2.15/ost-export-stats-2.15.0.txt", 0, 0);
	ck_assert(st.start.present);
	ck_assert_uint_eq(st.start.sec, 0);
	ck_assert_uint_eq(st.start.nsec, 0);
	ck_assert_uint_eq(st.elapsed.sec, st.snapshot.sec);
	ck_assert_uint_eq(st.elapsed.nsec, st.snapshot.nsec);
}
END_TEST

/* 4: zero counters are omitted; a file may be header-only. */
START_TEST(quirk04_header_only)
{
	parse_fixture("2.10/mdt-export-stats-header-only.txt", 0, 0);
	ck_assert_uint_eq(st.ncounters, 0);
	ck_assert(st.snapshot.present);
	ck_assert_ptr_null(lstats_find(&st, "read_bytes"));
}
END_TEST

/* 5: the same name twice (2.5-2.11 OST): the first line counts. */
START_TEST(quirk05_duplicate_name)
{
	const struct lstats_counter *c;
	struct iocount io;

	parse_fixture("2.10/ost-target-stats.txt", 0, 0);
	c = lstats_find(&st, "statfs");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->count, 35359);
	ck_assert_uint_eq(c->flags & LSTATS_F_DUP, 0);
	ck_assert_uint_eq(st.counters[6].count, 124430);
	ck_assert(st.counters[6].flags & LSTATS_F_DUP);
	/* ops: punch 57 + create 2 + statfs 35359 + connect 1 + reconnect 1
	 * + write_ops 4298711; the second statfs, preprw, commitrw and
	 * ping do not count. */
	iocount_from_stats(&io, &st, LH_TARGET_OST);
	ck_assert_uint_eq(io.oss_ops, 57 + 2 + 35359 + 1 + 1 + 4298711);
}
END_TEST

/* 6: 4, 7 or 8 fields; the name column may be 25 or 35 wide. */
START_TEST(quirk06_field_counts)
{
	struct lh_err err;

	parse_fixture("2.14/ost-export-stats.txt", 0, 0);
	ck_assert_uint_eq(lstats_find(&st, "read_bytes")->flags,
	    LSTATS_F_MINMAXSUM | LSTATS_F_SUMSQ);
	parse_fixture("2.10/ost-export-stats.txt", 0, 0);
	ck_assert_uint_eq(lstats_find(&st, "write_bytes")->flags,
	    LSTATS_F_MINMAXSUM);
	ck_assert_uint_eq(lstats_find(&st, "punch")->flags, 0);
	ck_assert_int_eq(parse_str("snapshot_time                       "
	                           "1.000000001 secs.nsecs\n"
	                           "read_bytes                          5 "
	                           "samples [bytes] 1 2 3 4\n",
	                     &err),
	    0);
	ck_assert_uint_eq(lstats_find(&st, "read_bytes")->sum, 3);
	ck_assert_int_eq(parse_str("x 1 samples [reqs] 1 2\n", &err), -EBADMSG);
	ck_assert_uint_eq(err.line, 1);
	ck_assert_int_eq(parse_str("a 1 samples [reqs]\nx 1 samples [reqs] "
	                           "1 2 3 4 5\n",
	                     &err),
	    -EBADMSG);
	ck_assert_uint_eq(err.line, 2);
}
END_TEST

/* 7: sumsq wraps modulo 2^64 (printed %llu); s64 printed %lld. */
START_TEST(quirk07_wrapped_and_signed)
{
	const struct lstats_counter *c;
	struct lh_err err;

	parse_fixture("2.14/ost-export-stats-sumsq-wrapped.txt", 0, 0);
	c = lstats_find(&st, "read_bytes");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->sumsq, 5864426827895799808ULL);
	ck_assert_int_eq(parse_str("x 1 samples [reqs] 0 0 "
	                           "18446744073709551615 "
	                           "18446744073709551615\n",
	                     &err),
	    0);
	ck_assert_uint_eq(st.counters[0].sum, UINT64_MAX);
	ck_assert_int_eq(parse_str("x 1 samples [reqs] 0 0 1 "
	                           "18446744073709551616\n",
	                     &err),
	    -EBADMSG);
	ck_assert_int_eq(parse_str("x 2 samples [usecs] -3 4 5 -6\n", &err), 0);
	ck_assert_uint_eq(st.counters[0].min, (uint64_t)-3);
	ck_assert_uint_eq(st.counters[0].neg,
	    LSTATS_NEG_MIN | LSTATS_NEG_SUMSQ);
}
END_TEST

/* 9: 2.12/2.13 MDT byte counters print [reqs]; the name decides. */
START_TEST(quirk09_reqs_unit_on_bytes)
{
	const struct lstats_counter *c;
	struct iocount io;

	parse_fixture("2.12/mdt-export-stats.txt", 0, 0);
	c = lstats_find(&st, "read_bytes");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->unit, "reqs");
	iocount_from_stats(&io, &st, LH_TARGET_MDT);
	ck_assert_uint_eq(io.read_bytes, c->sum);
	ck_assert_uint_eq(io.read_ops, c->count);
}
END_TEST

/* 10: units are opaque tokens ("locks/s" has a slash). */
START_TEST(quirk10_opaque_units)
{
	ck_assert_int_eq(parse_str("snapshot_time 5.000000000 secs.nsecs\n"
	                           "grant 3 samples [locks/s] 1 2 3\n"
	                           "ldlm 4 samples [regs]\n",
	                     NULL),
	    0);
	ck_assert_str_eq(st.counters[0].unit, "locks/s");
	ck_assert_str_eq(st.counters[1].unit, "regs");
	ck_assert_int_eq(parse_str("x 1 samples reqs\n", NULL), -EBADMSG);
	ck_assert_int_eq(parse_str("x 1 samples []\n", NULL), -EBADMSG);
}
END_TEST

/* 21: a partial read ends mid-line: reject, never parse "read_bytes 4941". */
START_TEST(quirk21_truncated)
{
	struct lh_err err;
	size_t len;
	char *buf =
	    tu_read_file(tu_fixture(
	                     "quirks/ost-export-stats-truncated-200B.txt"),
	        &len);

	ck_assert_int_eq(lstats_parse(&st, buf, len, 0, &err), -EBADMSG);
	ck_assert_uint_eq(err.line, 4);
	ck_assert_uint_eq(st.ncounters, 0);
	ck_assert(!st.snapshot.present);
	/* Even a complete-looking last line is refused without '\n'. */
	ck_assert_int_eq(parse_str("snapshot_time 1.000000001 secs.nsecs",
	                     &err),
	    -EBADMSG);
	free(buf);
}
END_TEST

/* 24: blank lines, trailing blanks and CRs are tolerated. */
START_TEST(quirk24_blanks)
{
	ck_assert_int_eq(parse_str("\nsnapshot_time 7.000000001 secs.nsecs  "
	                           "\r\n\n   \nread_bytes 2 samples [bytes] 1 "
	                           "1 2 \t\n\n",
	                     NULL),
	    0);
	ck_assert_uint_eq(st.ncounters, 1);
	ck_assert_uint_eq(st.snapshot.nsec, 1);
	ck_assert_int_eq(parse_str("", NULL), -ENODATA);
	ck_assert_int_eq(parse_str("\n \n", NULL), -ENODATA);
}
END_TEST

/* Header forms outside export stats: brw_stats' "snapshot_time: x
 * (secs.usecs)", the 2.15.0 job_stats "snapshot_time   : x secs.nsecs", integer
 * seconds. */
START_TEST(header_forms)
{
	ck_assert_int_eq(parse_str("snapshot_time:         1.5 (secs.usecs)\n"
	                           "start_time : 9.000000010 secs.nsecs\n"
	                           "elapsed_time 12\n",
	                     NULL),
	    0);
	ck_assert_uint_eq(st.snapshot.nsec, 5000);
	ck_assert_uint_eq(st.start.nsec, 10);
	ck_assert_uint_eq(st.elapsed.sec, 12);
	ck_assert_int_eq(parse_str("snapshot_time 1.0 secs.nsecs\n"
	                           "snapshot_time 2.0 secs.nsecs\n",
	                     NULL),
	    -EBADMSG);
	ck_assert_int_eq(parse_str("snapshot_time 1.x secs.nsecs\n", NULL),
	    -EBADMSG);
	ck_assert_int_eq(parse_str("snapshot_time 1.5 furlongs\n", NULL),
	    -EBADMSG);
	ck_assert_int_eq(parse_str("snapshot_time\n", NULL), -EBADMSG);
}
END_TEST

/* Lines that are neither header nor counter are counted, not fatal. */
START_TEST(unknown_lines)
{
	ck_assert_int_eq(parse_str("snapshot_time 1.000000001 secs.nsecs\n"
	                           "future stuff here\n"
	                           "x 1 samples [reqs]\n"
	                           "more\n",
	                     NULL),
	    0);
	ck_assert_uint_eq(st.nskipped, 2);
	ck_assert_uint_eq(st.first_skipped, 2);
	ck_assert_uint_eq(st.ncounters, 1);
}
END_TEST

START_TEST(limits)
{
	char buf[LSTATS_COUNTERS_MAX * 32 + 64], name[100];
	size_t off = 0;
	unsigned i;
	struct lh_err err;

	for (i = 0; i <= LSTATS_COUNTERS_MAX; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off,
		    "c%u 1 samples [reqs]\n", i);
	ck_assert_int_eq(lstats_parse(&st, buf, off, 0, &err), -E2BIG);
	ck_assert_uint_eq(err.line, LSTATS_COUNTERS_MAX + 1);
	memset(name, 'n', sizeof(name));
	(void)snprintf(buf, sizeof(buf), "%.*s 1 samples [reqs]\n", 64, name);
	ck_assert_int_eq(parse_str(buf, NULL), -EBADMSG);
	ck_assert_int_eq(parse_str("x 1 samples [0123456789abcdef]\n", NULL),
	    -EBADMSG);
	ck_assert_int_eq(lstats_parse(&st, "x 1 samples [reqs]\0\n", 20, 0,
	                     &err),
	    -EBADMSG);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("statsparse");
	TCase *tc = tcase_create("fixtures");
	TCase *tq = tcase_create("quirks");

	if (nftw(LH_FIXTURE_DIR, collect_cb, 16, FTW_PHYS) != 0 ||
	    nexpects == 0) {
		(void)fprintf(stderr, "no .expect files under %s\n",
		    LH_FIXTURE_DIR);
		return 1;
	}
	tcase_add_loop_test(tc, test_fixture, 0, nexpects);
	suite_add_tcase(s, tc);
	tcase_add_test(tq, quirk01_unpadded_usecs);
	tcase_add_test(tq, quirk02_header_lines);
	tcase_add_test(tq, quirk03_monotonic_start_zero);
	tcase_add_test(tq, quirk04_header_only);
	tcase_add_test(tq, quirk05_duplicate_name);
	tcase_add_test(tq, quirk06_field_counts);
	tcase_add_test(tq, quirk07_wrapped_and_signed);
	tcase_add_test(tq, quirk09_reqs_unit_on_bytes);
	tcase_add_test(tq, quirk10_opaque_units);
	tcase_add_test(tq, quirk21_truncated);
	tcase_add_test(tq, quirk24_blanks);
	tcase_add_test(tq, header_forms);
	tcase_add_test(tq, unknown_lines);
	tcase_add_test(tq, limits);
	suite_add_tcase(s, tq);
	return tu_run(s);
}
