/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inbound connections: accept, CHALLENGE, read frames through the session
 * state machine, hand verified frames to the role, drop any peer that
 * breaks a rule with exactly one log line.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <netdb.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "clock.h"
#include "err.h"
#include "frame.h"
#include "hmac.h"
#include "keyfile.h"
#include "log.h"
#include "msg.h"
#include "receiver.h"
#include "session.h"
#include "wire.h"

#define RECEIVER_ADDR_MAX      (NI_MAXHOST + NI_MAXSERV + 4)
#define RECEIVER_FLUSH_TIMEOUT 5 /* seconds to flush a goodbye */
#define RECEIVER_ACCEPT_PAUSE  1 /* seconds without accept after EMFILE */

struct receiver_peer {
	TAILQ_ENTRY(receiver_peer) entry;
	struct receiver *r;
	uint64_t id;
	struct bufferevent *bev;
	struct event *hs_timer; /* the HELLO must complete before it fires */
	struct session s;
	size_t need;  /* bytes to buffer before calling session_input */
	bool open;    /* on_hello accepted the peer */
	bool closing; /* flushing a goodbye, reading nothing more */
	bool dead;    /* closed: waiting to be freed from the loop */
	char name[MSG_NAME_MAX];
	char addr[RECEIVER_ADDR_MAX];
	void *data;
};

TAILQ_HEAD(receiver_peers, receiver_peer);

struct receiver {
	struct event_base *base;
	struct evconnlistener *lev;
	struct event *reap_ev;  /* frees dead peers from the loop */
	struct event *pause_ev; /* re-enables accept after EMFILE */
	struct hmac_ctx *hmac;
	struct receiver_conf conf;
	char name[MSG_NAME_MAX];
	char addr[RECEIVER_ADDR_MAX];
	struct receiver_peers live;
	struct receiver_peers dead;
	size_t nlive;
	uint64_t next_id;
};

static void
addr_format(const struct sockaddr *sa, socklen_t salen, char *buf, size_t size)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];

	if (getnameinfo(sa, salen, host, sizeof(host), serv, sizeof(serv),
	        NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		(void)snprintf(buf, size, "?");
		return;
	}
	if (sa->sa_family == AF_INET6)
		(void)snprintf(buf, size, "[%s]:%s", host, serv);
	else
		(void)snprintf(buf, size, "%s:%s", host, serv);
}

/* Unlink a closing peer and schedule its memory to be freed. */
static void
peer_finish(struct receiver_peer *p, const char *reason)
{
	struct receiver *r = p->r;

	if (p->dead)
		return;
	p->dead = true;
	if (p->open && r->conf.on_close != NULL)
		r->conf.on_close(r->conf.arg, p, reason);
	if (p->bev != NULL) {
		bufferevent_free(p->bev); /* closes the socket */
		p->bev = NULL;
	}
	(void)evtimer_del(p->hs_timer);
	TAILQ_REMOVE(&r->live, p, entry);
	r->nlive--;
	TAILQ_INSERT_TAIL(&r->dead, p, entry);
	event_active(r->reap_ev, EV_TIMEOUT, 0);
}

static void
peer_free(struct receiver_peer *p)
{
	if (p->bev != NULL)
		bufferevent_free(p->bev);
	if (p->hs_timer != NULL)
		event_free(p->hs_timer);
	session_clear(&p->s);
	free(p);
}

static void
reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct receiver *r = arg;
	struct receiver_peer *p;

	(void)fd;
	(void)what;
	while ((p = TAILQ_FIRST(&r->dead)) != NULL) {
		TAILQ_REMOVE(&r->dead, p, entry);
		peer_free(p);
	}
}

void
receiver_peer_drop(struct receiver_peer *p, const char *reason)
{
	if (p->dead)
		return;
	log_warnx("peer %s %s: %s, dropping connection", p->name, p->addr,
	    reason);
	peer_finish(p, reason);
}

static void
flush_write_cb(struct bufferevent *bev, void *arg)
{
	struct receiver_peer *p = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		peer_finish(p, "closed");
}

static void
flush_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct receiver_peer *p = arg;

	(void)bev;
	(void)what;
	peer_finish(p, "closed");
}

