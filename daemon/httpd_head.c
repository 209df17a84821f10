/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A request's head, checked as its bytes arrive and before evhttp parses
 * them (httpd_int.h): its size (431), its request line (405 for a method
 * other than GET and HEAD, 400 for what is not "METHOD SP target SP
 * HTTP/1.x"), its header lines (400 for one evhttp would refuse with a
 * page of its own).  A head refused is answered here, in the JSON
 * envelope, and what the client still sends is dropped unparsed.
 *
 * It relies on libevent 2.1.12 calling an evbuffer's callbacks at once:
 * when bufferevent_readcb() adds to the input, before evhttp's read
 * callback; and when evhttp_parse_firstline_() and
 * evhttp_parse_headers_() take lines off its front (evbuffer_readln()),
 * which moves our offset.  What evhttp refuses, mirrored: a request line
 * not of three words (evhttp_parse_request_line()), a header line
 * without ':', a continuation line first, a CR or control character in
 * a line (evhttp_add_header()).
 */
#include <sys/socket.h>

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "httpd_int.h"
#include "httphead.h"

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
	/* What the client still sends is read and dropped until it closes
	 * or the deadline: closing now, with its bytes unread, would reset
	 * the connection and could lose the answer. */
	if (fd >= 0)
		(void)shutdown(fd, SHUT_WR);
}

/* The lines complete since the last call: 0, or the status to answer
 * (*msg says why). */
static int
scan(struct httpd_conn *c, struct evbuffer *buf, const char **msg)
{
	struct evbuffer_ptr at, eol;
	size_t eol_len;
	int status;

	while (!c->head_done) {
		const char *b;
		size_t n;

		if (evbuffer_ptr_set(buf, &at, c->scan, EVBUFFER_PTR_SET) < 0)
			return 0;
		eol_len = 0;
		eol =
		    evbuffer_search_eol(buf, &at, &eol_len, EVBUFFER_EOL_CRLF);
		if (eol.pos < 0)
			return 0;
		n = (size_t)eol.pos - c->scan;
		/* Contiguous up to the line's end: at most max_header
		 * bytes, once a line. */
		b = (const char *)evbuffer_pullup(buf,
		    (ev_ssize_t)((size_t)eol.pos + eol_len));
		if (b == NULL)
			return 0;
		if (c->lines == 0) {
			status = httphead_request_line(b + c->scan, n);
			*msg = status == 405 ? "only GET and HEAD" :
			                       "not an HTTP/1.x request line";
			if (status != 0)
				return status;
		} else if (n == 0) {
			c->head_done = true;
		} else if (!httphead_header_line(b + c->scan, n,
		               c->lines == 1)) {
			*msg = "a header line that is not name: value";
			return 400;
		}
		c->scan = (size_t)eol.pos + eol_len;
		c->lines++;
	}
	return 0;
}

void
httpd_head_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct httpd_conn *c = arg;
	const char *msg = NULL;
	int status = 0;

	if (c->dispatched || c->closing)
		return;
	/* evhttp took lines off the front. */
	c->scan = c->scan > info->n_deleted ? c->scan - info->n_deleted : 0;
	if (info->n_added == 0)
		return;
	c->seen += info->n_added;
	if (!c->answered && c->seen > c->h->conf.max_header) {
		status = 431;
		msg = "the request head is larger than http { "
		      "max_header_size }";
	} else if (!c->answered) {
		status = scan(c, buf, &msg);
	}
	if (status != 0)
		answer(c, status, msg);
	/* Answered: evhttp is left nothing to parse (draining here runs
	 * this callback again, with nothing added). */
	if (c->answered)
		(void)evbuffer_drain(buf, evbuffer_get_length(buf));
}
