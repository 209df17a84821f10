/* SPDX-License-Identifier: BSD-2-Clause */
/* /v1/status, /v1/gatherers and /v1/routes: a status snapshot as JSON. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "api_int.h"
#include "httpd.h"
#include "status.h"

/* A snapshot of the role into st: 0, or -1 after answering r. */
static int
collect(const struct api *a, struct httpd_req *r, struct lh_status *st)
{
	if (a->board == NULL) {
		api_fail(r, 503, "no status: the role has none");
		return -1;
	}
	if (status_collect(a->board, st) < 0) {
		api_fail(r, 500, "out of memory");
		return -1;
	}
	return 0;
}

/* Answer r with data built from st (NULL data: out of memory), then
 * release both. */
static void
answer(struct httpd_req *r, struct lh_status *st, json_t *data)
{
	if (data == NULL)
		api_fail(r, 500, "out of memory");
	else
		api_reply(r, 200, st->sweep_id == 0 ? API_NO_SWEEP : "", data);
	json_decref(data);
	status_release(st);
}

static json_t *
last_sweep(const struct lh_status *st)
{
	if (st->sweep_id == 0)
		return json_null();
	return json_pack("{s:o, s:f, s:f, s:b, s:I, s:I, s:I, s:I}", "id",
	    api_uint(st->sweep_id), "close_time", st->close_time, "duration_s",
	    st->close_duration, "by_deadline", st->by_deadline, "clients",
	    (json_int_t)st->clients, "hosts", (json_int_t)st->hosts, "unmapped",
	    (json_int_t)st->unmapped, "awaiting_dns",
	    (json_int_t)st->awaiting_dns);
}

static json_t *
gatherer_counts(const struct lh_status *st)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I}", "known",
	    (json_int_t)st->ngatherers, "connected",
	    (json_int_t)st->gatherers_connected, "expected",
	    (json_int_t)st->gatherers_expected, "missing",
	    (json_int_t)st->gatherers_missing, "late",
	    (json_int_t)st->gatherers_late);
}

static json_t *
dns_json(const struct status_dns *d)
{
	return json_pack("{s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I}", "on",
	    d->on, "lookups", api_uint(d->lookups), "hits", api_uint(d->hits),
	    "queries", api_uint(d->queries), "answered", api_uint(d->answered),
	    "nxdomain", api_uint(d->nxdomain), "timeouts",
	    api_uint(d->timeouts), "errors", api_uint(d->errors), "cached",
	    (json_int_t)d->cached);
}

static json_t *
ganglia_json(const struct status_ganglia *g)
{
	return json_pack("{s:b, s:o, s:o, s:o, s:o, s:o, s:I, s:I}", "on",
	    g->on, "values", api_uint(g->values), "metadata",
	    api_uint(g->metadata), "send_errors", api_uint(g->send_errors),
	    "coalesced", api_uint(g->coalesced), "refused",
	    api_uint(g->refused), "entries", (json_int_t)g->entries, "pending",
	    (json_int_t)g->pending);
}

static json_t *
status_json(const struct api *a, const struct lh_status *st)
{
	int64_t now = (int64_t)time(NULL);

	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:o, s:o, s:o, "
	                 "s:{s:o, s:o}, s:o, s:o, s:o, s:o, s:I}",
	    "role", st->role ? st->role : "", "name", st->name, "version",
	    st->version ? st->version : "", "started", (json_int_t)st->started,
	    "uptime_s", (json_int_t)(now > st->started ? now - st->started : 0),
	    "interval_s", (json_int_t)st->interval_s, "last_sweep",
	    last_sweep(st), "sweeps_closed", api_uint(st->sweeps_closed),
	    "gatherers", gatherer_counts(st), "batches", "duplicates",
	    api_uint(st->duplicates), "refused", api_uint(st->refused), "dns",
	    dns_json(&st->dns), "ganglia", ganglia_json(&st->ganglia), "totals",
	    api_totals_summary(a), "filesystems", api_filesystems(a), "routes",
	    (json_int_t)st->nroutes);
}

void
api_status_cb(void *arg, struct httpd_req *r)
{
	struct api *a = arg;
	struct lh_status st;

	if (api_refuse_unknown(r, NULL) || collect(a, r, &st) < 0)
		return;
	answer(r, &st, status_json(a, &st));
}

static json_t *
gatherer_json(const struct status_gatherer *g)
{
	return json_pack("{s:s, s:s?, s:b, s:b, s:b, s:b, s:o, s:o, s:o}",
	    "name", g->name, "addr", g->addr[0] ? g->addr : NULL, "connected",
	    g->connected, "expected", g->expected, "missing", g->missing,
	    "late", g->late, "last_sweep", api_uint(g->last_sweep), "batches",
	    api_uint(g->batches), "sweeps_missed", api_uint(g->sweeps_missed));
}

void
api_gatherers_cb(void *arg, struct httpd_req *r)
{
	struct api *a = arg;
	struct lh_status st;
	json_t *data, *list;

	if (api_refuse_unknown(r, NULL) || collect(a, r, &st) < 0)
		return;
	list = json_array();
	for (size_t i = 0; list != NULL && i < st.ngatherers; i++) {
		if (json_array_append_new(list,
		        gatherer_json(&st.gatherers[i])) < 0) {
			json_decref(list);
			list = NULL;
		}
	}
	data = json_pack("{s:o, s:o}", "counts", gatherer_counts(&st),
	    "gatherers", list);
	answer(r, &st, data);
}

/* "o2ib2, tcp102" as ["o2ib2", "tcp102"]. */
static json_t *
nets_json(const char *nets)
{
	json_t *list = json_array();
	const char *p = nets;

	while (list != NULL && *p != '\0') {
		size_t n = strcspn(p, ", ");

		if (n > 0 &&
		    json_array_append_new(list, json_stringn(p, n)) < 0) {
			json_decref(list);
			return NULL;
		}
		p += n;
		p += strspn(p, ", ");
	}
	return list;
}

static json_t *
route_json(const struct status_route *rt)
{
	return json_pack("{s:s, s:s, s:o, s:b, s:I, s:o, s:o, s:o}", "name",
	    rt->name, "dest", rt->dest, "networks", nets_json(rt->nets),
	    "connected", rt->connected, "queued_batches",
	    (json_int_t)rt->queued_batches, "queued_bytes",
	    api_uint(rt->queued_bytes), "batches_sent",
	    api_uint(rt->batches_sent), "clients_last_sweep",
	    api_uint(rt->clients_last_sweep));
}

void
api_routes_cb(void *arg, struct httpd_req *r)
{
	struct api *a = arg;
	struct lh_status st;
	json_t *list;

	if (api_refuse_unknown(r, NULL) || collect(a, r, &st) < 0)
		return;
	if (st.role == NULL || strcmp(st.role, "relay") != 0) {
		status_release(&st);
		api_fail(r, 404,
		    "no routes: this is an aggregator, not a relay");
		return;
	}
	list = json_array();
	for (size_t i = 0; list != NULL && i < st.nroutes; i++) {
		if (json_array_append_new(list, route_json(&st.routes[i])) <
		    0) {
			json_decref(list);
			list = NULL;
		}
	}
	answer(r, &st,
	    list == NULL ? NULL : json_pack("{s:o}", "routes", list));
}
