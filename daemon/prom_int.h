/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The two parts of the Prometheus page (daemon/prom.c serves them): the
 * counters, written once per closed sweep and shared by every scrape
 * until the next (prom_page.c), and the daemon's health, written at each
 * scrape (prom_health.c).  Both are pure: they write what they are given
 * into a promtext, so that the unit test and the benchmark run them
 * alone.  The names are listed in docs/api.md, section 2.
 */
#ifndef LH_PROM_INT_H
#define LH_PROM_INT_H

#include <stddef.h>
#include <stdint.h>

struct httpd_stats;
struct hosttotals_fs;
struct hosttotals_row;
struct lh_config;
struct lh_status;
struct promtext;

/* What a page of counters showed. */
struct prom_page_stats {
	size_t rows;         /* (host, fs) rows shown */
	size_t series;       /* per-host series shown */
	size_t dropped;      /* per-host series left out by max_series */
	size_t rows_refused; /* rows the counters refused (their cap) */
};

/* What the page is made of: the counters of every (host, fs) row and
 * every filesystem (hosttotals.h), and how many rows the counters
 * themselves refused (their own cap). */
struct prom_counters {
	const struct hosttotals_row *rows;
	size_t nrows;
	const struct hosttotals_fs *fss;
	size_t nfss;
	size_t rows_refused;
};

/*
 * The counters' families, chosen by cfg's prometheus section: the
 * filesystems' totals, then the per-host families, rows in c's order
 * until max_series (a row is shown whole or not at all).  Returns 0, or
 * -ENOMEM (p failed).
 */
int prom_page_render(struct promtext *p, const struct lh_config *cfg,
    const struct prom_counters *c, struct prom_page_stats *ret);

/* The health families: st (status.h), the listener's statistics when hs
 * is not NULL, and the page's own (ps). */
void prom_health_render(struct promtext *p, const struct lh_status *st,
    const struct httpd_stats *hs, const struct prom_page_stats *ps);

#endif
