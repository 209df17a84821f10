/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lharvestd: one binary, three roles (gatherer, aggregator, relay), chosen
 * by the configuration's "role" key.  main() parses the command line, loads
 * the configuration and hands over to the role.
 */
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "aggregator.h"
#include "api.h"
#include "check.h"
#include "config.h"
#include "consumer.h"
#include "err.h"
#include "ganglia.h"
#include "gatherer.h"
#include "greports.h"
#include "log.h"
#include "once.h"
#include "prom.h"
#include "relay_out.h"

#define DEFAULT_CONFIG "/etc/lharvestd/lharvestd.conf"

struct lh_options {
	const char *config;
	const char *user; /* -u: overrides the configuration's user */
	bool foreground;
	bool check_only;
	bool once;
	int verbose;
	bool greports; /* --ganglia-reports DIR */
	const char *greports_dir;
};

static _Noreturn void
usage(FILE *out, int status)
{
	(void)fprintf(out,
	    "usage: lharvestd [-dnvV] [-f file] [-u user] [--once]\n"
	    "       lharvestd --ganglia-reports DIR [-f file]\n"
	    "  -f file   configuration file (default " DEFAULT_CONFIG ")\n"
	    "  -u user   gatherer started as root: run as user (see "
	    "lharvestd(8))\n"
	    "  -d        stay in the foreground, log to stderr\n"
	    "  -n        check the configuration and exit\n"
	    "  -v        more log (repeat for more)\n"
	    "  -V        print the version and exit\n"
	    "  --once    gatherer: read every target once, print JSON lines "
	    "and exit\n"
	    "  --ganglia-reports DIR  write ganglia-web reports for the "
	    "filesystems of -f's file into DIR and exit\n");
	exit(status);
}

