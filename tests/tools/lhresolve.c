/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lhresolve: look addresses up through daemon/resolver.c the way the
 * aggregator does, for the integration tests (tests/integration/
 * it_resolver.sh against tests/tools/dnsstub.py).  Every --period-ms (a
 * "sweep") each address without an answer yet in this round is asked
 * again; an answer prints "addr name" or "addr -" (no name).  When every
 * address has one, the round ends; after --gap-ms the next round asks
 * them all again (from the cache, or not).  After --rounds rounds the
 * resolver's counters are printed as "stat NAME VALUE" lines.
 *
 * It never asks the machine's own resolver unless told --system: without
 * --server or --disable it refuses to start.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "err.h"
#include "log.h"
#include "resolver.h"

#define LHRESOLVE_ADDRS_MAX 100000
#define LHRESOLVE_GAPS_MAX  16

struct lhresolve {
	struct event_base *base;
	struct resolver *res;
	struct event *tick, *kick, *gap, *deadline, *quit;
	char **addrs;
	bool *done;
	size_t naddrs, left;
	unsigned round, rounds;
	bool draining; /* rounds done, waiting for queries in flight */
	unsigned long gaps[LHRESOLVE_GAPS_MAX];
	size_t ngaps;
	uint64_t round_start;
	bool timing, eager;
	uint64_t done_callbacks;
	int status;
};

static void
start_round(struct lhresolve *t)
{
	t->round++;
	t->left = t->naddrs;
	memset(t->done, 0, t->naddrs * sizeof(*t->done));
	t->round_start = clock_monotonic_ns();
	(void)printf("round %u\n", t->round);
	event_active(t->kick, EV_TIMEOUT, 0);
}

static void
print_stats(struct lhresolve *t)
{
	struct resolver_stats s;

	resolver_stats(t->res, &s);
#define P(f) (void)printf("stat %s %" PRIu64 "\n", #f, (uint64_t)s.f)
	P(lookups);
	P(hits);
	P(stale_hits);
	P(negative_hits);
	P(queries);
	P(merged);
	P(deferred);
	P(answered);
	P(nxdomain);
	P(nodata);
	P(timeouts);
	P(errors);
	P(kept_stale);
	P(evictions);
	P(disabled);
	P(inflight);
	P(inflight_peak);
	P(entries);
#undef P
	(void)printf("stat done_callbacks %" PRIu64 "\n", t->done_callbacks);
}

static void
round_over(struct lhresolve *t)
{
	struct timeval tv;
	unsigned long ms;

	if (t->round >= t->rounds) {
		struct resolver_stats st;

		/* Renewals of expired names may still be in flight: let them
		 * land, so that what the stub counts does not depend on the
		 * machine's load. */
		resolver_stats(t->res, &st);
		if (st.inflight > 0) {
			tv.tv_sec = 0;
			tv.tv_usec = 10000;
			t->draining = true;
			(void)evtimer_add(t->gap, &tv);
			return;
		}
		t->status = 0;
		(void)event_base_loopbreak(t->base);
		return;
	}
	ms = t->gaps[t->round - 1 < t->ngaps ? t->round - 1 : t->ngaps - 1];
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	(void)evtimer_add(t->gap, &tv);
}

/* One sweep: ask for every address still without an answer. */
static void
sweep(struct lhresolve *t)
{
	char name[RESOLVER_NAME_MAX + 1];
	uint64_t now = clock_monotonic_ns();
	size_t i;
	int rc;

	if (t->left == 0)
		return;
	for (i = 0; i < t->naddrs; i++) {
		if (t->done[i])
			continue;
		rc = resolver_lookup(t->res, t->addrs[i], name, sizeof(name),
		    now);
		if (rc == -EAGAIN)
			continue;
		if (rc == -EINVAL)
			log_warnx("%s: not an address", t->addrs[i]);
		t->done[i] = true;
		t->left--;
		if (t->timing)
			(void)printf("%s %s %llu\n", t->addrs[i],
			    rc == 0 ? name : "-",
			    (unsigned long long)((now - t->round_start) /
			        1000000));
		else
			(void)printf("%s %s\n", t->addrs[i],
			    rc == 0 ? name : "-");
	}
	(void)fflush(stdout);
	if (t->left == 0)
		round_over(t);
}

static void
sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sweep(arg);
}

static void
gap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lhresolve *t = arg;

	(void)fd;
	(void)what;
	if (t->draining)
		round_over(t);
	else
		start_round(t);
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lhresolve *t = arg;
	size_t i;

	(void)fd;
	(void)what;
	for (i = 0; i < t->naddrs; i++)
		if (!t->done[i])
			(void)printf("%s ?\n", t->addrs[i]);
	log_warnx("deadline reached in round %u with %zu addresses "
	          "unanswered",
	    t->round, t->left);
	(void)event_base_loopbreak(t->base);
}

