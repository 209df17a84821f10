/* SPDX-License-Identifier: BSD-2-Clause */
/* The NID-to-host view of a closed sweep (hostview.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "clock.h"
#include "config.h"
#include "err.h"
#include "hostmap.h"
#include "hostsum.h"
#include "hostview.h"
#include "log.h"
#include "ratelog.h"
#include "nid.h"
#include "resolver.h"
#include "status.h"

#define UNMAPPED_LOG_NS (600 * CLOCK_NS_PER_S) /* unmapped clients */

struct hostview {
	struct hostmap *hosts;
	struct resolver *dns;
	struct event_base *base;
	struct hostsum sums;
	size_t unmapped, awaiting_dns;
	char first_unmapped[NID_STR_MAX];
	struct ratelog unmapped_rl;  /* the unmapped-clients line */
	char host[HOSTSUM_HOST_MAX]; /* the last client's */
	/* A reload's parts, until applied or aborted (NULL: unchanged). */
	struct hostmap *next_hosts;
	struct resolver *next_dns;
};

/* The hosts map and rewrite rules of cfg.  Returns 0, or -1 after one
 * log line naming the file (and line) or the rule. */
static int
make_hostmap(const struct lh_config *cfg, struct hostmap **ret)
{
	struct hostmap *m;
	struct lh_err err;
	size_t i;

	if (hostmap_new(&m) < 0) {
		log_warnx("out of memory");
		return -1;
	}
	for (i = 0; i < cfg->nrewrites; i++) {
		if (hostmap_add_rewrite(m, cfg->rewrites[i], &err) < 0) {
			log_warnx("%s: rewrite '%s': %s", cfg->path,
			    cfg->rewrites[i], err.reason);
			hostmap_free(m);
			return -1;
		}
	}
	if (cfg->hosts_file != NULL &&
	    hostmap_load_file(m, cfg->hosts_file, &err) < 0) {
		log_warnx("%s", err.reason);
		hostmap_free(m);
		return -1;
	}
	*ret = m;
	return 0;
}

static int
make_resolver(struct event_base *base, const struct lh_config *cfg,
    struct resolver **ret)
{
	struct resolver_conf dc;
	struct lh_err err;

	memset(&dc, 0, sizeof(dc));
	dc.enabled = cfg->dns;
	dc.servers = (const char *const *)cfg->dns_servers;
	dc.nservers = cfg->ndns_servers;
	if (resolver_new(base, &dc, ret, &err) < 0) {
		log_warnx("%s: dns_servers: %s", cfg->path, err.reason);
		return -1;
	}
	return 0;
}

