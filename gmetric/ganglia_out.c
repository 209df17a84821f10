/* SPDX-License-Identifier: BSD-2-Clause */
/* The Ganglia output of a closed sweep (ganglia_out.h). */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "ganglia_out.h"
#include "hostsum.h"
#include "mdops.h"
#include "names.h"
#include "sink.h"
#include "sweeps.h"

void
ganglia_out_init(struct ganglia_out *g, const struct lh_config *cfg)
{
	memset(g, 0, sizeof(*g));
	g->cfg = cfg;
}

static bool
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev &&
	    a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int
ganglia_out_refresh(struct ganglia_out *g, struct lh_err *err)
{
	const struct lh_config *cfg = g->cfg;
	struct gsink_opts go;
	struct gsink *next;
	struct stat sb;
	bool had = g->sink != NULL;

	if (stat(cfg->gmond_conf, &sb) < 0)
		memset(&sb, 0, sizeof(sb));
	if (g->sink_tried && same_file(&sb, &g->sink_conf))
		return GANGLIA_SAME;
	g->sink_conf = sb;
	g->sink_tried = true;
	gsink_opts_default(&go);
	go.tmax = cfg->tmax;
	go.dmax = cfg->dmax;
	go.metadata_interval = cfg->metadata_interval;
	go.pace = cfg->ganglia_pace;
	if (gsink_open(cfg->gmond_conf, &go, &next, err) < 0)
		return -1;
	gsink_close(g->sink);
	g->sink = next;
	return had ? GANGLIA_REOPENED : GANGLIA_OPENED;
}

/* The metadata_ops metrics of one filesystem of one host:
 * <prefix>_mds_<op>, 0 when idle like the others. */
static void
put_ops(struct ganglia_out *g, const char *ip, const char *host,
    const char *prefix, const double oprate[MDOPS_N], uint64_t now)
{
	char name[NAMES_METRIC_MAX + 1];
	unsigned i;

	for (i = 0; i < MDOPS_N; i++) {
		if ((g->cfg->metadata_ops & ((uint32_t)1 << i)) == 0)
			continue;
		if (names_mds_op(name, sizeof(name), prefix, mdops_name(i)) < 0)
			continue;
		(void)gsink_put(g->sink, ip, host, name, "ops/sec", oprate[i],
		    now);
	}
}

/* The metrics of one filesystem of one host. */
static void
put_host(struct ganglia_out *g, const char *ip, const char *host,
    const char *fs, const double rate[SWEEPS_NCOUNTERS],
    const double oprate[MDOPS_N], uint64_t now)
{
	/* Each metric's counter (struct iocount's order). */
	static const unsigned counter[NAMES_NMETRICS] = {
	    [NAMES_READ_BYTES] = 0,
	    [NAMES_WRITE_BYTES] = 1,
	    [NAMES_OSS_OPS] = 4,
	    [NAMES_MDS_OPS] = 5,
	    [NAMES_READ_OPS] = 2,
	    [NAMES_WRITE_OPS] = 3,
	};
	const char *prefix = config_metric_prefix(g->cfg, fs);
	char name[NAMES_METRIC_MAX + 1];
	unsigned m;

	for (m = 0; m < NAMES_NMETRICS; m++) {
		/* read_ops and write_ops only with extra_metrics. */
		if (m >= NAMES_READ_OPS && !g->cfg->extra_metrics)
			continue;
		if (names_metric(name, sizeof(name), prefix,
		        (enum names_metric)m) < 0)
			continue;
		(void)gsink_put(g->sink, ip, host, name,
		    names_units((enum names_metric)m), rate[counter[m]], now);
	}
	put_ops(g, ip, host, prefix, oprate, now);
}

void
ganglia_out_put(struct ganglia_out *g, const struct hostsum_row *hosts,
    size_t nhosts, const struct sweeps_fs_total *totals, size_t ntotals,
    uint64_t now_ns)
{
	const char *th = g->cfg->totals_host;
	size_t i;

	if (g->sink == NULL)
		return;
	for (i = 0; i < nhosts; i++)
		put_host(g, hostsum_spoof_ip(&hosts[i]), hosts[i].host,
		    hosts[i].fs, hosts[i].rate, hosts[i].oprate, now_ns);
	for (i = 0; i < ntotals; i++)
		put_host(g, th, th, totals[i].fs, totals[i].rate,
		    totals[i].ops.rate, now_ns);
}

void
ganglia_out_reset(struct ganglia_out *g, bool close)
{
	g->sink_tried = false;
	if (close) {
		gsink_close(g->sink);
		g->sink = NULL;
	}
}

void
ganglia_out_free(struct ganglia_out *g)
{
	gsink_close(g->sink);
	g->sink = NULL;
}
