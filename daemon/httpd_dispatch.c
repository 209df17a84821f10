/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * evhttp's side of the listener: the bufferevent it reads a connection
 * on (ours, with the head already in it), the request routed to the
 * handler registered for the longest matching path, and the answers,
 * every one closing its connection (httpd_int.h).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "err.h"
#include "httpd_int.h"
#include "log.h"

const char *
httpd_reason(int status)
{
	static const struct {
		int status;
		const char *reason;
	} t[] = {{200, "OK"}, {400, "Bad Request"}, {404, "Not Found"},
	    {405, "Method Not Allowed"}, {414, "URI Too Long"},
	    {431, "Request Header Fields Too Large"},
	    {500, "Internal Server Error"}, {503, "Service Unavailable"}};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (t[i].status == status)
			return t[i].reason;
	}
	return status < 400 ? "OK" : "Error";
}

char *
httpd_error_json(const char *msg)
{
	json_t *j =
	    json_pack("{s:b, s:s, s:n}", "success", 0, "message", msg, "data");
	char *s = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	/* Not UTF-8 (a message quoting a client's bytes), or no memory. */
	if (s == NULL)
		s = strdup("{\"success\":false,\"message\":\"error\","
		           "\"data\":null}");
	return s;
}

static void
set_header(struct httpd_req *r, const char *key, const char *value)
{
	struct evkeyvalq *hd = evhttp_request_get_output_headers(r->req);

	(void)evhttp_remove_header(hd, key);
	(void)evhttp_add_header(hd, key, value);
}

/* A HEAD has the length of what a GET would have, and no body. */
static void
head_only(struct httpd_req *r, size_t size)
{
	char len[32];

	(void)snprintf(len, sizeof(len), "%zu", size);
	set_header(r, "Content-Length", len);
}

static bool
reply_once(struct httpd_req *r)
{
	if (r->replied) {
		log_warnx("http: %s: answered twice",
		    r->parsed != NULL ? r->parsed->path : "?");
		return false;
	}
	r->replied = true;
	return true;
}

void
httpd_reply(struct httpd_req *r, int status, const char *content_type,
    struct evbuffer *body)
{
	if (!reply_once(r))
		return;
	if (content_type != NULL)
		set_header(r, "Content-Type", content_type);
	if (r->head) {
		head_only(r, body != NULL ? evbuffer_get_length(body) : 0);
		if (body != NULL)
			(void)evbuffer_drain(body, evbuffer_get_length(body));
	}
	evhttp_send_reply(r->req, status, httpd_reason(status),
	    r->head ? NULL : body);
}

void
httpd_reply_ref(struct httpd_req *r, int status, const char *content_type,
    const void *data, size_t size,
    void (*cleanup)(const void *data, size_t size, void *arg), void *arg)
{
	struct evbuffer *b = NULL;

	if (!r->head) {
		b = evbuffer_new();
		if (b == NULL ||
		    evbuffer_add_reference(b, data, size, cleanup, arg) < 0) {
			if (b != NULL)
				evbuffer_free(b);
			cleanup(data, size, arg);
			httpd_reply_error(r, 500, "out of memory");
			return;
		}
	}
	if (!reply_once(r)) {
		if (b != NULL)
			evbuffer_free(b);
		else
			cleanup(data, size, arg);
		return;
	}
	if (content_type != NULL)
		set_header(r, "Content-Type", content_type);
	if (r->head) {
		head_only(r, size);
		cleanup(data, size, arg);
	}
	evhttp_send_reply(r->req, status, httpd_reason(status), b);
	if (b != NULL)
		evbuffer_free(b);
}

void
httpd_reply_error(struct httpd_req *r, int status, const char *fmt, ...)
{
	char msg[LH_ERR_REASON_MAX + 80];
	struct evbuffer *b = evbuffer_new();
	char *json;
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json = httpd_error_json(msg);
	if (b != NULL && json != NULL)
		(void)evbuffer_add(b, json, strlen(json));
	free(json);
	httpd_reply(r, status, "application/json", b);
	if (b != NULL)
		evbuffer_free(b);
}

