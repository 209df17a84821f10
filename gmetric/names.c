/* SPDX-License-Identifier: BSD-2-Clause */
/* Metric names and units. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mprefix.h"
#include "names.h"

static const char *const suffixes[NAMES_NMETRICS] = {
    [NAMES_READ_BYTES] = "read_bytes",
    [NAMES_WRITE_BYTES] = "write_bytes",
    [NAMES_OSS_OPS] = "oss_ops",
    [NAMES_MDS_OPS] = "mds_ops",
    [NAMES_READ_OPS] = "read_ops",
    [NAMES_WRITE_OPS] = "write_ops",
};

_Static_assert(MPREFIX_NAME_MAX <= NAMES_METRIC_MAX,
    "names.h and mprefix.h agree on the longest metric name");

bool
names_prefix_ok(const char *prefix)
{
	return mprefix_ok(prefix);
}

int
names_metric(char *buf, size_t size, const char *prefix, enum names_metric m)
{
	int n;

	if ((unsigned)m >= NAMES_NMETRICS || !names_prefix_ok(prefix))
		return -EINVAL;
	n = snprintf(buf, size, "%s_%s", prefix, suffixes[m]);
	if (n < 0 || (size_t)n >= size)
		return -EINVAL;
	return 0;
}

int
names_mds_op(char *buf, size_t size, const char *prefix, const char *op)
{
	int n;

	if (!names_prefix_ok(prefix) || op == NULL || op[0] == '\0')
		return -EINVAL;
	n = snprintf(buf, size, "%s_mds_%s", prefix, op);
	if (n < 0 || (size_t)n >= size)
		return -EINVAL;
	return 0;
}

const char *
names_units(enum names_metric m)
{
	switch (m) {
	case NAMES_READ_BYTES:
	case NAMES_WRITE_BYTES:
		return "bytes/sec";
	case NAMES_OSS_OPS:
	case NAMES_MDS_OPS:
	case NAMES_READ_OPS:
	case NAMES_WRITE_OPS:
	case NAMES_NMETRICS:
		break;
	}
	return "ops/sec";
}
