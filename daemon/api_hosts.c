/* SPDX-License-Identifier: BSD-2-Clause */
/* /v1/hosts and /v1/hosts/HOST: the per-(host, fs) counters as JSON. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api_int.h"
#include "hosttotals.h"
#include "httpd.h"
#include "httpreq.h"
#include "iocount.h"
#include "mdops.h"

/* The counters in iocount's order (SWEEPS_NCOUNTERS), and the sort keys
 * that name them; SORT_HOST sorts by name. */
static const char *const counter_name[SWEEPS_NCOUNTERS] = {"read_bytes",
    "write_bytes", "read_ops", "write_ops", "oss_ops", "mds_ops"};
static const char *const sort_name[] = {"read", "write", "read_ops",
    "write_ops", "oss_ops", "mds_ops", "host"};
#define SORT_HOST SWEEPS_NCOUNTERS

/* How a listing is sorted. */
struct order {
	int key;       /* a counter, or SORT_HOST */
	uint64_t last; /* the last closed sweep: older rows rate 0 */
	const struct hosttotals_row *rows; /* what the indexes sorted index */
};

static bool
row_current(const struct hosttotals_row *w, uint64_t last)
{
	return last != 0 && w->last_sweep == last;
}

static double
row_rate(const struct hosttotals_row *w, int k, uint64_t last)
{
	return row_current(w, last) ? w->rate[k] : 0.0;
}

static int
by_name(const struct hosttotals_row *x, const struct hosttotals_row *y)
{
	int c = strcmp(x->host, y->host);

	return c != 0 ? c : strcmp(x->fs, y->fs);
}

static int
order_cmp(const void *a, const void *b, void *arg)
{
	const struct order *o = arg;
	const struct hosttotals_row *x = &o->rows[*(const size_t *)a];
	const struct hosttotals_row *y = &o->rows[*(const size_t *)b];

	if (o->key != SORT_HOST) {
		double rx = row_rate(x, o->key, o->last);
		double ry = row_rate(y, o->key, o->last);

		if (rx != ry)
			return rx > ry ? -1 : 1;
	}
	return by_name(x, y);
}

