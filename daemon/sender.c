/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Outbound connection: connect, CHALLENGE/HELLO/ACK, then deliver the
 * outbox one batch at a time; reconnect with backoff on any failure.
 */
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>

#include "clock.h"
#include "config.h"
#include "err.h"
#include "frame.h"
#include "hmac.h"
#include "keyfile.h"
#include "log.h"
#include "msg.h"
#include "outbox.h"
#include "ratelog.h"
#include "sender.h"
#include "session.h"
#include "wire.h"

enum sender_state {
	SENDER_WAITING,    /* backoff timer running */
	SENDER_CONNECTING, /* TCP connect in progress */
	SENDER_HANDSHAKE,  /* connected, CHALLENGE/HELLO/ACK */
	SENDER_OPEN,       /* delivering */
};

struct sender {
	struct sender_conf conf;
	char *host;
	/* Copies: the configuration they came from may be reloaded. */
	char name[MSG_NAME_MAX];
	char what[96]; /* in log lines: "aggregator", "route alpha" */
	struct event_base *base;
	struct evdns_base *dns;
	struct hmac_ctx *hmac;
	struct bufferevent *bev;
	struct event *timer; /* backoff, handshake and ACK deadlines */
	struct session s;
	enum sender_state state;
	unsigned backoff; /* seconds before the next attempt */
	bool awaiting_ack;
	uint64_t inflight_batch;
	struct ratelog outage; /* one log line per outage */
	struct wbuf out;
	struct wbuf payload;
	struct msg_hello *hello;
};

static void sender_connect(struct sender *s);

static void
set_timer(struct sender *s, unsigned seconds)
{
	struct timeval tv = {(time_t)seconds, 0};

	(void)evtimer_add(s->timer, &tv);
}

static void
close_conn(struct sender *s)
{
	if (s->bev != NULL) {
		bufferevent_free(s->bev);
		s->bev = NULL;
	}
	session_clear(&s->s);
	s->awaiting_ack = false;
}

/* Drop the connection and try again later; reason is logged once per
 * outage, the retries after it at debug level. */
static void
fail(struct sender *s, const char *reason)
{
	unsigned jittered;
	uint32_t r = 0;

	if (ratelog_fail(&s->outage))
		log_warnx("%s %s:%u: %s, retrying", s->what, s->host,
		    s->conf.port, reason);
	else
		log_debug("%s %s:%u: %s", s->what, s->host, s->conf.port,
		    reason);
	close_conn(s);
	s->state = SENDER_WAITING;
	/* Jitter: 50-150% of the backoff, so that hundreds of gatherers
	 * cut off together do not come back in step. */
	(void)lh_random(&r, sizeof(r));
	jittered = s->backoff / 2 + (unsigned)(r % (s->backoff + 1));
	set_timer(s, jittered > 0 ? jittered : 1);
	if (s->backoff < SENDER_BACKOFF_MAX)
		s->backoff = s->backoff * 2 > SENDER_BACKOFF_MAX ?
		    SENDER_BACKOFF_MAX :
		    s->backoff * 2;
}

/* What a buffer may keep between two frames.  A gatherer sends one large
 * batch a sweep: kept, its payload and its frame were two more copies of
 * it resident between sweeps, and at the next send's peak
 * (docs/performance.md, issue 19). */
#define SENDER_KEEP_BYTES ((size_t)64 * 1024)

static void
buf_done(struct wbuf *w)
{
	if (w->cap > SENDER_KEEP_BYTES)
		wbuf_free(w);
	else
		wbuf_reset(w);
}

/* libevent's cleanup: the frame comes again as arg, not const. */
static void
frame_release(const void *data, size_t len, void *arg)
{
	(void)data;
	(void)len;
	free(arg);
}

/* A large frame is handed to libevent as it is, freed once written: a
 * copy is one more buffer of the SWEEP's size (0.5 MB for 10,000 busy
 * clients) and a memcpy of it. */
