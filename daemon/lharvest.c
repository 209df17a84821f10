/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lharvest: ask a running aggregator or relay (docs/api.md section 4).
 * "lharvest [-f CONF] [-H HOST:PORT | -S SOCKET] top|status|host HOST
 * [--json]".  This file: the command line, and where the daemon is.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "lharvest.h"

#define DEFAULT_CONFIG "/etc/lharvestd/lharvestd.conf" /* as lharvestd */

static const char usage_text[] =
    "usage: lharvest [-f CONF] [-H HOST:PORT | -S SOCKET] COMMAND [ARGS]\n"
    "  -f CONF          the daemon's configuration, for its http section\n"
    "                   (default " DEFAULT_CONFIG ")\n"
    "  -H HOST:PORT     ask the daemon at this TCP address\n"
    "  -S SOCKET        ask the daemon at this unix socket\n"
    "commands:\n"
    "  top              a live table of the busiest hosts\n"
    "  status [--json]  the daemon, its last sweep and its gatherers\n"
    "  host HOST [--json]  one host's rates and totals\n"
    "COMMAND --help says more.\n";

static _Noreturn void
usage(FILE *out, int status)
{
	(void)fputs(usage_text, out);
	exit(status);
}

double
lhj_num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

const char *
lhj_str(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : "";
}

int
lharvest_opts(int argc, char **argv, int *json, const char *usage_line)
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	/* 0, not 1: glibc starts afresh, permuting again (main()'s parse
	 * stopped at the command), so "host node1 --json" works. */
	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			if (json == NULL)
				goto bad;
			*json = 1;
			break;
		case 'h':
			(void)fputs(usage_line, stdout);
			exit(0);
		default:
			goto bad;
		}
	}
	return optind;
bad:
	(void)fputs(usage_line, stderr);
	return -1;
}

int
lhc_set_tcp(struct lhc *c, const char *hostport)
{
	if (hostport[0] == '\0' || strchr(hostport, '/') != NULL ||
	    strlen(hostport) >= sizeof(c->base) - sizeof("http://"))
		return -1;
	(void)snprintf(c->where, sizeof(c->where), "%s", hostport);
	(void)snprintf(c->base, sizeof(c->base), "http://%s", hostport);
	c->socket[0] = '\0';
	return 0;
}

int
lhc_set_socket(struct lhc *c, const char *path)
{
	if (path[0] == '\0' || strlen(path) >= sizeof(c->socket))
		return -1;
	(void)snprintf(c->where, sizeof(c->where), "%s", path);
	(void)snprintf(c->base, sizeof(c->base), "http://localhost");
	(void)snprintf(c->socket, sizeof(c->socket), "%s", path);
	return 0;
}

/* The subcommand named argv[0]. */
static int
run(struct lhc *c, int argc, char **argv)
{
	if (strcmp(argv[0], "status") == 0)
		return lharvest_status(c, argc, argv);
	if (strcmp(argv[0], "host") == 0)
		return lharvest_host(c, argc, argv);
	if (strcmp(argv[0], "top") == 0)
		return lharvest_top(c, argc, argv);
	(void)fprintf(stderr, "lharvest: unknown command \"%s\"\n", argv[0]);
	usage(stderr, 2);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct lhc c = {0};
	const char *conf = NULL, *tcp = NULL, *sock = NULL;
	int ch, status;

	while (
	    (ch = getopt_long(argc, argv, "+f:H:S:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			conf = optarg;
			break;
		case 'H':
			tcp = optarg;
			break;
		case 'S':
			sock = optarg;
			break;
		case 'h':
			usage(stdout, 0);
		case 'V':
			(void)printf("lharvest %s\n", LH_VERSION);
			return 0;
		default:
			usage(stderr, 2);
		}
	}
	if (optind >= argc || (tcp != NULL && sock != NULL))
		usage(stderr, 2);
	if (tcp != NULL || sock != NULL) {
		if ((tcp ? lhc_set_tcp(&c, tcp) : lhc_set_socket(&c, sock)) <
		    0) {
			(void)fprintf(stderr, "lharvest: bad address \"%s\"\n",
			    tcp ? tcp : sock);
			return 2;
		}
	} else if (lharvest_locate(&c, conf, DEFAULT_CONFIG) < 0) {
		return 1; /* no address to ask: as good as unreachable */
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		(void)fprintf(stderr, "lharvest: cannot initialise libcurl\n");
		return 1;
	}
	status = run(&c, argc - optind, argv + optind);
	lhc_close(&c);
	curl_global_cleanup();
	return status;
}
