/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a running aggregator or relay says of itself at any moment: read
 * by the outputs that answer questions (the Prometheus page, the JSON
 * API), filled by the sweep engine for its own part (sweeps, gatherers,
 * the NID-to-host view and its resolver) and by each consumer's status()
 * for its part (Ganglia's sends, a relay's routes).  A snapshot: plain
 * values and arrays owned by it, valid until status_release(), so that an
 * answer is built from one consistent picture and nothing that runs is
 * held while it is written out.
 *
 * The struct is the contract between who fills and who shows: a field is
 * added, never renamed or removed, and every field has a meaning even
 * when its part is off (zeros, "on" false).
 */
#ifndef LH_STATUS_H
#define LH_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATUS_NAME_MAX 64  /* a gatherer's or route's name, NUL included */
#define STATUS_ADDR_MAX 64  /* "ip:port" or "[v6]:port" */
#define STATUS_NETS_MAX 256 /* a route's networks, ", " between them */

struct consumers;

/* One gatherer (a relay's senders are gatherers too). */
struct status_gatherer {
	char name[STATUS_NAME_MAX];
	char addr[STATUS_ADDR_MAX]; /* its connection's peer; "": none */
	bool connected;             /* authenticated connection now */
	bool expected;              /* the roster waits for it each sweep */
	bool missing;               /* not in the last closed sweep */
	bool late;                  /* its last batch came after its sweep
	                               had closed at the deadline */
	uint64_t last_sweep;        /* last sweep it was counted in, 0: none */
	uint64_t batches;           /* batches counted since the start */
	uint64_t sweeps_missed;     /* closed sweeps it missed since start */
};

/* One relay route. */
struct status_route {
	char name[STATUS_NAME_MAX];
	char dest[STATUS_ADDR_MAX]; /* host:port it forwards to */
	char nets[STATUS_NETS_MAX]; /* "o2ib2, tcp102"; "*": the default */
	bool connected;
	size_t queued_batches; /* waiting in its outbox */
	uint64_t queued_bytes;
	uint64_t batches_sent;       /* acknowledged by the head node */
	uint64_t clients_last_sweep; /* clients routed in the last sweep */
};

struct status_ganglia {
	bool on;
	uint64_t values, metadata, send_errors, coalesced, refused;
	size_t entries, pending;
};

struct status_dns {
	bool on;
	uint64_t lookups, hits, queries, answered, nxdomain, timeouts, errors;
	size_t cached;
};

struct lh_status {
	const char *role;    /* "aggregator", "relay" (static) */
	const char *version; /* LH_VERSION (static) */
	char name[STATUS_NAME_MAX];
	int64_t started; /* seconds since the epoch */
	unsigned interval_s;

	/* The last closed sweep (all 0 before the first). */
	uint64_t sweep_id;      /* its start, seconds since the epoch */
	double close_time;      /* when it closed, seconds since the epoch */
	double close_duration;  /* wall seconds the close took */
	bool by_deadline;       /* closed at the deadline, someone missing */
	uint64_t sweeps_closed; /* since the start */
	size_t clients;         /* (fs, NID) in it */
	size_t hosts;           /* (host, fs) rows in it */
	size_t unmapped;        /* clients without a host name */
	size_t awaiting_dns;    /* clients whose DNS answer is on its way */

	/* Gatherers: counts, and one entry each (sorted by name). */
	size_t gatherers_connected, gatherers_expected;
	size_t gatherers_missing, gatherers_late; /* in the last sweep */
	struct status_gatherer *gatherers;
	size_t ngatherers;

	/* Batches refused or counted already, since the start. */
	uint64_t duplicates, refused;

	struct status_dns dns;
	struct status_ganglia ganglia;
	struct status_route *routes; /* relay; NULL, 0 elsewhere */
	size_t nroutes;
};

/* Fills the role's part of st.  A filler (this, or a consumer's
 * status()) that cannot allocate an array sets its count and leaves the
 * array NULL: status_collect() then fails with -ENOMEM.
 *
 * Not filled (always 0): status_route.queued_bytes (an outbox does not
 * know the encoded size of what it holds without encoding it). */
typedef void (*status_fill_fn)(void *arg, struct lh_status *st);

/* Where the outputs ask (consumer_env.board): the role and its outputs. */
struct status_board {
	status_fill_fn fill;
	void *arg;
	struct consumers *outs; /* each consumer's status() adds its part */
};

/* A snapshot: st zeroed, then the role's part, then every consumer's.
 * Returns 0, or -ENOMEM (st released). */
int status_collect(const struct status_board *b, struct lh_status *st);

/* Free the arrays of st (calloc'd by whoever filled them); st is zeroed. */
void status_release(struct lh_status *st);

#endif
