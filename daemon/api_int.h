/* SPDX-License-Identifier: BSD-2-Clause */
/* What the files of the JSON API share (api.h). */
#ifndef LH_API_INT_H
#define LH_API_INT_H

#include <stdint.h>

#include <jansson.h>

struct httpd;
struct httpd_req;
struct hosttotals;
struct status_board;

/* What it reads, copied from its consumer_env (which is the role's
 * while it opens the consumers; these pointers stay valid). */
struct api {
	struct httpd *http; /* NULL: http is off, nothing to do */
	const struct status_board *board;
	const struct hosttotals *totals; /* NULL: none (empty answers) */
};

#define API_LIMIT_DEFAULT 100
#define API_LIMIT_MAX     10000

/* The message of a successful answer before the first sweep. */
#define API_NO_SWEEP "no sweep closed yet"

/* Answer r with the envelope: success, message and data (its reference
 * taken; NULL is null). */
void
api_reply(struct httpd_req *r, int status, const char *message, json_t *data);

/* A failed answer (data null), message printf-like. */
void api_fail(struct httpd_req *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Refuse r (400) if it has a query parameter not in known (NULL ends
 * it; known NULL: none allowed).  True when it was refused. */
int api_refuse_unknown(struct httpd_req *r, const char *const *known);

/* A uint64_t as a JSON integer (clamped to what jansson holds). */
json_t *api_uint(uint64_t v);

/* The handlers. */
void api_status_cb(void *arg, struct httpd_req *r);
void api_gatherers_cb(void *arg, struct httpd_req *r);
void api_routes_cb(void *arg, struct httpd_req *r);
void api_hosts_cb(void *arg, struct httpd_req *r);

/* /v1/status's counts of the counters (api_hosts.c). */
json_t *api_totals_summary(const struct api *a);
json_t *api_filesystems(const struct api *a);

#endif
