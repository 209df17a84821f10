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
		ck_assert_uint_eq(c->name_len, strlen(c->name));
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
	ck_assert_int_eq(parse_str("x 1 samples [reqs]\n", NULL), 0);
	name[99] = '\0';
	ck_assert_ptr_null(lstats_find(&st, name));
	ck_assert_ptr_nonnull(lstats_find(&st, "x"));
	ck_assert_int_eq(parse_str("x 1 samples [0123456789abcdef]\n", NULL),
	    -EBADMSG);
	ck_assert_int_eq(lstats_parse(&st, "x 1 samples [reqs]\0\n", 20, 0,
	                     &err),
	    -EBADMSG);
}
END_TEST

/* ---- the fast path (Lustre's own layout) against the general way --- */

static struct lstats st2;

/* Parse exactly len bytes (a buffer of that size, so that ASan sees any
 * read past its end). */
static int
parse_exact(struct lstats *out, const char *s, size_t len, unsigned flags,
    struct lh_err *err)
{
	char *buf = malloc(len > 0 ? len : 1);
	int rc;

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, s, len);
	rc = lstats_parse(out, buf, len, flags, err);
	free(buf);
	return rc;
}

static void
assert_same_time(const char *what, const struct lstats_time *a,
    const struct lstats_time *b)
{
	ck_assert_msg(a->present == b->present &&
	        (!a->present || (a->sec == b->sec && a->nsec == b->nsec)),
	    "%s differs", what);
}

/* a and b the same; with minmax false, but for min, max and sumsq
 * (LSTATS_PARSE_NO_MINMAX). */
static void
assert_same_stats(const char *what, const struct lstats *a,
    const struct lstats *b, bool minmax)
{
	unsigned i;

	assert_same_time(what, &a->snapshot, &b->snapshot);
	assert_same_time(what, &a->start, &b->start);
	assert_same_time(what, &a->elapsed, &b->elapsed);
	ck_assert_msg(a->time_unit == b->time_unit &&
	        a->ncounters == b->ncounters && a->nskipped == b->nskipped &&
	        a->first_skipped == b->first_skipped,
	    "%s: header fields differ", what);
	for (i = 0; i < a->ncounters; i++) {
		const struct lstats_counter *x = &a->counters[i];
		const struct lstats_counter *y = &b->counters[i];

		ck_assert_msg(strcmp(x->name, y->name) == 0 &&
		        x->name_len == y->name_len &&
		        strcmp(x->unit, y->unit) == 0 && x->count == y->count &&
		        (!minmax ||
		            (x->min == y->min && x->max == y->max &&
		                x->sumsq == y->sumsq)) &&
		        x->sum == y->sum && x->line == y->line &&
		        x->flags == y->flags && x->neg == y->neg,
		    "%s: counter %u (%s) differs", what, i, x->name);
	}
}

/* s as given (lines in Lustre's layout take the fast path), with "\r\n"
 * line ends (every line takes the general way: a CR is a blank there),
 * followed by blank lines (no line near the end of the buffer), and
 * without min, max and sumsq: the same result, error included. */
static void
assert_paths_agree(const char *what, const char *s, size_t len, unsigned flags)
{
	struct lh_err err, err2;
	char *crlf = malloc(2 * len + 64);
	size_t i, n = 0;
	int rc, rc2;

	ck_assert_ptr_nonnull(crlf);
	rc = parse_exact(&st, s, len, flags, &err);
	for (i = 0; i < len; i++) {
		if (s[i] == '\n')
			crlf[n++] = '\r';
		crlf[n++] = s[i];
	}
	rc2 = parse_exact(&st2, crlf, n, flags, &err2);
	ck_assert_msg(rc == rc2 && err.line == err2.line &&
	        strcmp(err.reason, err2.reason) == 0,
	    "%s with CRLF: rc %d '%s', expected %d '%s'", what, rc2,
	    err2.reason, rc, err.reason);
	assert_same_stats(what, &st, &st2, true);
	rc2 = parse_exact(&st2, s, len, flags | LSTATS_PARSE_NO_MINMAX, &err2);
	ck_assert_msg(rc == rc2 && err.line == err2.line &&
	        strcmp(err.reason, err2.reason) == 0,
	    "%s without min/max: rc %d '%s', expected %d '%s'", what, rc2,
	    err2.reason, rc, err.reason);
	assert_same_stats(what, &st, &st2, false);
	memcpy(crlf, s, len);
	memset(crlf + len, '\n', 64);
	rc2 = parse_exact(&st2, crlf, len + 64, flags, &err2);
	/* Unless the padding ends a last line that had no '\n'. */
	if (strstr(err.reason, "no newline") == NULL)
		ck_assert_msg(rc == rc2 && strcmp(err.reason, err2.reason) == 0,
		    "%s padded: rc %d '%s', expected %d '%s'", what, rc2,
		    err2.reason, rc, err.reason);
	if (rc == 0)
		assert_same_stats(what, &st, &st2, true);
	free(crlf);
}

