/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ganglia-web 3.7.5 report definitions for the metrics lharvestd spoofs
 * (docs/ganglia.md, "Dashboards in ganglia-web").  Metric names carry each
 * filesystem's metric_prefix, so the JSON is built from the configuration
 * rather than shipped: this file builds it, with the names of names.c,
 * and daemon/greports.c writes it.  Pure: no I/O.
 *
 * Per filesystem:
 *   graph.d/<prefix>_lustre_io_report.json     read and write bandwidth
 *   graph.d/<prefix>_lustre_ops_report.json    OSS and MDS operations
 *   graph.d/<prefix>_lustre_mdops_report.json  the metadata_ops rates
 *   conf/view_lustre_<prefix>.json             the filesystem's totals
 * and a default.json whose included_reports attach the reports.
 */
#ifndef LH_GREPORT_H
#define LH_GREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* What one filesystem sends (struct lh_config's fields). */
struct greport_fs {
	const char *prefix;    /* metric_prefix */
	bool extra_metrics;    /* <prefix>_read_ops, _write_ops */
	uint32_t metadata_ops; /* bit i: enum mdops_op i */
};

enum greport_kind {
	GREPORT_IO = 0, /* <prefix>_read_bytes, _write_bytes */
	GREPORT_OPS,    /* _oss_ops, _mds_ops (+ _read_ops, _write_ops) */
	GREPORT_MDOPS,  /* _mds_<op> for each op of metadata_ops */
	GREPORT_NKINDS,
};

/* Room for any name below: a 48-byte prefix and the longest suffix. */
#define GREPORT_NAME_MAX 96

/* Debian's default.json reports, kept in the default.json written. */
extern const char *const greport_debian_reports[];
extern const size_t greport_ndebian_reports;

/* The report's name, "<prefix>_lustre_io_report": graph.d's file is the
 * name and ".json" (ganglia-web finds a report by its name, and lists
 * only files ending in "_report.json").  Returns 0, or -EINVAL for a bad
 * prefix or a buffer too small. */
int
greport_name(char *buf, size_t size, const char *prefix, enum greport_kind k);

/* The report's graph.d JSON into *ret (the caller owns it).  Returns 0,
 * -ENOENT when the kind has nothing to show for fs (GREPORT_MDOPS
 * without metadata_ops), -EINVAL for a bad prefix, -ENOMEM. */
int
greport_build(json_t **ret, const struct greport_fs *fs, enum greport_kind k);

/* The view's name, "lustre_<prefix>"; its file is "view_<name>.json" in
 * ganglia-web's conf directory.  Returns 0 or -EINVAL. */
int greport_view_name(char *buf, size_t size, const char *prefix);

/* The view of fs's totals, as spoofed for totals_host: aggregate graphs
 * of bandwidth, operations and (with metadata_ops) the metadata rates.
 * Returns 0, -EINVAL for a bad prefix, -ENOMEM. */
int greport_view(json_t **ret, const struct greport_fs *fs,
    const char *totals_host);

/* default.json: Debian's reports, then names[0..n).  Returns 0 or
 * -ENOMEM. */
int greport_default(json_t **ret, const char *const *names, size_t n);

/* The colour of the series of metric m (enum names_metric) in the
 * reports, "rrggbb"; docs/ganglia.md lists them. */
const char *greport_color(unsigned m);

/* The colour of metadata op (enum mdops_op) in the mdops report. */
const char *greport_op_color(unsigned op);

#endif
