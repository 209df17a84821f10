/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the sweep table (sweeps.h), shared by its files: sweeps.c (the
 * table, its dictionary of clients and adding batches), sweeps_resend.c
 * (a sender's second batch in a sweep, combined with its first),
 * sweeps_roster.c (who is expected, who reported, when a sweep is ready)
 * and sweeps_close.c (closing: the sums handed out, the ring turned, the
 * dictionary pruned).  Not for other modules.
 */
#ifndef LH_SWEEPS_INT_H
#define LH_SWEEPS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "hindex.h"
#include "sweeps.h"

#define NS_PER_S    1000000000ULL
#define NRING       (1 + SWEEPS_AHEAD)
#define ROSTER_DFLT 3
/* The dictionary of clients forgets the ones no batch named for
 * PRUNE_AFTER sweeps, looking every PRUNE_EVERY closes: over months of
 * clients coming and going its size stays that of the clients of the
 * last hour or so, not of all that ever were. */
#define PRUNE_EVERY 64
#define PRUNE_AFTER 64

/* Every (fs, NID) named lately, by a small id. */
struct sw_client {
	char fs[MSG_FS_MAX];
	char nid[NID_STR_MAX];
	uint64_t seen; /* the last sweep (id) a record of it went into */
};

/* A client's sums in one sweep. */
struct sw_acc {
	uint32_t client;
	uint32_t nsenders;
	uint32_t ops; /* 1 + index into sw_sweep.ops; 0: none */
	uint64_t d[SWEEPS_NCOUNTERS];
	double r[SWEEPS_NCOUNTERS];
};

/* A batch counted in an open sweep, kept as it came: a second batch of
 * its sender in the same sweep is combined with it (combine()). */
struct sw_batch {
	uint32_t sender; /* index into sweeps.senders */
	uint8_t *payload;
	size_t n;
};

struct sw_sweep {
	uint64_t id; /* seconds */
	struct sw_acc *acc;
	size_t n, cap;
	/* Metadata op sums, only for the clients that have some: most
	 * clients of a filesystem never reach an MDT's per-op counters in a
	 * sweep, and OST-only filesystems never do. */
	struct sweeps_ops *ops;
	size_t nops, opcap;
	struct hindex index; /* by client id */
	struct sweeps_ack *acks;
	size_t nacks, acap;
	struct sw_batch *batches; /* one per ack, in the same order */
	size_t nbatches, bcap;
	size_t nlate;
};

struct sw_sender {
	char name[MSG_NAME_MAX];
	uint64_t last_reported; /* sweep id, 0: never */
	uint64_t pending_batch; /* in an open sweep, not yet acknowledged */
	uint64_t pending_sweep; /* which */
};

struct sweeps {
	unsigned interval, roster;
	uint64_t deadline_ns;
	char (*expected)[MSG_NAME_MAX];
	size_t nexpected;
	struct sw_client *clients;
	size_t nclients, ccap;
	struct hindex cindex;
	uint64_t closes; /* sweeps closed, for the dictionary's pruning */
	struct sw_sweep ring[NRING]; /* ring[0]: the oldest open sweep */
	struct sw_sender *senders;
	size_t nsenders, scap;
	struct hindex sindex;
	/* The last report's storage. */
	char (*missing)[MSG_NAME_MAX];
	size_t mcap;
	struct sweeps_ack *acks;
	size_t akcap;
};

struct client_key {
	const char *fs;
	const char *nid;
};

/* What adding a batch's records needs: the table and the sweep. */
struct add_ctx {
	struct sweeps *s;
	struct sw_sweep *w;
};

/* The hash of a client id in a sweep's index. */
static inline uint64_t
id_hash(uint32_t id)
{
	return (uint64_t)id * 0x9e3779b97f4a7c15ULL;
}

/* Free the kept batches of w (the arrays stay). */
void sw_batches_clear(struct sw_sweep *w);

/* The sender called name, or NULL; sw_sender_get() adds it when new
 * (NULL: out of memory). */
struct sw_sender *sw_sender_find(const struct sweeps *s, const char *name);
struct sw_sender *sw_sender_get(struct sweeps *s, const char *name);

/* The id of client (fs, nid), added when new.  Returns 0 or -ENOMEM. */
int
sw_client_get(struct sweeps *s, const char *fs, const char *nid, uint32_t *ret);

/* The sums of client in w, added when new (NULL: out of memory). */
struct sw_acc *sw_acc_get(struct sw_sweep *w, uint32_t client);

/* A second batch of sender in c->w combined with what it sent before
 * (sweeps_resend.c).  Returns 0 or -ENOMEM (nothing changed). */
int sw_combine(struct add_ctx *c, uint32_t sender, const uint8_t *payload,
    size_t n, struct msg_sweep *ret_h);

/* The senders missing from w (expected, or reporting lately) into rep
 * (sweeps_roster.c). */
void sw_report_missing(struct sweeps *s, const struct sw_sweep *w,
    struct sweeps_report *rep);

#endif
