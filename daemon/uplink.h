/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One upstream connection and what it delivers, set up and torn down the
 * same way wherever the daemon sends sweeps on: a gatherer to its
 * aggregator, a relay per route.  The outbox is the uplink's own (the
 * caller counts into it and saves it with its state); the sender is made
 * from the configuration's common keys (name, max_frame,
 * handshake_timeout, and an ACK timeout of two intervals) and the peer
 * given, and may be made again (a reload) without touching the outbox.
 */
#ifndef LH_UPLINK_H
#define LH_UPLINK_H

#include <stdint.h>

#include "outbox.h"
#include "sender.h"

struct event_base;
struct keyring;
struct lh_config;

struct uplink {
	struct outbox ob;   /* what to deliver: owned */
	struct sender *snd; /* NULL: not connected (yet, or any more) */
};

/* Where to, and who hears about it. */
struct uplink_peer {
	const char *host; /* name or address of the receiver */
	unsigned port;
	const char *label;          /* in log lines; NULL: "aggregator" */
	const struct keyring *keys; /* borrowed: must outlive the sender */
	sender_hello_cb fill_hello;
	sender_acked_cb on_acked; /* may be NULL */
	void *arg;
};

/* An empty outbox numbering from last_batch, no connection. */
void uplink_init(struct uplink *u, uint64_t last_batch);

/* Start connecting to peer as cfg says (any connection there was is
 * closed first).  Returns 0, or a negative errno after one log line. */
int uplink_connect(struct uplink *u, struct event_base *base,
    const struct lh_config *cfg, const struct uplink_peer *peer);

/* Send the batch just sealed, if connected and nothing awaits an ACK.
 * The SWEEP the seal encoded goes out as the frame; when it cannot go
 * now it is dropped (outbox_forget_encoding()), so that an outage holds
 * no extra copy of the batch. */
void uplink_kick(struct uplink *u);

/* Say BYE if connected and close; the outbox stays.  NULL sender: no-op. */
void uplink_disconnect(struct uplink *u);

/* Disconnect, then free the outbox. */
void uplink_free(struct uplink *u);

#endif
