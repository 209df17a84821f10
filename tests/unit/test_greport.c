/* SPDX-License-Identifier: BSD-2-Clause */
/* gmetric/greport*.c: the ganglia-web reports' shape, names and colours. */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "greport.h"
#include "mdops.h"
#include "names.h"
#include "testutil.h"

/* The keys graph.php 3.7.5 reads from a graph.d report and its series,
 * and functions.php from a view's aggregate graph. */
static const char *const report_keys[] = {"report_name", "report_type", "title",
    "vertical_label", "series", NULL};
static const char *const series_keys[] = {"metric", "color", "label",
    "line_width", "type", NULL};
static const char *const view_keys[] = {"view_name", "view_type", "items",
    NULL};
static const char *const item_keys[] = {"aggregate_graph", "title",
    "vertical_label", "host_regex", "metric_regex", "graph_type",
    "exclude_host_from_legend_label", NULL};

static void
assert_keys(json_t *o, const char *const *keys)
{
	const char *k;
	json_t *v;

	ck_assert(json_is_object(o));
	json_object_foreach(o, k, v)
	{
		size_t i = 0;

		(void)v;
		while (keys[i] != NULL && strcmp(keys[i], k) != 0)
			i++;
		ck_assert_msg(keys[i] != NULL, "key %s not read by ganglia-web",
		    k);
	}
	for (size_t i = 0; keys[i] != NULL; i++)
		ck_assert_msg(json_object_get(o, keys[i]) != NULL, "no %s",
		    keys[i]);
}

static const char *
str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	ck_assert_msg(s != NULL, "%s is not a string", key);
	return s;
}

