/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_loadgen's command line (loadgen.c says what the generator does).
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen.h"

static unsigned
parse_uint(const char *s, const char *what, unsigned lo, unsigned hi)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		die("%s: %s is not a number from %u to %u", what, s, lo, hi);
	return (unsigned)v;
}

void
parse_connect(struct loadgen *lg, const char *arg)
{
	char host[64];
	const char *colon = strrchr(arg, ':');
	size_t n;

	if (colon == NULL || (n = (size_t)(colon - arg)) >= sizeof(host))
		die("--connect IPV4:PORT");
	memcpy(host, arg, n);
	host[n] = '\0';
	memset(&lg->addr, 0, sizeof(lg->addr));
	lg->addr.sin_family = AF_INET;
	lg->addr.sin_port =
	    htons((uint16_t)parse_uint(colon + 1, "port", 1, 65535));
	if (inet_pton(AF_INET, host, &lg->addr.sin_addr) != 1)
		die("--connect: %s is not an IPv4 address", host);
}

_Noreturn void
usage(void)
{
	(void)fprintf(stderr,
	    "usage: bench_loadgen --setup DIR [layout]\n"
	    "       bench_loadgen --connect IP:PORT -k KEYFILE [layout] "
	    "[--sweeps K] [--interval S] [--offset-ms MS] [--expect FILE]\n"
	    "layout: [--gatherers G] [--clients C] [--filesystems F] "
	    "[--fs-per-gatherer S] [--prefix NAME]\n");
	exit(2);
}

/* One layout option (ch, its argument arg) into lg; false if ch is
 * another. */
static bool
parse_layout_opt(struct loadgen *lg, int ch, const char *arg)
{
	switch (ch) {
	case 'g':
		lg->ngat = parse_uint(arg, "--gatherers", 2, 1000);
		return true;
	case 'C':
		lg->nclients = parse_uint(arg, "--clients", 1, 1000000);
		return true;
	case 'F':
		lg->nfs = parse_uint(arg, "--filesystems", 1, LG_FS_MAX);
		return true;
	case 'P':
		lg->fs_per_gat =
		    parse_uint(arg, "--fs-per-gatherer", 1, LG_FS_MAX);
		return true;
	case 'p':
		if (strlen(arg) == 0 || strlen(arg) > 40)
			die("--prefix: 1 to 40 characters");
		lg->prefix = arg;
		return true;
	case 's':
		lg->nsweeps = parse_uint(arg, "--sweeps", 1, LG_SWEEPS_MAX);
		return true;
	case 'i':
		lg->interval = parse_uint(arg, "--interval", 1, 3600);
		return true;
	case 'o':
		lg->offset_ms = parse_uint(arg, "--offset-ms", 0, 60000);
		return true;
	default:
		return false;
	}
}

/* The defaults, then the command line. */
void
parse_args(struct loadgen *lg, struct lg_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"setup", required_argument, NULL, 'S'},
	    {"connect", required_argument, NULL, 'c'},
	    {"gatherers", required_argument, NULL, 'g'},
	    {"clients", required_argument, NULL, 'C'},
	    {"filesystems", required_argument, NULL, 'F'},
	    {"fs-per-gatherer", required_argument, NULL, 'P'},
	    {"prefix", required_argument, NULL, 'p'},
	    {"sweeps", required_argument, NULL, 's'},
	    {"interval", required_argument, NULL, 'i'},
	    {"offset-ms", required_argument, NULL, 'o'},
	    {"expect", required_argument, NULL, 'e'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	memset(lg, 0, sizeof(*lg));
	lg->ngat = 100;
	lg->nclients = 10000;
	lg->nfs = 4;
	lg->fs_per_gat = 2;
	lg->prefix = "lg";
	lg->nsweeps = 5;
	lg->interval = 20;
	lg->offset_ms = 200;
	lg->cur = -1;
	while ((ch = getopt_long(argc, argv, "k:", longopts, NULL)) != -1) {
		if (parse_layout_opt(lg, ch, optarg))
			continue;
		switch (ch) {
		case 'S':
			o->setup = optarg;
			break;
		case 'c':
			o->connect_to = optarg;
			break;
		case 'k':
			o->keyfile = optarg;
			break;
		case 'e':
			o->expect = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
}