static void
quit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lhresolve *t = arg;

	(void)fd;
	(void)what;
	t->status = 0;
	(void)event_base_loopbreak(t->base);
}

static void
done_cb(void *arg, const char *addr, bool found)
{
	struct lhresolve *t = arg;

	(void)addr;
	(void)found;
	t->done_callbacks++;
	if (t->eager)
		event_active(t->kick, EV_TIMEOUT, 0);
}

static unsigned long
number(const char *opt, const char *s)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-')
		fatalx("%s: not a number: %s", opt, s);
	return v;
}

static void
parse_gaps(struct lhresolve *t, const char *s)
{
	char buf[256], *p, *comma;

	(void)snprintf(buf, sizeof(buf), "%s", s);
	t->ngaps = 0;
	for (p = buf; p != NULL; p = comma) {
		comma = strchr(p, ',');
		if (comma != NULL)
			*comma++ = '\0';
		if (t->ngaps == LHRESOLVE_GAPS_MAX)
			fatalx("--gap-ms: more than %d gaps",
			    LHRESOLVE_GAPS_MAX);
		t->gaps[t->ngaps++] = number("--gap-ms", p);
	}
}

static void
add_addr(struct lhresolve *t, const char *a)
{
	if (t->naddrs == LHRESOLVE_ADDRS_MAX)
		fatalx("more than %d addresses", LHRESOLVE_ADDRS_MAX);
	t->addrs[t->naddrs] = strdup(a);
	if (t->addrs[t->naddrs] == NULL)
		fatalx("out of memory");
	t->naddrs++;
}

static void
read_addrs(struct lhresolve *t, const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (f == NULL)
		fatal("%s", path);
	/* cppcheck-suppress nullPointerRedundantCheck ; fatal() exits */
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, " \t\r\n#")] = '\0';
		if (line[0] != '\0')
			add_addr(t, line);
	}
	(void)fclose(f);
}

static void
usage(void)
{
	(void)fprintf(stderr,
	    "usage: lhresolve (--server ADDR[:PORT]... | --disable | "
	    "--system)\n"
	    "\t[--positive-ttl S] [--negative-ttl S] [--timeout S] "
	    "[--attempts N]\n"
	    "\t[--max-inflight N] [--max-entries N] [--period-ms M] "
	    "[--rounds N]\n"
	    "\t[--gap-ms G[,G...]] [--deadline S] [--quit-after-ms M] "
	    "[--eager]\n"
	    "\t[--timing] [-v] [-f FILE] [ADDR...]\n");
	exit(2);
}

static struct timeval
ms_tv(unsigned long ms)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	return tv;
}

/* The command line, but for what goes into struct lhresolve. */
struct lhresolve_opts {
	const char *servers[RESOLVER_SERVERS_MAX];
	struct resolver_conf rc;
	unsigned long period_ms, deadline_s, quit_ms;
	bool disable, system_conf;
	int verbose;
};

/* One of the resolver's options (ch, its argument arg) into o; false if
 * ch is another. */
static bool
parse_resolver_opt(struct lhresolve_opts *o, int ch, const char *arg)
{
	switch (ch) {
	case 'S':
		if (o->rc.nservers == RESOLVER_SERVERS_MAX)
			fatalx("too many --server");
		o->servers[o->rc.nservers++] = arg;
		return true;
	case 'D':
		o->disable = true;
		return true;
	case 'Y':
		o->system_conf = true;
		return true;
	case 'P':
		o->rc.positive_ttl_s = (unsigned)number("--positive-ttl", arg);
		return true;
	case 'N':
		o->rc.negative_ttl_s = (unsigned)number("--negative-ttl", arg);
		return true;
	case 'T':
		o->rc.timeout_s = (unsigned)number("--timeout", arg);
		return true;
	case 'A':
		o->rc.attempts = (unsigned)number("--attempts", arg);
		return true;
	case 'I':
		o->rc.max_inflight = number("--max-inflight", arg);
		return true;
	case 'E':
		o->rc.max_entries = number("--max-entries", arg);
		return true;
	default:
		return false;
	}
}

/* One option of the run (ch, its argument arg); usage() if unknown. */
static void
parse_run_opt(struct lhresolve *t, struct lhresolve_opts *o, int ch,
    const char *arg)
{
	switch (ch) {
	case 'p':
		o->period_ms = number("--period-ms", arg);
		break;
	case 'r':
		t->rounds = (unsigned)number("--rounds", arg);
		break;
	case 'g':
		parse_gaps(t, arg);
		break;
	case 'd':
		o->deadline_s = number("--deadline", arg);
		break;
	case 'q':
		o->quit_ms = number("--quit-after-ms", arg);
		break;
	case 'e':
		t->eager = true;
		break;
	case 't':
		t->timing = true;
		break;
	case 'f':
		read_addrs(t, arg);
		break;
	case 'v':
		o->verbose++;
		break;
	default:
		usage();
	}
}

