/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The NID-to-host view every output of a closed sweep shares: a client
 * NID is mapped once per sweep to the host Ganglia (or any later output)
 * knows, through the hosts map and the rewrite rules
 * (common/sweep/hostmap.c) and then reverse DNS (daemon/resolver.c), and
 * the rates of the NIDs of one host are summed per (host, filesystem)
 * with the address the host is spoofed under (common/sweep/hostsum.c).
 * Clients without a name are counted and named in one line every ten
 * minutes; a client whose DNS answer is on its way is counted and
 * mapped in a later sweep.
 */
#ifndef LH_HOSTVIEW_H
#define LH_HOSTVIEW_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct hostsum_row;
struct hostview;
struct lh_config;
struct status_dns;
struct sweeps_client;

/* What a sweep's mapping came to, for the role's log line. */
struct hostview_stats {
	size_t hosts;        /* (host, filesystem) rows */
	size_t unmapped;     /* clients without a host name */
	size_t awaiting_dns; /* clients whose DNS answer is on its way */
};

/* The hosts map and rewrite rules of cfg (refused before detaching).
 * Returns 0 and *ret, or -1 after one log line naming the file (and
 * line) or the rule. */
int hostview_new(const struct lh_config *cfg, struct hostview **ret);

/* The resolver, on base.  Returns 0, or -1 after one log line. */
int hostview_start(struct hostview *v, struct event_base *base,
    const struct lh_config *cfg);

/* A sweep starts closing: forget the last one's rows and counts. */
void hostview_begin(struct hostview *v);

/* Map client c (once) and add its rates to its host's.  Returns its host
 * name (valid until the next hostview_begin()), or NULL: unmapped, its
 * DNS answer on its way, or out of memory (*ret_err -ENOMEM). */
const char *
hostview_add(struct hostview *v, const struct sweeps_client *c, int *ret_err);

/* Every client is added: the per-host rows, each host with one address
 * over all its filesystems.  Valid until the next hostview_begin(). */
const struct hostsum_row *hostview_rows(struct hostview *v, size_t *ret_n);

void hostview_stats(const struct hostview *v, struct hostview_stats *ret);

/* The resolver's counters since it was made (a reload that changes the
 * DNS keys makes a new one), for the status snapshot. */
void hostview_dns_status(const struct hostview *v, const struct lh_config *cfg,
    struct status_dns *ret);

/* The closed sweep's clients without a name: one line, at most every ten
 * minutes (now_ns: the monotonic clock). */
void
hostview_log_unmapped(struct hostview *v, uint64_t sweep_id, uint64_t now_ns);

/*
 * A reload: prepare the parts cfg needs (hosts map, rewrite rules, and
 * the resolver when its keys changed) without touching v; 0, or -1 after
 * one log line.  Then apply (cannot fail) or abort.
 */
int hostview_reload_prepare(struct hostview *v, const struct lh_config *old,
    const struct lh_config *cfg);
void hostview_reload_apply(struct hostview *v);
void hostview_reload_abort(struct hostview *v);

/* NULL is fine. */
void hostview_free(struct hostview *v);

#endif
