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

#include "cidr.h"
#include "clock.h"
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

#define RECEIVER_ADDR_MAX      (NI_MAXHOST + NI_MAXSERV + 4)
#define RECEIVER_FLUSH_TIMEOUT 5 /* seconds to flush a goodbye */
#define RECEIVER_ACCEPT_PAUSE  1 /* seconds without accept after EMFILE */
/* The most a peer may have buffered before its HELLO verified: a whole
 * frame of the largest legal HELLO (finding 1 of issue 15). */
#define RECEIVER_PREAUTH_MAX   (FRAME_OVERHEAD + (size_t)MSG_HELLO_MAX)

/* What a line about a stranger's connection is counted under: one line
 * of each kind a period (ratelog.h). */
enum receiver_rl {
	RL_ALLOW,   /* address outside the allow list */
	RL_SOURCE,  /* max_per_source of its address past their HELLO */
	RL_FULL,    /* max_connections past their HELLO */
	RL_EVICT,   /* oldest without a HELLO, dropped for a newer one */
	RL_MAGIC,   /* not the lharvestd protocol */
	RL_TIMEOUT, /* no HELLO in time */
	RL_CLOSED,  /* closed before its HELLO */
	RL_KEY,     /* a HELLO signed with a key we do not have */
	RL_HELLO,   /* any other fault before the HELLO verified */
	RL_N,
};

struct receiver_peer {
	TAILQ_ENTRY(receiver_peer) entry;
	struct receiver *r;
	uint64_t id;
	struct bufferevent *bev;
	/* Before the HELLO: the handshake deadline, from accept.  After: the
	 * frame deadline, from the first byte of a frame (a byte a second
	 * must not keep a frame open for ever, finding 15). */
	struct event *hs_timer;
	struct session s;
	struct connlimit_src src;
	uint64_t last_frame_ns; /* monotonic: the last verified frame */
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
	struct receiver_peers live; /* oldest first */
	struct receiver_peers dead;
	size_t nlive;
	size_t nunauth; /* live peers whose HELLO the role did not accept */
	uint64_t next_id;
	struct cidr *allow; /* conf.allow, copied */
	struct connlimit_bucket bucket;
	struct event *rl_ev; /* logs what ratelog counted */
	struct ratelog rl[RL_N];
};

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

static void
rl_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct receiver *r = arg;

	(void)fd;
	(void)what;
	rl_flush(r, false);
	rl_schedule(r);
}

/* Whether a line of this kind is logged now (else it is counted). */
static bool
rl_take(struct receiver *r, enum receiver_rl k)
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
	if (!p->open)
		r->nunauth--;
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

/* Drop with one line; a peer that has not shown it holds a key gets one
 * line of each kind a period, not one each. */
static void
peer_drop_as(struct receiver_peer *p, enum receiver_rl k, const char *reason)
{
	if (p->dead)
		return;
	if (p->open || rl_take(p->r, k))
		log_warnx("peer %s %s: %s, dropping connection", p->name,
		    p->addr, reason);
	peer_finish(p, reason);
}

