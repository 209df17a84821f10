/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ganglia-web report definitions, built with jansson.  Only keys that
 * ganglia-web 3.7.5 reads are written (graph.php's
 * rrdtool_graph_merge_args_from_json() and graphdef_add_series() for
 * graph.d reports, functions.php's get_view_graph_elements() for views):
 *
 *   report: report_name, report_type "standard", title, vertical_label,
 *           series[] of metric, color, label, line_width, type
 *   view:   view_name, view_type "standard", items[] of aggregate graphs:
 *           aggregate_graph, title, vertical_label, host_regex,
 *           metric_regex, graph_type, exclude_host_from_legend_label
 *
 * No "hostname" in a report's series: graph.php 3.7.5 replaces it with
 * the page's host whatever the file says (it tests an undefined
 * $index), which is why the totals are a view of aggregate graphs.
 *
 * The colours (docs/ganglia.md lists them; the browser test looks for
 * them in the plot areas), distinct within each report:
 *   io report     read_bytes 0067A5 (blue), write_bytes F38400 (orange)
 *   ops report    oss_ops 008856 (green), mds_ops 875692 (purple),
 *                 read_ops A1CAF1 (light blue), write_ops BE0032 (red)
 *   mdops report  one per op, in the order of mdops.h, from Kelly's
 *                 colours of maximum contrast (grey, black, white left
 *                 out): see op_colors below.
 * A view's aggregate graphs take ganglia-web's own $conf['graph_colors'],
 * in the alphabetical order of the metric names (it sorts them).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "greport.h"
#include "mdops.h"
#include "names.h"

static const char *const metric_colors[NAMES_NMETRICS] = {
    [NAMES_READ_BYTES] = "0067A5",
    [NAMES_WRITE_BYTES] = "F38400",
    [NAMES_OSS_OPS] = "008856",
    [NAMES_MDS_OPS] = "875692",
    [NAMES_READ_OPS] = "A1CAF1",
    [NAMES_WRITE_OPS] = "BE0032",
};

static const char *const metric_labels[NAMES_NMETRICS] = {
    [NAMES_READ_BYTES] = "Read",
    [NAMES_WRITE_BYTES] = "Write",
    [NAMES_OSS_OPS] = "OSS ops",
    [NAMES_MDS_OPS] = "MDS ops",
    [NAMES_READ_OPS] = "Read RPCs",
    [NAMES_WRITE_OPS] = "Write RPCs",
};

static const char *const op_colors[MDOPS_N] = {
    [MDOPS_OPEN] = "F3C300",
    [MDOPS_CLOSE] = "875692",
    [MDOPS_MKNOD] = "F38400",
    [MDOPS_LINK] = "A1CAF1",
    [MDOPS_UNLINK] = "BE0032",
    [MDOPS_MKDIR] = "C2B280",
    [MDOPS_RMDIR] = "008856",
    [MDOPS_RENAME] = "E68FAC",
    [MDOPS_GETATTR] = "0067A5",
    [MDOPS_SETATTR] = "F99379",
    [MDOPS_GETXATTR] = "604E97",
    [MDOPS_SETXATTR] = "F6A600",
    [MDOPS_STATFS] = "B3446C",
    [MDOPS_SYNC] = "DCD300",
    [MDOPS_PUNCH] = "882D17",
    [MDOPS_MIGRATE] = "8DB600",
    [MDOPS_FALLOCATE] = "654522",
};

static const char *const kind_suffix[GREPORT_NKINDS] = {
    [GREPORT_IO] = "io",
    [GREPORT_OPS] = "ops",
    [GREPORT_MDOPS] = "mdops",
};

static const char *const kind_title[GREPORT_NKINDS] = {
    [GREPORT_IO] = "bandwidth",
    [GREPORT_OPS] = "operations",
    [GREPORT_MDOPS] = "metadata operations",
};

/* As /var/lib/ganglia-web/conf/default.json ships them in Debian 12. */
const char *const greport_debian_reports[] = {
    "load_report",
    "mem_report",
    "cpu_report",
    "network_report",
};
const size_t greport_ndebian_reports =
    sizeof(greport_debian_reports) / sizeof(greport_debian_reports[0]);

const char *
greport_color(unsigned m)
{
	return m < NAMES_NMETRICS ? metric_colors[m] : NULL;
}

const char *
greport_op_color(unsigned op)
{
	return op < MDOPS_N ? op_colors[op] : NULL;
}

int
greport_name(char *buf, size_t size, const char *prefix, enum greport_kind k)
{
	int n;

	if ((unsigned)k >= GREPORT_NKINDS || !names_prefix_ok(prefix))
		return -EINVAL;
	n = snprintf(buf, size, "%s_lustre_%s_report", prefix, kind_suffix[k]);
	if (n < 0 || (size_t)n >= size)
		return -EINVAL;
	return 0;
}

