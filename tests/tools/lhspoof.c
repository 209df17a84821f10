/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lhspoof: drive gmetric/sink.c the way the aggregator will, for the
 * integration tests and the loss benchmark.  Every --period-ms one sweep
 * puts --hosts x --metrics values, then a libevent timer calls
 * gsink_flush() every tick (the sink's, or --flush-ms) until nothing
 * waits.  Host i (from 0) is "ip:name" =
 * "10.20.<i/250>.<i%250+1>:n<i>.lh.test"; metric j is names.c's metric j
 * of --prefix; the value in sweep k is (i+1)*1000 + j*10 + k*0.25.
 *
 * Prints one line per sweep on stderr and the sink's totals on stdout
 * ("values=.. metadata=.. send_errors=.. ..."); exits 0, 2 on usage, 3
 * when the sink cannot be opened (after one line "gmond_conf PATH:
 * REASON").  --reload CONF opens CONF after the first sweep, as a daemon
 * reloading its configuration: on failure it says why and carries on with
 * the sink it has.  SIGTERM/SIGINT stop it early, totals still printed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "err.h"
#include "names.h"
#include "sink.h"

struct lhspoof {
	struct event_base *base;
	struct event *sweep_ev, *flush_ev;
	struct gsink *sink;
	struct gsink_opts o;
	const char *conf, *reload, *prefix;
	unsigned hosts, metrics, sweeps, done, started;
	unsigned long period_ms, flush_ms;
	uint64_t sweep_start_ns, sweep_cpu_ns, t0_ns;
	bool flushing;
	int status;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* This process's CPU time (user and system), for the per-sweep line. */
static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool
parse_unsigned(const char *s, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v > max || s[0] == '-')
		return false;
	*ret = v;
	return true;
}

static void
print_stats(const struct lhspoof *t)
{
	struct gsink_stats st;

	gsink_stats(t->sink, &st);
	(void)printf("values=%" PRIu64 " metadata=%" PRIu64
	             " send_errors=%" PRIu64 " coalesced=%" PRIu64
	             " refused=%" PRIu64 " rejected=%" PRIu64
	             " forgotten=%" PRIu64 " forced=%" PRIu64
	             " entries=%zu pending=%zu elapsed_ms=%" PRIu64 "\n",
	    st.values, st.metadata, st.send_errors, st.coalesced, st.refused,
	    st.rejected, st.forgotten, st.forced, st.entries, st.pending,
	    (now_ns() - t->t0_ns) / 1000000);
	(void)fflush(stdout);
}

static void
try_reload(struct lhspoof *t)
{
	struct gsink *ns;
	struct lh_err err;

	if (gsink_open(t->reload, &t->o, &ns, &err) < 0) {
		(void)fprintf(stderr, "%s; keeping the sink to %s\n",
		    err.reason, gsink_channels(t->sink));
		return;
	}
	(void)fprintf(stderr, "reloaded: sending to %s\n", gsink_channels(ns));
	gsink_close(t->sink);
	t->sink = ns;
}

static void
flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lhspoof *t = arg;
	struct timeval tv = {0, (suseconds_t)(t->flush_ms * 1000)};
	struct gsink_stats st;
	size_t left;

	(void)fd;
	(void)what;
	left = gsink_flush(t->sink, now_ns());
	if (left > 0) {
		(void)evtimer_add(t->flush_ev, &tv);
		return;
	}
	t->flushing = false;
	gsink_stats(t->sink, &st);
	(void)fprintf(stderr,
	    "sweep %u sent in %" PRIu64 " ms: values %" PRIu64
	    " metadata %" PRIu64 " send_errors %" PRIu64 " cpu %.1f ms\n",
	    t->done, (now_ns() - t->sweep_start_ns) / 1000000, st.values,
	    st.metadata, st.send_errors,
	    (double)(cpu_ns() - t->sweep_cpu_ns) / 1e6);
	t->done++;
	if (t->done == 1 && t->reload != NULL)
		try_reload(t);
	if (t->done >= t->sweeps) {
		t->status = 0;
		(void)event_base_loopbreak(t->base);
	}
}

static void
sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lhspoof *t = arg;
	struct timeval zero = {0, 0};
	uint64_t now = now_ns();
	unsigned i, j, k = t->started;
	int rc;

	(void)fd;
	(void)what;
	if (t->started >= t->sweeps)
		return;
	t->started++;
	t->sweep_start_ns = now;
	t->sweep_cpu_ns = cpu_ns();
	for (i = 0; i < t->hosts; i++) {
		char ip[32], host[32];

		(void)snprintf(ip, sizeof(ip), "10.20.%u.%u", i / 250,
		    i % 250 + 1);
		(void)snprintf(host, sizeof(host), "n%u.lh.test", i);
		for (j = 0; j < t->metrics; j++) {
			char metric[NAMES_METRIC_MAX];
			double v = (i + 1) * 1000.0 + j * 10.0 + k * 0.25;

			if (names_metric(metric, sizeof(metric), t->prefix,
			        (enum names_metric)j) < 0)
				continue;
			rc = gsink_put(t->sink, ip, host, metric,
			    names_units((enum names_metric)j), v, now);
			if (rc < 0)
				(void)fprintf(stderr, "put %s %s: %s\n", host,
				    metric, strerror(-rc));
		}
	}
	if (!t->flushing) {
		t->flushing = true;
		(void)evtimer_add(t->flush_ev, &zero);
	}
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct lhspoof *t = arg;

	(void)what;
	(void)fprintf(stderr, "signal %d: stopping\n", (int)sig);
	t->status = 0;
	(void)event_base_loopbreak(t->base);
}