static void
parse_args(struct lhresolve *t, struct lhresolve_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"server", required_argument, NULL, 'S'},
	    {"disable", no_argument, NULL, 'D'},
	    {"system", no_argument, NULL, 'Y'},
	    {"positive-ttl", required_argument, NULL, 'P'},
	    {"negative-ttl", required_argument, NULL, 'N'},
	    {"timeout", required_argument, NULL, 'T'},
	    {"attempts", required_argument, NULL, 'A'},
	    {"max-inflight", required_argument, NULL, 'I'},
	    {"max-entries", required_argument, NULL, 'E'},
	    {"period-ms", required_argument, NULL, 'p'},
	    {"rounds", required_argument, NULL, 'r'},
	    {"gap-ms", required_argument, NULL, 'g'},
	    {"deadline", required_argument, NULL, 'd'},
	    {"quit-after-ms", required_argument, NULL, 'q'},
	    {"eager", no_argument, NULL, 'e'},
	    {"timing", no_argument, NULL, 't'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "f:v", longopts, NULL)) != -1)
		if (!parse_resolver_opt(o, ch, optarg))
			parse_run_opt(t, o, ch, optarg);
}

/* The resolver and the timers of a run as o says. */
static void
start(struct lhresolve *t, struct lhresolve_opts *o)
{
	struct lh_err err;
	struct timeval tv;

	o->rc.enabled = !o->disable;
	o->rc.servers = o->servers;
	o->rc.on_done = done_cb;
	o->rc.arg = t;
	if (resolver_new(t->base, &o->rc, &t->res, &err) < 0)
		fatalx("resolver: %s", err.reason);
	t->tick = event_new(t->base, -1, EV_PERSIST, sweep_cb, t);
	t->kick = event_new(t->base, -1, 0, sweep_cb, t);
	t->gap = evtimer_new(t->base, gap_cb, t);
	t->deadline = evtimer_new(t->base, deadline_cb, t);
	t->quit = evtimer_new(t->base, quit_cb, t);
	if (t->tick == NULL || t->kick == NULL || t->gap == NULL ||
	    t->deadline == NULL || t->quit == NULL)
		fatalx("out of memory");
	tv = ms_tv(o->period_ms);
	(void)event_add(t->tick, &tv);
	tv = ms_tv(o->deadline_s * 1000);
	(void)evtimer_add(t->deadline, &tv);
	if (o->quit_ms > 0) {
		tv = ms_tv(o->quit_ms);
		(void)evtimer_add(t->quit, &tv);
	}
}

static void
finish(struct lhresolve *t)
{
	size_t i;

	resolver_free(t->res);
	/* evdns fails what is still in flight from the loop's next turn
	 * (DNS_ERR_SHUTDOWN): let it run, so that nothing leaks. */
	event_free(t->tick);
	event_free(t->kick);
	event_free(t->gap);
	event_free(t->deadline);
	event_free(t->quit);
	(void)event_base_loop(t->base, EVLOOP_NONBLOCK);
	event_base_free(t->base);
	for (i = 0; i < t->naddrs; i++)
		free(t->addrs[i]);
	free(t->addrs);
	free(t->done);
}

int
main(int argc, char **argv)
{
	struct lhresolve_opts o;
	struct lhresolve t;
	size_t i;

	memset(&t, 0, sizeof(t));
	memset(&o, 0, sizeof(o));
	o.period_ms = 100;
	o.deadline_s = 60;
	t.status = 1;
	t.rounds = 1;
	t.gaps[0] = 0;
	t.ngaps = 1;
	t.addrs = calloc(LHRESOLVE_ADDRS_MAX, sizeof(*t.addrs));
	if (t.addrs == NULL)
		return 1;
	parse_args(&t, &o, argc, argv);
	log_init("lhresolve", true, o.verbose);
	for (i = (size_t)optind; i < (size_t)argc; i++)
		add_addr(&t, argv[i]);
	/* The tests' rule: never the machine's own resolver by accident. */
	if (o.rc.nservers == 0 && !o.disable && !o.system_conf)
		fatalx("give --server, --disable or --system");
	if (t.naddrs == 0 || t.rounds == 0 || o.period_ms == 0)
		usage();
	t.done = calloc(t.naddrs, sizeof(*t.done));
	t.base = event_base_new();
	if (t.done == NULL || t.base == NULL)
		fatalx("out of memory");
	start(&t, &o);
	start_round(&t);
	(void)event_base_dispatch(t.base);
	print_stats(&t);
	finish(&t);
	return t.status;
}