static void
parse_args(int argc, char **argv, struct lh_options *o)
{
	static const struct option longopts[] = {
	    {"once", no_argument, NULL, 'O'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"ganglia-reports", required_argument, NULL, 'G'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	memset(o, 0, sizeof(*o));
	o->config = DEFAULT_CONFIG;
	while (
	    (ch = getopt_long(argc, argv, "df:hnu:vV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			o->foreground = true;
			break;
		case 'f':
			o->config = optarg;
			break;
		case 'n':
			o->check_only = true;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			(void)printf("lharvestd %s\n", LH_VERSION);
			exit(0);
		case 'O':
			o->once = true;
			break;
		case 'G':
			o->greports = true;
			o->greports_dir = optarg;
			break;
		case 'h':
			usage(stdout, 0);
		default:
			usage(stderr, 2);
		}
	}
	if (optind != argc)
		usage(stderr, 2);
}

/* libevent's own messages (evdns: "Nameserver ... has failed") go
 * through our log, with our levels and sinks, not straight to stderr. */
static void
libevent_log(int severity, const char *msg)
{
	char safe[512];

	log_safe(safe, sizeof(safe), msg);
	if (severity >= EVENT_LOG_WARN)
		log_warnx("libevent: %s", safe);
	else if (severity == EVENT_LOG_MSG)
		log_info("libevent: %s", safe);
	else
		log_debug("libevent: %s", safe);
}

/*
 * The tables of a sweep are a few large arrays that grow, shrink and are
 * freed every sweep.  glibc's default raises its mmap threshold to the
 * size of the largest block ever freed, after which such arrays come from
 * the heap and their pages stay in the process after free.  A fixed
 * threshold keeps every large array in its own mapping, returned to the
 * system when freed (and grown by mremap, without a copy), so the daemon's
 * resident size follows what it holds (docs/performance.md).
 */
static void
memory_tune(void)
{
	(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	(void)mallopt(M_TRIM_THRESHOLD, 256 * 1024);
}

/* Keys at a deprecated place: one line each, at start-up and from -n,
 * where the lines have no prefix (config.h). */
static void
log_deprecations(const struct lh_config *cfg, bool check_only)
{
	for (size_t i = 0; i < cfg->ndeprecations; i++) {
		if (check_only)
			(void)fprintf(stderr, "%s\n", cfg->deprecations[i]);
		else
			log_warnx("%s", cfg->deprecations[i]);
	}
}

/*
 * The outputs of each role's closed sweeps (consumer.h), in the order
 * they are opened and fed.  A relay forwards first (its state is the one
 * that can refuse to start) and shows the sweeps in Ganglia only with
 * spoof, which the Ganglia consumer reads itself (a reload may change it).
 * A new output is one more entry here.
 */
static const struct consumer_kind aggregator_outs[] = {
    {ganglia_open, ganglia_check},
    {prom_open, NULL},
    {api_open, NULL},
};
static const struct consumer_kind relay_outs[] = {
    {relay_out_open, NULL},
    {ganglia_open, ganglia_check},
    {prom_open, NULL},
    {api_open, NULL},
};

/* The outputs of role. */
static const struct consumer_kind *
role_outs(enum lh_role role, size_t *ret_n)
{
	switch (role) {
	case LH_ROLE_AGGREGATOR:
		*ret_n = sizeof(aggregator_outs) / sizeof(aggregator_outs[0]);
		return aggregator_outs;
	case LH_ROLE_RELAY:
		*ret_n = sizeof(relay_outs) / sizeof(relay_outs[0]);
		return relay_outs;
	case LH_ROLE_GATHERER:
		break;
	}
	*ret_n = 0;
	return NULL;
}

/* -n or --once: cfg is checked or read once, and freed.  Returns the
 * exit status. */
static int
run_once(const struct lh_options *o, struct lh_config *cfg)
{
	int status;

	if (o->check_only) {
		size_t nouts;
		const struct consumer_kind *outs = role_outs(cfg->role, &nouts);

		status = check_config(cfg, stderr, outs, nouts);
		if (status == 0)
			(void)printf("configuration OK\n");
	} else if (cfg->role != LH_ROLE_GATHERER) {
		(void)fprintf(stderr,
		    "%s: --once needs role = \"gatherer\", not \"%s\"\n",
		    cfg->path, config_role_name(cfg->role));
		status = 1;
	} else {
		status = once_run(cfg, stdout);
	}
	config_free(cfg);
	return status;
}

/* The role cfg names, with its outputs; it takes cfg (a reload may
 * replace it).  Returns the exit status. */
static int
run_role(struct lh_config *cfg, bool detach)
{
	const struct consumer_kind *outs;
	size_t nouts;

	if (cfg->role == LH_ROLE_GATHERER)
		return gatherer_run(cfg, detach);
	/* The aggregator's sweep engine, for a relay with its sweeps going
	 * on downstream. */
	outs = role_outs(cfg->role, &nouts);
	return aggregator_run(cfg, detach, outs, nouts);
}

int
main(int argc, char **argv)
{
	struct lh_config *cfg = NULL;
	struct lh_options o;
	struct lh_err err;
	char abs_path[PATH_MAX];
	bool detach;

	parse_args(argc, argv, &o);
	/* --ganglia-reports: a command, run before any logging or daemon. */
	if (o.greports)
		return greports_run(o.greports_dir, o.config, stdout, stderr);
	/* Under systemd (JOURNAL_STREAM set) stay put: the journal is
	 * stderr, and the service manager does the supervising.  Otherwise,
	 * without -d, detach once the start-up checks are done: until then,
	 * like -n and --once, speak to the terminal. */
	detach = !o.foreground && !o.check_only && !o.once &&
	    getenv("JOURNAL_STREAM") == NULL;
	log_init("lharvestd", o.foreground || o.check_only || o.once || detach,
	    o.verbose);
	event_set_log_callback(libevent_log);

	/* SIGHUP reads the file again after daemon(3) moved to "/": keep
	 * the path it had here. */
	if (o.config[0] != '/' && realpath(o.config, abs_path) != NULL)
		o.config = abs_path;
	if (config_load(o.config, &cfg, &err) < 0) {
		(void)fprintf(stderr, "%s\n", err.reason);
		return 1;
	}
	log_deprecations(cfg, o.check_only);
	if (o.user != NULL) {
		char *u = strdup(o.user);

		if (u == NULL) {
			(void)fprintf(stderr, "out of memory\n");
			config_free(cfg);
			return 1;
		}
		free(cfg->user);
		cfg->user = u;
	}
	if (o.check_only || o.once)
		return run_once(&o, cfg);
	memory_tune();
	return run_role(cfg, detach);
}
