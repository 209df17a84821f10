/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One queued (host, metric) as the bytes libganglia would send for it:
 * the metadata packet of Ganglia_metadata_send() and the value packet of
 * Ganglia_value_send(), after Ganglia_metric_set() (type float, slope
 * both) and Ganglia_metadata_add() of SPOOF_HOST and GROUP, encoded by
 * libganglia's own XDR functions into the caller's buffer, without the
 * APR pool, table and copies it makes per packet.  Internal to gmetric/.
 */
#ifndef LH_SINK_XDR_H
#define LH_SINK_XDR_H

#include <stddef.h>

struct gapi;
struct gcache_entry;

/* What every packet of one sink carries besides the entry's own. */
struct sinkxdr {
	const struct gapi *api;
	char *group; /* "" = no GROUP */
	unsigned tmax, dmax;
};

/* The largest packet libganglia sends (GANGLIA_MAX_MESSAGE_LEN). */
#define SINKXDR_MAX 1464

/* e's metadata packet into buf (SINKXDR_MAX bytes); its length, or 0 if
 * it does not fit. */
size_t sinkxdr_meta(const struct sinkxdr *x, struct gcache_entry *e, char *buf);

/* e's value packet into buf (SINKXDR_MAX bytes), the value with two
 * decimals as the legacy tool wrote it; its length, or 0. */
size_t
sinkxdr_value(const struct sinkxdr *x, struct gcache_entry *e, char *buf);

#endif