/* Read nothing more; close once what was queued has been written. */
static void
peer_close_flushed(struct receiver_peer *p)
{
	struct timeval tv = {RECEIVER_FLUSH_TIMEOUT, 0};

	p->closing = true;
	(void)bufferevent_disable(p->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(p->bev)) == 0) {
		peer_finish(p, "closed");
		return;
	}
	bufferevent_setcb(p->bev, NULL, flush_write_cb, flush_event_cb, p);
	bufferevent_set_timeouts(p->bev, NULL, &tv);
}

static int
peer_write(struct receiver_peer *p, struct wbuf *w)
{
	struct evbuffer *out = bufferevent_get_output(p->bev);

	if (wbuf_status(w) < 0)
		return wbuf_status(w);
	/* ACKs are tiny: a peer with a max frame of them unread is stuck. */
	if (evbuffer_get_length(out) + w->len > p->r->conf.max_frame) {
		receiver_peer_drop(p, "not reading what it is sent");
		return -ENOBUFS;
	}
	if (bufferevent_write(p->bev, w->data, w->len) < 0)
		return -ENOMEM;
	return 0;
}

int
receiver_peer_send(struct receiver_peer *p, uint8_t type, uint64_t sweep_id,
    const void *payload, size_t len)
{
	uint16_t flags = type > FRAME_BYE ? FRAME_F_IGNORABLE : 0;
	struct wbuf w;
	int rc;

	if (p->dead || p->closing || p->s.state != SESSION_OPEN)
		return -ENOTCONN;
	wbuf_init(&w, p->r->conf.max_frame);
	rc = session_send(&p->s, type, flags, sweep_id, payload, len, &w);
	if (rc == 0)
		rc = peer_write(p, &w);
	wbuf_free(&w);
	return rc;
}

int
receiver_peer_ack(struct receiver_peer *p, const struct msg_ack *a)
{
	struct wbuf w;
	int rc;

	wbuf_init(&w, 0);
	rc = msg_ack_encode(&w, a);
	if (rc == 0)
		rc = receiver_peer_send(p, FRAME_ACK, 0, w.data, w.len);
	wbuf_free(&w);
	return rc;
}

/* Best effort: tell a refused peer why before closing. */
static void
peer_bye(struct receiver_peer *p, uint8_t reason, const char *text)
{
	struct msg_bye bye;
	struct wbuf w;

	memset(&bye, 0, sizeof(bye));
	bye.reason = reason;
	/* Cut to what a BYE carries. */
	memcpy(bye.text, text, strnlen(text, sizeof(bye.text) - 1));
	wbuf_init(&w, 0);
	if (msg_bye_encode(&w, &bye) == 0)
		(void)receiver_peer_send(p, FRAME_BYE, 0, w.data, w.len);
	wbuf_free(&w);
}

static void
peer_hello(struct receiver_peer *p, const struct session_frame *f)
{
	struct receiver *r = p->r;
	const struct msg_hello *h = p->s.hello;
	struct timeval tv = {r->conf.read_timeout, 0};
	struct msg_ack ack;
	struct lh_err err;
	uint64_t now = clock_realtime_ns();

	if (h == NULL) {
		receiver_peer_drop(p, "HELLO not decoded");
		return;
	}
	/* The name goes into every log line. */
	log_safe(p->name, sizeof(p->name), h->name);
	(void)evtimer_del(p->hs_timer);
	bufferevent_set_timeouts(p->bev, &tv, &tv);

	int64_t skew = (int64_t)(h->time_ns - now);
	if (skew > 1000000000 || skew < -1000000000)
		log_warnx("peer %s %s: clock %s ours by %.3f s", p->name,
		    p->addr, skew > 0 ? "ahead of" : "behind",
		    (double)(skew > 0 ? skew : -skew) / 1e9);

	lh_err_clear(&err);
	if (r->conf.on_hello != NULL &&
	    r->conf.on_hello(r->conf.arg, p, h, &err) < 0) {
		char why[LH_ERR_REASON_MAX + 32];

		(void)snprintf(why, sizeof(why), "refused: %s",
		    err.reason[0] != '\0' ? err.reason : "by the role");
		log_warnx("peer %s %s: %s, dropping connection", p->name,
		    p->addr, why);
		peer_bye(p, 2, why);
		if (!p->dead)
			peer_close_flushed(p);
		return;
	}
	p->open = true;
	memset(&ack, 0, sizeof(ack));
	ack.kind = MSG_ACK_HELLO;
	ack.seq = f->hdr.seq;
	ack.time_ns = now;
	if (receiver_peer_ack(p, &ack) < 0 && !p->dead)
		receiver_peer_drop(p, "cannot queue the ACK of its HELLO");
}

