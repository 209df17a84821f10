/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inbound connections, the receiver's own part: the rate-limited lines
 * about strangers, a peer's way out (drop, close after a goodbye, free
 * from the loop), sending to a peer, and the accessors.  Accepting is in
 * receiver_listen.c, reading and the handshake in receiver_peer.c.
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

#include "cidr.h"
#include "clock.h"
#include "config.h"
#include "connlimit.h"
#include "err.h"
#include "frame.h"
#include "hmac.h"
#include "keyfile.h"
#include "log.h"
#include "msg.h"
#include "ratelog.h"
#include "receiver.h"
#include "session.h"
#include "wire.h"
#include "receiver_int.h"

static const char *const rl_what[RL_N] = {
    [RL_ALLOW] = "refused: not in the allow list",
    [RL_SOURCE] = "refused: max_per_source from their address",
    [RL_FULL] = "refused: max_connections open",
    [RL_EVICT] = "dropped before their HELLO for newer connections",
    [RL_MAGIC] = "dropped: not the lharvestd protocol",
    [RL_TIMEOUT] = "dropped: no HELLO in time",
    [RL_CLOSED] = "closed before their HELLO",
    [RL_KEY] = "dropped: HELLO signed with an unknown key",
    [RL_HELLO] = "dropped before their HELLO verified",
};

static void
rl_schedule(struct receiver *r)
{
	uint64_t due = 0, now = clock_monotonic_ns();
	struct timeval tv;

	for (int k = 0; k < RL_N; k++) {
		uint64_t d = ratelog_due(&r->rl[k]);

		if (d != 0 && (due == 0 || d < due))
			due = d;
	}
	if (due == 0)
		return;
	/* A microsecond late rather than early: flush finds it due. */
	due = (due > now ? due - now : 0) + 1000;
	tv.tv_sec = (time_t)(due / CLOCK_NS_PER_S);
	tv.tv_usec = (suseconds_t)(due % CLOCK_NS_PER_S / 1000);
	(void)evtimer_add(r->rl_ev, &tv);
}

/* Log what ratelog counted, once its period is over; closing: now, so
 * that nothing counted is lost with the receiver. */
static void
rl_flush(struct receiver *r, bool closing)
{
	const uint64_t period = RECEIVER_LOG_PERIOD * CLOCK_NS_PER_S;
	uint64_t now = clock_monotonic_ns();

	for (int k = 0; k < RL_N; k++) {
		struct ratelog *rl = &r->rl[k];
		uint64_t since = rl->until_ns - period;
		uint64_t at =
		    closing && now < rl->until_ns ? rl->until_ns : now;
		uint64_t n = ratelog_flush(rl, at, period);
		uint64_t secs =
		    (now - since + CLOCK_NS_PER_S / 2) / CLOCK_NS_PER_S;

		if (n > 0)
			log_warnx("listener %s: %llu more connections %s in "
			          "the last %llu s",
			    r->addr, (unsigned long long)n, rl_what[k],
			    (unsigned long long)(secs > 0 ? secs : 1));
	}
}

void
receiver_rl_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct receiver *r = arg;

	(void)fd;
	(void)what;
	rl_flush(r, false);
	rl_schedule(r);
}

/* Whether a line of this kind is logged now (else it is counted). */
bool
receiver_rl_take(struct receiver *r, enum receiver_rl k)
{
	if (r->conf.log_all)
		return true;
	if (ratelog_take(&r->rl[k], clock_monotonic_ns(),
	        RECEIVER_LOG_PERIOD * CLOCK_NS_PER_S))
		return true;
	if (r->rl[k].suppressed == 1)
		rl_schedule(r);
	return false;
}

void
receiver_addr_format(const struct sockaddr *sa, socklen_t salen, char *buf,
    size_t size)
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
void
receiver_peer_finish(struct receiver_peer *p, const char *reason)
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
	if (!p->open)
		r->nunauth--;
	TAILQ_INSERT_TAIL(&r->dead, p, entry);
	event_active(r->reap_ev, EV_TIMEOUT, 0);
}