int
hostview_new(const struct lh_config *cfg, struct hostview **ret)
{
	struct hostview *v = calloc(1, sizeof(*v));

	if (v == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	hostsum_init(&v->sums);
	if (make_hostmap(cfg, &v->hosts) < 0) {
		hostview_free(v);
		return -1;
	}
	*ret = v;
	return 0;
}

int
hostview_start(struct hostview *v, struct event_base *base,
    const struct lh_config *cfg)
{
	v->base = base;
	return make_resolver(base, cfg, &v->dns);
}

void
hostview_begin(struct hostview *v)
{
	hostsum_clear(&v->sums);
	v->unmapped = 0;
	v->awaiting_dns = 0;
}

/*
 * The host of a client NID (parts: the NID split): the hosts map first
 * (any NID kind), then reverse DNS of an IP address.  Returns 0, -EAGAIN
 * (a DNS answer is on its way) or -ENOENT.
 */
static int
map_nid(struct hostview *v, const char *nid, const struct nid_parts *p,
    char *host)
{
	char name[RESOLVER_NAME_MAX + 1];
	bool v6 = p->kind == NID_KIND_STRING && strchr(p->addr, ':') != NULL;
	int rc;

	if (hostmap_lookup(v->hosts, nid, host, HOSTSUM_HOST_MAX) == 0)
		return 0;
	if (p->kind != NID_KIND_IPV4 && !v6)
		return -ENOENT;
	rc = resolver_lookup(v->dns, p->addr, name, sizeof(name),
	    clock_monotonic_ns());
	if (rc < 0)
		return rc == -EAGAIN ? rc : -ENOENT;
	return hostmap_rewrite(v->hosts, name, host, HOSTSUM_HOST_MAX) == 0 ?
	    0 :
	    -ENOENT;
}

const char *
hostview_add(struct hostview *v, const struct sweeps_client *c, int *ret_err)
{
	struct nid_parts parts;
	int rc;

	*ret_err = 0;
	rc = nid_split(c->nid, &parts) < 0 ?
	    -ENOENT :
	    map_nid(v, c->nid, &parts, v->host);
	if (rc == -EAGAIN) {
		v->awaiting_dns++;
		return NULL;
	}
	if (rc < 0) {
		if (v->unmapped++ == 0)
			(void)snprintf(v->first_unmapped,
			    sizeof(v->first_unmapped), "%s", c->nid);
		return NULL;
	}
	if (hostsum_add(&v->sums, v->host, &parts, c) < 0) {
		*ret_err = -ENOMEM;
		return NULL;
	}
	return v->host;
}

const struct hostsum_row *
hostview_rows(struct hostview *v, size_t *ret_n)
{
	(void)hostsum_finish(&v->sums);
	*ret_n = v->sums.n;
	return v->sums.rows;
}

void
hostview_stats(const struct hostview *v, struct hostview_stats *ret)
{
	ret->hosts = v->sums.n;
	ret->unmapped = v->unmapped;
	ret->awaiting_dns = v->awaiting_dns;
}

void
hostview_dns_status(const struct hostview *v, const struct lh_config *cfg,
    struct status_dns *ret)
{
	struct resolver_stats rs;

	memset(ret, 0, sizeof(*ret));
	ret->on = cfg->dns;
	if (v->dns == NULL)
		return;
	resolver_stats(v->dns, &rs);
	ret->lookups = rs.lookups;
	ret->hits = rs.hits;
	ret->queries = rs.queries;
	ret->answered = rs.answered;
	ret->nxdomain = rs.nxdomain;
	ret->timeouts = rs.timeouts;
	ret->errors = rs.errors;
	ret->cached = rs.entries;
}

void
hostview_log_unmapped(struct hostview *v, uint64_t sweep_id, uint64_t now_ns)
{
	if (v->unmapped == 0 ||
	    !ratelog_every(&v->unmapped_rl, now_ns, UNMAPPED_LOG_NS, NULL))
		return;
	log_warnx("sweep %" PRIu64 ": %zu clients without a "
	          "host name (%s, ...): add them to hosts_file, "
	          "or check DNS",
	    sweep_id, v->unmapped, v->first_unmapped);
}

int
hostview_reload_prepare(struct hostview *v, const struct lh_config *old,
    const struct lh_config *cfg)
{
	if (make_hostmap(cfg, &v->next_hosts) < 0)
		return -1;
	if (!config_section_equal(old, cfg, "resolver") &&
	    make_resolver(v->base, cfg, &v->next_dns) < 0)
		return -1;
	return 0;
}

void
hostview_reload_apply(struct hostview *v)
{
	hostmap_free(v->hosts);
	v->hosts = v->next_hosts;
	v->next_hosts = NULL;
	if (v->next_dns != NULL) {
		resolver_free(v->dns);
		v->dns = v->next_dns;
		v->next_dns = NULL;
	}
}

void
hostview_reload_abort(struct hostview *v)
{
	hostmap_free(v->next_hosts);
	v->next_hosts = NULL;
	if (v->next_dns != NULL)
		resolver_free(v->next_dns);
	v->next_dns = NULL;
}

void
hostview_free(struct hostview *v)
{
	if (v == NULL)
		return;
	hostview_reload_abort(v);
	if (v->dns != NULL) {
		resolver_free(v->dns);
		/* Let evdns fail its cancelled queries (resolver.h). */
		(void)event_base_loop(v->base, EVLOOP_NONBLOCK);
	}
	hostmap_free(v->hosts);
	hostsum_free(&v->sums);
	free(v);
}
