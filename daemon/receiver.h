/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The inbound side of the wire protocol, shared by every listening role
 * (aggregator, relay, lharvest-dump): an evconnlistener, one bufferevent
 * per peer, the listener half of the handshake (common/proto/session.c),
 * reading with the length checked from the header before any payload is
 * buffered, timeouts, and one log line and a closed connection for any
 * violation. The role sees only verified frames, through callbacks.
 *
 * Admission (docs/reliability.md, findings 1, 2 and 15).  Until its HELLO
 * verifies, a peer may announce no frame above the largest legal HELLO.
 * Peers that have not finished the handshake never lock out those that
 * have: at any cap (max_conns, max_unauth, max_per_source) a new
 * connection closes the oldest of them.  Accepts beyond the token bucket
 * wait in the kernel's backlog; an allow list closes other addresses at
 * once.  Once open, a frame must complete within frame_timeout of its
 * first byte.  A HELLO under a name already open is refused while the
 * older connection carried a frame within the last interval, else the
 * older one is closed.  Lines about peers that have not shown a key are
 * rate-limited, one of a kind a period.
 *
 * Peer lifetime.  A struct receiver_peer * handed to a callback stays
 * valid until control returns to the event loop; it may be used for
 * receiver_peer_send() and friends during the callback.  A role that acks
 * LATER (once the data is safe) keeps the peer's id (receiver_peer_id(), a
 * number never reused by this receiver) and looks the peer up again with
 * receiver_peer_find() when it is ready: NULL then means the connection is
 * gone and there is nobody left to ack.  Closed peers are freed from the
 * event loop, never under a caller's feet.
 */
#ifndef LH_RECEIVER_H
#define LH_RECEIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct cidr;
struct keyring;
struct lh_config;
struct lh_err;
struct msg_ack;
struct msg_hello;
struct session_frame;
struct receiver;
struct receiver_peer;
struct sockaddr_storage;

#define RECEIVER_HANDSHAKE_TIMEOUT 10  /* seconds */
#define RECEIVER_READ_TIMEOUT      120 /* seconds; above the sweep interval */
#define RECEIVER_MAX_CONNS         1024
/* Admission (docs/reliability.md, findings 1 and 15): the defaults let 200
 * gatherers connect at once from one address. */
#define RECEIVER_FRAME_TIMEOUT     60  /* seconds from a frame's first byte */
#define RECEIVER_MAX_UNAUTH        256 /* connections before their HELLO */
#define RECEIVER_MAX_PER_SOURCE    256 /* per IPv4 address or IPv6 /64 */
#define RECEIVER_ACCEPT_RATE       100 /* accepts a second after a burst */
#define RECEIVER_ACCEPT_BURST      256
#define RECEIVER_INTERVAL          20 /* seconds, when conf.interval is 0 */
#define RECEIVER_LOG_PERIOD        10 /* seconds between lines of one kind */

/*
 * The HELLO of a new peer was verified.  Return 0 to accept (an ACK of the
 * HELLO is sent), or a negative errno with a reason in err to refuse (the
 * peer gets a BYE and is closed).
 */
typedef int (*receiver_hello_cb)(void *arg, struct receiver_peer *p,
    const struct msg_hello *h, struct lh_err *err);

/*
 * A verified frame after the handshake (SWEEP, ACK, later types); the
 * payload lives until the callback returns.  Return 0, or a negative errno
 * with a reason in err to drop the peer.
 */
typedef int (*receiver_frame_cb)(void *arg, struct receiver_peer *p,
    const struct session_frame *f, struct lh_err *err);

/* The connection of a peer that on_hello accepted is closing, for the
 * reason given; called exactly once per accepted peer. */
typedef void (
    *receiver_close_cb)(void *arg, struct receiver_peer *p, const char *reason);