static void
usage(void)
{
	(void)fprintf(stderr,
	    "usage: lhspoof -c GMOND_CONF [--hosts N] [--metrics M] "
	    "[--sweeps K]\n"
	    "  [--period-ms P] [--pace PPS (0: unpaced)] [--tmax S] "
	    "[--dmax S]\n"
	    "  [--meta-interval S] [--group G] [--prefix FS] "
	    "[--flush-ms MS]\n"
	    "  [--reload GMOND_CONF]\n");
}

/* The sink's options (pace, tmax, dmax, metadata interval) of
 * parse_opt(); false if ch is none of them or out of range. */
static bool
parse_sink_opt(struct lhspoof *t, int ch, const char *arg)
{
	unsigned long v = 0;
	bool ok;

	switch (ch) {
	case 'p':
		ok = parse_unsigned(arg, 100000000, &v);
		t->o.pace = (unsigned)v;
		break;
	case 't':
		ok = parse_unsigned(arg, 31536000, &v);
		t->o.tmax = (unsigned)v;
		break;
	case 'd':
		ok = parse_unsigned(arg, 31536000, &v);
		t->o.dmax = (unsigned)v;
		break;
	case 'm':
		ok = parse_unsigned(arg, 86400, &v);
		t->o.metadata_interval = (unsigned)v;
		break;
	default:
		ok = false;
		break;
	}
	return ok;
}

/* One option of parse_args() (ch, its argument arg); false if it is
 * unknown or out of range. */
static bool
parse_opt(struct lhspoof *t, int ch, char *arg)
{
	unsigned long v = 0;
	bool ok = true;

	switch (ch) {
	case 'c':
		t->conf = arg;
		break;
	case 'g':
		t->o.group = arg;
		break;
	case 'f':
		t->prefix = arg;
		break;
	case 'r':
		t->reload = arg;
		break;
	case 'H':
		ok = parse_unsigned(arg, 1000000, &v);
		t->hosts = (unsigned)v;
		break;
	case 'M':
		ok = parse_unsigned(arg, NAMES_NMETRICS, &v);
		t->metrics = (unsigned)v;
		break;
	case 'K':
		ok = parse_unsigned(arg, 1000000, &v);
		t->sweeps = (unsigned)v;
		break;
	case 'P':
		ok = parse_unsigned(arg, 3600000, &t->period_ms) &&
		    t->period_ms > 0;
		break;
	case 'F':
		ok = parse_unsigned(arg, GSINK_TICK_MAX_MS, &t->flush_ms) &&
		    t->flush_ms > 0;
		if (ok)
			t->o.tick_ms = (unsigned)t->flush_ms;
		break;
	default:
		return parse_sink_opt(t, ch, arg);
	}
	return ok;
}

