/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-host sums of a closed sweep: the rates of every client NID that
 * maps to one host (a multi-rail client) added up per (host, filesystem),
 * and the address each host is spoofed under.  gmond keys a spoofed host
 * by the address in front of its name: it must be the same every sweep,
 * and differ between hosts.  So: the smallest IPv4 address of all the
 * host's NIDs, over all its filesystems, else the host name itself
 * (gmond cuts "ip:host" at the first ':', which rules out IPv6 there).
 * Pure: the NID-to-host mapping itself is the caller's (daemon/hostview.c).
 */
#ifndef LH_HOSTSUM_H
#define LH_HOSTSUM_H

#include <stddef.h>
#include <stdint.h>

#include "hindex.h"
#include "hostmap.h"
#include "mdops.h"
#include "msg.h"
#include "sweeps.h"

#define HOSTSUM_HOST_MAX (HOSTMAP_NAME_MAX + 1)
#define HOSTSUM_IP_MAX   64

struct nid_parts;

/* One host's rates in one filesystem, and the deltas they came from
 * (summed the same way: what counters since the start are made of, so
 * that they are exact, not rate times interval). */
struct hostsum_row {
	char host[HOSTSUM_HOST_MAX];
	char ip[HOSTSUM_IP_MAX]; /* "" until an IPv4 NID names one */
	uint32_t ipnum;          /* that address, the smallest of its NIDs */
	char fs[MSG_FS_MAX];
	double rate[SWEEPS_NCOUNTERS];
	double oprate[MDOPS_N]; /* metadata ops, per second */
	struct iocount d;       /* deltas over every NID of the host */
	struct mdops dops;      /* metadata op deltas, one by one */
};

struct hostsum {
	struct hostsum_row *rows;
	size_t n, cap;
	struct hindex index;
};

void hostsum_init(struct hostsum *s);
void hostsum_free(struct hostsum *s);

/* Forget the rows (a new sweep), keep the storage. */
void hostsum_clear(struct hostsum *s);

/* Client c, whose NID (split into p) maps to host: its rates added to
 * (host, c->fs).  Returns 0 or -ENOMEM. */
int hostsum_add(struct hostsum *s, const char *host, const struct nid_parts *p,
    const struct sweeps_client *c);

/* Every client is added: give each host one address over all its
 * filesystems.  Returns 0 or -ENOMEM (the addresses stay per row). */
int hostsum_finish(struct hostsum *s);

/* The address to spoof row r under: its IPv4 address, else its name. */
const char *hostsum_spoof_ip(const struct hostsum_row *r);

#endif
