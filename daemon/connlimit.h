/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The listener's admission arithmetic (issue 15, docs/reliability.md):
 * the accept token bucket, the source an address is counted under for the
 * per-source cap, and room for the connections under RLIMIT_NOFILE.  The
 * receiver applies them; nothing here touches a socket or logs.
 */
#ifndef LH_CONNLIMIT_H
#define LH_CONNLIMIT_H

#include <stdbool.h>
#include <stdint.h>

struct sockaddr;

/* Descriptors kept for everything but peers: the listener, state and
 * ledger files, the sink's and the resolver's sockets, the journal. */
#define CONNLIMIT_FD_RESERVE 64

/*
 * Accepts allowed: burst at once, then rate a second.  The receiver never
 * refuses for want of a token: it stops accepting until the next one (the
 * kernel's backlog holds the connections meanwhile).
 */
struct connlimit_bucket {
	unsigned rate, burst;
	uint64_t last_ns; /* monotonic time of the last refill */
	double tokens;
};

void connlimit_bucket_init(struct connlimit_bucket *b, unsigned rate,
    unsigned burst, uint64_t now_ns);

/* One accept: take a token (the count may go below one, never below 0). */
void connlimit_bucket_take(struct connlimit_bucket *b, uint64_t now_ns);

/* Nanoseconds until a token is there, 0 if one is there now. */
uint64_t connlimit_bucket_wait(struct connlimit_bucket *b, uint64_t now_ns);

/* The source a peer is counted under: its IPv4 address, or the /64 of an
 * IPv6 one (what one site or host is routed). */
struct connlimit_src {
	int family;
	uint8_t addr[8];
};

void connlimit_src_of(const struct sockaddr *sa, struct connlimit_src *ret);
bool connlimit_src_equal(const struct connlimit_src *a,
    const struct connlimit_src *b);

/*
 * How many peers fit under the descriptor limit: raises the soft
 * RLIMIT_NOFILE towards the hard one when want peers need it, and returns
 * want, or fewer when the hard limit leaves less room (never below 1).
 */
unsigned connlimit_nofile(unsigned want);

#endif
