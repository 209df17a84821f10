/* SPDX-License-Identifier: BSD-2-Clause */
/* lharvest status and lharvest host: one answer as text (or --json). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "lharvest.h"

static const char status_usage[] =
    "usage: lharvest status [--json]\n"
    "  the daemon: role, name, version, uptime, the last sweep, the\n"
    "  gatherers, DNS and Ganglia (--json: the data of /v1/status)\n";
static const char host_usage[] =
    "usage: lharvest host HOST [--json]\n"
    "  HOST's rates (last sweep) and totals per filesystem, and its\n"
    "  metadata operations (--json: the data of /v1/hosts/HOST)\n";

/* GET path: 0 and *ret, or 1 after one line to stderr. */
static int
get(struct lhc *c, const char *path, json_t **ret)
{
	char msg[LHC_ERR_MAX];

	if (lhc_get(c, path, ret, msg, sizeof(msg)) < 0) {
		(void)fprintf(stderr, "lharvest: %s\n", msg);
		return 1;
	}
	return 0;
}

static int
print_json(json_t *data)
{
	int rc = json_dumpf(data, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);

	(void)putchar('\n');
	json_decref(data);
	return rc < 0 ? 1 : 0;
}

static void
print_sweep(const json_t *d)
{
	const json_t *s = json_object_get(d, "last_sweep");
	char t0[32], t1[32];

	if (!json_is_object(s)) {
		(void)printf("last sweep: none closed yet\n");
		return;
	}
	units_time(t0, sizeof(t0), lhj_num(s, "id"));
	units_time(t1, sizeof(t1), lhj_num(s, "close_time"));
	(void)printf("last sweep: %s, closed %s in %.3f s%s\n", t0, t1,
	    lhj_num(s, "duration_s"),
	    json_is_true(json_object_get(s, "by_deadline")) ?
	        " at the deadline (some gatherer missing)" :
	        "");
	(void)printf("  %.0f clients, %.0f host rows, %.0f unmapped, %.0f "
	             "awaiting DNS\n",
	    lhj_num(s, "clients"), lhj_num(s, "hosts"), lhj_num(s, "unmapped"),
	    lhj_num(s, "awaiting_dns"));
}

static void
print_gatherers(const json_t *d)
{
	const json_t *g = json_object_get(d, "counts");
	const json_t *list = json_object_get(d, "gatherers"), *e;
	size_t i;
	char t[32];

	(void)printf("gatherers: %.0f known, %.0f connected, %.0f expected, "
	             "%.0f missing, %.0f late\n",
	    lhj_num(g, "known"), lhj_num(g, "connected"),
	    lhj_num(g, "expected"), lhj_num(g, "missing"), lhj_num(g, "late"));
	for (i = 0; (e = json_array_get(list, i)) != NULL; i++) {
		units_time(t, sizeof(t), lhj_num(e, "last_sweep"));
		(void)printf("  %-20s %-22s %-12s last sweep %s, %.0f batches, "
		             "%.0f sweeps missed\n",
		    lhj_str(e, "name"),
		    lhj_str(e, "addr")[0] ? lhj_str(e, "addr") : "-",
		    json_is_true(json_object_get(e, "connected")) ?
		        "connected" :
		        "disconnected",
		    t, lhj_num(e, "batches"), lhj_num(e, "sweeps_missed"));
	}
}

static void
print_stats(const json_t *d)
{
	const json_t *t = json_object_get(d, "totals");
	const json_t *b = json_object_get(d, "batches");
	const json_t *dns = json_object_get(d, "dns");
	const json_t *g = json_object_get(d, "ganglia");
	const json_t *fs = json_object_get(d, "filesystems"), *e;
	size_t i;

	(void)printf("counters: %.0f hosts, %.0f (host, filesystem) rows, %.0f "
	             "refused by the cap; filesystems:",
	    lhj_num(t, "hosts"), lhj_num(t, "rows"), lhj_num(t, "refused"));
	for (i = 0; (e = json_array_get(fs, i)) != NULL; i++)
		(void)printf(" %s", json_string_value(e));
	(void)printf("%s\n", json_array_size(fs) ? "" : " none yet");
	(void)printf("batches: %.0f duplicates, %.0f refused\n",
	    lhj_num(b, "duplicates"), lhj_num(b, "refused"));
	if (json_is_true(json_object_get(dns, "on")))
		(void)printf("dns: %.0f lookups, %.0f hits, %.0f queries, %.0f "
		             "timeouts, %.0f errors, %.0f cached\n",
		    lhj_num(dns, "lookups"), lhj_num(dns, "hits"),
		    lhj_num(dns, "queries"), lhj_num(dns, "timeouts"),
		    lhj_num(dns, "errors"), lhj_num(dns, "cached"));
	else
		(void)printf("dns: off\n");
	if (json_is_true(json_object_get(g, "on")))
		(void)printf("ganglia: %.0f values, %.0f metadata, %.0f send "
		             "errors\n",
		    lhj_num(g, "values"), lhj_num(g, "metadata"),
		    lhj_num(g, "send_errors"));
	else
		(void)printf("ganglia: off\n");
}

