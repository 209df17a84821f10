/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Ganglia output of a closed sweep, without the event loop or the
 * log (daemon/ganglia.c is its consumer glue: the flush timer and the log
 * lines): each host's rates per filesystem, and each filesystem's totals
 * under totals_host, as spoofed metrics named by names.c (<prefix>_read_bytes
 * ...) and <prefix>_mds_<op> for the metadata_ops chosen, through the sink
 * of gmond_conf (sink.c).  Its part of struct lh_config: gmond_conf, tmax,
 * dmax, metadata_interval, totals_host, extra_metrics, metadata_ops and
 * each filesystem's metric_prefix.
 */
#ifndef LH_GANGLIA_OUT_H
#define LH_GANGLIA_OUT_H

#include <sys/stat.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct gsink;
struct hostsum_row;
struct lh_config;
struct sweeps_fs_total;

struct ganglia_out {
	const struct lh_config *cfg;
	struct gsink *sink;    /* NULL until gmond_conf opens */
	struct stat sink_conf; /* gmond_conf as last tried */
	bool sink_tried;
};

enum ganglia_refresh {
	GANGLIA_SAME = 0, /* gmond_conf unchanged since last tried */
	GANGLIA_OPENED,   /* opened, no sink before */
	GANGLIA_REOPENED, /* opened, replacing the sink it had */
};

void ganglia_out_init(struct ganglia_out *g, const struct lh_config *cfg);

/*
 * Open gmond_conf's channels, at start and whenever the file changes
 * (the caller checks before each sweep's values go out).  Only a changed
 * file is opened again: libganglia keeps each parsed config for good.
 * Returns a enum ganglia_refresh, or -1 with err the line to log (the
 * channels it had, if any, stay).
 */
int ganglia_out_refresh(struct ganglia_out *g, struct lh_err *err);

/* Queue the metrics of a closed sweep's hosts and filesystem totals. */
void ganglia_out_put(struct ganglia_out *g, const struct hostsum_row *hosts,
    size_t nhosts, const struct sweeps_fs_total *totals, size_t ntotals,
    uint64_t now_ns);

/* Open again at the next refresh; close: drop the sink now. */
void ganglia_out_reset(struct ganglia_out *g, bool close);

void ganglia_out_free(struct ganglia_out *g);

#endif
