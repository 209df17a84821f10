/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The aggregator's Ganglia output: spoofed float metrics, as libganglia
 * sends them, to the udp_send_channels of a gmond.conf.  Values are queued
 * by gsink_put() and sent, paced, by gsink_flush(), which the event loop
 * calls every tick until nothing is left, a tick's packets with one
 * sendmmsg(2) per channel; metadata goes with the first value of each
 * (host, metric) and then every metadata_interval, not with every value.
 *
 * libganglia 3.7.2 ends the process on a bad gmond.conf or an unresolvable
 * channel host, so gsink_open() first has a forked child build the
 * configuration and channels from a private copy of the file, and only
 * builds them itself when the child succeeded; every failure is an error
 * return with a one-line reason.  Nothing here includes a Ganglia or APR
 * type: this header is all the daemon sees of libganglia.
 */
#ifndef LH_SINK_H
#define LH_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define GSINK_GROUP_MAX   64
#define GSINK_PACE_MAX    1000000 /* packets per second */
#define GSINK_TICK_MAX_MS 100
#define GSINK_BATCH       64 /* packets per sendmmsg(), and per tick */

struct gsink;

struct gsink_opts {
	const char *group;          /* GROUP extra element; "" = none */
	unsigned tmax;              /* s, the metric's TMAX */
	unsigned dmax;              /* s, gmond deletes it after; 0 = never */
	unsigned metadata_interval; /* s between metadata; 0 = every value */
	unsigned pace;              /* packets per second; 0 = unpaced */
	unsigned tick_ms;           /* between flushes, 1-100; 0 = auto */
	size_t max_entries;         /* (host, metric) pairs remembered */
	unsigned check_timeout_ms;  /* for the child checking gmond.conf */
};

struct gsink_stats {
	uint64_t values;      /* value packets sent */
	uint64_t metadata;    /* metadata packets sent */
	uint64_t send_errors; /* packets a channel refused (gmond down) */
	uint64_t coalesced;   /* values replaced by a newer one unsent */
	uint64_t refused;     /* values refused: too many (host, metric) */
	uint64_t rejected;    /* values libganglia refused (never expected) */
	uint64_t forgotten;   /* (host, metric) pairs forgotten, idle */
	uint64_t forced;      /* times every metadata was made due again */
	size_t entries;       /* (host, metric) pairs remembered now */
	size_t pending;       /* values waiting to be sent */
};

/* Defaults: group "lustre", tmax 60, dmax 600, metadata_interval 60,
 * pace 15000, tick_ms 0, max_entries 1048576,
 * check_timeout_ms 10000. */
void gsink_opts_default(struct gsink_opts *o);

/*
 * Check gmond_conf in a child process, then open its udp_send_channels.
 * o NULL means the defaults.  Returns 0 and *ret, or a negative errno with
 * err->reason the whole line to log, "gmond_conf PATH: REASON" (-ENOENT
 * and friends: the file; -EINVAL: libganglia refused the file or a
 * channel, or it has no udp_send_channel; -ETIMEDOUT: the check took too
 * long, e.g. a channel host whose name does not resolve in time), or, for
 * bad options, just the reason.  Blocks while the child works (about a
 * millisecond; at most check_timeout_ms).
 */
int gsink_open(const char *gmond_conf, const struct gsink_opts *o,
    struct gsink **ret, struct lh_err *err);

/*
 * Queue a value of (spoof_ip:host, metric).  A newer value of a pair still
 * waiting replaces it.  now_ns is CLOCK_MONOTONIC.  Returns 0, -EINVAL (a
 * text gmond cannot take, or a value that is not finite), -ENOSPC (a new
 * pair but max_entries are remembered) or -ENOMEM.
 */
int gsink_put(struct gsink *s, const char *spoof_ip, const char *host,
    const char *metric, const char *units, double value, uint64_t now_ns);

/*
 * Send what the pace allows since the last call (everything when
 * unpaced); returns how many values still wait.  Call again in
 * gsink_tick_ms() while that is not 0.  Never blocks: a gmond that is down
 * only shows as send_errors (and makes every metadata due again, at most
 * once per metadata_interval).
 */
size_t gsink_flush(struct gsink *s, uint64_t now_ns);

/*
 * How long the caller waits between gsink_flush() calls, ms.  Unless
 * tick_ms says, the tick in which the pace sends one batch of
 * GSINK_BATCH packets, 1 to 10 ms (4 ms at 15,000 packets/s): each wake-up
 * costs CPU, and each tick's packets reach gmond's receive buffer at
 * once (docs/performance.md, "Issue 19: the Ganglia send").  The token
 * bucket holds two ticks' worth, 10 ms' at least, so a timer late by a
 * tick loses no pace.
 */
unsigned gsink_tick_ms(const struct gsink *s);

/* The channels as "ip:port[,ip:port...]", for a log line. */
const char *gsink_channels(const struct gsink *s);

void gsink_stats(const struct gsink *s, struct gsink_stats *ret);

/* Close the channels and free the sink (values still queued are dropped).
 * NULL is fine.  libganglia cannot free a parsed gmond.conf (its destroy
 * function is not exported): each open keeps that one small block. */
void gsink_close(struct gsink *s);

#endif