START_TEST(fast_path_fixtures)
{
	char src[4096], *buf;
	size_t len;

	(void)snprintf(src, sizeof(src), "%.*s",
	    (int)(strlen(expect_paths[_i]) - 7), expect_paths[_i]);
	buf = tu_read_file(src, &len);
	assert_paths_agree(src, buf, len, 0);
	assert_paths_agree(src, buf, len, LSTATS_PARSE_UNTERMINATED_OK);
	free(buf);
}
END_TEST

/* Numbers of every length, where the fast path reads one, two or three
 * words, at the end of the buffer and away from it. */
START_TEST(fast_path_numbers)
{
	static const struct {
		const char *text;
		int rc;
		uint64_t value;
	} cases[] = {
	    {"0", 0, 0},
	    {"7", 0, 7},
	    {"1234567", 0, 1234567},
	    {"12345678", 0, 12345678},
	    {"123456789", 0, 123456789},
	    {"123456789012345", 0, 123456789012345ULL},
	    {"1234567890123456", 0, 1234567890123456ULL},
	    {"12345678901234567", 0, 12345678901234567ULL},
	    {"9999999999999999999", 0, 9999999999999999999ULL},
	    {"10000000000000000000", 0, 10000000000000000000ULL},
	    {"18446744073709551615", 0, UINT64_MAX},
	    {"18446744073709551616", -EBADMSG, 0},
	    {"99999999999999999999", -EBADMSG, 0},
	    {"184467440737095516150", -EBADMSG, 0},
	    {"00000000000000000000000018446744073709551615", 0, UINT64_MAX},
	    {"000000000000000000000001", 0, 1},
	    {"0000000000000000000000012", 0, 12},
	    {"00000000000000001", 0, 1},
	    {"-0", 0, 0},
	    {"-5", 0, (uint64_t)-5},
	    {"12a", -EBADMSG, 0},
	    {"1234567a", -EBADMSG, 0},
	    {"12345678a", -EBADMSG, 0},
	    {"123456789012345678a", -EBADMSG, 0},
	    {"1.5", -EBADMSG, 0},
	};
	char line[256];
	unsigned i, pad;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (pad = 0; pad <= 40; pad += 40) {
			int n = snprintf(line, sizeof(line),
			    "read_bytes  %s samples [bytes] 1 %s %s %s\n%*s",
			    cases[i].text, cases[i].text, cases[i].text,
			    cases[i].text, (int)pad, "");
			int rc;

			ck_assert(n > 0 && (size_t)n < sizeof(line));
			if (pad > 0)
				line[n - 1] = '\n'; /* a blank line */
			rc = parse_exact(&st, line, (size_t)n, 0, NULL);
			ck_assert_msg(rc == cases[i].rc, "%s (pad %u): rc %d",
			    cases[i].text, pad, rc);
			if (rc == 0)
				ck_assert_msg(st.counters[0].count ==
				            cases[i].value &&
				        st.counters[0].sum == cases[i].value,
				    "%s (pad %u): %llu", cases[i].text, pad,
				    (unsigned long long)st.counters[0].count);
			assert_paths_agree(cases[i].text, line, (size_t)n, 0);
		}
	}
}
END_TEST

/*
 * The fast path reads a count from column 26 (after "%-25s ") before it
 * has found where the name's spaces end, and reads the line again when
 * they end elsewhere.  Every way a line can sit around that column: a
 * name of 1 to 30 bytes followed by 1 to 30 spaces, the next line's bytes
 * at columns 25 and 26 (a short line), a word where the count should be.
 */
