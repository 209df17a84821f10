/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Admission, the deadline and the end of each connection (httpd_int.h
 * has the connection's life; httpd_head.c checks the head itself).
 * Nothing here blocks, and a connection costs at most max_header_size
 * bytes of input for at most timeout seconds before its head is
 * complete.
 *
 * What this relies on in libevent 2.1.12 (http.c, listener.c,
 * bufferevent.c, buffer.c):
 * - evhttp_get_request_connection() calls the bevcb, then sets the
 *   descriptor on its bufferevent and enables reading; all within the
 *   listener's callback, so an event activated from the bevcb runs
 *   before the first byte is read;
 * - listener_read_cb() stops accepting when the listener was disabled
 *   from inside its callback (our batches);
 * - evhttp_connection_free() calls bufferevent_free(), which clears the
 *   callbacks and drops evhttp's reference; with BEV_OPT_CLOSE_ON_FREE
 *   it leaves the descriptor to the bufferevent (need_close), so our
 *   reference keeps it open, never reused, until httpd_conn_free();
 * - bufferevent_readcb() adds to the input buffer, whose callbacks run
 *   at once, before evhttp's read callback parses it;
 * - a read that returns 0 while evhttp reads a request (after our
 *   shutdown(SHUT_RD)) is evhttp_error_cb(EOF): evhttp_connection_fail_()
 *   frees an incoming connection without an answer.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "cidr.h"
#include "clock.h"
#include "httpd_int.h"
#include "log.h"

#define ADMIT_BATCH   64 /* accepts before the loop runs others */
#define REFUSE_LOG_NS (60ULL * CLOCK_NS_PER_S)

void
httpd_conn_free(struct httpd_conn *c)
{
	struct httpd *h = c->h;

	TAILQ_REMOVE(&h->conns, c, entry);
	if (c->state == HTTPD_OPEN)
		h->nconns--;
	else if (c->state == HTTPD_NEW)
		h->nnew--;
	if (c->deadline != NULL)
		event_free(c->deadline);
	/* Nothing may call back into c when evhttp still holds the
	 * bufferevent (httpd_free(), before evhttp_free()). */
	(void)evbuffer_remove_cb(bufferevent_get_input(c->bev), httpd_head_cb,
	    c);
	/* The last reference when evhttp let go (its socket closes with
	 * it); else evhttp_free() drops the other, at the listener's end. */
	bufferevent_decref(c->bev);
	free(c);
}

/* Close c: the client sees it at once, evhttp on its next read. */
static void
conn_close(struct httpd_conn *c)
{
	evutil_socket_t fd = bufferevent_getfd(c->bev);

	if (fd >= 0)
		(void)shutdown(fd, SHUT_RDWR);
	c->closing = true;
	if (c->deadline != NULL)
		(void)event_del(c->deadline);
}

/* evhttp let go of c (bufferevent_free() cleared its callbacks). */
static bool
released(const struct httpd_conn *c)
{
	bufferevent_data_cb r, w;
	bufferevent_event_cb e;
	void *arg;

	bufferevent_getcb(c->bev, &r, &w, &e, &arg);
	return r == NULL && w == NULL && e == NULL;
}

void
httpd_reap(struct httpd *h)
{
	struct httpd_conn *c, *next;

	for (c = TAILQ_FIRST(&h->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (released(c))
			httpd_conn_free(c);
	}
}

void
httpd_reap_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	httpd_reap(arg);
}

/* Each second: what evhttp closed without telling (a refused or timed
 * out connection), and accepting again after an error stopped it. */
void
httpd_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *h = arg;

	(void)fd;
	(void)what;
	httpd_reap(h);
	if (!h->paused)
		httpd_sock_pause(h, false);
}

