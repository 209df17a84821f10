/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A value as text for gmond, as the sink has always sent it: two
 * decimals ("%.2f", as the legacy tool), "0.00" for anything that would
 * print as 0.00 or -0.00, "%.6e" from 1e15 on.  Written by hand for the
 * values a sweep sends (below 1e13), byte for byte what glibc's printf
 * gives (rounded from the double's exact value, ties to even), because
 * snprintf was a tenth of the sink's user-space time per packet; larger
 * values go through snprintf.  Internal to gmetric/.
 */
#ifndef LH_SINK_FMT_H
#define LH_SINK_FMT_H

#include <stddef.h>

/* Room for the longest text and its NUL ("-999999999999999.99"). */
#define SINKFMT_MAX 24

/* v's text and a NUL into buf (SINKFMT_MAX bytes); its length. */
size_t sinkfmt_value(char *buf, double v);

#endif