START_TEST(fast_path_column)
{
	static const char *const after[] = {
	    "",
	    "x                         9 samples [reqs]\n",
	    "                          1 samples [reqs]\n",
	    "y  zz                     7 samples [reqs]\n",
	};
	char line[512], name[40];
	unsigned nlen, spaces, a;

	for (nlen = 1; nlen <= 30; nlen++) {
		memset(name, 'n', nlen);
		name[nlen] = '\0';
		for (spaces = 1; spaces <= 30; spaces++) {
			for (a = 0; a < sizeof(after) / sizeof(after[0]); a++) {
				int n = snprintf(line, sizeof(line),
				    "%s%*s%u samples [reqs] 1 2 3 4\n%s", name,
				    (int)spaces, "", spaces, after[a]);

				ck_assert(n > 0 && (size_t)n < sizeof(line));
				ck_assert_int_eq(parse_exact(&st, line,
				                     (size_t)n, 0, NULL),
				    0);
				ck_assert_uint_eq(st.counters[0].name_len,
				    nlen);
				ck_assert_uint_eq(st.counters[0].count, spaces);
				ck_assert_uint_eq(st.counters[0].sumsq, 4);
				assert_paths_agree(line, line, (size_t)n, 0);
			}
		}
	}
	/* Not a count where the padding would put one. */
	assert_paths_agree("word at 26",
	    "ping                      x samples [reqs]\n", 43, 0);
	assert_paths_agree("word before 26",
	    "ping  abc                 5 samples [reqs]\n", 43, 0);
}
END_TEST

/* Headers as 2.10 and later print them take the fast path too. */
START_TEST(fast_path_headers)
{
	static const char *const texts[] = {
	    "snapshot_time             1795405465.003630994 secs.nsecs\n",
	    "snapshot_time 1.000000001 secs.nsecs\nx 1 samples [reqs]\n",
	    "start_time 0.000000000 secs.nsecs\n",
	    "elapsed_time 12345678901234567.999999999 secs.nsecs\n",
	    "snapshot_time 18446744073709551615.000000001 secs.nsecs\n",
	    "snapshot_time 18446744073709551616.000000001 secs.nsecs\n",
	    "snapshot_time 1.00000001 secs.nsecs\n",
	    "snapshot_time 1.0000000001 secs.nsecs\n",
	    "snapshot_time 1.000000001 secs.nsecs \n",
	    "snapshot_time 1.000000001 secs.usecs\n",
	    "snapshot_time 1.000000001 secs.nsecsx\n",
	    "snapshot_time .000000001 secs.nsecs\n",
	    "snapshot_time 1..00000001 secs.nsecs\n",
	    "snapshot_time: 1.000000001 secs.nsecs\n",
	    "start_time 1.000000001 secs.nsecs\nstart_time 1.000000001 "
	    "secs.nsecs\n",
	    "start_time 5 samples [reqs]\n",
	};
	char buf[256];
	unsigned i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		size_t n = strlen(texts[i]);

		assert_paths_agree(texts[i], texts[i], n, 0);
		memcpy(buf, texts[i], n);
		memset(buf + n, '\n', 40);
		assert_paths_agree(texts[i], buf, n + 40, 0);
	}
	ck_assert_int_eq(parse_str(texts[0], NULL), 0);
	ck_assert_uint_eq(st.snapshot.sec, 1795405465);
	ck_assert_uint_eq(st.snapshot.nsec, 3630994);
	ck_assert_int_eq(st.time_unit, LSTATS_TU_NSECS);
}
END_TEST

/* A NUL byte anywhere in a line in Lustre's layout refuses the file, at
 * that line, whichever path reads it. */
START_TEST(fast_path_nul)
{
	static const char *const lines[] = {
	    "snapshot_time             1795405465.003630994 secs.nsecs\n",
	    "read_bytes                921781 samples [bytes] 4096 4194304 "
	    "3238156865536 13124944741286281216\n",
	    "punch                     22 samples [reqs]\n",
	};
	char buf[512];
	unsigned i;
	size_t k;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		size_t n = strlen(lines[i]);

		for (k = 0; k + 1 < n; k++) {
			struct lh_err err;
			size_t len = 0;
			int rc;

			memcpy(buf, "a 1 samples [reqs]\n", 19);
			len += 19;
			memcpy(buf + len, lines[i], n);
			buf[len + k] = '\0';
			len += n;
			rc = parse_exact(&st, buf, len, 0, &err);
			ck_assert_msg(rc == -EBADMSG && err.line == 2 &&
			        strcmp(err.reason, "line 2: NUL byte") == 0,
			    "line %u, NUL at %zu: rc %d '%s'", i, k, rc,
			    err.reason);
			memset(buf + len, '\n', 40);
			rc = parse_exact(&st, buf, len + 40, 0, &err);
			ck_assert_msg(rc == -EBADMSG && err.line == 2,
			    "line %u, NUL at %zu, padded: rc %d", i, k, rc);
		}
	}
}
END_TEST

