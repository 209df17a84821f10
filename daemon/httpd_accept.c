/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Admission, the request head's limits and the end of each connection
 * (httpd_int.h has the connection's life).  Nothing here blocks, and a
 * connection costs at most max_header_size bytes of input for at most
 * timeout seconds before its head is complete.
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
#define LINE_PEEK     32 /* bytes enough to see a request line's method */

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

static void
input_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg);

struct bufferevent *
httpd_bevcb(struct event_base *base, void *arg)
{
	struct httpd *h = arg;
	struct httpd_conn *c = calloc(1, sizeof(*c));
	struct bufferevent *bev;

	/* No descriptor yet: evhttp sets it when this returns. */
	bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL || c == NULL ||
	    evbuffer_add_cb(bufferevent_get_input(bev), input_cb, c) == NULL) {
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

static void
admit_one(struct httpd *h, struct httpd_conn *c)
{
	const struct timeval tv = {(time_t)h->conf.timeout, 0};
	evutil_socket_t fd = bufferevent_getfd(c->bev);

	h->nnew--;
	c->state = HTTPD_REFUSED;
	if (fd < 0 || !allowed(h, fd)) {
		refuse(c, &h->rl_allow, "not in http { allow }");
		return;
	}
	if (h->nconns >= h->conf.max_conns) {
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

	(void)fd;
	(void)what;
	httpd_reap(h);
	TAILQ_FOREACH(c, &h->conns, entry) {
		if (c->state == HTTPD_NEW)
			admit_one(h, c);
	}
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

/* An answer of ours, before evhttp has one: a few hundred bytes into an
 * empty socket buffer (what does not fit is lost). */
static void
answer(struct httpd_conn *c, int status, const char *msg)
{
	evutil_socket_t fd = bufferevent_getfd(c->bev);
	char *body = httpd_error_json(msg);
	size_t blen = body != NULL ? strlen(body) : 0;
	char head[256];
	int n;

	c->answered = true;
	c->h->st.errors++;
	n = snprintf(head, sizeof(head),
	    "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n%s\r\n",
	    status, httpd_reason(status), blen,
	    status == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (fd >= 0 && n > 0 && (size_t)n < sizeof(head) &&
	    send(fd, head, (size_t)n, MSG_NOSIGNAL) == n && blen > 0)
		(void)send(fd, body, blen, MSG_NOSIGNAL);
	free(body);
	/* What the client still sends is read and dropped (below) until
	 * it closes or the deadline: closing now, with its bytes unread,
	 * would reset the connection and could lose the answer. */
	if (fd >= 0)
		(void)shutdown(fd, SHUT_WR);
}

/* The request line's method, from b (the whole line, or its first
 * LINE_PEEK bytes): 0 (GET or HEAD), or the status to answer: 405 for
 * another method, 400 for what is no request line. */
static int
method_status(const char *b, size_t n)
{
	const char *sp = memchr(b, ' ', n);
	size_t i, mn = sp != NULL ? (size_t)(sp - b) : n;

	if (sp == NULL || mn == 0)
		return 400;
	if ((mn == 3 && memcmp(b, "GET", 3) == 0) ||
	    (mn == 4 && memcmp(b, "HEAD", 4) == 0))
		return 0;
	for (i = 0; i < mn; i++) {
		if (b[i] < 'A' || b[i] > 'Z')
			return 400;
	}
	return 405;
}

/* The first line, once there is one, or enough of it. */
static void
check_line(struct httpd_conn *c, struct evbuffer *buf)
{
	char peek[LINE_PEEK];
	size_t eol_len = 0, n;
	struct evbuffer_ptr eol =
	    evbuffer_search_eol(buf, NULL, &eol_len, EVBUFFER_EOL_CRLF);
	ev_ssize_t got;
	int status;

	if (eol.pos < 0 && evbuffer_get_length(buf) < sizeof(peek))
		return;
	n = eol.pos >= 0 && (size_t)eol.pos < sizeof(peek) ? (size_t)eol.pos :
	                                                     sizeof(peek);
	got = evbuffer_copyout(buf, peek, n);
	if (got < 0)
		return;
	status = method_status(peek, (size_t)got);
	if (status == 405)
		answer(c, 405, "only GET and HEAD");
	else if (status != 0)
		answer(c, 400, "not an HTTP request line");
	else
		c->line_ok = true;
}

/* Every byte of the head, before evhttp parses it. */
static void
input_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct httpd_conn *c = arg;

	if (info->n_added == 0 || c->dispatched || c->closing)
		return;
	c->seen += info->n_added;
	if (!c->answered && c->seen > c->h->conf.max_header)
		answer(c, 431,
		    "the request head is larger than http { "
		    "max_header_size }");
	if (!c->answered && !c->line_ok)
		check_line(c, buf);
	/* Answered: evhttp is left nothing to parse (draining here runs
	 * this callback again, with nothing added). */
	if (c->answered)
		(void)evbuffer_drain(buf, evbuffer_get_length(buf));
}

struct httpd_conn *
httpd_conn_of(struct httpd *h, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev =
	    evcon != NULL ? evhttp_connection_get_bufferevent(evcon) : NULL;
	struct httpd_conn *c;

	TAILQ_FOREACH(c, &h->conns, entry) {
		if (c->bev == bev)
			return c;
	}
	return NULL;
}
