/* SPDX-License-Identifier: BSD-2-Clause */
/* The Prometheus consumer: /metrics on the HTTP listener (prom.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "clock.h"
#include "config.h"
#include "consumer.h"
#include "hosttotals.h"
#include "httpd.h"
#include "log.h"
#include "prom.h"
#include "prom_int.h"
#include "promtext.h"
#include "status.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The counters' text of one closed sweep, shared by the scrapes that
 * send it: the consumer holds one reference while it is the current
 * page, each reply in flight one more (freed by the last). */
struct page {
	char *text;
	size_t len;
	unsigned refs;
	uint64_t sweep; /* hosttotals_last_sweep() it was written at */
	struct prom_page_stats st;
};

struct prom {
	const struct lh_config *cfg;
	struct httpd *http;
	const struct status_board *board;
	const struct hosttotals *totals;
	struct page *page;           /* NULL: written at the next scrape */
	struct prom_page_stats last; /* the last page's, for the health */
	bool cap_logged;             /* max_series reached: said once */
	bool reload_changed;
	uint64_t scrapes, renders;
	double render_cpu; /* seconds, the last page */
};

static void
page_unref(struct page *pg)
{
	if (pg != NULL && --pg->refs == 0) {
		free(pg->text);
		free(pg);
	}
}

/* evbuffer's cleanup of a reply's reference to a page. */
static void
page_sent(const void *data, size_t len, void *arg)
{
	(void)data;
	(void)len;
	page_unref(arg);
}

/* This process's CPU time (user and system), s. */
static double
cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* max_series reached: one line the first time (again after a reload
 * changed the section). */
static void
log_cap(struct prom *m, const struct prom_page_stats *st)
{
	if (st->dropped == 0 || m->cap_logged)
		return;
	m->cap_logged = true;
	log_warnx("prometheus: max_series (%lu) reached: %zu per-host series "
	          "left out of /metrics (rows past the cap, newest first); "
	          "raise prometheus { max_series } or choose fewer families "
	          "or filesystems",
	    m->cfg->prom_max_series, st->dropped);
}

/* The counters' page of the last closed sweep.  NULL: out of memory
 * (logged). */
static struct page *
page_make(struct prom *m)
{
	struct prom_counters c;
	struct promtext p;
	struct page *pg = calloc(1, sizeof(*pg));
	double cpu0 = cpu_s();

	if (pg == NULL)
		goto fail;
	memset(&c, 0, sizeof(c));
	if (m->totals != NULL) {
		c.rows = hosttotals_rows(m->totals, &c.nrows);
		c.fss = hosttotals_fss(m->totals, &c.nfss);
		c.rows_refused = hosttotals_refused(m->totals);
		pg->sweep = hosttotals_last_sweep(m->totals);
	}
	promtext_init(&p);
	if (prom_page_render(&p, m->cfg, &c, &pg->st) < 0 ||
	    (pg->text = promtext_take(&p, &pg->len)) == NULL) {
		promtext_free(&p);
		goto fail;
	}
	pg->refs = 1;
	m->renders++;
	m->render_cpu = cpu_s() - cpu0;
	m->last = pg->st;
	log_debug("prometheus: page of sweep %" PRIu64 ": %zu rows, %zu "
	          "series (%zu left out), %zu bytes in %.3f s CPU",
	    pg->sweep, pg->st.rows, pg->st.series, pg->st.dropped, pg->len,
	    m->render_cpu);
	log_cap(m, &pg->st);
	return pg;
fail:
	free(pg);
	log_warnx("prometheus: out of memory writing /metrics");
	return NULL;
}

/* The current page, written first if a sweep closed since. */
static struct page *
page_current(struct prom *m)
{
	if (m->page != NULL && m->totals != NULL &&
	    m->page->sweep != hosttotals_last_sweep(m->totals)) {
		page_unref(m->page);
		m->page = NULL;
	}
	if (m->page == NULL)
		m->page = page_make(m);
	return m->page;
}