static int
names_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The rates (0 when not current) and totals of w. */
static json_t *
row_counters(const struct hosttotals_row *w, uint64_t last, bool totals)
{
	json_t *o = json_object();
	uint64_t v[IOCOUNT_N];

	iocount_to_array(&w->total, v);
	for (int k = 0; o != NULL && k < SWEEPS_NCOUNTERS; k++) {
		json_t *x =
		    totals ? api_uint(v[k]) : json_real(row_rate(w, k, last));
		if (json_object_set_new(o, counter_name[k], x) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *
row_json(const struct hosttotals_row *w, uint64_t last, bool with_host)
{
	return json_pack("{s:s*, s:s, s:b, s:o, s:o, s:o}", "host",
	    with_host ? w->host : NULL, "fs", w->fs, "current",
	    row_current(w, last), "last_sweep", api_uint(w->last_sweep), "rate",
	    row_counters(w, last, false), "total", row_counters(w, last, true));
}

/* The sort key named s, or -1. */
static int
sort_key(const char *s)
{
	for (size_t i = 0; i < sizeof(sort_name) / sizeof(sort_name[0]); i++)
		if (strcmp(s, sort_name[i]) == 0)
			return (int)i;
	return -1;
}

/* limit=s: 1..API_LIMIT_MAX, or 0 when it is not one. */
static size_t
parse_limit(const char *s)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0 || v > API_LIMIT_MAX)
		return 0;
	return (size_t)v;
}

/* The query of /v1/hosts: 0, or -1 after answering r with a 400. */
static int
hosts_query(struct httpd_req *r, const char **ret_fs, struct order *o,
    size_t *ret_limit)
{
	static const char *const known[] = {"fs", "sort", "limit", NULL};
	const struct httpreq *q = httpd_req_parsed(r);
	const char *s;

	if (api_refuse_unknown(r, known))
		return -1;
	*ret_fs = httpreq_param(q, "fs");
	if (*ret_fs != NULL && **ret_fs == '\0') {
		api_fail(r, 400, "fs: empty");
		return -1;
	}
	s = httpreq_param(q, "sort");
	o->key = s == NULL ? 0 : sort_key(s);
	if (o->key < 0) {
		api_fail(r, 400,
		    "sort: must be one of read, write, read_ops, "
		    "write_ops, oss_ops, mds_ops, host");
		return -1;
	}
	s = httpreq_param(q, "limit");
	*ret_limit = s == NULL ? API_LIMIT_DEFAULT : parse_limit(s);
	if (*ret_limit == 0) {
		api_fail(r, 400, "limit: must be an integer from 1 to %d",
		    API_LIMIT_MAX);
		return -1;
	}
	return 0;
}

/* The indexes of the rows of fs (NULL: all), sorted: a calloc'd array, n
 * in *ret_n; NULL with *ret_n 0 when there are none, NULL otherwise: no
 * memory.  Indexes rather than pointers: one size_t a row. */
static size_t *
select_rows(const struct hosttotals *t, const char *fs, struct order *o,
    size_t *ret_n)
{
	size_t n = 0, m = 0, *sel;

	*ret_n = 0;
	o->rows = t ? hosttotals_rows(t, &n) : NULL;
	if (n == 0)
		return NULL;
	sel = calloc(n, sizeof(size_t));
	if (sel == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (fs == NULL || strcmp(o->rows[i].fs, fs) == 0)
			sel[m++] = i;
	qsort_r(sel, m, sizeof(size_t), order_cmp, o);
	*ret_n = m;
	return sel;
}

static json_t *
rows_json(const struct order *o, const size_t *sel, size_t n)
{
	json_t *list = json_array();

	for (size_t i = 0; list != NULL && i < n; i++) {
		if (json_array_append_new(list,
		        row_json(&o->rows[sel[i]], o->last, true)) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

static void
hosts_list(const struct api *a, struct httpd_req *r)
{
	struct order o;
	size_t *sel;
	const char *fs;
	size_t n, limit;
	json_t *data;

	if (hosts_query(r, &fs, &o, &limit) < 0)
		return;
	o.last = a->totals ? hosttotals_last_sweep(a->totals) : 0;
	sel = select_rows(a->totals, fs, &o, &n);
	if (sel == NULL && n > 0) {
		api_fail(r, 500, "out of memory");
		return;
	}
	data = json_pack("{s:o, s:s?, s:s, s:I, s:I, s:o}", "sweep",
	    api_uint(o.last), "fs", fs, "sort", sort_name[o.key], "limit",
	    (json_int_t)limit, "matched", (json_int_t)n, "hosts",
	    rows_json(&o, sel, n < limit ? n : limit));
	free(sel);
	if (data == NULL)
		api_fail(r, 500, "out of memory");
	else
		api_reply(r, 200, o.last == 0 ? API_NO_SWEEP : "", data);
	json_decref(data);
}

/* Its metadata operations with a non-zero total: {"open": {"rate": x,
 * "total": n}, ...}. */
static json_t *
mdops_json(const struct hosttotals_row *w, uint64_t last)
{
	json_t *o = json_object();

	for (unsigned k = 0; o != NULL && k < MDOPS_N; k++) {
		if (w->op_total[k] == 0)
			continue;
		if (json_object_set_new(o, mdops_name(k),
		        json_pack("{s:f, s:o}", "rate",
		            row_current(w, last) ? w->oprate[k] : 0.0, "total",
		            api_uint(w->op_total[k]))) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *
host_fs_json(const struct hosttotals_row *w, uint64_t last)
{
	json_t *j = row_json(w, last, false);

	if (j != NULL &&
	    json_object_set_new(j, "mdops", mdops_json(w, last)) < 0) {
		json_decref(j);
		return NULL;
	}
	return j;
}

static void
host_one(const struct api *a, struct httpd_req *r, const char *host)
{
	const struct hosttotals_row *rows;
	uint64_t last;
	size_t n = 0;
	json_t *list;

	if (api_refuse_unknown(r, NULL))
		return;
	rows = a->totals ? hosttotals_rows(a->totals, &n) : NULL;
	last = a->totals ? hosttotals_last_sweep(a->totals) : 0;
	list = json_array();
	for (size_t i = 0; list != NULL && i < n; i++) {
		if (strcmp(rows[i].host, host) == 0 &&
		    json_array_append_new(list, host_fs_json(&rows[i], last)) <
		        0) {
			json_decref(list);
			list = NULL;
		}
	}
	if (list != NULL && json_array_size(list) == 0) {
		json_decref(list);
		api_fail(r, 404, "unknown host \"%s\"", host);
		return;
	}
	json_t *data = json_pack("{s:s, s:o, s:o}", "host", host, "sweep",
	    api_uint(last), "filesystems", list);
	if (data == NULL)
		api_fail(r, 500, "out of memory");
	else
		api_reply(r, 200, "", data);
	json_decref(data);
}

void
api_hosts_cb(void *arg, struct httpd_req *r)
{
	const struct httpreq *q = httpd_req_parsed(r);

	/* "/v1/hosts" or "/v1/hosts/HOST"; anything deeper is no path. */
	if (q->nseg == 2)
		hosts_list(arg, r);
	else if (q->nseg == 3)
		host_one(arg, r, q->seg[2]);
	else
		api_fail(r, 404, "no such path: %s", q->path);
}

json_t *
api_totals_summary(const struct api *a)
{
	const struct hosttotals_row *rows;
	const char **names;
	size_t n = 0, hosts = 0;

	rows = a->totals ? hosttotals_rows(a->totals, &n) : NULL;
	names = n ? calloc(n, sizeof(*names)) : NULL;
	if (n > 0 && names == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		names[i] = rows[i].host;
	if (n > 0)
		qsort(names, n, sizeof(*names), names_cmp);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
			hosts++;
	free(names);
	return json_pack("{s:I, s:I, s:I}", "rows", (json_int_t)n, "hosts",
	    (json_int_t)hosts, "refused",
	    (json_int_t)(a->totals ? hosttotals_refused(a->totals) : 0));
}

json_t *
api_filesystems(const struct api *a)
{
	const struct hosttotals_fs *fss;
	const char **names;
	size_t n = 0;
	json_t *list;

	fss = a->totals ? hosttotals_fss(a->totals, &n) : NULL;
	names = n ? calloc(n, sizeof(*names)) : NULL;
	if (n > 0 && names == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		names[i] = fss[i].fs;
	if (n > 0)
		qsort(names, n, sizeof(*names), names_cmp);
	list = json_array();
	for (size_t i = 0; list != NULL && i < n; i++) {
		if (json_array_append_new(list, json_string(names[i])) < 0) {
			json_decref(list);
			list = NULL;
		}
	}
	free(names);
	return list;
}
