/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The receiver's insides, shared by its three files (receiver.c: the
 * receiver and a peer's way out; receiver_peer.c: reading and the
 * handshake; receiver_listen.c: binding and admission).  Nothing outside
 * those files includes this: roles use receiver.h.
 */
#ifndef LH_RECEIVER_INT_H
#define LH_RECEIVER_INT_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <netdb.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "connlimit.h"
#include "frame.h"
#include "msg.h"
#include "ratelog.h"
#include "receiver.h"
#include "session.h"

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

/* Whether a line of this kind is logged now (else it is counted). */
bool receiver_rl_take(struct receiver *r, enum receiver_rl k);
/* The timer that logs what was counted (receiver_rl_take()). */
void receiver_rl_flush_cb(evutil_socket_t fd, short what, void *arg);
/* Frees the dead peers, from the loop. */
void receiver_reap_cb(evutil_socket_t fd, short what, void *arg);

/* "10.0.0.3:40120", "[fe80::1]:40120", or "?". */
void receiver_addr_format(const struct sockaddr *sa, socklen_t salen, char *buf,
    size_t size);

/* A connection admitted: its peer, its CHALLENGE and its handshake
 * deadline; the socket is closed on failure. */
void receiver_peer_new(struct receiver *r, evutil_socket_t fd, const char *addr,
    const struct connlimit_src *src);
/* Unlink a closing peer and schedule its memory to be freed. */
void receiver_peer_finish(struct receiver_peer *p, const char *reason);
void receiver_peer_free(struct receiver_peer *p);
/* Drop with one line, rate-limited as k while p has shown no key. */
void receiver_peer_drop_as(struct receiver_peer *p, enum receiver_rl k,
    const char *reason);
/* Read nothing more; close once what was queued has been written. */
void receiver_peer_close_flushed(struct receiver_peer *p);
/* Best effort: tell a refused peer why before closing. */
void
receiver_peer_bye(struct receiver_peer *p, uint8_t reason, const char *text);

#endif