/* The health part, into body.  Returns 0 or -1. */
static int
health_add(struct prom *m, struct evbuffer *body)
{
	struct httpd_stats hs;
	struct lh_status st;
	struct promtext p;
	int rc;

	memset(&st, 0, sizeof(st));
	if (m->board != NULL && status_collect(m->board, &st) < 0)
		return -1;
	if (m->http != NULL)
		httpd_stats(m->http, &hs);
	promtext_init(&p);
	prom_health_render(&p, &st, m->http != NULL ? &hs : NULL, &m->last);
	status_release(&st);
	rc = p.failed || evbuffer_add(body, p.buf, p.len) < 0 ? -1 : 0;
	promtext_free(&p);
	return rc;
}

static void
metrics_cb(void *arg, struct httpd_req *r)
{
	struct prom *m = arg;
	struct evbuffer *body = evbuffer_new();
	struct page *pg = page_current(m);

	m->scrapes++;
	if (body == NULL || pg == NULL || health_add(m, body) < 0) {
		if (body != NULL)
			evbuffer_free(body);
		httpd_reply_error(r, 500, "out of memory");
		return;
	}
	/* The counters by reference: concurrent scrapes share one copy. */
	pg->refs++;
	if (evbuffer_add_reference(body, pg->text, pg->len, page_sent, pg) <
	    0) {
		pg->refs--;
		evbuffer_free(body);
		httpd_reply_error(r, 500, "out of memory");
		return;
	}
	httpd_reply(r, 200, CONTENT_TYPE, body);
	evbuffer_free(body);
}

static bool
prom_wants_hosts(void *ctx)
{
	struct prom *m = ctx;

	/* Its per-host counters are made from the rows with hosts. */
	return m->http != NULL &&
	    (m->cfg->prom_families != 0 || m->cfg->prom_metadata_ops != 0);
}

static int
prom_start(void *ctx, struct event_base *base)
{
	struct prom *m = ctx;

	(void)base;
	if (m->http == NULL)
		return 0;
	return httpd_route(m->http, "/metrics", 0, metrics_cb, m);
}

/* A closed sweep that counted something: the counters changed, the page
 * is written again at the next scrape (replies in flight keep the one
 * they send).  A sweep in which nothing moved keeps it (page_current()
 * also looks at the counters' last sweep). */
static void
prom_publish(void *ctx, const struct consumer_sweep *s)
{
	struct prom *m = ctx;

	if (s->nhosts == 0 && s->ntotals == 0)
		return;
	page_unref(m->page);
	m->page = NULL;
}

static int
prom_reload_prepare(void *ctx, const struct lh_config *old,
    const struct lh_config *cfg)
{
	struct prom *m = ctx;

	m->reload_changed = !config_section_equal(old, cfg, "prometheus");
	return 0;
}

static void
prom_reload_apply(void *ctx, const struct lh_config *cfg,
    struct event_base *base)
{
	struct prom *m = ctx;

	(void)base;
	m->cfg = cfg;
	if (!m->reload_changed)
		return;
	m->cap_logged = false;
	page_unref(m->page);
	m->page = NULL;
}

static void
prom_stats(void *ctx, char *buf, size_t size)
{
	struct prom *m = ctx;

	if (m->scrapes == 0) {
		(void)snprintf(buf, size, "%s", "");
		return;
	}
	(void)snprintf(buf, size,
	    "prometheus: %" PRIu64 " scrapes, %" PRIu64 " pages written; "
	    "the last: %zu series (%zu left out) in %.3f s CPU",
	    m->scrapes, m->renders, m->last.series, m->last.dropped,
	    m->render_cpu);
}

static void
prom_free(void *ctx)
{
	struct prom *m = ctx;

	if (m == NULL)
		return;
	if (m->http != NULL)
		httpd_unroute(m->http, m);
	page_unref(m->page);
	free(m);
}

static const struct consumer_ops prom_ops = {
    .name = "prometheus",
    .wants_hosts = prom_wants_hosts,
    .start = prom_start,
    .publish = prom_publish,
    .reload_prepare = prom_reload_prepare,
    .reload_apply = prom_reload_apply,
    .stats = prom_stats,
    .free = prom_free,
};

int
prom_open(const struct consumer_env *env, struct consumer *ret)
{
	struct prom *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		log_warnx("prometheus: out of memory");
		return -1;
	}
	m->cfg = env->cfg;
	m->http = env->http;
	m->board = env->board;
	m->totals = env->totals;
	ret->ops = &prom_ops;
	ret->ctx = m;
	return 0;
}