struct bufferevent *
httpd_bevcb(struct event_base *base, void *arg)
{
	struct httpd *h = arg;
	struct httpd_conn *c = calloc(1, sizeof(*c));
	struct bufferevent *bev;

	/* No descriptor yet: evhttp sets it when this returns. */
	bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL || c == NULL ||
	    evbuffer_add_cb(bufferevent_get_input(bev), httpd_head_cb, c) ==
	        NULL) {
		/* evhttp makes one of its own: a connection we do not
		 * follow, under evhttp's own limits (out of memory). */
		if (bev != NULL)
			bufferevent_free(bev);
		free(c);
		return NULL;
	}
	bufferevent_incref(bev);
	c->h = h;
	c->bev = bev;
	TAILQ_INSERT_TAIL(&h->conns, c, entry);
	h->nnew++;
	event_active(h->admit, EV_TIMEOUT, 0);
	if (h->nnew >= ADMIT_BATCH && !h->paused) {
		h->paused = true;
		httpd_sock_pause(h, true);
	}
	return bev;
}

static void
refuse(struct httpd_conn *c, struct ratelog *rl, const char *why)
{
	struct httpd *h = c->h;
	uint64_t skipped = 0;

	conn_close(c);
	h->st.refused++;
	if (ratelog_every(rl, clock_monotonic_ns(), REFUSE_LOG_NS, &skipped))
		log_warnx("http: connection refused: %s (%llu more since the "
		          "last line)",
		    why, (unsigned long long)skipped);
}

static bool
allowed(const struct httpd *h, evutil_socket_t fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	size_t i;

	memset(&ss, 0, sizeof(ss));
	if (h->conf.nallow == 0)
		return true;
	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		return false;
	if (ss.ss_family == AF_UNIX)
		return true; /* the socket file's mode says who */
	for (i = 0; i < h->conf.nallow; i++) {
		if (cidr_match(&h->conf.allow[i], (struct sockaddr *)&ss))
			return true;
	}
	return false;
}

static void deadline_cb(evutil_socket_t fd, short what, void *arg);

/* c, when the allow list and the cap (with gone of those open closed
 * already) let it in. */
static void
admit_one(struct httpd *h, struct httpd_conn *c, size_t gone)
{
	const struct timeval tv = {(time_t)h->conf.timeout, 0};
	evutil_socket_t fd = bufferevent_getfd(c->bev);

	h->nnew--;
	c->state = HTTPD_REFUSED;
	if (fd < 0) {
		conn_close(c); /* evhttp gave up on it already */
		return;
	}
	if (!allowed(h, fd)) {
		refuse(c, &h->rl_allow, "not in http { allow }");
		return;
	}
	if (h->nconns - gone >= h->conf.max_conns) {
		refuse(c, &h->rl_full, "http { max_connections } open");
		return;
	}
	c->state = HTTPD_OPEN;
	h->nconns++;
	h->st.accepted++;
	c->deadline = evtimer_new(h->base, deadline_cb, c);
	if (c->deadline == NULL || event_add(c->deadline, &tv) < 0)
		conn_close(c);
}

/* The connections evhttp accepted since the last time: before evhttp
 * read a byte of them. */
void
httpd_admit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *h = arg;
	struct httpd_conn *c;
	/* Those evhttp closed since the last tick make room (and go
	 * below). */
	size_t gone = 0;

	(void)fd;
	(void)what;
	TAILQ_FOREACH(c, &h->conns, entry) {
		/* cppcheck-suppress uninitvar */
		if (c->state == HTTPD_OPEN && released(c))
			gone++;
	}
	TAILQ_FOREACH(c, &h->conns, entry) {
		if (c->state == HTTPD_NEW)
			admit_one(h, c, gone);
	}
	httpd_reap(h);
	if (h->paused) {
		h->paused = false;
		httpd_sock_pause(h, false);
	}
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct httpd_conn *c = arg;

	(void)fd;
	(void)what;
	if (!c->answered)
		c->h->st.timeouts++;
	conn_close(c);
}

struct httpd_conn *
httpd_conn_of(struct httpd *h, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev =
	    evcon != NULL ? evhttp_connection_get_bufferevent(evcon) : NULL;
	struct httpd_conn *c;

	TAILQ_FOREACH(c, &h->conns, entry) {
		/* cppcheck-suppress uninitvar */
		if (c->bev == bev)
			return c;
	}
	return NULL;
}
