/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The health part of the Prometheus page (prom_int.h): what the daemon
 * says of itself in a status snapshot (status.h), the HTTP listener's
 * counts and the page's own, written at every scrape (it is small).
 * Parts that are off (DNS, Ganglia on a relay without spoof, routes on
 * an aggregator) have their families' HELP and TYPE but no samples, so
 * that every page names every family (the dashboard's test reads them).
 */
#include <stdbool.h>
#include <stddef.h>

#include "httpd.h"
#include "prom_int.h"
#include "promtext.h"
#include "status.h"

/* A family of one sample without labels. */
struct one {
	const char *name, *type, *help;
	double v;
};

static void
put_ones(struct promtext *p, const struct one *o, size_t n, bool on)
{
	size_t i;

	for (i = 0; i < n; i++) {
		promtext_family(p, o[i].name, o[i].type, o[i].help);
		if (on)
			promtext_gauge(p, o[i].name, NULL, NULL, 0, o[i].v);
	}
}

#define NONES(a) (sizeof(a) / sizeof((a)[0]))

static void
put_info(struct promtext *p, const struct lh_status *st)
{
	static const char *const k[] = {"role", "version", "name"};
	const char *v[] = {st->role != NULL ? st->role : "",
	    st->version != NULL ? st->version : "", st->name};

	promtext_family(p, "lharvestd_info", "gauge",
	    "The daemon's role, version and name (value 1)");
	promtext_gauge(p, "lharvestd_info", k, v, 3, 1);
}

static void
put_sweep(struct promtext *p, const struct lh_status *st)
{
	const struct one o[] = {
	    {"lharvestd_start_time_seconds", "gauge",
	        "When the daemon started, seconds since the epoch",
	        (double)st->started},
	    {"lharvestd_interval_seconds", "gauge", "Seconds between sweeps",
	        st->interval_s},
	    {"lharvestd_sweeps_closed_total", "counter",
	        "Sweeps closed since the start", (double)st->sweeps_closed},
	    {"lharvestd_last_sweep_start_time_seconds", "gauge",
	        "Start (id) of the last closed sweep, seconds since the epoch",
	        (double)st->sweep_id},
	    {"lharvestd_last_sweep_close_time_seconds", "gauge",
	        "When the last sweep closed, seconds since the epoch",
	        st->close_time},
	    {"lharvestd_last_sweep_close_duration_seconds", "gauge",
	        "Wall seconds the last sweep's close took", st->close_duration},
	    {"lharvestd_last_sweep_by_deadline", "gauge",
	        "1 if the last sweep closed at its deadline, someone missing",
	        st->by_deadline ? 1 : 0},
	    {"lharvestd_last_sweep_clients", "gauge",
	        "Client (fs, NID) pairs in the last sweep",
	        (double)st->clients},
	    {"lharvestd_last_sweep_hosts", "gauge",
	        "(host, fs) rows in the last sweep", (double)st->hosts},
	    {"lharvestd_unmapped_clients", "gauge",
	        "Clients of the last sweep without a host name",
	        (double)st->unmapped},
	    {"lharvestd_awaiting_dns_clients", "gauge",
	        "Clients of the last sweep whose DNS answer is on its way",
	        (double)st->awaiting_dns},
	    {"lharvestd_batches_duplicate_total", "counter",
	        "Batches received again after they were counted",
	        (double)st->duplicates},
	    {"lharvestd_batches_refused_total", "counter",
	        "Batches refused since the start", (double)st->refused},
	};

	put_ones(p, o, NONES(o), true);
}

static void
put_gatherer_counts(struct promtext *p, const struct lh_status *st)
{
	const struct one o[] = {
	    {"lharvestd_gatherers_connected", "gauge",
	        "Gatherers with an authenticated connection",
	        (double)st->gatherers_connected},
	    {"lharvestd_gatherers_expected", "gauge",
	        "Gatherers each sweep waits for",
	        (double)st->gatherers_expected},
	    {"lharvestd_gatherers_missing", "gauge",
	        "Expected gatherers not in the last closed sweep",
	        (double)st->gatherers_missing},
	    {"lharvestd_gatherers_late", "gauge",
	        "Gatherers whose last batch came after its sweep closed",
	        (double)st->gatherers_late},
	};

	put_ones(p, o, NONES(o), true);
}

/* Family f of the per-gatherer ones, a sample per gatherer. */
static void
put_gatherer_family(struct promtext *p, const struct lh_status *st, int f)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
	    {"lharvestd_gatherer_connected", "gauge",
	        "1 if the gatherer has an authenticated connection"},
	    {"lharvestd_gatherer_missing", "gauge",
	        "1 if the gatherer was not in the last closed sweep"},
	    {"lharvestd_gatherer_late", "gauge",
	        "1 if the gatherer's last batch came after its sweep closed"},
	    {"lharvestd_gatherer_batches_total", "counter",
	        "Batches of the gatherer counted since the start"},
	    {"lharvestd_gatherer_sweeps_missed_total", "counter",
	        "Closed sweeps the gatherer missed since the start"},
	};
	static const char *const k[] = {"gatherer"};
	size_t i;

	promtext_family(p, fam[f].name, fam[f].type, fam[f].help);
	for (i = 0; i < st->ngatherers; i++) {
		const struct status_gatherer *g = &st->gatherers[i];
		const char *v[] = {g->name};
		double x = f == 0 ? g->connected :
		    f == 1        ? g->missing :
		    f == 2        ? g->late :
		    f == 3        ? (double)g->batches :
		                    (double)g->sweeps_missed;

		promtext_gauge(p, fam[f].name, k, v, 1, x);
	}
}