static void
peer_goodbye(struct receiver_peer *p, const struct session_frame *f)
{
	struct msg_bye bye;
	struct lh_err err;
	char text[MSG_BYE_TEXT_MAX];

	if (msg_bye_decode(&bye, f->payload, f->hdr.len, &err) < 0) {
		char why[LH_ERR_REASON_MAX + 16];

		(void)snprintf(why, sizeof(why), "bad BYE: %s", err.reason);
		receiver_peer_drop(p, why);
		return;
	}
	log_safe(text, sizeof(text), bye.text);
	log_info("peer %s %s: BYE (reason %u%s%s), closing", p->name, p->addr,
	    bye.reason, text[0] != '\0' ? ": " : "", text);
	peer_close_flushed(p);
}

static void
peer_frame(struct receiver_peer *p, const struct session_frame *f)
{
	struct receiver *r = p->r;
	struct lh_err err;

	if (!p->open) {
		if (f->hdr.type == FRAME_HELLO && p->s.state == SESSION_OPEN)
			peer_hello(p, f);
		else
			receiver_peer_drop(p, "frame before the handshake");
		return;
	}
	if (f->hdr.type == FRAME_BYE) {
		peer_goodbye(p, f);
		return;
	}
	lh_err_clear(&err);
	if (r->conf.on_frame == NULL) {
		char why[64];

		(void)snprintf(why, sizeof(why), "unexpected %s frame",
		    frame_type_name(f->hdr.type));
		receiver_peer_drop(p, why);
	} else if (r->conf.on_frame(r->conf.arg, p, f, &err) < 0 && !p->dead) {
		receiver_peer_drop(p,
		    err.reason[0] != '\0' ? err.reason : "refused a frame");
	}
}

/*
 * Before the HELLO header is complete, look at its first bytes: an HTTP
 * request, a TLS hello or a scanner's probe is dropped at once with what
 * it looked like, instead of at the handshake timeout.
 */
static bool
peer_not_lharvestd(struct receiver_peer *p, struct evbuffer *in)
{
	static const uint8_t magic[4] = {0x4C, 0x48, 0x56, 0x44};
	uint8_t head[16];
	char text[sizeof(head) + 1];
	char why[96];
	ev_ssize_t n = evbuffer_copyout(in, head, sizeof(head));
	size_t cmp;

	if (n <= 0)
		return false;
	cmp = (size_t)n < sizeof(magic) ? (size_t)n : sizeof(magic);
	if (memcmp(head, magic, cmp) == 0)
		return false;
	for (size_t i = 0; i < (size_t)n; i++)
		text[i] =
		    (char)(head[i] >= 0x20 && head[i] < 0x7f ? head[i] : '.');
	text[n] = '\0';
	(void)snprintf(why, sizeof(why),
	    "not the lharvestd protocol (bad magic, starts \"%s\")", text);
	receiver_peer_drop(p, why);
	return true;
}