static int
parse_args(struct lhspoof *t, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"conf", required_argument, NULL, 'c'},
	    {"hosts", required_argument, NULL, 'H'},
	    {"metrics", required_argument, NULL, 'M'},
	    {"sweeps", required_argument, NULL, 'K'},
	    {"period-ms", required_argument, NULL, 'P'},
	    {"pace", required_argument, NULL, 'p'},
	    {"tmax", required_argument, NULL, 't'},
	    {"dmax", required_argument, NULL, 'd'},
	    {"meta-interval", required_argument, NULL, 'm'},
	    {"group", required_argument, NULL, 'g'},
	    {"prefix", required_argument, NULL, 'f'},
	    {"flush-ms", required_argument, NULL, 'F'},
	    {"reload", required_argument, NULL, 'r'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "c:", longopts, NULL)) != -1) {
		if (!parse_opt(t, ch, optarg)) {
			usage();
			return -1;
		}
	}
	if (t->conf == NULL || optind != argc) {
		usage();
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct lhspoof t;
	struct lh_err err;
	struct event *sigterm, *sigint;
	struct timeval period;

	memset(&t, 0, sizeof(t));
	gsink_opts_default(&t.o);
	t.prefix = "scratch";
	t.hosts = 200;
	t.metrics = 4;
	t.sweeps = 1;
	t.period_ms = 1000;
	t.flush_ms = 0; /* the sink's */
	t.status = 1;
	if (parse_args(&t, argc, argv) < 0)
		return 2;
	t.t0_ns = now_ns();
	if (gsink_open(t.conf, &t.o, &t.sink, &err) < 0) {
		(void)fprintf(stderr, "%s\n", err.reason);
		return 3;
	}
	if (t.flush_ms == 0)
		t.flush_ms = gsink_tick_ms(t.sink);
	(void)fprintf(stderr, "sending to %s\n", gsink_channels(t.sink));
	t.base = event_base_new();
	if (t.base == NULL) {
		(void)fprintf(stderr, "event_base_new failed\n");
		gsink_close(t.sink);
		return 1;
	}
	t.sweep_ev = event_new(t.base, -1, EV_PERSIST, sweep_cb, &t);
	t.flush_ev = evtimer_new(t.base, flush_cb, &t);
	sigterm = evsignal_new(t.base, SIGTERM, signal_cb, &t);
	sigint = evsignal_new(t.base, SIGINT, signal_cb, &t);
	if (t.sweep_ev == NULL || t.flush_ev == NULL || sigterm == NULL ||
	    sigint == NULL) {
		(void)fprintf(stderr, "out of memory\n");
		return 1;
	}
	(void)evsignal_add(sigterm, NULL);
	(void)evsignal_add(sigint, NULL);
	period.tv_sec = (time_t)(t.period_ms / 1000);
	period.tv_usec = (suseconds_t)(t.period_ms % 1000 * 1000);
	(void)event_add(t.sweep_ev, &period);
	event_active(t.sweep_ev, EV_TIMEOUT, 0); /* the first sweep now */
	if (t.sweeps > 0)
		(void)event_base_dispatch(t.base);
	else
		t.status = 0;
	print_stats(&t);
	event_free(sigint);
	event_free(sigterm);
	event_free(t.flush_ev);
	event_free(t.sweep_ev);
	event_base_free(t.base);
	gsink_close(t.sink);
	return t.status;
}
