/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reload support: each module compares its own part of two parsed
 * configurations (config.h, config_section_equal()), so that a reload
 * rebuilds only what changed and the roles keep no lists of fields.
 */
#include <string.h>

#include "cidr.h"
#include "config.h"

static bool
str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool
list_eq(char *const *a, size_t na, char *const *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++) {
		if (strcmp(a[i], b[i]) != 0)
			return false;
	}
	return true;
}

/* What the Ganglia channels are opened with: a change opens them again. */
static bool
channels_eq(const struct lh_config *a, const struct lh_config *b)
{
	return str_eq(a->gmond_conf, b->gmond_conf) && a->tmax == b->tmax &&
	    a->dmax == b->dmax &&
	    a->metadata_interval == b->metadata_interval &&
	    a->ganglia_pace == b->ganglia_pace;
}

static bool
ganglia_eq(const struct lh_config *a, const struct lh_config *b)
{
	return channels_eq(a, b) && str_eq(a->totals_host, b->totals_host);
}

/* A connection's own limits, on both ends of one. */
static bool
link_eq(const struct lh_config *a, const struct lh_config *b)
{
	return str_eq(a->name, b->name) && a->max_frame == b->max_frame &&
	    a->handshake_timeout == b->handshake_timeout;
}

static bool
admission_eq(const struct lh_config *a, const struct lh_config *b)
{
	return a->interval == b->interval &&
	    a->frame_timeout == b->frame_timeout &&
	    a->max_unauthenticated == b->max_unauthenticated &&
	    a->max_per_source == b->max_per_source &&
	    a->accept_rate == b->accept_rate &&
	    a->accept_burst == b->accept_burst && a->nallow == b->nallow &&
	    (a->nallow == 0 ||
	        memcmp(a->allow, b->allow, a->nallow * sizeof(*a->allow)) == 0);
}

static bool
listener_eq(const struct lh_config *a, const struct lh_config *b)
{
	return link_eq(a, b) &&
	    config_read_timeout(a) == config_read_timeout(b) &&
	    a->max_connections == b->max_connections && admission_eq(a, b);
}

static bool
listen_eq(const struct lh_config *a, const struct lh_config *b)
{
	return str_eq(a->listen_host, b->listen_host) &&
	    a->listen_port == b->listen_port;
}

static bool
routes_eq(const struct lh_config *a, const struct lh_config *b)
{
	size_t i;

	if (a->nroutes != b->nroutes || a->default_route != b->default_route)
		return false;
	for (i = 0; i < a->nroutes; i++) {
		const struct lh_route *x = &a->routes[i], *y = &b->routes[i];

		if (strcmp(x->name, y->name) != 0 ||
		    strcmp(x->host, y->host) != 0 || x->port != y->port ||
		    !list_eq(x->networks, x->nnetworks, y->networks,
		        y->nnetworks))
			return false;
	}
	return true;
}

static bool
relay_eq(const struct lh_config *a, const struct lh_config *b)
{
	return link_eq(a, b) && routes_eq(a, b);
}

/* Where to and how: the ACK timeout it derives from the interval is not
 * compared, as an interval change needs a restart (config_restart_key). */
static bool
sender_eq(const struct lh_config *a, const struct lh_config *b)
{
	return link_eq(a, b) && str_eq(a->server_host, b->server_host) &&
	    a->server_port == b->server_port;
}

static bool
resolver_eq(const struct lh_config *a, const struct lh_config *b)
{
	return a->dns == b->dns &&
	    list_eq(a->dns_servers, a->ndns_servers, b->dns_servers,
	        b->ndns_servers);
}

static bool
hosts_eq(const struct lh_config *a, const struct lh_config *b)
{
	return str_eq(a->hosts_file, b->hosts_file) &&
	    list_eq(a->rewrites, a->nrewrites, b->rewrites, b->nrewrites);
}

static bool
sweeps_eq(const struct lh_config *a, const struct lh_config *b)
{
	return a->interval == b->interval && a->deadline_ms == b->deadline_ms &&
	    list_eq(a->gatherers, a->ngatherers, b->gatherers, b->ngatherers);
}

static bool
prometheus_eq(const struct lh_config *a, const struct lh_config *b)
{
	return a->prom_families == b->prom_families &&
	    a->prom_max_series == b->prom_max_series &&
	    a->prom_metadata_ops == b->prom_metadata_ops &&
	    list_eq(a->prom_filesystems, a->nprom_filesystems,
	        b->prom_filesystems, b->nprom_filesystems);
}

/* The HTTP listener's sockets: a change binds new ones. */
static bool
http_listen_eq(const struct lh_config *a, const struct lh_config *b)
{
	return str_eq(a->http_listen_host, b->http_listen_host) &&
	    a->http_listen_port == b->http_listen_port &&
	    a->http_listen_set == b->http_listen_set &&
	    str_eq(a->http_socket, b->http_socket);
}

static bool
http_eq(const struct lh_config *a, const struct lh_config *b)
{
	return http_listen_eq(a, b) &&
	    a->http_max_connections == b->http_max_connections &&
	    a->http_max_header_size == b->http_max_header_size &&
	    a->http_timeout == b->http_timeout &&
	    a->nhttp_allow == b->nhttp_allow &&
	    (a->nhttp_allow == 0 ||
	        memcmp(a->http_allow, b->http_allow,
	            a->nhttp_allow * sizeof(*a->http_allow)) == 0);
}

bool
config_section_equal(const struct lh_config *a, const struct lh_config *b,
    const char *section)
{
	static const struct {
		const char *name;
		bool (*eq)(const struct lh_config *, const struct lh_config *);
	} parts[] = {
	    {"ganglia", ganglia_eq},
	    {"ganglia_channels", channels_eq},
	    {"listen", listen_eq},
	    {"listener", listener_eq},
	    {"relay", relay_eq},
	    {"sender", sender_eq},
	    {"resolver", resolver_eq},
	    {"hosts", hosts_eq},
	    {"sweeps", sweeps_eq},
	    {"prometheus", prometheus_eq},
	    {"http", http_eq},
	    {"http_listen", http_listen_eq},
	};
	size_t i;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (strcmp(parts[i].name, section) == 0)
			return parts[i].eq(a, b);
	}
	return false; /* unknown: rebuild rather than miss a change */
}

const char *
config_restart_key(const struct lh_config *old, const struct lh_config *cfg)
{
	if (cfg->role != old->role)
		return "role";
	if (!str_eq(cfg->state_dir, old->state_dir))
		return "state_dir";
	if (cfg->interval != old->interval)
		return "interval";
	return NULL;
}
