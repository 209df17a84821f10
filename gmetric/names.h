/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ganglia metric names, kept compatible with the legacy lustreHarvest so
 * existing RRDs and dashboards carry over: <prefix>_read_bytes,
 * <prefix>_write_bytes (bytes/sec), <prefix>_oss_ops, <prefix>_mds_ops
 * (ops/sec), where <prefix> defaults to the fsname.
 */
#ifndef LH_NAMES_H
#define LH_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* gmond keeps metric names in fixed buffers; stay well inside them. */
#define NAMES_METRIC_MAX 64

enum names_metric {
	NAMES_READ_BYTES = 0,
	NAMES_WRITE_BYTES,
	NAMES_OSS_OPS,
	NAMES_MDS_OPS,
	NAMES_READ_OPS,
	NAMES_WRITE_OPS,
	NAMES_NMETRICS,
};

/* True if prefix can start a metric name: mprefix_ok() (common/util/
 * mprefix.h), the rule the configuration checks too. */
bool names_prefix_ok(const char *prefix);

/* "<prefix>_<suffix>" into buf.  Returns 0, or -EINVAL for a bad prefix
 * or a buffer too small. */
int
names_metric(char *buf, size_t size, const char *prefix, enum names_metric m);

/* "<prefix>_mds_<op>" into buf: the rate of one kind of metadata request
 * (op, a name of common/lustre/mdops.h such as "open").  Returns 0, or
 * -EINVAL for a bad prefix or op, or a buffer too small. */
int names_mds_op(char *buf, size_t size, const char *prefix, const char *op);

/* Units shown by ganglia-web: "bytes/sec" or "ops/sec". */
const char *names_units(enum names_metric m);

#endif