int
lharvest_status(struct lhc *c, int argc, char **argv)
{
	int json = 0, i = lharvest_opts(argc, argv, &json, status_usage);
	json_t *d, *g;
	long up;

	if (i < 0 || i != argc) {
		if (i >= 0)
			(void)fputs(status_usage, stderr);
		return 2;
	}
	if (get(c, "/v1/status", &d) != 0)
		return 1;
	if (json)
		return print_json(d);
	up = (long)lhj_num(d, "uptime_s");
	(void)printf("lharvestd %s: %s %s, up %ldd %02ld:%02ld:%02ld, "
	             "interval %.0f s\n",
	    lhj_str(d, "name"), lhj_str(d, "role"), lhj_str(d, "version"),
	    up / 86400, up / 3600 % 24, up / 60 % 60, up % 60,
	    lhj_num(d, "interval_s"));
	print_sweep(d);
	/* The gatherers one by one are another answer. */
	if (get(c, "/v1/gatherers", &g) != 0) {
		json_decref(d);
		return 1;
	}
	print_gatherers(g);
	json_decref(g);
	print_stats(d);
	json_decref(d);
	return 0;
}

static void
print_mdops(json_t *md)
{
	char r[32], t[32];
	int n = 0;

	for (void *it = json_object_iter(md); it != NULL;
	     it = json_object_iter_next(md, it)) {
		const char *op = json_object_iter_key(it);
		const json_t *v = json_object_iter_value(it);

		units_count(r, sizeof(r), lhj_num(v, "rate"));
		units_count(t, sizeof(t), lhj_num(v, "total"));
		(void)printf("%s%s %s/s (%s)", n++ % 4 ? ", " : "\n    ", op, r,
		    t);
	}
	if (n > 0)
		(void)printf("\n");
}

static void
print_fs(const json_t *f)
{
	const json_t *r = json_object_get(f, "rate");
	const json_t *t = json_object_get(f, "total");
	char a[4][32], b[4][32];

	units_rate(a[0], sizeof(a[0]), lhj_num(r, "read_bytes"));
	units_rate(a[1], sizeof(a[1]), lhj_num(r, "write_bytes"));
	units_count(a[2], sizeof(a[2]), lhj_num(r, "oss_ops"));
	units_count(a[3], sizeof(a[3]), lhj_num(r, "mds_ops"));
	units_bytes(b[0], sizeof(b[0]), lhj_num(t, "read_bytes"));
	units_bytes(b[1], sizeof(b[1]), lhj_num(t, "write_bytes"));
	units_count(b[2], sizeof(b[2]), lhj_num(t, "oss_ops"));
	units_count(b[3], sizeof(b[3]), lhj_num(t, "mds_ops"));
	(void)printf("%-12s now   %12s %12s %10s %10s%s\n", lhj_str(f, "fs"),
	    a[0], a[1], a[2], a[3],
	    json_is_true(json_object_get(f, "current")) ? "" : "  (idle)");
	(void)printf("%-12s total %12s %12s %10s %10s", "", b[0], b[1], b[2],
	    b[3]);
	print_mdops(json_object_get(f, "mdops"));
	if (json_object_size(json_object_get(f, "mdops")) == 0)
		(void)printf("\n");
}

int
lharvest_host(struct lhc *c, int argc, char **argv)
{
	int json = 0, i = lharvest_opts(argc, argv, &json, host_usage);
	char path[1024], t[32], *esc;
	const json_t *f, *fss;
	json_t *d;
	size_t k;

	if (i < 0 || argc - i != 1) {
		if (i >= 0)
			(void)fputs(host_usage, stderr);
		return 2;
	}
	esc = curl_easy_escape(NULL, argv[i], 0);
	if (esc == NULL)
		return 1;
	(void)snprintf(path, sizeof(path), "/v1/hosts/%s", esc);
	curl_free(esc);
	if (get(c, path, &d) != 0)
		return 1;
	if (json)
		return print_json(d);
	units_time(t, sizeof(t), lhj_num(d, "sweep"));
	(void)printf("%s (last sweep %s)\n%-12s %5s %12s %12s %10s %10s\n",
	    lhj_str(d, "host"), t, "FILESYSTEM", "", "READ", "WRITE", "OSS OPS",
	    "MDS OPS");
	fss = json_object_get(d, "filesystems");
	for (k = 0; (f = json_array_get(fss, k)) != NULL; k++)
		print_fs(f);
	json_decref(d);
	return 0;
}