static void
put_dns(struct promtext *p, const struct status_dns *d)
{
	const struct one o[] = {
	    {"lharvestd_dns_lookups_total", "counter",
	        "Reverse DNS lookups asked of the resolver",
	        (double)d->lookups},
	    {"lharvestd_dns_cache_hits_total", "counter",
	        "Lookups answered from the cache", (double)d->hits},
	    {"lharvestd_dns_queries_total", "counter",
	        "Queries sent to DNS servers", (double)d->queries},
	    {"lharvestd_dns_answered_total", "counter",
	        "Queries answered with a name", (double)d->answered},
	    {"lharvestd_dns_nxdomain_total", "counter",
	        "Queries answered with no such name", (double)d->nxdomain},
	    {"lharvestd_dns_timeouts_total", "counter",
	        "Queries that timed out", (double)d->timeouts},
	    {"lharvestd_dns_errors_total", "counter",
	        "Queries that failed otherwise", (double)d->errors},
	    {"lharvestd_dns_cached_names", "gauge", "Answers in the cache now",
	        (double)d->cached},
	};

	put_ones(p, o, NONES(o), d->on);
}

static void
put_ganglia(struct promtext *p, const struct status_ganglia *g)
{
	const struct one o[] = {
	    {"lharvestd_ganglia_values_total", "counter",
	        "Metric values sent to gmond", (double)g->values},
	    {"lharvestd_ganglia_metadata_total", "counter",
	        "Metric metadata packets sent to gmond", (double)g->metadata},
	    {"lharvestd_ganglia_send_errors_total", "counter",
	        "Sends to gmond that failed", (double)g->send_errors},
	    {"lharvestd_ganglia_coalesced_total", "counter",
	        "Values replaced by a newer one before they went out",
	        (double)g->coalesced},
	    {"lharvestd_ganglia_refused_total", "counter",
	        "Values refused (bad name or value)", (double)g->refused},
	    {"lharvestd_ganglia_entries", "gauge",
	        "(host, metric) entries the sink knows", (double)g->entries},
	    {"lharvestd_ganglia_pending", "gauge", "Values waiting to go out",
	        (double)g->pending},
	};

	put_ones(p, o, NONES(o), g->on);
}

/* Family f of the per-route ones, a sample per route. */
static void
put_route_family(struct promtext *p, const struct lh_status *st, int f)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
	    {"lharvestd_route_connected", "gauge",
	        "1 if the relay route is connected to its destination"},
	    {"lharvestd_route_queued_batches", "gauge",
	        "Batches waiting in the route's outbox"},
	    {"lharvestd_route_queued_bytes", "gauge",
	        "Bytes waiting in the route's outbox"},
	    {"lharvestd_route_batches_sent_total", "counter",
	        "Batches the route's destination acknowledged"},
	    {"lharvestd_route_clients_last_sweep", "gauge",
	        "Clients routed in the last sweep"},
	};
	static const char *const k[] = {"route", "dest"};
	size_t i;

	promtext_family(p, fam[f].name, fam[f].type, fam[f].help);
	for (i = 0; i < st->nroutes; i++) {
		const struct status_route *r = &st->routes[i];
		const char *v[] = {r->name, r->dest};
		double x = f == 0 ? r->connected :
		    f == 1        ? (double)r->queued_batches :
		    f == 2        ? (double)r->queued_bytes :
		    f == 3        ? (double)r->batches_sent :
		                    (double)r->clients_last_sweep;

		promtext_gauge(p, fam[f].name, k, v, 2, x);
	}
}

static void
put_http(struct promtext *p, const struct httpd_stats *h)
{
	const struct one o[] = {
	    {"lharvestd_http_connections_accepted_total", "counter",
	        "HTTP connections accepted", (double)h->accepted},
	    {"lharvestd_http_connections_refused_total", "counter",
	        "HTTP connections refused (over the cap, not allowed)",
	        (double)h->refused},
	    {"lharvestd_http_requests_total", "counter",
	        "HTTP requests answered", (double)h->requests},
	    {"lharvestd_http_errors_total", "counter",
	        "HTTP requests the listener answered with an error",
	        (double)h->errors},
	    {"lharvestd_http_timeouts_total", "counter",
	        "HTTP connections closed at the time limit",
	        (double)h->timeouts},
	    {"lharvestd_http_connections_open", "gauge",
	        "HTTP connections open now", (double)h->open},
	};

	put_ones(p, o, NONES(o), true);
}

static void
put_page(struct promtext *p, const struct prom_page_stats *ps)
{
	const struct one o[] = {
	    {"lharvestd_prometheus_rows", "gauge",
	        "(host, fs) rows on this page", (double)ps->rows},
	    {"lharvestd_prometheus_series", "gauge",
	        "Per-host series on this page", (double)ps->series},
	    {"lharvestd_prometheus_series_dropped", "gauge",
	        "Per-host series left out by prometheus { max_series }",
	        (double)ps->dropped},
	    {"lharvestd_totals_rows_refused", "gauge",
	        "(host, fs) rows the counters refused (their own cap)",
	        (double)ps->rows_refused},
	};

	put_ones(p, o, NONES(o), true);
}

void
prom_health_render(struct promtext *p, const struct lh_status *st,
    const struct httpd_stats *hs, const struct prom_page_stats *ps)
{
	int f;

	put_info(p, st);
	put_sweep(p, st);
	put_gatherer_counts(p, st);
	for (f = 0; f < 5; f++)
		put_gatherer_family(p, st, f);
	put_dns(p, &st->dns);
	put_ganglia(p, &st->ganglia);
	for (f = 0; f < 5; f++)
		put_route_family(p, st, f);
	if (hs != NULL)
		put_http(p, hs);
	if (ps != NULL)
		put_page(p, ps);
}