static bool
hex6(const char *s)
{
	if (strlen(s) != 6)
		return false;
	for (size_t i = 0; i < 6; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

/* The report of kind k for fs: its shape; returns its series. */
static json_t *
report_series(json_t **keep, const struct greport_fs *fs, enum greport_kind k)
{
	char name[GREPORT_NAME_MAX];
	json_t *series;

	ck_assert_int_eq(greport_build(keep, fs, k), 0);
	assert_keys(*keep, report_keys);
	ck_assert_int_eq(greport_name(name, sizeof(name), fs->prefix, k), 0);
	ck_assert_str_eq(str(*keep, "report_name"), name);
	ck_assert_str_eq(str(*keep, "report_type"), "standard");
	series = json_object_get(*keep, "series");
	ck_assert(json_is_array(series));
	for (size_t i = 0; i < json_array_size(series); i++) {
		json_t *s = json_array_get(series, i);

		assert_keys(s, series_keys);
		ck_assert(hex6(str(s, "color")));
		ck_assert_str_eq(str(s, "line_width"), "2");
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(str(s, "color"),
			    str(json_array_get(series, j), "color"));
	}
	return series;
}

START_TEST(report_names)
{
	char buf[GREPORT_NAME_MAX];

	ck_assert_int_eq(greport_name(buf, sizeof(buf), "vu_short", GREPORT_IO),
	    0);
	ck_assert_str_eq(buf, "vu_short_lustre_io_report");
	ck_assert_int_eq(greport_name(buf, sizeof(buf), "s.1", GREPORT_OPS), 0);
	ck_assert_str_eq(buf, "s.1_lustre_ops_report");
	ck_assert_int_eq(greport_name(buf, sizeof(buf), "s", GREPORT_MDOPS), 0);
	ck_assert_str_eq(buf, "s_lustre_mdops_report");
	ck_assert_int_eq(greport_name(buf, sizeof(buf), "a b", GREPORT_IO),
	    -EINVAL);
	ck_assert_int_eq(greport_name(buf, 10, "scratch", GREPORT_IO), -EINVAL);
	ck_assert_int_eq(greport_name(buf, sizeof(buf), "s", GREPORT_NKINDS),
	    -EINVAL);
	ck_assert_int_eq(greport_view_name(buf, sizeof(buf), "scratch"), 0);
	ck_assert_str_eq(buf, "lustre_scratch");
	ck_assert_int_eq(greport_view_name(buf, sizeof(buf), "a\"b"), -EINVAL);
}
END_TEST

/* The series name the metrics of names.c, in order, with the colours
 * documented in docs/ganglia.md. */
START_TEST(io_and_ops)
{
	struct greport_fs fs = {"scratch", false, 0};
	char metric[NAMES_METRIC_MAX];
	json_t *r, *series;

	series = report_series(&r, &fs, GREPORT_IO);
	ck_assert_uint_eq(json_array_size(series), 2);
	ck_assert_str_eq(str(json_array_get(series, 0), "metric"),
	    "scratch_read_bytes");
	ck_assert_str_eq(str(json_array_get(series, 0), "color"), "0067A5");
	ck_assert_str_eq(str(json_array_get(series, 1), "metric"),
	    "scratch_write_bytes");
	ck_assert_str_eq(str(json_array_get(series, 1), "color"), "F38400");
	ck_assert_str_eq(str(json_array_get(series, 1), "type"), "line");
	ck_assert_str_eq(str(r, "vertical_label"), "bytes/sec");
	json_decref(r);

	fs.extra_metrics = true;
	series = report_series(&r, &fs, GREPORT_OPS);
	ck_assert_uint_eq(json_array_size(series), 4);
	for (unsigned i = 0; i < 4; i++) {
		unsigned m = NAMES_OSS_OPS + i;

		(void)names_metric(metric, sizeof(metric), "scratch",
		    (enum names_metric)m);
		ck_assert_str_eq(str(json_array_get(series, i), "metric"),
		    metric);
		ck_assert_str_eq(str(json_array_get(series, i), "color"),
		    greport_color(m));
	}
	ck_assert_str_eq(str(r, "vertical_label"), "ops/sec");
	json_decref(r);
	fs.extra_metrics = false;
	series = report_series(&r, &fs, GREPORT_OPS);
	ck_assert_uint_eq(json_array_size(series), 2);
	json_decref(r);
}
END_TEST

START_TEST(mdops_report)
{
	struct greport_fs fs = {"scratch", false, 0};
	char metric[NAMES_METRIC_MAX];
	json_t *r = NULL, *series;

	ck_assert_int_eq(greport_build(&r, &fs, GREPORT_MDOPS), -ENOENT);
	ck_assert_ptr_null(r);
	fs.metadata_ops = (1u << MDOPS_N) - 1;
	series = report_series(&r, &fs, GREPORT_MDOPS);
	ck_assert_uint_eq(json_array_size(series), MDOPS_N);
	for (unsigned op = 0; op < MDOPS_N; op++) {
		json_t *s = json_array_get(series, op);

		(void)names_mds_op(metric, sizeof(metric), "scratch",
		    mdops_name(op));
		ck_assert_str_eq(str(s, "metric"), metric);
		ck_assert_str_eq(str(s, "label"), mdops_name(op));
		ck_assert_str_eq(str(s, "color"), greport_op_color(op));
		ck_assert_str_eq(str(s, "type"), "stack");
	}
	json_decref(r);
	fs.metadata_ops = 1u << MDOPS_GETATTR;
	series = report_series(&r, &fs, GREPORT_MDOPS);
	ck_assert_uint_eq(json_array_size(series), 1);
	ck_assert_str_eq(str(json_array_get(series, 0), "metric"),
	    "scratch_mds_getattr");
	json_decref(r);
	fs.prefix = "no space";
	ck_assert_int_eq(greport_build(&r, &fs, GREPORT_IO), -EINVAL);
}
END_TEST

/* One aggregate graph of the view: the totals host, exactly. */
static json_t *
view_item(json_t *items, size_t i, const char *type)
{
	json_t *item = json_array_get(items, i), *h;

	assert_keys(item, item_keys);
	ck_assert_str_eq(str(item, "aggregate_graph"), "true");
	ck_assert_str_eq(str(item, "graph_type"), type);
	h = json_object_get(item, "host_regex");
	ck_assert_uint_eq(json_array_size(h), 1);
	ck_assert_str_eq(str(json_array_get(h, 0), "regex"),
	    "^lustre\\-totals$");
	return json_object_get(item, "metric_regex");
}

START_TEST(view)
{
	struct greport_fs fs = {"wk.1", false, 0};
	json_t *v, *items, *m;

	ck_assert_int_eq(greport_view(&v, &fs, "lustre-totals"), 0);
	assert_keys(v, view_keys);
	ck_assert_str_eq(str(v, "view_name"), "lustre_wk.1");
	ck_assert_str_eq(str(v, "view_type"), "standard");
	items = json_object_get(v, "items");
	ck_assert_uint_eq(json_array_size(items), 2);
	m = view_item(items, 0, "line");
	ck_assert_uint_eq(json_array_size(m), 2);
	ck_assert_str_eq(str(json_array_get(m, 0), "regex"),
	    "^wk\\.1_read_bytes$");
	ck_assert_str_eq(str(json_array_get(m, 1), "regex"),
	    "^wk\\.1_write_bytes$");
	m = view_item(items, 1, "line");
	ck_assert_uint_eq(json_array_size(m), 2);
	ck_assert_str_eq(str(json_array_get(m, 0), "regex"),
	    "^wk\\.1_oss_ops$");
	json_decref(v);

	fs.metadata_ops = (1u << MDOPS_OPEN) | (1u << MDOPS_FALLOCATE);
	fs.extra_metrics = true;
	ck_assert_int_eq(greport_view(&v, &fs, "lustre-totals"), 0);
	items = json_object_get(v, "items");
	ck_assert_uint_eq(json_array_size(items), 3);
	ck_assert_uint_eq(json_array_size(view_item(items, 1, "line")), 4);
	m = view_item(items, 2, "stack");
	ck_assert_uint_eq(json_array_size(m), 2);
	ck_assert_str_eq(str(json_array_get(m, 1), "regex"),
	    "^wk\\.1_mds_fallocate$");
	json_decref(v);
	ck_assert_int_eq(greport_view(&v, &fs, ""), -EINVAL);
	fs.prefix = "";
	ck_assert_int_eq(greport_view(&v, &fs, "t"), -EINVAL);
}
END_TEST

START_TEST(default_json)
{
	const char *names[] = {"a_lustre_io_report", "a_lustre_ops_report"};
	json_t *d, *list;

	ck_assert_int_eq(greport_default(&d, names, 2), 0);
	ck_assert_uint_eq(json_object_size(d), 1);
	list = json_object_get(d, "included_reports");
	ck_assert_uint_eq(json_array_size(list), 6);
	ck_assert_str_eq(json_string_value(json_array_get(list, 0)),
	    "load_report");
	ck_assert_str_eq(json_string_value(json_array_get(list, 3)),
	    "network_report");
	ck_assert_str_eq(json_string_value(json_array_get(list, 5)),
	    "a_lustre_ops_report");
	json_decref(d);
}
END_TEST

/* Every colour a valid "rrggbb", none twice in its report. */
START_TEST(colors)
{
	for (unsigned i = 0; i < NAMES_NMETRICS; i++) {
		ck_assert(hex6(greport_color(i)));
		for (unsigned j = 0; j < i; j++)
			ck_assert_str_ne(greport_color(i), greport_color(j));
	}
	for (unsigned i = 0; i < MDOPS_N; i++) {
		ck_assert(hex6(greport_op_color(i)));
		for (unsigned j = 0; j < i; j++)
			ck_assert_str_ne(greport_op_color(i),
			    greport_op_color(j));
	}
	ck_assert_ptr_null(greport_color(NAMES_NMETRICS));
	ck_assert_ptr_null(greport_op_color(MDOPS_N));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("greport");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, report_names);
	tcase_add_test(tc, io_and_ops);
	tcase_add_test(tc, mdops_report);
	tcase_add_test(tc, view);
	tcase_add_test(tc, default_json);
	tcase_add_test(tc, colors);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
