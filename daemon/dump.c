/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lharvest-dump: what is on the wire, for operators debugging a site.
 * "lharvest-dump FILE" prints every frame of a captured byte stream (one
 * direction of a connection); "lharvest-dump --listen ADDR:PORT -k KEYFILE"
 * is a minimal receiver that acks every SWEEP and prints its records as
 * JSON lines, so a gatherer can be tested end to end on its own.
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

#include "clock.h"
#include "err.h"
#include "frame.h"
#include "json.h"
#include "keyfile.h"
#include "ledger.h"
#include "log.h"
#include "mdops.h"
#include "msg.h"
#include "receiver.h"
#include "session.h"
#include "wire.h"
#include "dump.h"

static _Noreturn void
usage(FILE *out, int status)
{
	(void)fprintf(out,
	    "usage: lharvest-dump [-v] [--max-frame N] FILE|-\n"
	    "       lharvest-dump [-v] --listen ADDR:PORT -k KEYFILE "
	    "[--name NAME]\n"
	    "                     [--max-frame N] [--handshake-timeout S] "
	    "[--read-timeout S]\n"
	    "                     [--max-conns N] [--state DIR] [--log-all]\n"
	    "  FILE                  a captured stream of frames (one "
	    "direction); - is stdin\n"
	    "  --listen ADDR:PORT    receive, ack every SWEEP, print its "
	    "records as JSON lines\n"
	    "  -k KEYFILE            the shared key file (mode 0600)\n"
	    "  --name NAME           this side's name in the CHALLENGE "
	    "(default " DUMP_DEFAULT_NAME ")\n"
	    "  --max-frame N         largest frame accepted, bytes (default "
	    "%zu)\n"
	    "  --state DIR           remember each sender's last batch in DIR, "
	    "so a resend\n"
	    "                        after a restart is not printed twice\n"
	    "  --log-all             log every refused peer (by default lines "
	    "about\n"
	    "                        peers without a verified HELLO are "
	    "rate-limited)\n"
	    "  -v                    more detail (MACs; debug log)\n",
	    FRAME_MAX_DEFAULT);
	exit(status);
}

static int
parse_num(const char *s, unsigned long long lo, unsigned long long hi,
    unsigned long long *ret)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v < lo ||
	    v > hi)
		return -EINVAL;
	*ret = v;
	return 0;
}

static void
num_opt(const char *opt, const char *arg, unsigned long long lo,
    unsigned long long hi, unsigned long long *ret)
{
	if (parse_num(arg, lo, hi, ret) < 0) {
		(void)fprintf(stderr,
		    "lharvest-dump: %s %s: not a number from %llu to %llu\n",
		    opt, arg, lo, hi);
		exit(2);
	}
}

/* One option of parse_args(); exits on --help, --version or a bad one. */
static void
parse_opt(int ch, struct dump_options *o)
{
	unsigned long long v;

	switch (ch) {
	case 'L':
		o->listen = optarg;
		break;
	case 'k':
		o->keyfile = optarg;
		break;
	case 'N':
		o->name = optarg;
		break;
	case 'M':
		num_opt("--max-frame", optarg, FRAME_MIN_MAX,
		    (unsigned long long)FRAME_MAX_LIMIT, &v);
		o->max_frame = (size_t)v;
		break;
	case 'H':
		num_opt("--handshake-timeout", optarg, 1, 3600, &v);
		o->handshake_timeout = (unsigned)v;
		break;
	case 'R':
		num_opt("--read-timeout", optarg, 1, 86400, &v);
		o->read_timeout = (unsigned)v;
		break;
	case 'C':
		num_opt("--max-conns", optarg, 1, 65536, &v);
		o->max_conns = (unsigned)v;
		break;
	case 'S':
		o->state_dir = optarg;
		break;
	case 'A':
		o->log_all = true;
		break;
	case 'v':
		o->verbose++;
		break;
	case 'V':
		(void)printf("lharvest-dump %s\n", LH_VERSION);
		exit(0);
	case 'h':
		usage(stdout, 0);
	default:
		usage(stderr, 2);
	}
}

static void
parse_args(int argc, char **argv, struct dump_options *o)
{
	static const struct option longopts[] = {
	    {"listen", required_argument, NULL, 'L'},
	    {"name", required_argument, NULL, 'N'},
	    {"max-frame", required_argument, NULL, 'M'},
	    {"handshake-timeout", required_argument, NULL, 'H'},
	    {"read-timeout", required_argument, NULL, 'R'},
	    {"max-conns", required_argument, NULL, 'C'},
	    {"state", required_argument, NULL, 'S'},
	    {"log-all", no_argument, NULL, 'A'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	memset(o, 0, sizeof(*o));
	o->name = DUMP_DEFAULT_NAME;
	o->max_frame = (size_t)FRAME_MAX_DEFAULT;
	while ((ch = getopt_long(argc, argv, "hk:vV", longopts, NULL)) != -1)
		parse_opt(ch, o);
	if (o->listen != NULL) {
		if (optind != argc || o->keyfile == NULL)
			usage(stderr, 2);
	} else {
		if (optind != argc - 1 || o->keyfile != NULL)
			usage(stderr, 2);
		o->file = argv[optind];
	}
}

/* "2023-11-14T22:13:20Z" for seconds since the epoch. */

int
main(int argc, char **argv)
{
	struct dump_options o;

	parse_args(argc, argv, &o);
	log_init("lharvest-dump", true, o.verbose);
	if (o.listen != NULL)
		return dump_listen_main(&o);
	return dump_file_main(&o);
}
