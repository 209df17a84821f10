/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the files of the HTTP listener share (httpd.h): httpd.c (making,
 * routes, statistics), httpd_sock.c (the listening sockets),
 * httpd_accept.c (admission, the deadline, the end of a connection),
 * httpd_head.c (the request head checked before evhttp parses it),
 * httpd_dispatch.c (evhttp's side: routing and answers), httpd_reload.c.
 *
 * A connection's life.  libevent 2.1 keeps evhttp_get_request() to
 * itself, so evhttp accepts, on an evconnlistener over our own socket
 * (evhttp_bind_listener()), and we follow each connection from the
 * bufferevent evhttp asks us for (evhttp_set_bevcb()): we hold a
 * reference to it, and an evbuffer callback on its input sees every
 * byte before evhttp parses it.  Before evhttp reads anything, the
 * connection is admitted or refused (the allow list, the cap); then the
 * head must be complete within timeout seconds of the accept and
 * max_header_size bytes, its request line a GET or HEAD of HTTP/1.x and
 * its header lines what evhttp can parse, or we answer it ourselves
 * (431, 405, 400) and close it.  Closing is
 * shutdown(2) on the descriptor our reference keeps open: the client
 * sees it at once, and evhttp reads the end of the stream and frees the
 * connection by its own path.  Every answer closes the connection
 * (Connection: close), so evhttp never reads a second head that our
 * deadline would not cover.
 */
#ifndef LH_HTTPD_INT_H
#define LH_HTTPD_INT_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "httpd.h"
#include "httpreq.h"
#include "ratelog.h"

struct bufferevent;
struct cidr;
struct evbuffer;
struct evbuffer_cb_info;
struct event;
struct evconnlistener;
struct evhttp;
struct evhttp_bound_socket;
struct evhttp_request;

/* What a listener is made with: the http section, copied. */
struct httpd_conf {
	char *listen_host; /* NULL: no TCP */
	unsigned listen_port;
	bool listen_set; /* written in the file */
	char *socket;    /* NULL: none */
	struct cidr *allow;
	size_t nallow;
	unsigned max_conns, max_header, timeout;
};

/* One listening socket. */
struct httpd_sock {
	evutil_socket_t fd;         /* -1: none */
	struct evconnlistener *lev; /* evhttp accepts on it */
	struct evhttp_bound_socket *bound;
	char *path; /* a unix socket's, removed at close */
	char name[80];
};

struct httpd_conn {
	TAILQ_ENTRY(httpd_conn) entry;
	struct httpd *h;
	struct bufferevent *bev; /* evhttp's, referenced: its fd stays ours */
	struct event *deadline;  /* absolute, from the accept */
	size_t seen;             /* bytes of the head so far */
	size_t scan;             /* input offset of the first line unchecked */
	unsigned lines;          /* lines of the head checked */
	enum { HTTPD_NEW, HTTPD_OPEN, HTTPD_REFUSED } state;
	bool closing;    /* shut down: evhttp frees it next */
	bool answered;   /* we answered it (431, 405, 400) */
	bool dispatched; /* evhttp has its whole head */
	bool head_done;  /* its blank line checked */
};

TAILQ_HEAD(httpd_conns, httpd_conn);

struct httpd_route {
	char *path;
	size_t len;
	int prefix;
	httpd_handler_fn fn;
	void *arg;
};

struct httpd_req {
	struct httpd *h;
	struct evhttp_request *req;
	const struct httpreq *parsed;
	bool head; /* a HEAD: headers only */
	bool replied;
};

struct httpd {
	struct httpd_conf conf;
	struct event_base *base;
	struct evhttp *http;
	struct httpd_sock tcp, unx;
	struct httpd_route *routes;
	size_t nroutes, routecap;
	struct httpd_conns conns;         /* every one we follow */
	size_t nconns;                    /* admitted, not yet closed */
	size_t nnew;                      /* accepted, not yet admitted */
	struct event *tick;               /* each second: reap, resume */
	struct event *admit;              /* after evhttp accepted some */
	struct event *reap_now;           /* after evhttp closed one */
	bool paused;                      /* accepting stopped for a batch */
	struct ratelog rl_allow, rl_full; /* refusals, a line a minute */
	struct httpd_stats st;
	struct httpreq parsed; /* the request being dispatched */
	char addr[200];
	/* A reload's new sockets and conf, between prepare and apply. */
	struct httpd_conf next;
	struct httpd_sock next_tcp, next_unx;
	bool next_tcp_new, next_unx_new; /* replace the running one */
};

/* httpd.c */
int httpd_conf_of(const struct lh_config *cfg, struct httpd_conf *ret);
void httpd_conf_clear(struct httpd_conf *c);
void httpd_addr_update(struct httpd *h);

/* httpd_sock.c: bind (not yet accepting); 0, 1 (the default address in
 * use: none, a warning logged) or -1 (logged). */
int httpd_sock_tcp(const struct httpd_conf *c, struct httpd_sock *ret);
int httpd_sock_unix(const struct httpd_conf *c, struct httpd_sock *ret);
/* evhttp accepts on s, from now or (enable false) from
 * httpd_sock_pause(h, false).  0 or -1 (logged). */
int httpd_sock_arm(struct httpd *h, struct httpd_sock *s, bool enable);
/* Accepting stopped or started again, on every socket. */
void httpd_sock_pause(struct httpd *h, bool pause);
/* h NULL: the socket was never armed. */
void httpd_sock_close(struct httpd *h, struct httpd_sock *s);

/* httpd_accept.c */
struct bufferevent *httpd_bevcb(struct event_base *base, void *arg);
void httpd_admit_cb(evutil_socket_t fd, short what, void *arg);
void httpd_tick_cb(evutil_socket_t fd, short what, void *arg);
void httpd_reap(struct httpd *h);
void httpd_reap_cb(evutil_socket_t fd, short what, void *arg);
void httpd_conn_free(struct httpd_conn *c);
/* httpd_head.c: the input callback of each connection's bufferevent. */
void httpd_head_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg);

/* The connection of a request evhttp dispatches (NULL: not ours). */
struct httpd_conn *httpd_conn_of(struct httpd *h, struct evhttp_request *req);

/* httpd_dispatch.c */
void httpd_dispatch_cb(struct evhttp_request *req, void *arg);
/* A JSON envelope {"success": false, "message": msg, "data": null} into
 * a new string (free()), or NULL. */
char *httpd_error_json(const char *msg);
const char *httpd_reason(int status);

#endif