void
receiver_peer_free(struct receiver_peer *p)
{
	if (p->bev != NULL)
		bufferevent_free(p->bev);
	if (p->hs_timer != NULL)
		event_free(p->hs_timer);
	session_clear(&p->s);
	free(p);
}

void
receiver_reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct receiver *r = arg;
	struct receiver_peer *p;

	(void)fd;
	(void)what;
	while ((p = TAILQ_FIRST(&r->dead)) != NULL) {
		TAILQ_REMOVE(&r->dead, p, entry);
		receiver_peer_free(p);
	}
}

/* Drop with one line; a peer that has not shown it holds a key gets one
 * line of each kind a period, not one each. */
void
receiver_peer_drop_as(struct receiver_peer *p, enum receiver_rl k,
    const char *reason)
{
	if (p->dead)
		return;
	if (p->open || receiver_rl_take(p->r, k))
		log_warnx("peer %s %s: %s, dropping connection", p->name,
		    p->addr, reason);
	receiver_peer_finish(p, reason);
}

void
receiver_peer_drop(struct receiver_peer *p, const char *reason)
{
	receiver_peer_drop_as(p, RL_HELLO, reason);
}

static void
flush_write_cb(struct bufferevent *bev, void *arg)
{
	struct receiver_peer *p = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		receiver_peer_finish(p, "closed");
}

static void
flush_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct receiver_peer *p = arg;

	(void)bev;
	(void)what;
	receiver_peer_finish(p, "closed");
}

/* Read nothing more; close once what was queued has been written. */
void
receiver_peer_close_flushed(struct receiver_peer *p)
{
	struct timeval tv = {RECEIVER_FLUSH_TIMEOUT, 0};

	p->closing = true;
	(void)evtimer_del(p->hs_timer); /* no frame is read any more */
	(void)bufferevent_disable(p->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(p->bev)) == 0) {
		receiver_peer_finish(p, "closed");
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
void
receiver_peer_bye(struct receiver_peer *p, uint8_t reason, const char *text)
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

/* The open peer, other than p, that carries this name. */

void
receiver_free(struct receiver *r)
{
	struct receiver_peer *p;

	if (r == NULL)
		return;
	if (r->lev != NULL)
		evconnlistener_free(r->lev);
	while ((p = TAILQ_FIRST(&r->live)) != NULL)
		receiver_peer_finish(p, "shutting down");
	rl_flush(r, true);
	while ((p = TAILQ_FIRST(&r->dead)) != NULL) {
		TAILQ_REMOVE(&r->dead, p, entry);
		receiver_peer_free(p);
	}
	if (r->reap_ev != NULL)
		event_free(r->reap_ev);
	if (r->pause_ev != NULL)
		event_free(r->pause_ev);
	if (r->rl_ev != NULL)
		event_free(r->rl_ev);
	hmac_free(r->hmac);
	free(r->allow);
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

int
receiver_peer_sockaddr(const struct receiver_peer *p,
    struct sockaddr_storage *ret)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getpeername(bufferevent_getfd(p->bev), (struct sockaddr *)&ss,
	        &len) < 0)
		return -errno;
	*ret = ss;
	return 0;
}

bool
receiver_listen_same(const struct lh_config *a, const struct lh_config *b,
    const char *bound)
{
	struct lh_config as_bound;
	char want[300];

	if (config_section_equal(a, b, "listen"))
		return true;
	if (a->listen_port != 0 || b->listen_port == 0 || bound == NULL)
		return false;
	/* a as bound, if the kernel gave it b's port */
	as_bound = *a;
	as_bound.listen_port = b->listen_port;
	if (!config_section_equal(&as_bound, b, "listen"))
		return false;
	(void)snprintf(want, sizeof(want),
	    strchr(b->listen_host, ':') != NULL ? "[%s]:%u" : "%s:%u",
	    b->listen_host, b->listen_port);
	return strcmp(bound, want) == 0;
}

bool
receiver_conf_equal(const struct lh_config *a, const struct lh_config *b,
    const char *bound)
{
	return receiver_listen_same(a, b, bound) &&
	    config_section_equal(a, b, "listener");
}
