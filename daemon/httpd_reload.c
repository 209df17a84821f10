/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A reload of the http section: prepare binds the new sockets when an
 * address changed (the old ones accept meanwhile), apply swaps them in
 * and takes the new limits, abort closes what prepare made.  The limits
 * apply to connections accepted from then on; a lower max_connections
 * leaves those open to finish.
 */
#include <string.h>

#include <event2/http.h>

#include "config.h"
#include "httpd_int.h"
#include "log.h"

static bool
str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

int
httpd_reload_prepare(struct httpd *h, const struct lh_config *cfg)
{
	if (h == NULL)
		return 0;
	if (httpd_conf_of(cfg, &h->next) < 0)
		return -1;
	h->next_tcp.fd = h->next_unx.fd = -1;
	h->next_tcp_new = !str_eq(h->next.listen_host, h->conf.listen_host) ||
	    h->next.listen_port != h->conf.listen_port ||
	    h->next.listen_set != h->conf.listen_set;
	h->next_unx_new = !str_eq(h->next.socket, h->conf.socket);
	/* Bound, and given to evhttp not accepting yet: apply cannot
	 * fail. */
	if ((h->next_tcp_new &&
	        (httpd_sock_tcp(&h->next, &h->next_tcp) < 0 ||
	            httpd_sock_arm(h, &h->next_tcp, false) < 0)) ||
	    (h->next_unx_new &&
	        (httpd_sock_unix(&h->next, &h->next_unx) < 0 ||
	            httpd_sock_arm(h, &h->next_unx, false) < 0))) {
		httpd_reload_abort(h);
		return -1;
	}
	return 0;
}

static void
swap(struct httpd *h, struct httpd_sock *run, struct httpd_sock *next)
{
	httpd_sock_close(h, run);
	*run = *next;
	memset(next, 0, sizeof(*next));
	next->fd = -1;
	if (run->fd >= 0)
		log_info("http: listening on %s", run->name);
}

void
httpd_reload_apply(struct httpd *h, const struct lh_config *cfg)
{
	(void)cfg;
	if (h == NULL)
		return;
	if (h->next_tcp_new)
		swap(h, &h->tcp, &h->next_tcp);
	if (h->next_unx_new)
		swap(h, &h->unx, &h->next_unx);
	httpd_conf_clear(&h->conf);
	h->conf = h->next;
	memset(&h->next, 0, sizeof(h->next));
	h->next_tcp_new = h->next_unx_new = false;
	evhttp_set_max_headers_size(h->http, (ev_ssize_t)h->conf.max_header);
	evhttp_set_max_body_size(h->http, (ev_ssize_t)h->conf.max_header);
	evhttp_set_timeout(h->http, (int)h->conf.timeout);
	httpd_addr_update(h);
	if (!h->paused)
		httpd_sock_pause(h, false);
}

void
httpd_reload_abort(struct httpd *h)
{
	if (h == NULL)
		return;
	httpd_sock_close(h, &h->next_tcp);
	httpd_sock_close(h, &h->next_unx);
	httpd_conf_clear(&h->next);
	h->next_tcp_new = h->next_unx_new = false;
}
