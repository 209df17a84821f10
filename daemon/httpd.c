/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The HTTP listener (httpd.h): made from the http section, its routes,
 * its start, statistics and teardown.  The sockets are httpd_sock.c's,
 * the connections httpd_accept.c's, the requests httpd_dispatch.c's.
 */
#include <sys/stat.h>

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "cidr.h"
#include "config.h"
#include "httpd_int.h"
#include "log.h"

void
httpd_conf_clear(struct httpd_conf *c)
{
	free(c->listen_host);
	free(c->socket);
	free(c->allow);
	memset(c, 0, sizeof(*c));
}

int
httpd_conf_of(const struct lh_config *cfg, struct httpd_conf *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->listen_port = cfg->http_listen_port;
	ret->listen_set = cfg->http_listen_set;
	ret->max_conns = cfg->http_max_connections;
	ret->max_header = cfg->http_max_header_size;
	ret->timeout = cfg->http_timeout;
	if ((cfg->http_listen_host != NULL &&
	        (ret->listen_host = strdup(cfg->http_listen_host)) == NULL) ||
	    (cfg->http_socket != NULL &&
	        (ret->socket = strdup(cfg->http_socket)) == NULL))
		goto nomem;
	if (cfg->nhttp_allow > 0) {
		ret->allow = calloc(cfg->nhttp_allow, sizeof(*ret->allow));
		if (ret->allow == NULL)
			goto nomem;
		memcpy(ret->allow, cfg->http_allow,
		    cfg->nhttp_allow * sizeof(*ret->allow));
		ret->nallow = cfg->nhttp_allow;
	}
	return 0;
nomem:
	httpd_conf_clear(ret);
	log_warnx("http: out of memory");
	return -1;
}

int
httpd_new(const struct lh_config *cfg, struct httpd **ret)
{
	struct httpd *h;

	*ret = NULL;
	if (cfg->http_listen_host == NULL && cfg->http_socket == NULL)
		return 0; /* listen = "" and no socket: off */
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		log_warnx("http: out of memory");
		return -1;
	}
	TAILQ_INIT(&h->conns);
	h->tcp.fd = h->unx.fd = h->next_tcp.fd = h->next_unx.fd = -1;
	if (httpd_conf_of(cfg, &h->conf) < 0) {
		free(h);
		return -1;
	}
	*ret = h;
	return 0;
}

int
httpd_route(struct httpd *h, const char *path, int prefix, httpd_handler_fn fn,
    void *arg)
{
	struct httpd_route *r;
	size_t i;

	for (i = 0; i < h->nroutes; i++) {
		if (strcmp(h->routes[i].path, path) == 0) {
			log_warnx("http: %s: registered twice", path);
			return -1;
		}
	}
	if (h->nroutes == h->routecap) {
		size_t cap = h->routecap != 0 ? h->routecap * 2 : 8;

		r = realloc(h->routes, cap * sizeof(*r));
		if (r == NULL) {
			log_warnx("http: %s: out of memory", path);
			return -1;
		}
		h->routes = r;
		h->routecap = cap;
	}
	r = &h->routes[h->nroutes];
	r->path = strdup(path);
	if (r->path == NULL) {
		log_warnx("http: %s: out of memory", path);
		return -1;
	}
	r->len = strlen(path);
	r->prefix = prefix;
	r->fn = fn;
	r->arg = arg;
	h->nroutes++;
	return 0;
}

/* arg is compared, never used (httpd.h has it as the handlers' arg). */
void
/* cppcheck-suppress constParameter */
httpd_unroute(struct httpd *h, void *arg)
{
	size_t i = 0;

	if (h == NULL)
		return;
	while (i < h->nroutes) {
		if (h->routes[i].arg != arg) {
			i++;
			continue;
		}
		free(h->routes[i].path);
		h->routes[i] = h->routes[--h->nroutes];
	}
}

/* The evhttp that parses and writes: methods and sizes are decided
 * before it sees a request (httpd_accept.c); these are a second fence. */