/* Lines close to Lustre's layout that the fast path leaves to the general
 * way, with the general way's reasons. */
START_TEST(fast_path_refusals)
{
	static const struct {
		const char *text;
		int rc;
		const char *reason;
	} cases[] = {
	    {"x 1 samples [reqs] 1 2\n", -EBADMSG,
	        "line 1: counter x has 6 fields, expected 4, 7 or 8"},
	    {"x 1 samples [reqs] 1 2 3 4 5\n", -EBADMSG,
	        "line 1: counter x has 9 fields, expected 4, 7 or 8"},
	    {"x 1 samples [reqs] 1 2 3 4 5 6 7\n", -EBADMSG,
	        "line 1: counter x has over 10 fields, expected 4, 7 or 8"},
	    {"x 1 samples reqs]\n", -EBADMSG,
	        "line 1: counter x has a bad unit 'reqs]'"},
	    {"x 1 samples [0123456789abcdef]\n", -EBADMSG,
	        "line 1: counter x has a bad unit '[0123456789abcdef]'"},
	    {"x 1 samples [reqs] 1 2 3x\n", -EBADMSG,
	        "line 1: counter x: bad number '3x'"},
	    {"x 18446744073709551616 samples [reqs]\n", -EBADMSG,
	        "line 1: counter x: bad number '18446744073709551616'"},
	    {"x 1 samples [reqs]", -EBADMSG,
	        "line 1: no newline at end of file (truncated read)"},
	    {"x 1 samples [reqs] \n", 0, ""},
	    {"x\t1 samples [reqs]\n", 0, ""},
	    {"x 1  samples [reqs]\n", 0, ""},
	    {"x 1 samples  [reqs]\n", 0, ""},
	    {"x 1 samples [reqs] 1 2 3 4 \n", 0, ""},
	    {"x 1 sample [reqs]\n", 0, ""},
	    {" x 1 samples [reqs]\n", 0, ""},
	    /* Tails close to Lustre's, each read again by
	     * assert_paths_agree() with 64 bytes after it. */
	    {"x 1 samples [reqs]  1 2 3 4\n", 0, ""},
	    {"x 1 samples [reqs] 1  2 3 4\n", 0, ""},
	    {"x 1 samples [reqs] 1 2 3  4\n", 0, ""},
	    {"x 1 samples [reqs]  1 2 3\n", 0, ""},
	    {"x 1 samples [reqs] 1  2 3\n", 0, ""},
	    {"x 1 samples [reqs] 1 2 3 \n", 0, ""},
	    {"x 1 samples [reqs] 1 2 3\t4\n", 0, ""},
	    {"x 1 samples [reqs] 1 2 3 4\r\n", 0, ""},
	    {"x 1 samples [reqs]1 2 3 4\n", -EBADMSG,
	        "line 1: counter x has a bad unit '[reqs]1'"},
	    {"x 1 samples [reqs] 1 2 3 18446744073709551616\n", -EBADMSG,
	        "line 1: counter x: bad number '18446744073709551616'"},
	    {"x 1 samples [reqs] 1 2 18446744073709551615 "
	     "18446744073709551615\n",
	        0, ""},
	};
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lh_err err;
		int rc = parse_exact(&st, cases[i].text, strlen(cases[i].text),
		    0, &err);

		ck_assert_msg(rc == cases[i].rc &&
		        strcmp(err.reason, cases[i].reason) == 0,
		    "'%s': rc %d '%s'", cases[i].text, rc, err.reason);
		assert_paths_agree(cases[i].text, cases[i].text,
		    strlen(cases[i].text), 0);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("statsparse");
	TCase *tc = tcase_create("fixtures");
	TCase *tq = tcase_create("quirks");
	TCase *tf = tcase_create("fast path");

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
	tcase_add_loop_test(tf, fast_path_fixtures, 0, nexpects);
	tcase_add_test(tf, fast_path_numbers);
	tcase_add_test(tf, fast_path_headers);
	tcase_add_test(tf, fast_path_column);
	tcase_add_test(tf, fast_path_nul);
	tcase_add_test(tf, fast_path_refusals);
	suite_add_tcase(s, tf);
	return tu_run(s);
}
