/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The HTTP listener's own sockets (libevent 2.1's evhttp has no cap on
 * connections, so it never gets a listening socket): TCP on an address
 * of the http section, and a unix socket made with mode 0660, a stale
 * one replaced, removed at close.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "httpd_int.h"
#include "log.h"

/* A burst of scrapers waits here, never refused by the kernel (whose
 * SYN retries would delay them by seconds); SOMAXCONN caps it. */
#define HTTPD_BACKLOG 1024

static int
sock_addr(const struct httpd_conf *c, struct sockaddr_storage *ss,
    socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, c->listen_host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)c->listen_port);
		*len = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, c->listen_host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)c->listen_port);
		*len = sizeof(*in6);
		return 0;
	}
	return -1;
}

/* The name of the bound address, with the port the kernel picked. */
static void
sock_name(struct httpd_sock *s, int family)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN];
	const void *a;
	unsigned port;

	memset(&ss, 0, sizeof(ss));
	if (getsockname(s->fd, (struct sockaddr *)&ss, &len) < 0)
		return;
	if (family == AF_INET) {
		a = &((struct sockaddr_in *)&ss)->sin_addr;
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	} else {
		a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	if (inet_ntop(family, a, host, sizeof(host)) == NULL)
		return;
	(void)snprintf(s->name, sizeof(s->name),
	    family == AF_INET ? "%s:%u" : "[%s]:%u", host, port);
}

int
httpd_sock_tcp(const struct httpd_conf *c, struct httpd_sock *ret)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, e;

	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	if (c->listen_host == NULL)
		return 0;
	if (sock_addr(c, &ss, &len) < 0) {
		log_warnx("http: listen %s: not a numeric address",
		    c->listen_host);
		return -1;
	}
	ret->fd =
	    socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ret->fd >= 0 &&
	    setsockopt(ret->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ==
	        0 &&
	    bind(ret->fd, (struct sockaddr *)&ss, len) == 0 &&
	    listen(ret->fd, HTTPD_BACKLOG) == 0) {
		sock_name(ret, ss.ss_family);
		return 0;
	}
	e = errno;
	httpd_sock_close(NULL, ret);
	if (e == EADDRINUSE && !c->listen_set) {
		/* The default address taken by someone else: the role runs
		 * on without TCP HTTP (lharvestd.conf(5), http). */
		log_warnx("http: %s:%u in use; no HTTP over TCP (set http { "
		          "listen } to choose)",
		    c->listen_host, c->listen_port);
		return 1;
	}
	log_warnx("http: listen %s%s%s:%u: %s",
	    strchr(c->listen_host, ':') != NULL ? "[" : "", c->listen_host,
	    strchr(c->listen_host, ':') != NULL ? "]" : "", c->listen_port,
	    strerror(e));
	return -1;
}

/* A socket file at path nobody accepts on any more (a crash left it):
 * true.  Anything else there is not ours to remove. */
static bool
stale(const char *path, const struct sockaddr_un *sun)
{
	struct stat sb;
	bool dead;
	int fd;

	if (lstat(path, &sb) < 0 || !S_ISSOCK(sb.st_mode))
		return false;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	/* A unix connect does not wait on a listener's backlog. */
	dead = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) < 0 &&
	    errno == ECONNREFUSED;
	(void)close(fd);
	return dead;
}

static int
unix_bind(struct httpd_sock *s, const char *path)
{
	struct sockaddr_un sun;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path));
	if (stale(path, &sun))
		(void)unlink(path);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		return -1;
	s->path = strdup(path); /* from now on, removed at close */
	if (s->path == NULL) {
		(void)unlink(path);
		errno = ENOMEM;
		return -1;
	}
	if (chmod(path, 0660) < 0 || listen(s->fd, HTTPD_BACKLOG) < 0)
		return -1;
	(void)snprintf(s->name, sizeof(s->name), "%s", path);
	return 0;
}

int
httpd_sock_unix(const struct httpd_conf *c, struct httpd_sock *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	if (c->socket == NULL)
		return 0;
	if (unix_bind(ret, c->socket) == 0)
		return 0;
	log_warn("http: socket %s", c->socket);
	httpd_sock_close(NULL, ret);
	return -1;
}

/* accept(2) failed for want of descriptors or memory: the listener
 * stops (it would be readable, and called, at once again) until the
 * next tick starts it (httpd_tick_cb()).  Its argument is evhttp's. */
static void
accept_error_cb(struct evconnlistener *lev, void *arg)
{
	(void)arg;
	log_warn("http: accept");
	(void)evconnlistener_disable(lev);
}

int
httpd_sock_arm(struct httpd *h, struct httpd_sock *s, bool enable)
{
	if (s->fd < 0)
		return 0;
	/* Already listening; no callback: evhttp_bind_listener() sets
	 * its own (and the descriptor stays ours to close). */
	s->lev = evconnlistener_new(h->base, NULL, NULL,
	    LEV_OPT_CLOSE_ON_EXEC | (enable ? 0 : LEV_OPT_DISABLED), 0, s->fd);
	if (s->lev != NULL)
		s->bound = evhttp_bind_listener(h->http, s->lev);
	if (s->lev == NULL || s->bound == NULL) {
		if (s->lev != NULL)
			evconnlistener_free(s->lev);
		s->lev = NULL;
		log_warnx("http: %s: cannot set up events", s->name);
		return -1;
	}
	evconnlistener_set_error_cb(s->lev, accept_error_cb);
	return 0;
}

void
httpd_sock_pause(struct httpd *h, bool pause)
{
	struct httpd_sock *s[] = {&h->tcp, &h->unx};
	size_t i;

	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		if (s[i]->lev == NULL)
			continue;
		if (pause)
			(void)evconnlistener_disable(s[i]->lev);
		else
			(void)evconnlistener_enable(s[i]->lev);
	}
}

void
httpd_sock_close(struct httpd *h, struct httpd_sock *s)
{
	/* evhttp frees the listener with its bound socket. */
	if (s->bound != NULL && h != NULL)
		evhttp_del_accept_socket(h->http, s->bound);
	else if (s->lev != NULL)
		evconnlistener_free(s->lev);
	if (s->fd >= 0)
		(void)close(s->fd);
	if (s->path != NULL) {
		(void)unlink(s->path);
		free(s->path);
	}
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}