static void
peer_read_cb(struct bufferevent *bev, void *arg)
{
	struct receiver_peer *p = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct session_frame f;
	struct lh_err err;
	size_t need;

	if (p->need == FRAME_HDR_LEN && !p->open && peer_not_lharvestd(p, in))
		return;
	while (!p->dead && !p->closing && evbuffer_get_length(in) >= p->need) {
		const uint8_t *buf = evbuffer_pullup(in, (ev_ssize_t)p->need);
		int n;

		if (buf == NULL) {
			receiver_peer_drop(p, "out of memory");
			return;
		}
		lh_err_clear(&err);
		need = FRAME_HDR_LEN;
		n = session_input(&p->s, buf, p->need, &f, &need, &err);
		if (n < 0) {
			receiver_peer_drop(p,
			    err.reason[0] != '\0' ? err.reason :
			                            "protocol violation");
			return;
		}
		if (n == 0) {
			/* The header is valid: now wait for the whole frame. */
			if (need <= p->need || need > p->r->conf.max_frame) {
				receiver_peer_drop(p, "bad frame length");
				return;
			}
			p->need = need;
			continue;
		}
		peer_frame(p, &f);
		if (p->dead || p->closing)
			return;
		(void)evbuffer_drain(in, (size_t)n);
		p->need = FRAME_HDR_LEN;
	}
	/* Wake up only once the next header or frame is complete (any byte
	 * before the HELLO, to see its magic); never buffer more than one
	 * max frame. */
	if (!p->dead && !p->closing)
		bufferevent_setwatermark(bev, EV_READ, p->open ? p->need : 1,
		    p->r->conf.max_frame);
}

static void
peer_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct receiver_peer *p = arg;
	struct receiver *r = p->r;
	size_t buffered = evbuffer_get_length(bufferevent_get_input(bev));
	char why[128];

	const char *how = "closed";
	int e = EVUTIL_SOCKET_ERROR();

	if (what & BEV_EVENT_TIMEOUT) {
		(void)snprintf(why, sizeof(why), "%s for %u s",
		    what & BEV_EVENT_READING ? "nothing received" :
		                               "not reading what it is sent",
		    r->conf.read_timeout);
		receiver_peer_drop(p, why);
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		/* A peer closing with our bytes unread resets instead of
		 * closing: the same event for the log. */
		if (e != ECONNRESET) {
			(void)snprintf(why, sizeof(why), "connection error: %s",
			    evutil_socket_error_to_string(e));
			receiver_peer_drop(p, why);
			return;
		}
		how = "reset";
	}
	if (buffered > 0) {
		(void)snprintf(why, sizeof(why),
		    "connection %s mid-frame (%zu of %zu bytes)", how, buffered,
		    p->need);
		receiver_peer_drop(p, why);
	} else if (!p->open) {
		(void)snprintf(why, sizeof(why), "connection %s before HELLO",
		    how);
		receiver_peer_drop(p, why);
	} else {
		log_warnx("peer %s %s: connection %s without BYE", p->name,
		    p->addr, how);
		peer_finish(p, "connection closed without BYE");
	}
}

static void
peer_hs_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct receiver_peer *p = arg;
	char why[64];

	(void)fd;
	(void)what;
	(void)snprintf(why, sizeof(why), "no HELLO within %u s",
	    p->r->conf.handshake_timeout);
	receiver_peer_drop(p, why);
}

static int
peer_challenge(struct receiver_peer *p)
{
	struct receiver *r = p->r;
	struct msg_challenge c;
	struct wbuf w;
	int rc;

	memset(&c, 0, sizeof(c));
	rc = lh_random(c.nonce, sizeof(c.nonce));
	if (rc < 0)
		return rc;
	c.time_ns = clock_realtime_ns();
	/* Every receiver decodes the metadata-op section: the aggregator sums
	 * it whether or not it emits per-op metrics (a reload may turn them
	 * on), lharvest-dump prints it. */
	c.caps = MSG_CAP_SWEEP | MSG_CAP_MDOPS;
	c.role = r->conf.role;
	(void)snprintf(c.name, sizeof(c.name), "%s", r->name);
	wbuf_init(&w, r->conf.max_frame);
	rc = session_challenge(&p->s, &c, &w);
	if (rc == 0)
		rc = bufferevent_write(p->bev, w.data, w.len) < 0 ? -ENOMEM : 0;
	wbuf_free(&w);
	lh_cleanse(&c, sizeof(c));
	return rc;
}

