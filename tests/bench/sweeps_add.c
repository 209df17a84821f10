/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_sweeps_add [ROUNDS]: the aggregator's decode and sum of a sweep,
 * in memory, without sockets or HMAC: tests/bench/agg_load.sh's load
 * (100 gatherers x 10,000 records over 4 filesystems, 1,000,000 records,
 * made by loadgen_layout.c) decoded and summed ROUNDS times (default
 * 15).  Per round, the process's CPU time (CLOCK_PROCESS_CPUTIME_ID) of:
 *  - check:  msg_sweep_decode() without a callback, one checking pass;
 *  - stage:  msg_sweep_stage(), the same pass keeping every record;
 *  - decode: msg_sweep_decode() with a callback that does nothing: the
 *            checking pass, then the pass handing out records with their
 *            NIDs' text (what the aggregator ran before issue 19);
 *  - add:    sweeps_decode() and sweeps_add() of every SWEEP into an open
 *            sweep, as the intake does: the decoding and the sums;
 *  - close:  sweeps_close() of that sweep, without consumers.
 * Medians and all rounds on stdout.  The choice of issue 19 between
 * staging a SWEEP's records and reading it a second time: staging costs
 * stage - check, a second reading about check again (docs/performance.md).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "loadgen.h"
#include "msg.h"
#include "sweeps.h"

#define ROUNDS_MAX 1000
#define NPHASES    5

static const char *const phase_name[NPHASES] = {"check", "stage", "decode",
    "add", "close"};

_Noreturn void
die(const char *fmt, ...)
{
	va_list ap;

	(void)fprintf(stderr, "bench_sweeps_add: ");
	va_start(ap, fmt);
	(void)vfprintf(stderr, fmt, ap);
	va_end(ap);
	(void)fprintf(stderr, "\n");
	exit(1);
}

static double
cpu_s(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
nothing_cb(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	(void)h;
	*(size_t *)arg += r->nid[0] != '\0';
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The three decoders over every payload of sweep 0: t[0..2]. */
static void
round_decoders(struct loadgen *lg, struct msg_stage *st, double *t)
{
	struct msg_sweep h;
	size_t seen = 0;
	unsigned g, k;
	double t0;

	for (k = 0; k < 3; k++) {
		t0 = cpu_s();
		for (g = 0; g < lg->ngat; g++) {
			const struct wbuf *w = &lg->conns[g].loads[0];
			int rc = k == 0 ?
			    msg_sweep_decode(&h, w->data, w->len, NULL, NULL,
			        NULL) :
			    k == 1 ?
			    msg_sweep_stage(&h, w->data, w->len, st, NULL) :
			    msg_sweep_decode(&h, w->data, w->len, nothing_cb,
			        &seen, NULL);

			if (rc != 0)
				die("cannot decode");
		}
		t[k] = cpu_s() - t0;
	}
}

/* Every gatherer's SWEEP of round r into s, then the close: t[3], t[4]. */
static void
round_add(struct loadgen *lg, struct sweeps *s, uint64_t sweep, unsigned r,
    double *t)
{
	struct sweeps_report rep;
	struct msg_sweep h;
	struct lh_err err;
	char name[MSG_NAME_MAX];
	unsigned g;
	double t0 = cpu_s();

	for (g = 0; g < lg->ngat; g++) {
		const struct wbuf *w = &lg->conns[g].loads[r % lg->nsweeps];

		gat_name(lg, g, name, sizeof(name));
		/* Batch numbers as the payload has them, rising by round. */
		if (sweeps_decode(s, w->data, w->len, &h, &err) < 0)
			die("%s", err.reason);
		h.batch += (uint64_t)r * lg->nsweeps;
		if (sweeps_add(s, name, sweep, &h, w->data, w->len, 0, 1, 1,
		        &err) != SWEEPS_ON_TIME)
			die("not added: %s", err.reason);
	}
	t[3] = cpu_s() - t0;
	t0 = cpu_s();
	if (sweeps_close(s, (sweep + 1) * LG_NS, NULL, NULL, NULL, &rep) != 0 ||
	    rep.nclients != (size_t)npool(lg))
		die("close: %zu clients", rep.nclients);
	t[4] = cpu_s() - t0;
}

static void
report(double (*t)[NPHASES], unsigned rounds)
{
	double v[ROUNDS_MAX];
	unsigned k, r;

	for (k = 0; k < NPHASES; k++) {
		for (r = 0; r < rounds; r++)
			v[r] = t[r][k];
		qsort(v, rounds, sizeof(v[0]), cmp_double);
		(void)
		    printf("%-6s median %.4f s CPU per 1,000,000 records; all:",
		        phase_name[k], v[rounds / 2]);
		for (r = 0; r < rounds; r++)
			(void)printf(" %.4f", t[r][k]);
		(void)printf("\n");
	}
}

int
main(int argc, char **argv)
{
	static double t[ROUNDS_MAX][NPHASES];
	struct lg_opts o = {NULL, NULL, NULL, NULL};
	struct msg_stage st;
	struct sweeps_conf sc;
	struct loadgen lg;
	struct sweeps *s;
	unsigned long rounds = 15;
	uint64_t sweep = 1700000000;
	unsigned r;
	char *end;

	if (argc > 1) {
		rounds = strtoul(argv[1], &end, 10);
		if (*end != '\0')
			rounds = 0;
	}
	if (rounds == 0 || rounds > ROUNDS_MAX)
		die("ROUNDS: 1 to %d", ROUNDS_MAX);
	parse_args(&lg, &o, 1, argv);
	layout_check(&lg);
	make_pool(&lg);
	lg.conns = calloc(lg.ngat, sizeof(*lg.conns));
	if (lg.conns == NULL)
		die("out of memory");
	lg.batch0 = 1;
	encode_all(&lg);
	memset(&sc, 0, sizeof(sc));
	sc.interval_s = lg.interval;
	sc.deadline_ms = 1000;
	if (sweeps_new(&sc, sweep * LG_NS, &s) != 0)
		die("sweeps_new");
	memset(&st, 0, sizeof(st));
	for (r = 0; r < rounds; r++) {
		round_decoders(&lg, &st, t[r]);
		round_add(&lg, s, sweep, r, t[r]);
		sweep += lg.interval;
	}
	(void)printf("%u gatherers x %u records, %lu rounds\n", lg.ngat,
	    lg.nclients, rounds);
	report(t, (unsigned)rounds);
	msg_stage_free(&st);
	sweeps_free(s);
	return 0;
}