const struct httpreq *
httpd_req_parsed(const struct httpd_req *r)
{
	return r->parsed;
}

/* The handler of the longest registered path that matches, or NULL. */
static const struct httpd_route *
route_find(const struct httpd *h, const char *path)
{
	const struct httpd_route *best = NULL;
	size_t i, n = strlen(path);

	for (i = 0; i < h->nroutes; i++) {
		const struct httpd_route *rt = &h->routes[i];
		bool hit = strcmp(rt->path, path) == 0 ||
		    (rt->prefix && n > rt->len &&
		        strncmp(rt->path, path, rt->len) == 0 &&
		        (path[rt->len] == '/' || rt->path[rt->len - 1] == '/'));

		if (hit && (best == NULL || rt->len > best->len))
			best = rt;
	}
	return best;
}

/* evhttp closed a connection, or wrote its answer: count it once evhttp
 * is done with it, after this callback returns. */
static void
closed_cb(struct evhttp_connection *evcon, void *arg)
{
	struct httpd *h = arg;

	(void)evcon;
	event_active(h->reap_now, EV_TIMEOUT, 0);
}

static void
done_cb(struct evhttp_request *req, void *arg)
{
	closed_cb(evhttp_request_get_connection(req), arg);
}

static void
listener_error(struct httpd_req *r, int status, const char *msg)
{
	r->h->st.errors++;
	if (status == 405)
		set_header(r, "Allow", "GET, HEAD");
	httpd_reply_error(r, status, "%s", msg);
}

/* The request in r, to its handler or answered here. */
static void
route(struct httpd_req *r, const char *uri)
{
	struct httpd *h = r->h;
	const struct httpd_route *rt;
	struct lh_err err;
	char safe[128], msg[LH_ERR_REASON_MAX + 160];
	size_t n = strlen(uri);

	if (n > HTTPREQ_TARGET_MAX) {
		listener_error(r, 414, "the target is longer than 2048 bytes");
		return;
	}
	if (httpreq_parse(uri, n, &h->parsed, &err) < 0) {
		(void)snprintf(msg, sizeof(msg), "bad target: %s", err.reason);
		listener_error(r, 400, msg);
		return;
	}
	r->parsed = &h->parsed;
	log_safe(safe, sizeof(safe), h->parsed.path);
	rt = route_find(h, h->parsed.path);
	if (rt == NULL) {
		(void)snprintf(msg, sizeof(msg), "no such path: %s", safe);
		listener_error(r, 404, msg);
		return;
	}
	rt->fn(rt->arg, r);
	if (!r->replied) {
		log_warnx("http: %s: the handler did not answer", safe);
		listener_error(r, 500, "no answer");
	}
}

void
httpd_dispatch_cb(struct evhttp_request *req, void *arg)
{
	struct httpd *h = arg;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct httpd_req r = {.h = h, .req = req};
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const char *uri = evhttp_request_get_uri(req);

	struct httpd_conn *c = httpd_conn_of(h, req);

	h->st.requests++;
	if (c != NULL) {
		c->dispatched = true;
		if (c->deadline != NULL)
			(void)event_del(c->deadline);
	}
	if (evcon != NULL)
		evhttp_connection_set_closecb(evcon, closed_cb, h);
	evhttp_request_set_on_complete_cb(req, done_cb, h);
	/* One request a connection: evhttp never reads a head that our
	 * deadline does not cover (httpd_int.h). */
	set_header(&r, "Connection", "close");
	r.head = cmd == EVHTTP_REQ_HEAD;
	if (c != NULL && (c->answered || c->closing))
		listener_error(&r, 400, "closing"); /* never seen */
	else if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD)
		listener_error(&r, 405, "only GET and HEAD");
	else if (uri == NULL)
		listener_error(&r, 400, "no target");
	else
		route(&r, uri);
}
