/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inbound connections, the listener: binding, and admission of a new
 * connection (allow list, per-source and total caps, the oldest stranger
 * dropped for a newer one, the accept token bucket, a pause on EMFILE).
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
	if (receiver_rl_take(r, k))
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
		receiver_peer_drop_as(v, RL_EVICT,
		    "oldest connection without a HELLO, for a newer one "
		    "(max_per_source)");
	}
	if (r->nlive >= r->conf.max_conns || r->nunauth >= r->conf.max_unauth) {
		v = peer_oldest_unauth(r, NULL);
		if (v == NULL) {
			*ret_k = RL_FULL;
			return "max_connections open, all past their HELLO";
		}
		receiver_peer_drop_as(v, RL_EVICT,
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
	receiver_addr_format(sa, (socklen_t)salen, addr, sizeof(addr));
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
	receiver_peer_new(r, fd, addr, &src);
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
		receiver_addr_format((struct sockaddr *)&ss, blen, r->addr,
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
	r->reap_ev = event_new(base, -1, 0, receiver_reap_cb, r);
	r->pause_ev = evtimer_new(base, pause_cb, r);
	r->rl_ev = evtimer_new(base, receiver_rl_flush_cb, r);
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