static int
flush_large(struct sender *s)
{
	struct evbuffer *o = bufferevent_get_output(s->bev);

	if (evbuffer_add_reference(o, s->out.data, s->out.len, frame_release,
	        s->out.data) < 0) {
		wbuf_free(&s->out);
		return -EIO;
	}
	wbuf_init(&s->out, 0); /* libevent's now */
	return 0;
}

static int
flush_out(struct sender *s)
{
	int rc = wbuf_status(&s->out);

	if (rc == 0 && s->out.len > SENDER_KEEP_BYTES)
		return flush_large(s);
	if (rc == 0 && bufferevent_write(s->bev, s->out.data, s->out.len) < 0)
		rc = -EIO;
	buf_done(&s->out);
	return rc;
}

/* Send the batch in flight (again), or the next pending one. */
static void
send_next(struct sender *s)
{
	static const uint8_t hdr_room[FRAME_HDR_LEN];
	uint64_t batch, sweep;
	size_t len;
	int rc;

	if (s->state != SENDER_OPEN || s->awaiting_ack ||
	    !outbox_ready(s->conf.outbox))
		return;
	/* Encoded straight into the frame, after room for its header: no
	 * separate payload buffer to copy from. */
	wbuf_reset(&s->out);
	(void)wbuf_put(&s->out, hdr_room, sizeof(hdr_room));
	/* The op section only to a receiver that said it reads it; an older
	 * one gets the same batch without it. */
	rc = outbox_next(s->conf.outbox, &s->out,
	    (s->s.challenge.caps & MSG_CAP_MDOPS) != 0, &batch, &sweep);
	if (rc < 0) {
		buf_done(&s->out);
		log_warnx("%s %s:%u: cannot encode batch: %s", s->what, s->host,
		    s->conf.port, strerror(-rc));
		return;
	}
	len = s->out.len - FRAME_HDR_LEN;
	rc = session_seal(&s->s, FRAME_SWEEP, 0, sweep, &s->out);
	if (rc < 0)
		buf_done(&s->out);
	else
		rc = flush_out(s);
	if (rc < 0) {
		fail(s,
		    rc == -EMSGSIZE ? "batch larger than max_frame" :
		                      "write failed");
		return;
	}
	s->awaiting_ack = true;
	s->inflight_batch = batch;
	log_debug("%s %s:%u: sent batch %llu (%zu bytes)", s->what, s->host,
	    s->conf.port, (unsigned long long)batch, len);
	set_timer(s, s->conf.ack_timeout);
}

static void
send_hello(struct sender *s)
{
	uint64_t now = clock_realtime_ns();

	memset(s->hello, 0, sizeof(*s->hello));
	s->conf.fill_hello(s->conf.arg, s->hello);
	if (lh_random(s->hello->nonce, sizeof(s->hello->nonce)) < 0) {
		fail(s, "no random bytes");
		return;
	}
	s->hello->time_ns = now;
	s->hello->caps = MSG_CAP_SWEEP | MSG_CAP_MDOPS;
	(void)snprintf(s->hello->software, sizeof(s->hello->software),
	    "lharvestd %s", LH_VERSION);
	(void)snprintf(s->hello->name, sizeof(s->hello->name), "%s",
	    s->conf.name);
	if (session_hello(&s->s, s->hello, &s->out) < 0 || flush_out(s) < 0)
		fail(s, "cannot send HELLO");
}