struct receiver_conf {
	const char *bind; /* "127.0.0.1:8022", "[::1]:8022", "0.0.0.0:8022" */
	const struct keyring *keys; /* borrowed: must outlive the receiver */
	const char *name;           /* this side's identity (CHALLENGE) */
	uint8_t role;               /* enum msg_role of this side */
	size_t max_frame;           /* 0: FRAME_MAX_DEFAULT */
	unsigned handshake_timeout; /* seconds, 0: default */
	unsigned read_timeout;      /* seconds, 0: default */
	unsigned max_conns;         /* 0: default */
	/* A second connection under a name already open takes it over only
	 * once the first has carried no frame for one sweep interval. */
	unsigned interval;        /* seconds, 0: RECEIVER_INTERVAL */
	unsigned frame_timeout;   /* seconds, 0: default */
	unsigned max_unauth;      /* 0: default */
	unsigned max_per_source;  /* 0: default */
	unsigned accept_rate;     /* a second, 0: default */
	unsigned accept_burst;    /* 0: default */
	const struct cidr *allow; /* copied; nallow 0: every address */
	size_t nallow;
	bool log_all; /* every line about strangers, none rate-limited */
	receiver_hello_cb on_hello; /* NULL: accept everybody */
	receiver_frame_cb on_frame; /* NULL: drop every post-handshake frame */
	receiver_close_cb on_close; /* may be NULL */
	void *arg;
};

/*
 * Bind and listen on conf->bind.  Returns 0 and *ret, or a negative errno
 * after logging one line saying why.
 */
int receiver_new(struct event_base *base, const struct receiver_conf *conf,
    struct receiver **ret);

/* Close every connection (on_close is called) and the listener. */
void receiver_free(struct receiver *r);

/*
 * Whether a and b make the same receiver: where it listens, its name,
 * max_frame, timeouts, max_connections and admission (receiver.h above),
 * and the interval a name takeover is judged by.  bound: receiver_addr()
 * of the receiver made from a (so that port 0 in a matches the port the
 * kernel gave it), or NULL.
 */
bool receiver_conf_equal(const struct lh_config *a, const struct lh_config *b,
    const char *bound);

/* Whether b listens where the receiver made from a does: the "listen"
 * section (config.h), with port 0 in a matching bound (as above). */
bool receiver_listen_same(const struct lh_config *a, const struct lh_config *b,
    const char *bound);

/* The address actually bound ("127.0.0.1:40123": useful with port 0). */
const char *receiver_addr(const struct receiver *r);

/* Connections open now. */
size_t receiver_npeers(const struct receiver *r);

/* The live peer with that id, or NULL if it is gone. */
struct receiver_peer *receiver_peer_find(struct receiver *r, uint64_t id);

uint64_t receiver_peer_id(const struct receiver_peer *p);
/* The name of the HELLO, "?" before it. */
const char *receiver_peer_name(const struct receiver_peer *p);
/* "10.0.0.3:40120" or "[fe80::1]:40120". */
const char *receiver_peer_addr(const struct receiver_peer *p);
/* The verified HELLO, or NULL before it. */
const struct msg_hello *receiver_peer_hello(const struct receiver_peer *p);

/* One pointer of the role's own per-peer state. */
void receiver_peer_set_data(struct receiver_peer *p, void *data);
void *receiver_peer_data(const struct receiver_peer *p);

/*
 * Sign and queue one frame to the peer (types above FRAME_BYE get
 * FRAME_F_IGNORABLE).  Returns 0, -ENOTCONN when the peer is closing or
 * not past its HELLO, or -ENOBUFS when the peer does not read what it is
 * sent (it is then dropped).
 */
int receiver_peer_send(struct receiver_peer *p, uint8_t type, uint64_t sweep_id,
    const void *payload, size_t len);

/* Encode and send an ACK (sweep id 0), as receiver_peer_send(). */
int receiver_peer_ack(struct receiver_peer *p, const struct msg_ack *a);

/* Drop the peer now: one log line with the reason, then close. */
void receiver_peer_drop(struct receiver_peer *p, const char *reason);

/* The peer's address, for a role's own checks (the aggregator's
 * gatherer_networks).  Returns 0, or a negative errno. */
int receiver_peer_sockaddr(const struct receiver_peer *p,
    struct sockaddr_storage *ret);

#endif