int
greport_view_name(char *buf, size_t size, const char *prefix)
{
	int n;

	if (!names_prefix_ok(prefix))
		return -EINVAL;
	n = snprintf(buf, size, "lustre_%s", prefix);
	if (n < 0 || (size_t)n >= size)
		return -EINVAL;
	return 0;
}

/* Append one series to arr.  Returns 0 or -ENOMEM. */
static int
series_add(json_t *arr, const char *metric, const char *color,
    const char *label, const char *type)
{
	json_t *s = json_pack("{s:s, s:s, s:s, s:s, s:s}", "metric", metric,
	    "color", color, "label", label, "line_width", "2", "type", type);

	if (s == NULL || json_array_append_new(arr, s) < 0)
		return -ENOMEM;
	return 0;
}

/* The metrics of kind k's report (enum names_metric), -1 ended. */
static const int *
kind_metrics(const struct greport_fs *fs, enum greport_kind k)
{
	static const int io[] = {NAMES_READ_BYTES, NAMES_WRITE_BYTES, -1};
	static const int ops[] = {NAMES_OSS_OPS, NAMES_MDS_OPS, -1};
	static const int ops_extra[] = {NAMES_OSS_OPS, NAMES_MDS_OPS,
	    NAMES_READ_OPS, NAMES_WRITE_OPS, -1};
	static const int none[] = {-1};

	switch (k) {
	case GREPORT_IO:
		return io;
	case GREPORT_OPS:
		return fs->extra_metrics ? ops_extra : ops;
	case GREPORT_MDOPS:
	case GREPORT_NKINDS:
		break;
	}
	return none;
}

/* The series of the io and ops reports into arr. */
static int
series_metrics(json_t *arr, const struct greport_fs *fs, enum greport_kind k)
{
	char metric[NAMES_METRIC_MAX];

	for (const int *m = kind_metrics(fs, k); *m >= 0; m++) {
		enum names_metric nm = (enum names_metric) * m;

		if (names_metric(metric, sizeof(metric), fs->prefix, nm) < 0)
			return -EINVAL;
		if (series_add(arr, metric, metric_colors[nm],
		        metric_labels[nm], "line") < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The series of the mdops report into arr: stacked, as the ops are
 * parts of mds_ops.  -ENOENT when metadata_ops lists none. */
static int
series_mdops(json_t *arr, const struct greport_fs *fs)
{
	char metric[NAMES_METRIC_MAX];

	if ((fs->metadata_ops & ((1u << MDOPS_N) - 1)) == 0)
		return -ENOENT;
	for (unsigned op = 0; op < MDOPS_N; op++) {
		const char *name = mdops_name(op);

		if ((fs->metadata_ops & (1u << op)) == 0)
			continue;
		if (names_mds_op(metric, sizeof(metric), fs->prefix, name) < 0)
			return -EINVAL;
		if (series_add(arr, metric, op_colors[op], name, "stack") < 0)
			return -ENOMEM;
	}
	return 0;
}

int
greport_build(json_t **ret, const struct greport_fs *fs, enum greport_kind k)
{
	char name[GREPORT_NAME_MAX], title[GREPORT_NAME_MAX + 32];
	json_t *series, *report;
	int rc;

	*ret = NULL;
	if (greport_name(name, sizeof(name), fs->prefix, k) < 0)
		return -EINVAL;
	(void)snprintf(title, sizeof(title), "Lustre %s %s", fs->prefix,
	    kind_title[k]);
	series = json_array();
	if (series == NULL)
		return -ENOMEM;
	rc = k == GREPORT_MDOPS ? series_mdops(series, fs) :
	                          series_metrics(series, fs, k);
	if (rc < 0) {
		json_decref(series);
		return rc;
	}
	report = json_pack("{s:s, s:s, s:s, s:s, s:o}", "report_name", name,
	    "report_type", "standard", "title", title, "vertical_label",
	    k == GREPORT_IO ? names_units(NAMES_READ_BYTES) :
	                      names_units(NAMES_OSS_OPS),
	    "series", series);
	if (report == NULL)
		return -ENOMEM;
	*ret = report;
	return 0;
}

int
greport_default(json_t **ret, const char *const *names, size_t n)
{
	json_t *list = json_array();

	*ret = NULL;
	if (list == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < greport_ndebian_reports + n; i++) {
		const char *s = i < greport_ndebian_reports ?
		    greport_debian_reports[i] :
		    names[i - greport_ndebian_reports];

		if (json_array_append_new(list, json_string(s)) < 0) {
			json_decref(list);
			return -ENOMEM;
		}
	}
	*ret = json_pack("{s:o}", "included_reports", list);
	return *ret != NULL ? 0 : -ENOMEM;
}
