/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One queued (host, metric) as the bytes libganglia would send for it:
 * the metadata packet of Ganglia_metadata_send() and the value packet of
 * Ganglia_value_send(), after Ganglia_metric_set() (type float, slope
 * both) and Ganglia_metadata_add() of SPOOF_HOST and GROUP, encoded by
 * libganglia's own XDR functions into the caller's buffer, without the
 * APR pool, table and copies it makes per packet.  Those run once per
 * entry; per value only its text is written after the cached prefix.
 * Internal to gmetric/.
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

/* The room a value packet needs after its prefix: the string's length
 * and the longest value text, padded (sink_fmt.h). */
#define SINKXDR_VALUE_MAX 28

/* Build e's packets once (gcache_set_packets()): its metadata packet and
 * the prefix of its value packet.  Returns 0, -EMSGSIZE (they would not
 * fit) or -ENOMEM. */
int sinkxdr_build(const struct sinkxdr *x, struct gcache_entry *e);

/* e's value packet into buf (SINKXDR_MAX bytes) from the prefix built by
 * sinkxdr_build() and e's value with two decimals (sink_fmt.h), without
 * libganglia; its length, or 0 if e has no packets. */
size_t sinkxdr_value(const struct gcache_entry *e, char *buf);

#endif
