/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lhsend: drive daemon/sender.c and common/proto/outbox.c the way a gatherer
 * will, for the integration tests: every --period-ms add one sweep of
 * --clients records to the outbox and kick the sender; exit 0 once
 * --sweeps sweeps were added and every batch was acknowledged, printing
 * what was sent (one "nid read_bytes" line per client) and how many
 * batches came back as duplicates.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "err.h"
#include "keyfile.h"
#include "log.h"
#include "msg.h"
#include "outbox.h"
#include "sender.h"

struct lhsend {
	struct event_base *base;
	struct outbox ob;
	struct sender *snd;
	struct event *tick;
	unsigned sweeps, clients, added;
	uint64_t acked, dups;
	const char *name;
	int status;
	const char *keyfile, *connect;
	unsigned long period_ms;
	char host[256]; /* --connect's host, for as long as the sender runs */
};

static void
fill_hello(void *arg, struct msg_hello *h)
{
	(void)arg;
	h->role = MSG_ROLE_GATHERER;
	h->interval = 20;
	h->nfs = 1;
	(void)snprintf(h->fs[0], sizeof(h->fs[0]), "scratch");
	h->ntargets = 1;
	(void)snprintf(h->targets[0].name, sizeof(h->targets[0].name),
	    "scratch-OST0000");
}

static void
finish_if_done(struct lhsend *t)
{
	unsigned c;

	if (t->added < t->sweeps || outbox_has_data(&t->ob))
		return;
	for (c = 0; c < t->clients; c++)
		(void)printf("10.9.0.%u@o2ib %llu\n", c + 1,
		    (unsigned long long)(c + 1) * 1000 * t->sweeps);
	(void)printf("acked %" PRIu64 " duplicates %" PRIu64 "\n", t->acked,
	    t->dups);
	t->status = 0;
	(void)event_base_loopbreak(t->base);
}

static void
acked_cb(void *arg, uint64_t batch, bool duplicate)
{
	struct lhsend *t = arg;

	(void)batch;
	/* lhsend saves nothing: it may number a batch whenever. */
	outbox_seal(&t->ob);
	t->acked++;
	if (duplicate)
		t->dups++;
	finish_if_done(t);
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lhsend *t = arg;
	struct iocount d;
	char nid[64];
	unsigned c;

	(void)fd;
	(void)what;
	if (t->added < t->sweeps) {
		for (c = 0; c < t->clients; c++) {
			memset(&d, 0, sizeof(d));
			d.read_bytes = (uint64_t)(c + 1) * 1000;
			d.read_ops = 1;
			d.oss_ops = 1;
			(void)snprintf(nid, sizeof(nid), "10.9.0.%u@o2ib",
			    c + 1);
			if (outbox_add(&t->ob, "scratch", nid, &d, NULL,
			        20000000, NULL, 1000 + (uint64_t)t->added * 20,
			        0) < 0)
				fatalx("outbox_add failed");
		}
		t->added++;
		outbox_seal(&t->ob);
		sender_kick(t->snd);
	}
	finish_if_done(t);
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lhsend *t = arg;

	(void)fd;
	(void)what;
	log_warnx("deadline reached with %u sweeps added, %" PRIu64 " acked",
	    t->added, t->acked);
	(void)event_base_loopbreak(t->base);
}

/* The options into t; false (usage printed) if one is unknown. */
static bool
parse_args(struct lhsend *t, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"connect", required_argument, NULL, 'c'},
	    {"name", required_argument, NULL, 'n'},
	    {"sweeps", required_argument, NULL, 's'},
	    {"clients", required_argument, NULL, 'C'},
	    {"period-ms", required_argument, NULL, 'p'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "k:v", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			t->connect = optarg;
			break;
		case 'k':
			t->keyfile = optarg;
			break;
		case 'n':
			t->name = optarg;
			break;
		case 's':
			t->sweeps = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'C':
			t->clients = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'p':
			t->period_ms = strtoul(optarg, NULL, 10);
			break;
		default:
			(void)fprintf(stderr,
			    "usage: lhsend --connect HOST:PORT "
			    "-k KEYFILE [--name N] [--sweeps "
			    "K] [--clients C] [--period-ms "
			    "M]\n");
			return false;
		}
	}
	return true;
}

/* The sender to --connect with the keys of ring, on t's outbox. */
static void
start_sender(struct lhsend *t, const struct keyring *ring)
{
	struct sender_conf sc;
	char *colon;

	(void)snprintf(t->host, sizeof(t->host), "%s", t->connect);
	colon = strrchr(t->host, ':');
	if (colon == NULL)
		fatalx("--connect HOST:PORT");
	*colon = '\0';
	memset(&sc, 0, sizeof(sc));
	sc.host = t->host;
	sc.port = (unsigned)strtoul(colon + 1, NULL, 10);
	sc.keys = ring;
	sc.name = t->name;
	sc.ack_timeout = 5;
	sc.outbox = &t->ob;
	sc.fill_hello = fill_hello;
	sc.on_acked = acked_cb;
	sc.arg = t;
	if (t->base == NULL || sender_new(t->base, &sc, &t->snd) < 0)
		fatalx("cannot start the sender");
}

int
main(int argc, char **argv)
{
	struct lhsend t;
	struct keyring ring;
	struct lh_err err;
	struct timeval period, deadline = {60, 0};
	struct event *dl;

	memset(&t, 0, sizeof(t));
	t.sweeps = 10;
	t.clients = 5;
	t.name = "lhsend";
	t.status = 1;
	t.period_ms = 100;
	if (!parse_args(&t, argc, argv))
		return 2;
	log_init("lhsend", true, 1);
	if (t.connect == NULL || t.keyfile == NULL)
		fatalx("--connect and -k are required");
	memset(&ring, 0, sizeof(ring));
	if (keyfile_load(t.keyfile, &ring, &err) < 0)
		fatalx("%s", err.reason);
	(void)signal(SIGPIPE, SIG_IGN);
	t.base = event_base_new();
	outbox_init(&t.ob, 0);
	start_sender(&t, &ring);
	period.tv_sec = (time_t)(t.period_ms / 1000);
	period.tv_usec = (suseconds_t)(t.period_ms % 1000) * 1000;
	t.tick = event_new(t.base, -1, EV_PERSIST, tick_cb, &t);
	dl = evtimer_new(t.base, deadline_cb, &t);
	if (t.tick == NULL || dl == NULL || event_add(t.tick, &period) < 0 ||
	    evtimer_add(dl, &deadline) < 0)
		fatalx("cannot set up timers");
	(void)event_base_dispatch(t.base);
	sender_free(t.snd);
	event_free(t.tick);
	event_free(dl);
	outbox_free(&t.ob);
	event_base_free(t.base);
	keyring_clear(&ring);
	return t.status;
}
