/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lharvest: the command that asks a running aggregator or relay through
 * its JSON API (docs/api.md sections 3 and 4).  lharvest.c parses the
 * command line and finds the daemon, lharvest_http.c asks it (libcurl,
 * over TCP or a unix socket), lharvest_show.c prints status and host as
 * text, lharvest_top.c is the live table (ncurses), lharvest_units.c the
 * human units.
 */
#ifndef LH_LHARVEST_H
#define LH_LHARVEST_H

#include <limits.h>
#include <stddef.h>

#include <jansson.h>

#define LHC_ADDR_MAX 300

/* Where the daemon answers. */
struct lhc {
	char where[PATH_MAX + 16]; /* for messages: "127.0.0.1:8023" */
	char base[LHC_ADDR_MAX];   /* "http://127.0.0.1:8023" */
	char socket[PATH_MAX];     /* a unix socket; "": TCP */
	void *curl;                /* CURL *, made at the first request */
};

#define LHC_ERR_MAX 512

/*
 * GET path (with its query) and take the answer's envelope apart.
 * Returns 0 with *ret_data (a new reference; null when the answer had
 * none) and *ret_msg (the answer's message, in msg), or -1 with msg
 * saying why in one line: "cannot reach lharvestd at WHERE: REASON", or
 * the answer's message when it did not succeed.
 */
int lhc_get(struct lhc *c, const char *path, json_t **ret_data, char *msg,
    size_t msgsize);

void lhc_close(struct lhc *c);

/* body (n bytes) as an envelope: 0 with *ret_data and the message in msg
 * (as lhc_get()), -1 (success false: its message in msg) or -2 (not an
 * envelope; msg untouched). */
int lhc_envelope(const char *body, size_t n, json_t **ret_data, char *msg,
    size_t msgsize);

/* c asks at "host:port" ("[v6]:port"), or at a unix socket.  0, or -1
 * (not an address). */
int lhc_set_tcp(struct lhc *c, const char *hostport);
int lhc_set_socket(struct lhc *c, const char *path);

/* The address from the http section of the configuration conf (NULL:
 * def, and the default address when def does not exist).  0, or -1
 * after one line to stderr. */
int lharvest_locate(struct lhc *c, const char *conf, const char *def);

/* The subcommands, with their argument vectors (argv[0] the name). */
int lharvest_status(struct lhc *c, int argc, char **argv);
int lharvest_host(struct lhc *c, int argc, char **argv);
int lharvest_top(struct lhc *c, int argc, char **argv);

/* Parse a subcommand's options: --json (when json is not NULL) and
 * --help (usage to stdout, exit 0).  Returns the index of the first
 * operand, or -1 after a usage line to stderr. */
int lharvest_opts(int argc, char **argv, int *json, const char *usage);

/* Human units, into buf: "12.3 MiB/s", "1.20 GiB", "4.5k". */
void units_rate(char *buf, size_t size, double bytes_per_s);
void units_bytes(char *buf, size_t size, double bytes);
void units_count(char *buf, size_t size, double n);

/* Seconds since the epoch as local "HH:MM:SS" (or "-" for 0). */
void units_time(char *buf, size_t size, double t);

/* Members of a JSON object, 0 / "" when absent or of another type. */
double lhj_num(const json_t *o, const char *key);
const char *lhj_str(const json_t *o, const char *key);

#endif
