/* SPDX-License-Identifier: BSD-2-Clause */
/* The JSON API consumer: its paths on the listener, and the envelope. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "api.h"
#include "api_int.h"
#include "consumer.h"
#include "httpd.h"
#include "httpreq.h"
#include "log.h"

json_t *
api_uint(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

void
api_reply(struct httpd_req *r, int status, const char *message, json_t *data)
{
	json_t *env;
	struct evbuffer *body;
	char *text = NULL;

	/* "o" would steal data's reference; the caller keeps its own. */
	env = json_pack("{s:b, s:s, s:O?}", "success", status == 200, "message",
	    message, "data", data);
	if (env != NULL)
		text = json_dumps(env,
		    JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
	json_decref(env);
	body = evbuffer_new();
	if (text == NULL || body == NULL ||
	    evbuffer_add(body, text, strlen(text)) < 0 ||
	    evbuffer_add(body, "\n", 1) < 0) {
		/* The listener's own envelope, which needs far less. */
		free(text);
		if (body != NULL)
			evbuffer_free(body);
		httpd_reply_error(r, 500, "out of memory");
		return;
	}
	free(text);
	httpd_reply(r, status, "application/json", body);
	evbuffer_free(body);
}

void
api_fail(struct httpd_req *r, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	api_reply(r, status, msg, NULL);
}

int
api_refuse_unknown(struct httpd_req *r, const char *const *known)
{
	static const char *const none[] = {NULL};
	const char *bad;

	bad = httpreq_unknown(httpd_req_parsed(r), known ? known : none);
	if (bad == NULL)
		return 0;
	api_fail(r, 400, "unknown parameter \"%s\"", bad);
	return 1;
}

static bool
api_wants_hosts(void *ctx)
{
	struct api *a = ctx;

	/* The counters it shows are per host. */
	return a->http != NULL;
}

static int
api_start(void *ctx, struct event_base *base)
{
	static const struct {
		const char *path;
		int prefix;
		httpd_handler_fn fn;
	} paths[] = {
	    {"/v1/status", 0, api_status_cb},
	    {"/v1/hosts", 1, api_hosts_cb},
	    {"/v1/gatherers", 0, api_gatherers_cb},
	    {"/v1/routes", 0, api_routes_cb},
	};
	struct api *a = ctx;

	(void)base;
	if (a->http == NULL)
		return 0;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (httpd_route(a->http, paths[i].path, paths[i].prefix,
		        paths[i].fn, a) < 0)
			return -1;
	}
	return 0;
}

static void
api_free(void *ctx)
{
	struct api *a = ctx;

	if (a == NULL)
		return;
	if (a->http != NULL)
		httpd_unroute(a->http, a);
	free(a);
}

static const struct consumer_ops api_ops = {
    .name = "api",
    .wants_hosts = api_wants_hosts,
    .start = api_start,
    .free = api_free,
};

int
api_open(const struct consumer_env *env, struct consumer *ret)
{
	struct api *a = calloc(1, sizeof(*a));

	if (a == NULL) {
		log_warnx("JSON API: out of memory");
		return -1;
	}
	a->http = env->http;
	a->board = env->board;
	a->totals = env->totals;
	ret->ops = &api_ops;
	ret->ctx = a;
	return 0;
}