/* A verified frame in the handshake or after it. */
static void
handle_frame(struct sender *s, const struct session_frame *f)
{
	struct msg_ack ack;
	struct msg_bye bye;
	struct lh_err err;

	switch (f->hdr.type) {
	case FRAME_CHALLENGE:
		send_hello(s);
		return;
	case FRAME_ACK:
		if (msg_ack_decode(&ack, f->payload, f->hdr.len, &err) < 0) {
			fail(s, err.reason);
			return;
		}
		if (ack.kind == MSG_ACK_HELLO) {
			/* The ACK's time, not the CHALLENGE's: only the ACK
			 * is authenticated (protocol 2). */
			int64_t skew =
			    (int64_t)(ack.time_ns - clock_realtime_ns());

			if (skew > 1000000000LL || skew < -1000000000LL)
				log_warnx("%s %s:%u: clock differs from ours "
				          "by %.1f s",
				    s->what, s->host, s->conf.port,
				    (double)skew / 1e9);
			s->state = SENDER_OPEN;
			(void)evtimer_del(s->timer);
			if (ratelog_recover(&s->outage))
				log_info("%s %s:%u: connected again", s->what,
				    s->host, s->conf.port);
			else
				log_debug("%s %s:%u: connected", s->what,
				    s->host, s->conf.port);
			s->backoff = SENDER_BACKOFF_MIN;
			send_next(s);
			return;
		}
		if (!s->awaiting_ack || ack.batch != s->inflight_batch) {
			fail(s, "ACK of a batch not sent");
			return;
		}
		(void)evtimer_del(s->timer);
		(void)outbox_acked(s->conf.outbox, ack.batch);
		s->awaiting_ack = false;
		if (s->conf.on_acked != NULL)
			s->conf.on_acked(s->conf.arg, ack.batch,
			    ack.kind == MSG_ACK_DUPLICATE);
		send_next(s);
		return;
	case FRAME_BYE:
		if (msg_bye_decode(&bye, f->payload, f->hdr.len, &err) == 0)
			log_info("%s %s:%u: said goodbye (%s)", s->what,
			    s->host, s->conf.port, bye.text);
		fail(s, "connection closed by the aggregator");
		return;
	default:
		return; /* a later, ignorable message type */
	}
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct sender *s = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	for (;;) {
		struct session_frame f;
		struct lh_err err;
		size_t len = evbuffer_get_length(in), need = FRAME_HDR_LEN;
		const uint8_t *p;
		int rc;

		if (len < FRAME_HDR_LEN)
			return;
		p = evbuffer_pullup(in, -1);
		rc = session_input(&s->s, p, len, &f, &need, &err);
		if (rc < 0) {
			fail(s, err.reason);
			return;
		}
		if (rc == 0)
			return;
		handle_frame(s, &f);
		if (s->bev != bev)
			return; /* the frame closed the connection */
		(void)evbuffer_drain(in, (size_t)rc);
	}
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct sender *s = arg;

	(void)bev;
	if ((what & BEV_EVENT_CONNECTED) != 0) {
		evutil_socket_t fd = bufferevent_getfd(s->bev);
		int one = 1;

		/* Between sweeps the line is quiet: let TCP notice a peer
		 * that vanished. */
		(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one,
		    sizeof(one));
		s->state = SENDER_HANDSHAKE;
		set_timer(s, s->conf.handshake_timeout);
		return;
	}
	if ((what & BEV_EVENT_EOF) != 0) {
		fail(s, "connection closed by the aggregator");
		return;
	}
	if ((what & BEV_EVENT_ERROR) != 0) {
		int dns = bufferevent_socket_get_dns_error(s->bev);
		char reason[160];

		if (dns != 0)
			(void)snprintf(reason, sizeof(reason),
			    "cannot resolve: %s", evutil_gai_strerror(dns));
		else
			(void)snprintf(reason, sizeof(reason), "%s",
			    evutil_socket_error_to_string(
			        EVUTIL_SOCKET_ERROR()));
		fail(s, reason);
	}
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sender *s = arg;

	(void)fd;
	(void)what;
	switch (s->state) {
	case SENDER_WAITING:
		sender_connect(s);
		break;
	case SENDER_CONNECTING:
	case SENDER_HANDSHAKE:
		fail(s, "no handshake within the timeout");
		break;
	case SENDER_OPEN:
		if (s->awaiting_ack)
			fail(s, "no ACK within the timeout");
		break;
	}
}