static int
start_evhttp(struct httpd *h)
{
	h->http = evhttp_new(h->base);
	if (h->http == NULL)
		return -1;
	/* Other methods are answered 405 before evhttp parses them
	 * (httpd_accept.c); evhttp would say 501. */
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(h->http, (ev_ssize_t)h->conf.max_header);
	evhttp_set_max_body_size(h->http, (ev_ssize_t)h->conf.max_header);
	/* Writing an answer: this long without progress. */
	evhttp_set_timeout(h->http, (int)h->conf.timeout);
	evhttp_set_bevcb(h->http, httpd_bevcb, h);
	evhttp_set_gencb(h->http, httpd_dispatch_cb, h);
	return 0;
}

int
httpd_start(struct httpd *h, struct event_base *base)
{
	const struct timeval sec = {1, 0};

	h->base = base;
	h->tick = event_new(base, -1, EV_PERSIST, httpd_tick_cb, h);
	h->admit = event_new(base, -1, 0, httpd_admit_cb, h);
	h->reap_now = event_new(base, -1, 0, httpd_reap_cb, h);
	if (h->tick == NULL || h->admit == NULL || h->reap_now == NULL ||
	    event_add(h->tick, &sec) < 0 || start_evhttp(h) < 0) {
		log_warnx("http: cannot set up events");
		return -1;
	}
	if (httpd_sock_tcp(&h->conf, &h->tcp) < 0 ||
	    httpd_sock_unix(&h->conf, &h->unx) < 0 ||
	    httpd_sock_arm(h, &h->tcp, true) < 0 ||
	    httpd_sock_arm(h, &h->unx, true) < 0)
		return -1;
	httpd_addr_update(h);
	return 0;
}

void
httpd_log_started(const struct httpd *h)
{
	if (h == NULL)
		return;
	if (h->tcp.fd >= 0)
		log_info("http: listening on %s", h->tcp.name);
	if (h->unx.fd >= 0)
		log_info("http: listening on %s", h->unx.name);
}

void
httpd_addr_update(struct httpd *h)
{
	(void)snprintf(h->addr, sizeof(h->addr), "%s%s%s", h->tcp.name,
	    h->tcp.fd >= 0 && h->unx.fd >= 0 ? ", " : "", h->unx.name);
	if (h->addr[0] == '\0')
		(void)snprintf(h->addr, sizeof(h->addr), "nowhere");
}

void
httpd_stats(const struct httpd *h, struct httpd_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (h == NULL)
		return;
	*ret = h->st;
	ret->open = h->nconns;
}

const char *
httpd_addr(const struct httpd *h)
{
	return h != NULL ? h->addr : "";
}

int
httpd_check(const struct lh_config *cfg, FILE *out)
{
	char dir[PATH_MAX];
	struct stat sb;

	if (cfg->role == LH_ROLE_GATHERER || cfg->http_socket == NULL)
		return 0;
	(void)snprintf(dir, sizeof(dir), "%s", cfg->http_socket);
	if (stat(dirname(dir), &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		(void)fprintf(out, "%s: http: socket %s: %s: not a directory\n",
		    cfg->path, cfg->http_socket, dir);
		return -1;
	}
	return 0;
}

void
httpd_free(struct httpd *h)
{
	struct httpd_conn *c;
	size_t i;

	if (h == NULL)
		return;
	while ((c = TAILQ_FIRST(&h->conns)) != NULL)
		httpd_conn_free(c);
	httpd_sock_close(h, &h->tcp);
	httpd_sock_close(h, &h->unx);
	httpd_sock_close(h, &h->next_tcp);
	httpd_sock_close(h, &h->next_unx);
	/* evhttp frees the connections it still has (their bufferevents:
	 * our references went above). */
	if (h->http != NULL)
		evhttp_free(h->http);
	if (h->tick != NULL)
		event_free(h->tick);
	if (h->admit != NULL)
		event_free(h->admit);
	if (h->reap_now != NULL)
		event_free(h->reap_now);
	for (i = 0; i < h->nroutes; i++)
		free(h->routes[i].path);
	free(h->routes);
	httpd_conf_clear(&h->conf);
	httpd_conf_clear(&h->next);
	free(h);
}