void
receiver_peer_drop(struct receiver_peer *p, const char *reason)
{
	peer_drop_as(p, RL_HELLO, reason);
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
	(void)evtimer_del(p->hs_timer); /* no frame is read any more */
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

/* The open peer, other than p, that carries this name. */
static struct receiver_peer *
peer_named(struct receiver_peer *p, const char *name)
{
	struct receiver_peer *q;

	TAILQ_FOREACH(q, &p->r->live, entry) {
		/* cppcheck does not see sys/queue.h: q is the loop cursor. */
		/* cppcheck-suppress uninitvar */
		if (q != p && q->open && !q->closing &&
		    strcmp(q->s.hello->name, name) == 0)
			return q;
	}
	return NULL;
}

/*
 * A HELLO under a name already open (finding 2): refused while the older
 * connection carried a frame within the last interval (two live senders
 * of one name would each be acked the other's batches as duplicates);
 * otherwise the older one is presumed dead (a gatherer back from a
 * network cut) and closed, so the newer need not wait for read_timeout.
 * Returns false when p was refused.
 */
static bool
peer_take_name(struct receiver_peer *p, const struct msg_hello *h)
{
	struct receiver *r = p->r;
	struct receiver_peer *q = peer_named(p, h->name);
	uint64_t ivl = (uint64_t)r->conf.interval * CLOCK_NS_PER_S;
	uint64_t quiet;
	char why[RECEIVER_ADDR_MAX + 96];

	if (q == NULL)
		return true;
	quiet = clock_monotonic_ns() - q->last_frame_ns;
	if (quiet < ivl) {
		(void)snprintf(why, sizeof(why),
		    "refused: name already connected from %s, which carried a "
		    "frame %.1f s ago",
		    q->addr, (double)quiet / 1e9);
		log_warnx("peer %s %s: %s, dropping connection", p->name,
		    p->addr, why);
		peer_bye(p, 2, why);
		if (!p->dead)
			peer_close_flushed(p);
		return false;
	}
	(void)snprintf(why, sizeof(why),
	    "no frame for %.1f s, replaced by a new connection from %s",
	    (double)quiet / 1e9, p->addr);
	receiver_peer_drop(q, why);
	return true;
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

	if (!peer_take_name(p, h))
		return;
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
	r->nunauth--;
	p->last_frame_ns = clock_monotonic_ns();
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
	p->last_frame_ns = clock_monotonic_ns();
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
	peer_drop_as(p, RL_MAGIC, why);
	return true;
}

/* A header announcing more than any HELLO before the peer has shown it
 * holds a key: dropped before a byte of its payload is buffered. */
static void
peer_drop_preauth_big(struct receiver_peer *p, size_t need)
{
	char why[128];

	(void)snprintf(why, sizeof(why),
	    "a %zu-byte frame before the handshake, above the largest "
	    "HELLO (%zu bytes)",
	    need, RECEIVER_PREAUTH_MAX);
	receiver_peer_drop(p, why);
}

/*
 * Between reads.  Before the HELLO: wake on any byte (to see its magic),
 * buffer no more than the largest HELLO.  After: with nothing buffered,
 * wake on the first byte of the next frame; once a frame has begun, start
 * its deadline and wake only when it is complete; never buffer more than
 * one max frame.
 */
static void
peer_wait_more(struct receiver_peer *p, size_t buffered, bool done)
{
	struct receiver *r = p->r;
	struct timeval tv = {r->conf.frame_timeout, 0};

	if (!p->open) {
		bufferevent_setwatermark(p->bev, EV_READ, 1,
		    RECEIVER_PREAUTH_MAX);
		return;
	}
	if (buffered == 0) {
		(void)evtimer_del(p->hs_timer);
		bufferevent_setwatermark(p->bev, EV_READ, 1, r->conf.max_frame);
		return;
	}
	if (done || !evtimer_pending(p->hs_timer, NULL))
		(void)evtimer_add(p->hs_timer, &tv);
	bufferevent_setwatermark(p->bev, EV_READ, p->need, r->conf.max_frame);
}

static void
peer_read_cb(struct bufferevent *bev, void *arg)
{
	struct receiver_peer *p = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct session_frame f;
	struct lh_err err;
	size_t need;
	bool done = false; /* a frame completed: the next one starts now */

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
			/* session.c: -EACCES is a key id not in our ring,
			 * worth its own line (a key not rolled out yet). */
			peer_drop_as(p, n == -EACCES ? RL_KEY : RL_HELLO,
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
			if (!p->open && need > RECEIVER_PREAUTH_MAX) {
				peer_drop_preauth_big(p, need);
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
		done = true;
	}
	if (!p->dead && !p->closing)
		peer_wait_more(p, evbuffer_get_length(in), done);
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
		peer_drop_as(p, RL_CLOSED, why);
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
	char why[128];

	(void)fd;
	(void)what;
	if (p->open) {
		(void)snprintf(why, sizeof(why),
		    "frame not complete %u s after its first byte (%zu of %zu "
		    "bytes)",
		    p->r->conf.frame_timeout,
		    evbuffer_get_length(bufferevent_get_input(p->bev)),
		    p->need);
		receiver_peer_drop(p, why);
		return;
	}
	(void)snprintf(why, sizeof(why), "no HELLO within %u s",
	    p->r->conf.handshake_timeout);
	peer_drop_as(p, RL_TIMEOUT, why);
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

/* The oldest live peer whose HELLO the role has not accepted, of that
 * source (NULL: any), or NULL. */
static struct receiver_peer *
peer_oldest_unauth(struct receiver *r, const struct connlimit_src *src)
{
	struct receiver_peer *p;

	TAILQ_FOREACH(p, &r->live, entry) {
		/* cppcheck-suppress uninitvar */
		if (!p->open &&
		    (src == NULL || connlimit_src_equal(&p->src, src)))
			return p;
	}
	return NULL;
}

static size_t
source_count(struct receiver *r, const struct connlimit_src *src)
{
	struct receiver_peer *p;
	size_t n = 0;

	TAILQ_FOREACH(p, &r->live, entry) {
		/* cppcheck-suppress uninitvar */
		if (connlimit_src_equal(&p->src, src))
			n++;
	}
	return n;
}

static bool
source_allowed(const struct receiver *r, const struct sockaddr *sa)
{
	if (r->conf.nallow == 0)
		return true;
	for (size_t i = 0; i < r->conf.nallow; i++) {
		if (cidr_match(&r->allow[i], sa))
			return true;
	}
	return false;
}

/* Refuse a connection at accept, with one line of each kind a period. */
static void
accept_refuse(struct receiver *r, evutil_socket_t fd, const char *addr,
    enum receiver_rl k, const char *why)
{
	if (rl_take(r, k))
		log_warnx("peer ? %s: %s, dropping connection", addr, why);
	evutil_closesocket(fd);
}

/*
 * Make room for a new connection from src, or say why there is none
 * (findings 1 and 15).  Connections that have not shown a key never lock
 * out those that have: when a cap is reached, the oldest of them goes (of
 * the same source for the per-source cap); only when every connection
 * counted is past its HELLO is the new one refused.
 */
static const char *
accept_make_room(struct receiver *r, const struct connlimit_src *src,
    enum receiver_rl *ret_k)
{
	struct receiver_peer *v;

	if (source_count(r, src) >= r->conf.max_per_source) {
		v = peer_oldest_unauth(r, src);
		if (v == NULL) {
			*ret_k = RL_SOURCE;
			return "max_per_source connections from this address "
			       "past their HELLO";
		}
		peer_drop_as(v, RL_EVICT,
		    "oldest connection without a HELLO, for a newer one "
		    "(max_per_source)");
	}
	if (r->nlive >= r->conf.max_conns || r->nunauth >= r->conf.max_unauth) {
		v = peer_oldest_unauth(r, NULL);
		if (v == NULL) {
			*ret_k = RL_FULL;
			return "max_connections open, all past their HELLO";
		}
		peer_drop_as(v, RL_EVICT,
		    "oldest connection without a HELLO, for a newer one");
	}
	return NULL;
}

/* One accept spends a token; with none left, stop accepting until the
 * next (the kernel's backlog holds the connections: delayed, never
 * refused). */
static void
accept_throttle(struct receiver *r)
{
	uint64_t now = clock_monotonic_ns(), wait;
	struct timeval tv;

	connlimit_bucket_take(&r->bucket, now);
	wait = connlimit_bucket_wait(&r->bucket, now);
	if (wait == 0)
		return;
	tv.tv_sec = (time_t)(wait / CLOCK_NS_PER_S);
	tv.tv_usec = (suseconds_t)(wait % CLOCK_NS_PER_S / 1000);
	(void)evconnlistener_disable(r->lev);
	(void)evtimer_add(r->pause_ev, &tv);
}

/* A connection admitted: its peer, its CHALLENGE and its handshake
 * deadline; the socket is closed on failure. */
static void
peer_new(struct receiver *r, evutil_socket_t fd, const char *addr,
    const struct connlimit_src *src)
{
	struct timeval hs = {r->conf.handshake_timeout, 0};
	struct receiver_peer *p = calloc(1, sizeof(*p));

	if (p == NULL) {
		log_warn("peer ? %s: dropping connection", addr);
		evutil_closesocket(fd);
		return;
	}
	p->r = r;
	p->id = ++r->next_id;
	p->src = *src;
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
	bufferevent_setwatermark(p->bev, EV_READ, 1, RECEIVER_PREAUTH_MAX);
	if (peer_challenge(p) < 0 || evtimer_add(p->hs_timer, &hs) < 0 ||
	    bufferevent_enable(p->bev, EV_READ | EV_WRITE) < 0)
		goto out_fail;
	TAILQ_INSERT_TAIL(&r->live, p, entry);
	r->nlive++;
	r->nunauth++;
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
accept_cb(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct receiver *r = arg;
	char addr[RECEIVER_ADDR_MAX];
	struct connlimit_src src;
	enum receiver_rl k = RL_FULL;
	const char *why;

	(void)lev;
	addr_format(sa, (socklen_t)salen, addr, sizeof(addr));
	if (!source_allowed(r, sa)) {
		accept_refuse(r, fd, addr, RL_ALLOW, "not in the allow list");
		return;
	}
	connlimit_src_of(sa, &src);
	why = accept_make_room(r, &src, &k);
	if (why != NULL) {
		accept_refuse(r, fd, addr, k, why);
		return;
	}
	accept_throttle(r);
	peer_new(r, fd, addr, &src);
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

/* The admission settings with their defaults, the allow list copied,
 * and max_conns within the descriptors the process may open. */
static int
receiver_admission(struct receiver *r)
{
	struct receiver_conf *c = &r->conf;
	unsigned fit;

	if (c->interval == 0)
		c->interval = RECEIVER_INTERVAL;
	if (c->frame_timeout == 0)
		c->frame_timeout = RECEIVER_FRAME_TIMEOUT;
	if (c->max_unauth == 0)
		c->max_unauth = RECEIVER_MAX_UNAUTH;
	if (c->max_per_source == 0)
		c->max_per_source = RECEIVER_MAX_PER_SOURCE;
	if (c->accept_rate == 0)
		c->accept_rate = RECEIVER_ACCEPT_RATE;
	if (c->accept_burst == 0)
		c->accept_burst = RECEIVER_ACCEPT_BURST;
	connlimit_bucket_init(&r->bucket, c->accept_rate, c->accept_burst,
	    clock_monotonic_ns());
	if (c->nallow > 0) {
		r->allow = calloc(c->nallow, sizeof(*r->allow));
		if (r->allow == NULL) {
			log_warn("listen %s", c->bind);
			return -ENOMEM;
		}
		memcpy(r->allow, c->allow, c->nallow * sizeof(*r->allow));
	}
	c->allow = r->allow;
	fit = connlimit_nofile(c->max_conns);
	if (fit < c->max_conns) {
		log_warnx("listen %s: max_connections %u lowered to %u, all "
		          "the descriptor limit (RLIMIT_NOFILE) leaves room "
		          "for: raise LimitNOFILE",
		    c->bind, c->max_conns, fit);
		c->max_conns = fit;
	}
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
	if (receiver_admission(r) < 0)
		goto out_free;
	(void)snprintf(r->name, sizeof(r->name), "%s",
	    conf->name != NULL ? conf->name : "");
	r->conf.name = r->name;
	TAILQ_INIT(&r->live);
	TAILQ_INIT(&r->dead);
	r->hmac = hmac_new();
	r->reap_ev = event_new(base, -1, 0, reap_cb, r);
	r->pause_ev = evtimer_new(base, pause_cb, r);
	r->rl_ev = evtimer_new(base, rl_flush_cb, r);
	if (r->hmac == NULL || r->reap_ev == NULL || r->pause_ev == NULL ||
	    r->rl_ev == NULL) {
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
	rl_flush(r, true);
	while ((p = TAILQ_FIRST(&r->dead)) != NULL) {
		TAILQ_REMOVE(&r->dead, p, entry);
		peer_free(p);
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