static void
accept_cb(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct receiver *r = arg;
	struct receiver_peer *p;
	struct timeval hs = {r->conf.handshake_timeout, 0};
	char addr[RECEIVER_ADDR_MAX];

	(void)lev;
	addr_format(sa, (socklen_t)salen, addr, sizeof(addr));
	if (r->nlive >= r->conf.max_conns) {
		log_warnx("peer ? %s: %zu connections already open, dropping "
		          "connection",
		    addr, r->nlive);
		evutil_closesocket(fd);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		log_warn("peer ? %s: dropping connection", addr);
		evutil_closesocket(fd);
		return;
	}
	p->r = r;
	p->id = ++r->next_id;
	p->need = FRAME_HDR_LEN;
	(void)snprintf(p->name, sizeof(p->name), "?");
	(void)snprintf(p->addr, sizeof(p->addr), "%s", addr);
	if (session_init(&p->s, SESSION_LISTENER, r->conf.keys, r->hmac,
	        r->name, r->conf.max_frame) < 0)
		goto out_fail;
	p->bev = bufferevent_socket_new(r->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (p->bev == NULL)
		goto out_fail;
	fd = -1; /* the bufferevent owns it now */
	p->hs_timer = evtimer_new(r->base, peer_hs_timeout_cb, p);
	if (p->hs_timer == NULL)
		goto out_fail;
	bufferevent_setcb(p->bev, peer_read_cb, NULL, peer_event_cb, p);
	bufferevent_setwatermark(p->bev, EV_READ, 1, r->conf.max_frame);
	if (peer_challenge(p) < 0 || evtimer_add(p->hs_timer, &hs) < 0 ||
	    bufferevent_enable(p->bev, EV_READ | EV_WRITE) < 0)
		goto out_fail;
	TAILQ_INSERT_TAIL(&r->live, p, entry);
	r->nlive++;
	log_debug("peer ? %s: connected", p->addr);
	return;

out_fail:
	log_warnx("peer ? %s: cannot set up the connection, dropping "
	          "connection",
	    addr);
	if (fd >= 0)
		evutil_closesocket(fd);
	peer_free(p);
}

static void
pause_cb(evutil_socket_t fd, short what, void *arg)
{
	struct receiver *r = arg;

	(void)fd;
	(void)what;
	(void)evconnlistener_enable(r->lev);
}

static void
accept_error_cb(struct evconnlistener *lev, void *arg)
{
	struct receiver *r = arg;
	struct timeval tv = {RECEIVER_ACCEPT_PAUSE, 0};

	/* EMFILE and friends: do not spin, try again in a second. */
	log_warn("listener %s: accept", r->addr);
	(void)evconnlistener_disable(lev);
	(void)evtimer_add(r->pause_ev, &tv);
}

/* "host:port" or "[v6]:port", numeric only (port 0: any free port). */
static int
parse_bind(const char *bind, struct sockaddr_storage *ss, socklen_t *ret_len)
{
	struct addrinfo hints, *res = NULL;
	const char *colon = strrchr(bind, ':');
	char host[NI_MAXHOST];
	size_t hl;

	if (colon == NULL || colon[1] == '\0')
		return -EINVAL;
	hl = (size_t)(colon - bind);
	if (hl >= 2 && bind[0] == '[' && bind[hl - 1] == ']') {
		bind++;
		hl -= 2;
	} else if (memchr(bind, ':', hl) != NULL) {
		return -EINVAL; /* IPv6 needs its brackets */
	}
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, bind, hl);
	host[hl] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || res == NULL)
		return -EINVAL;
	if (res->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(res);
		return -EINVAL;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*ret_len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static int
receiver_listen(struct receiver *r)
{
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss), blen = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	if (parse_bind(r->conf.bind, &ss, &sslen) < 0) {
		log_warnx("listen %s: not a numeric address:port "
		          "(\"127.0.0.1:8022\", \"[::1]:8022\")",
		    r->conf.bind);
		return -EINVAL;
	}
	r->lev = evconnlistener_new_bind(r->base, accept_cb, r,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
	    -1, (struct sockaddr *)&ss, (int)sslen);
	if (r->lev == NULL) {
		int e = errno;

		log_warn("listen %s", r->conf.bind);
		return e != 0 ? -e : -EADDRNOTAVAIL;
	}
	evconnlistener_set_error_cb(r->lev, accept_error_cb);
	if (getsockname(evconnlistener_get_fd(r->lev), (struct sockaddr *)&ss,
	        &blen) == 0)
		addr_format((struct sockaddr *)&ss, blen, r->addr,
		    sizeof(r->addr));
	else
		(void)snprintf(r->addr, sizeof(r->addr), "%s", r->conf.bind);
	return 0;
}

