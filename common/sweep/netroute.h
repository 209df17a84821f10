/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which cluster a client belongs to, by the LNet network of its NID: the
 * relay's routing table (docs/relay.md).
 *
 * A network is an LND name and a number: "o2ib2" is o2ib number 2,
 * "tcp102" tcp number 102, and a missing number is 0, so "o2ib" and
 * "o2ib0" are the same network while "o2ib" never matches "o2ib2".  A
 * pattern names one LND and a set of numbers:
 *
 *   o2ib          o2ib0 only (so does "o2ib0")
 *   tcp102        tcp102 only
 *   o2ib*         every o2ib network
 *   tcp[100-199]  tcp100 to tcp199; "o2ib[0,2,5-7]" lists several
 *
 * No two routes may claim one network: a table refuses a pattern that
 * overlaps another route's, so the order of routes never matters.
 * Pure: no I/O.
 */
#ifndef LH_NETROUTE_H
#define LH_NETROUTE_H

#include <stddef.h>

struct lh_err;
struct netroute;

#define NETROUTE_MAX_ROUTES 256 /* routes in a table */
#define NETROUTE_MAX_RANGES 32  /* number ranges in one pattern */

/* Whether text is a pattern; if not, err says why.  Returns 0 or
 * -EINVAL. */
int netroute_pattern_check(const char *text, struct lh_err *err);

/* An empty table, or NULL when out of memory. */
struct netroute *netroute_new(void);
void netroute_free(struct netroute *t);

/*
 * Route pattern to route number route (0 to NETROUTE_MAX_ROUTES - 1, the
 * caller's index of its routes).  Returns 0, -EINVAL (not a pattern, or
 * a route number out of range), -EEXIST (it overlaps a pattern of another
 * route; err names it) or -ENOMEM.
 */
int netroute_add(struct netroute *t, unsigned route, const char *pattern,
    struct lh_err *err);

/* The route of a NID ("10.1.2.3@o2ib2") or a bare network ("o2ib2"), or
 * -1 when no pattern matches (or it is not a NID). */
int netroute_lookup(const struct netroute *t, const char *nid_or_net);

#endif
