/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CPU cost of the /metrics page at the size issue 17 names: HOSTS
 * hosts x FS filesystems of counters (hosttotals rows with large,
 * different values), every per-host family, rendered ROUNDS times as
 * daemon/prom.c renders it once per closed sweep; and the health part
 * it writes at every scrape.
 *
 *   bench_prom_render [HOSTS [FS [ROUNDS]]]   (20000 4 15)
 *
 * Prints one line per round, "cpu_ms bytes series", then the medians:
 *   page_cpu_ms_median N   health_cpu_us_median N
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "err.h"
#include "hosttotals.h"
#include "prom_int.h"
#include "promtext.h"
#include "status.h"

static double
cpu_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Rows as the aggregator has them: host names like a cluster's, large
 * counters (a month of I/O) that differ in every digit. */
static struct hosttotals_row *
make_rows(size_t hosts, size_t nfs, char **names)
{
	static const char *const fs[] = {"scratch", "home", "project",
	    "archive", "work", "tmp", "data", "apps"};
	struct hosttotals_row *r = calloc(hosts * nfs, sizeof(*r));
	uint64_t x = 0x9e3779b97f4a7c15u;
	size_t h, f;

	*names = calloc(hosts, 32);
	if (r == NULL || *names == NULL)
		exit(1);
	for (h = 0; h < hosts; h++) {
		char *n = *names + h * 32;

		(void)snprintf(n, 32, "cn%05zu-ib0.hpc", h % 100000);
		for (f = 0; f < nfs; f++) {
			struct hosttotals_row *w = &r[h * nfs + f];
			uint64_t *v = &w->total.read_bytes;

			w->host = n;
			w->fs = fs[f % 8];
			for (int k = 0; k < IOCOUNT_N; k++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				v[k] = x >> (k < 2 ? 14 : 30);
			}
		}
	}
	return r;
}

int
main(int argc, char **argv)
{
	size_t hosts = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	size_t nfs = argc > 2 ? strtoul(argv[2], NULL, 10) : 4;
	size_t rounds = argc > 3 ? strtoul(argv[3], NULL, 10) : 15, i;
	struct lh_config cfg;
	struct prom_counters c;
	struct prom_page_stats ps;
	struct lh_status st;
	double *page = calloc(rounds, sizeof(double));
	double *health = calloc(rounds, sizeof(double));
	struct hosttotals_row *rows;
	char *names;

	if (rounds == 0 || page == NULL || health == NULL)
		return 1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.prom_families = CONFIG_PROM_ALL;
	memset(&c, 0, sizeof(c));
	rows = make_rows(hosts, nfs, &names);
	c.rows = rows;
	c.nrows = hosts * nfs;
	memset(&st, 0, sizeof(st));
	st.role = "aggregator";
	st.version = "bench";
	for (i = 0; i < rounds; i++) {
		struct promtext p;
		double t0 = cpu_ms();
		char *s;
		size_t n;

		promtext_init(&p);
		if (prom_page_render(&p, &cfg, &c, &ps) < 0)
			return 1;
		s = promtext_take(&p, &n);
		page[i] = cpu_ms() - t0;
		free(s);
		t0 = cpu_ms();
		promtext_init(&p);
		prom_health_render(&p, &st, NULL, &ps);
		health[i] = (cpu_ms() - t0) * 1e3;
		printf("%.3f %zu %zu\n", page[i], n, ps.series);
		promtext_free(&p);
	}
	printf("page_cpu_ms_median %.1f   health_cpu_us_median %.1f\n",
	    median(page, rounds), median(health, rounds));
	free(page);
	free(health);
	free(rows);
	free(names);
	return 0;
}
