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

/* A (filesystem, network, NID kind) that clients are named in: a client
 * is found by its group and its address, never by its text, but for the
 * rare text addresses (sweeps_dict.c). */
struct sw_group {
	char fs[MSG_FS_MAX];
	char net[NID_NET_MAX]; /* canonical */
	uint8_t kind;          /* enum nid_kind */
};

struct sw_groups {
	struct sw_group *v;
	size_t n, cap;
	struct hindex index;
};

/* Every (fs, NID) named lately, by a small id. */
struct sw_client {
	uint32_t group; /* index into sweeps.groups */
	uint32_t addr;  /* IPv4 and numbered NIDs: the address; else 0 */
	bool text;      /* a text address: nid is the key */
	/* Where its sums are in the open sweep of id t, if anywhere: at
	 * hint[t / interval % NRING] of that sweep's acc[], checked before
	 * use (sw_acc_hinted()). */
	uint32_t hint[NRING];
	char fs[MSG_FS_MAX];   /* the text, printed once, for the close */
	char nid[NID_STR_MAX]; /* and for the text addresses' key */
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
	bool late; /* for a sweep closed already: not a report of this one */
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
	struct sw_groups groups;
	/* The SWEEP sweeps_decode() decoded last, for sweeps_add(). */
	struct msg_stage stage;
	const uint8_t *staged;
	size_t staged_n;
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

/* The dictionary of clients (sweeps_dict.c). */

/* The id of client (fs, nid), added when new.  Returns 0, -EINVAL (not
 * a NID as the decoder hands them out) or -ENOMEM. */
int
sw_client_get(struct sweeps *s, const char *fs, const char *nid, uint32_t *ret);

/* The id of group (fs, net, kind), added when new.  Returns 0 or
 * -ENOMEM. */
int sw_group_get(struct sweeps *s, const char *fs, const char *net,
    uint8_t kind, uint32_t *ret);

/* The id of the client of group at address addr, or (text addresses) of
 * NID text nid; added when new.  Returns 0 or -ENOMEM. */
int sw_client_key_get(struct sweeps *s, uint32_t group, uint32_t addr,
    const char *nid, uint32_t *ret);

/* The hash of a client in the dictionary's index. */
uint64_t sw_client_hash(const struct sw_client *c);

/* The sums of client in w, added when new (NULL: out of memory). */
struct sw_acc *sw_acc_get(struct sw_sweep *w, uint32_t client);

/* The same, trying first where the client's hint says (s holds w). */
struct sw_acc *
sw_acc_hinted(struct sweeps *s, struct sw_sweep *w, uint32_t client);

/* The groups that the n clients of v name, renumbered in v, into ret
 * (prune_clients()).  Returns 0 or -ENOMEM (v unchanged). */
int sw_groups_compact(const struct sweeps *s, struct sw_client *v, size_t n,
    struct sw_groups *ret);
void sw_groups_free(struct sw_groups *g);

/* A second batch of sender in c->w combined with what it sent before
 * (sweeps_resend.c).  Returns 0 or -ENOMEM (nothing changed). */
int sw_combine(struct add_ctx *c, uint32_t sender, const uint8_t *payload,
    size_t n, struct msg_sweep *ret_h);

/* The senders missing from w (expected, or reporting lately) into rep
 * (sweeps_roster.c). */
void sw_report_missing(struct sweeps *s, const struct sw_sweep *w,
    struct sweeps_report *rep);

#endif
