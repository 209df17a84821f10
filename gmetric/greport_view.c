/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The view of a filesystem's totals: aggregate graphs over the totals
 * host (greport.h).  An aggregate graph names hosts and metrics by
 * regular expression, which ganglia-web matches against its metric cache
 * in every cluster: the view needs no cluster name, which lharvestd's
 * configuration does not know (it is the receiving gmond's).
 *
 * ganglia-web 3.7.5 has no "top N" graph: the top nodes by read or write
 * are its cluster page sorted by that metric (docs/ganglia.md gives the
 * address), not a view.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "greport.h"
#include "mdops.h"
#include "names.h"

/* "^text$" with every character but [A-Za-z0-9_] escaped: PCRE takes a
 * backslash before any other character as that character, and the
 * pattern goes between '/' delimiters in preg_match().  Returns 0, or
 * -EINVAL for a buffer too small. */
static int
regex_exact(char *buf, size_t size, const char *text)
{
	size_t n = 0;

	if (size < 3)
		return -EINVAL;
	buf[n++] = '^';
	for (const char *p = text; *p != '\0'; p++) {
		char c = *p;
		int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_';

		if (n + (plain ? 1 : 2) + 2 > size)
			return -EINVAL;
		if (!plain)
			buf[n++] = '\\';
		buf[n++] = c;
	}
	buf[n++] = '$';
	buf[n] = '\0';
	return 0;
}

/* Append {"regex": "^text$"} to arr.  Returns 0, -EINVAL, -ENOMEM. */
static int
regex_add(json_t *arr, const char *text)
{
	char re[2 * GREPORT_NAME_MAX + 3];
	json_t *o;

	if (regex_exact(re, sizeof(re), text) < 0)
		return -EINVAL;
	o = json_pack("{s:s}", "regex", re);
	if (o == NULL || json_array_append_new(arr, o) < 0)
		return -ENOMEM;
	return 0;
}

/* An aggregate graph of the metrics in mreg (an array of regexes, taken)
 * over totals_host, appended to items. */
static int
item_add(json_t *items, const char *title, const char *units,
    const char *totals_host, json_t *mreg, const char *type)
{
	json_t *hreg = json_array(), *item;
	int rc;

	if (hreg == NULL) {
		json_decref(mreg);
		return -ENOMEM;
	}
	rc = regex_add(hreg, totals_host);
	if (rc < 0) {
		json_decref(hreg);
		json_decref(mreg);
		return rc;
	}
	item = json_pack("{s:s, s:s, s:s, s:o, s:o, s:s, s:s}",
	    "aggregate_graph", "true", "title", title, "vertical_label", units,
	    "host_regex", hreg, "metric_regex", mreg, "graph_type", type,
	    "exclude_host_from_legend_label", "true");
	if (item == NULL || json_array_append_new(items, item) < 0)
		return -ENOMEM;
	return 0;
}

/* The regexes of metrics ms (-1 ended) of prefix into *ret. */
static int
mreg_metrics(json_t **ret, const char *prefix, const int *ms)
{
	char metric[NAMES_METRIC_MAX];
	json_t *arr = json_array();
	int rc = arr != NULL ? 0 : -ENOMEM;

	for (; rc == 0 && *ms >= 0; ms++) {
		rc = names_metric(metric, sizeof(metric), prefix,
		    (enum names_metric) * ms);
		if (rc == 0)
			rc = regex_add(arr, metric);
	}
	if (rc < 0)
		json_decref(arr);
	*ret = rc == 0 ? arr : NULL;
	return rc;
}

/* The regexes of the metadata_ops metrics into *ret. */
static int
mreg_mdops(json_t **ret, const struct greport_fs *fs)
{
	char metric[NAMES_METRIC_MAX];
	json_t *arr = json_array();
	int rc = arr != NULL ? 0 : -ENOMEM;

	for (unsigned op = 0; rc == 0 && op < MDOPS_N; op++) {
		if ((fs->metadata_ops & (1u << op)) == 0)
			continue;
		rc = names_mds_op(metric, sizeof(metric), fs->prefix,
		    mdops_name(op));
		if (rc == 0)
			rc = regex_add(arr, metric);
	}
	if (rc < 0)
		json_decref(arr);
	*ret = rc == 0 ? arr : NULL;
	return rc;
}

/* The view's items: bandwidth, operations, metadata operations. */
static int
view_items(json_t *items, const struct greport_fs *fs, const char *totals_host)
{
	static const int io[] = {NAMES_READ_BYTES, NAMES_WRITE_BYTES, -1};
	static const int ops[] = {NAMES_OSS_OPS, NAMES_MDS_OPS, -1};
	static const int ops_extra[] = {NAMES_OSS_OPS, NAMES_MDS_OPS,
	    NAMES_READ_OPS, NAMES_WRITE_OPS, -1};
	char title[GREPORT_NAME_MAX + 64];
	json_t *mreg;
	int rc;

	(void)snprintf(title, sizeof(title), "Lustre %s bandwidth, all clients",
	    fs->prefix);
	rc = mreg_metrics(&mreg, fs->prefix, io);
	if (rc == 0)
		rc = item_add(items, title, names_units(NAMES_READ_BYTES),
		    totals_host, mreg, "line");
	if (rc < 0)
		return rc;
	(void)snprintf(title, sizeof(title),
	    "Lustre %s operations, all clients", fs->prefix);
	rc = mreg_metrics(&mreg, fs->prefix,
	    fs->extra_metrics ? ops_extra : ops);
	if (rc == 0)
		rc = item_add(items, title, names_units(NAMES_OSS_OPS),
		    totals_host, mreg, "line");
	if (rc < 0 || (fs->metadata_ops & ((1u << MDOPS_N) - 1)) == 0)
		return rc;
	(void)snprintf(title, sizeof(title),
	    "Lustre %s metadata operations, all clients", fs->prefix);
	rc = mreg_mdops(&mreg, fs);
	if (rc == 0)
		rc = item_add(items, title, names_units(NAMES_MDS_OPS),
		    totals_host, mreg, "stack");
	return rc;
}

int
greport_view(json_t **ret, const struct greport_fs *fs, const char *totals_host)
{
	char name[GREPORT_NAME_MAX];
	json_t *items;
	int rc;

	*ret = NULL;
	if (greport_view_name(name, sizeof(name), fs->prefix) < 0 ||
	    totals_host == NULL || totals_host[0] == '\0' ||
	    strlen(totals_host) > GREPORT_NAME_MAX)
		return -EINVAL;
	items = json_array();
	if (items == NULL)
		return -ENOMEM;
	rc = view_items(items, fs, totals_host);
	if (rc < 0) {
		json_decref(items);
		return rc;
	}
	*ret = json_pack("{s:s, s:s, s:o}", "view_name", name, "view_type",
	    "standard", "items", items);
	return *ret != NULL ? 0 : -ENOMEM;
}
