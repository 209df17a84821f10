/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inbound connections, one peer: its CHALLENGE, reading frames through
 * the session state machine with the length checked before any payload
 * is buffered, the HELLO and its name, and verified frames handed to the
 * role; any fault drops the peer with exactly one log line.
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
#include "receiver_int.h"

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
		receiver_peer_bye(p, 2, why);
		if (!p->dead)
			receiver_peer_close_flushed(p);
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
		receiver_peer_bye(p, 2, why);
		if (!p->dead)
			receiver_peer_close_flushed(p);
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
	receiver_peer_close_flushed(p);
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
	receiver_peer_drop_as(p, RL_MAGIC, why);
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
			receiver_peer_drop_as(p,
			    n == -EACCES ? RL_KEY : RL_HELLO,
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
		receiver_peer_drop_as(p, RL_CLOSED, why);
	} else {
		log_warnx("peer %s %s: connection %s without BYE", p->name,
		    p->addr, how);
		receiver_peer_finish(p, "connection closed without BYE");
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
	receiver_peer_drop_as(p, RL_TIMEOUT, why);
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

/* A connection admitted: its peer, its CHALLENGE and its handshake
 * deadline; the socket is closed on failure. */
void
receiver_peer_new(struct receiver *r, evutil_socket_t fd, const char *addr,
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
	receiver_peer_free(p);
}
