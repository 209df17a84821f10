/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The HTTP listener the question-answering outputs share (the Prometheus
 * page, the JSON API): one per aggregator or relay, made by the role when
 * the configuration's http { } section enables it, handed to every
 * consumer in consumer_env.http (NULL when off), on which each registers
 * the paths it answers.  libevent's evhttp parses and writes; around it,
 * this module is what keeps a hostile or slow client from costing the
 * daemon anything: its own listening sockets (TCP, by default on
 * 127.0.0.1, and optionally a unix socket), an allow list of networks, a
 * cap on connections (libevent 2.1's evhttp has none), an absolute time
 * limit per request from its connection's accept (slowloris), limits on the
 * header and URI, GET (and HEAD) only.  Nothing it does blocks the event
 * loop; a sweep never waits for a client.
 *
 * Keys: http { listen, socket, allow, max_connections, max_header_size,
 * timeout } (lharvestd.conf(5)); a reload applies them.
 */
#ifndef LH_HTTPD_H
#define LH_HTTPD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct evbuffer;
struct event_base;
struct httpd;
struct httpreq;
struct lh_config;

/* One request being answered (valid only during the handler's call). */
struct httpd_req;

/* The request's path and query, parsed (common/web/httpreq.h). */
const struct httpreq *httpd_req_parsed(const struct httpd_req *r);

/* Answer r: status (200, 400, 404, ...), the Content-Type, and body
 * (its contents are moved out; NULL: empty).  A HEAD gets the headers
 * only.  Exactly once per request. */
void httpd_reply(struct httpd_req *r, int status, const char *content_type,
    struct evbuffer *body);

/* As httpd_reply(), the body a reference to size bytes at data that the
 * caller keeps alive until cleanup(arg) is called (a page shared by
 * concurrent scrapes). */
void httpd_reply_ref(struct httpd_req *r, int status, const char *content_type,
    const void *data, size_t size,
    void (*cleanup)(const void *data, size_t size, void *arg), void *arg);

/* Answer r with an error in the JSON envelope every answer has:
 * {"success": false, "message": <fmt...>, "data": null}. */
void httpd_reply_error(struct httpd_req *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A path's handler. */
typedef void (*httpd_handler_fn)(void *arg, struct httpd_req *r);

/* Built from cfg's http section; nothing listens before httpd_start().
 * Returns 0 and *ret (NULL when http is off), or -1 after one log line. */
int httpd_new(const struct lh_config *cfg, struct httpd **ret);

/*
 * Answer path with fn: exactly path, or with prefix set every path that
 * begins with path followed by '/' as well ("/v1/hosts" answers
 * "/v1/hosts/node1").  The longest registered match wins; anything else
 * is a 404.  Returns 0, or -1 (logged: a path registered twice, out of
 * memory).
 */
int httpd_route(struct httpd *h, const char *path, int prefix,
    httpd_handler_fn fn, void *arg);

/* Forget every path registered with arg (a consumer being freed). */
void httpd_unroute(struct httpd *h, void *arg);

/* Listen.  Returns 0, or -1 after one log line naming the address and
 * the reason. */
int httpd_start(struct httpd *h, struct event_base *base);

/* A reload: 0 (prepared: the new sockets bound when the address
 * changed), or -1 (refused, one line).  Then apply or abort.  h NULL
 * with cfg enabling http is the role's to handle (a restart key). */
int httpd_reload_prepare(struct httpd *h, const struct lh_config *cfg);
void httpd_reload_apply(struct httpd *h, const struct lh_config *cfg);
void httpd_reload_abort(struct httpd *h);

struct httpd_stats {
	uint64_t accepted; /* connections */
	uint64_t refused;  /* over the cap, or not in the allow list */
	uint64_t requests; /* answered */
	uint64_t errors;   /* answered 4xx/5xx by the listener itself */
	uint64_t timeouts; /* closed at the time limit */
	size_t open;       /* connections now */
};
void httpd_stats(const struct httpd *h, struct httpd_stats *ret);

/* One line per socket, "http: listening on 127.0.0.1:9717": after the
 * role's own start line (tests read the first "listening on"). */
void httpd_log_started(const struct httpd *h);

/* Where it listens, for the log ("127.0.0.1:9717, /run/x.sock"). */
const char *httpd_addr(const struct httpd *h);

/* What -n checks of the http section beyond the syntax (the socket's
 * directory): one line per problem to out.  Returns 0 or -1. */
int httpd_check(const struct lh_config *cfg, FILE *out);

/* NULL is fine. */
void httpd_free(struct httpd *h);

#endif
