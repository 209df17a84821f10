/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The outbound side of the wire protocol, for gatherers and relays: one
 * connection to one receiver, the connector half of the handshake, and the
 * delivery of an outbox (common/proto/outbox.h): the batch in flight is sent,
 * and sent again unchanged after every reconnect, until the receiver
 * acknowledges it; then the next one.  Connection failures are retried
 * with jittered exponential backoff (1 s doubling to 60 s), each logged
 * once per outage, never fatal.
 */
#ifndef LH_SENDER_H
#define LH_SENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct keyring;
struct lh_config;
struct msg_hello;
struct outbox;
struct sender;

#define SENDER_BACKOFF_MIN 1  /* seconds */
#define SENDER_BACKOFF_MAX 60 /* seconds */

/* Fill the identity part of a HELLO (role, name, interval, filesystems,
 * targets); nonce, time, software and capabilities are set by the sender. */
typedef void (*sender_hello_cb)(void *arg, struct msg_hello *h);

/* The receiver acknowledged a batch; duplicate: it had it already. */
typedef void (*sender_acked_cb)(void *arg, uint64_t batch, bool duplicate);

struct sender_conf {
	const char *host; /* name or address of the receiver */
	unsigned port;
	const struct keyring *keys; /* borrowed */
	const char *name;           /* this side's identity (copied) */
	const char *label; /* names the receiver in logs; NULL: "aggregator" */
	size_t max_frame;  /* 0: FRAME_MAX_DEFAULT */
	unsigned handshake_timeout; /* seconds, 0: 10 */
	unsigned ack_timeout;       /* seconds to wait for an ACK, 0: 120 */
	struct outbox *outbox;      /* borrowed: what to deliver */
	sender_hello_cb fill_hello;
	sender_acked_cb on_acked; /* may be NULL */
	void *arg;
};

/* Start connecting.  Returns 0, or a negative errno after one log line. */
int sender_new(struct event_base *base, const struct sender_conf *conf,
    struct sender **ret);

/* Say BYE if connected, close, free. */
void sender_free(struct sender *s);

/* The outbox has new data: send it if the connection is idle.  NULL (no
 * sender: one could not be made): nothing, the outbox keeps it. */
void sender_kick(struct sender *s);

/* True while the handshake is done and the connection up; false for
 * NULL. */
bool sender_connected(const struct sender *s);

/*
 * Whether a and b make the same connection to a gatherer's server: the
 * same server, name, max_frame and handshake_timeout (a reload changing
 * none of them keeps the connection): config_section_equal()'s "sender"
 * section.  A relay's routes are its "relay" section; the interval is a
 * key that needs a restart (config_restart_key()).
 */
bool sender_conf_equal(const struct lh_config *a, const struct lh_config *b);

#endif