int
receiver_new(struct event_base *base, const struct receiver_conf *conf,
    struct receiver **ret)
{
	struct receiver *r;
	int rc = -ENOMEM;

	if (conf->max_frame != 0 &&
	    (conf->max_frame < FRAME_MIN_MAX ||
	        conf->max_frame > (size_t)FRAME_MAX_LIMIT)) {
		log_warnx("max frame %zu: not between %zu and %zu",
		    conf->max_frame, FRAME_MIN_MAX, FRAME_MAX_LIMIT);
		return -EINVAL;
	}
	if (conf->keys == NULL || conf->keys->n == 0) {
		log_warnx("listen %s: no key", conf->bind);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		log_warn("listen %s", conf->bind);
		return -ENOMEM;
	}
	r->base = base;
	r->conf = *conf;
	if (r->conf.max_frame == 0)
		r->conf.max_frame = (size_t)FRAME_MAX_DEFAULT;
	if (r->conf.handshake_timeout == 0)
		r->conf.handshake_timeout = RECEIVER_HANDSHAKE_TIMEOUT;
	if (r->conf.read_timeout == 0)
		r->conf.read_timeout = RECEIVER_READ_TIMEOUT;
	if (r->conf.max_conns == 0)
		r->conf.max_conns = RECEIVER_MAX_CONNS;
	(void)snprintf(r->name, sizeof(r->name), "%s",
	    conf->name != NULL ? conf->name : "");
	r->conf.name = r->name;
	TAILQ_INIT(&r->live);
	TAILQ_INIT(&r->dead);
	r->hmac = hmac_new();
	r->reap_ev = event_new(base, -1, 0, reap_cb, r);
	r->pause_ev = evtimer_new(base, pause_cb, r);
	if (r->hmac == NULL || r->reap_ev == NULL || r->pause_ev == NULL) {
		log_warnx("listen %s: out of memory", conf->bind);
		goto out_free;
	}
	rc = receiver_listen(r);
	if (rc < 0)
		goto out_free;
	*ret = r;
	return 0;

out_free:
	receiver_free(r);
	return rc;
}

void
receiver_free(struct receiver *r)
{
	struct receiver_peer *p;

	if (r == NULL)
		return;
	if (r->lev != NULL)
		evconnlistener_free(r->lev);
	while ((p = TAILQ_FIRST(&r->live)) != NULL)
		peer_finish(p, "shutting down");
	while ((p = TAILQ_FIRST(&r->dead)) != NULL) {
		TAILQ_REMOVE(&r->dead, p, entry);
		peer_free(p);
	}
	if (r->reap_ev != NULL)
		event_free(r->reap_ev);
	if (r->pause_ev != NULL)
		event_free(r->pause_ev);
	hmac_free(r->hmac);
	free(r);
}

const char *
receiver_addr(const struct receiver *r)
{
	return r->addr;
}

size_t
receiver_npeers(const struct receiver *r)
{
	return r->nlive;
}

struct receiver_peer *
receiver_peer_find(struct receiver *r, uint64_t id)
{
	struct receiver_peer *p;

	TAILQ_FOREACH(p, &r->live, entry) {
		/* cppcheck does not see sys/queue.h: p is the loop cursor. */
		/* cppcheck-suppress uninitvar */
		if (p->id == id)
			return p->closing ? NULL : p;
	}
	return NULL;
}

uint64_t
receiver_peer_id(const struct receiver_peer *p)
{
	return p->id;
}

const char *
receiver_peer_name(const struct receiver_peer *p)
{
	return p->name;
}

const char *
receiver_peer_addr(const struct receiver_peer *p)
{
	return p->addr;
}

const struct msg_hello *
receiver_peer_hello(const struct receiver_peer *p)
{
	return p->open ? p->s.hello : NULL;
}

void
receiver_peer_set_data(struct receiver_peer *p, void *data)
{
	p->data = data;
}

void *
receiver_peer_data(const struct receiver_peer *p)
{
	return p->data;
}