static void
sender_connect(struct sender *s)
{
	s->bev = bufferevent_socket_new(s->base, -1,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (s->bev == NULL) {
		fail(s, "out of memory");
		return;
	}
	if (session_init(&s->s, SESSION_CONNECTOR, s->conf.keys, s->hmac,
	        s->conf.name, s->conf.max_frame) < 0) {
		fail(s, "bad key ring");
		return;
	}
	bufferevent_setcb(s->bev, read_cb, NULL, event_cb, s);
	/* Never buffer more than one frame of input. */
	bufferevent_setwatermark(s->bev, EV_READ, 0, s->s.max_frame);
	(void)bufferevent_enable(s->bev, EV_READ | EV_WRITE);
	s->state = SENDER_CONNECTING;
	set_timer(s, s->conf.handshake_timeout);
	if (bufferevent_socket_connect_hostname(s->bev, s->dns, AF_UNSPEC,
	        s->host, (int)s->conf.port) < 0)
		fail(s, "cannot connect");
}

int
sender_new(struct event_base *base, const struct sender_conf *conf,
    struct sender **ret)
{
	struct sender *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	s->conf = *conf;
	if (s->conf.handshake_timeout == 0)
		s->conf.handshake_timeout = 10;
	if (s->conf.ack_timeout == 0)
		s->conf.ack_timeout = 120;
	s->base = base;
	s->backoff = SENDER_BACKOFF_MIN;
	s->host = strdup(conf->host);
	(void)snprintf(s->name, sizeof(s->name), "%s", conf->name);
	s->conf.name = s->name;
	(void)snprintf(s->what, sizeof(s->what), "%s",
	    conf->label != NULL ? conf->label : "aggregator");
	s->conf.label = s->what;
	s->hmac = hmac_new();
	s->hello = calloc(1, sizeof(*s->hello));
	s->timer = evtimer_new(base, timer_cb, s);
	s->dns = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
	wbuf_init(&s->out, 0);
	wbuf_init(&s->payload, 0);
	if (s->host == NULL || s->hmac == NULL || s->hello == NULL ||
	    s->timer == NULL) {
		log_warnx("%s %s:%u: out of memory", s->what, conf->host,
		    conf->port);
		sender_free(s);
		return -ENOMEM;
	}
	if (s->dns == NULL)
		log_warnx("no DNS resolver configured: give the aggregator "
		          "as an address");
	s->state = SENDER_WAITING;
	sender_connect(s);
	*ret = s;
	return 0;
}

void
sender_free(struct sender *s)
{
	if (s == NULL)
		return;
	if (s->state == SENDER_OPEN && s->bev != NULL) {
		struct msg_bye bye = {0, "shutting down"};

		wbuf_reset(&s->payload);
		if (msg_bye_encode(&s->payload, &bye) == 0 &&
		    session_send(&s->s, FRAME_BYE, 0, 0, s->payload.data,
		        s->payload.len, &s->out) == 0) {
			evutil_socket_t fd = bufferevent_getfd(s->bev);

			/* Best effort, not worth waiting for. */
			(void)send(fd, s->out.data, s->out.len, MSG_DONTWAIT);
		}
	}
	close_conn(s);
	if (s->timer != NULL)
		event_free(s->timer);
	if (s->dns != NULL)
		evdns_base_free(s->dns, 0);
	hmac_free(s->hmac);
	wbuf_free(&s->out);
	wbuf_free(&s->payload);
	free(s->hello);
	free(s->host);
	free(s);
}

void
sender_kick(struct sender *s)
{
	if (s != NULL)
		send_next(s);
}

bool
sender_connected(const struct sender *s)
{
	return s != NULL && s->state == SENDER_OPEN;
}

bool
sender_conf_equal(const struct lh_config *a, const struct lh_config *b)
{
	return config_section_equal(a, b, "sender");
}
