/* SPDX-License-Identifier: BSD-2-Clause */
/* One upstream connection and its outbox (uplink.h). */
#include <string.h>

#include "config.h"
#include "uplink.h"

/* A receiver acknowledges a batch when the sweep holding it is closed,
 * up to an interval later: wait at least two, and never under 120 s. */
static unsigned
ack_timeout(unsigned interval)
{
	return interval * 2 + 30 > 120 ? interval * 2 + 30 : 120;
}

void
uplink_init(struct uplink *u, uint64_t last_batch)
{
	memset(u, 0, sizeof(*u));
	outbox_init(&u->ob, last_batch);
}

int
uplink_connect(struct uplink *u, struct event_base *base,
    const struct lh_config *cfg, const struct uplink_peer *peer)
{
	struct sender_conf sc;

	uplink_disconnect(u);
	memset(&sc, 0, sizeof(sc));
	sc.host = peer->host;
	sc.port = peer->port;
	sc.label = peer->label;
	sc.keys = peer->keys;
	sc.name = cfg->name;
	sc.max_frame = cfg->max_frame;
	sc.handshake_timeout = cfg->handshake_timeout;
	sc.ack_timeout = ack_timeout(cfg->interval);
	sc.outbox = &u->ob;
	sc.fill_hello = peer->fill_hello;
	sc.on_acked = peer->on_acked;
	sc.arg = peer->arg;
	return sender_new(base, &sc, &u->snd);
}

void
uplink_kick(struct uplink *u)
{
	sender_kick(u->snd);
	outbox_forget_encoding(&u->ob);
}

void
uplink_disconnect(struct uplink *u)
{
	if (u->snd != NULL)
		sender_free(u->snd);
	u->snd = NULL;
}

void
uplink_free(struct uplink *u)
{
	uplink_disconnect(u);
	outbox_free(&u->ob);
}
