/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Ganglia sink (see sink.h): with gapi.c (the library's entry
 * points) and sink_conf.c (gmond.conf checked in a child first), the only
 * code that sees libganglia.
 *
 * The call sequence per value is ganglia's own gmetric.c for --spoof
 * (Ganglia_metric_create, Ganglia_metric_set, Ganglia_metadata_add of
 * SPOOF_HOST "ip:host" and GROUP), except that Ganglia_metric_send, which
 * always sends metadata and value, is replaced by Ganglia_metadata_send
 * when metadata is due and Ganglia_value_send for the value.  libganglia
 * takes char * everywhere but only reads (it copies into APR pools): the
 * strings handed to it are the cache's own or local arrays.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ganglia.h>

#include "gapi.h"
#include "gcache.h"
#include "sink.h"
#include "sink_conf.h"

#define GSINK_CHANNELS_MAX 256
#define GSINK_NS           1000000000ULL

struct gsink {
	struct gapi api;   /* libganglia, opened for the first sink */
	Ganglia_pool pool; /* owns the channels' sockets */
	Ganglia_udp_send_channels channels;
	struct gcache cache;
	struct gsink_opts o;
	char group[GSINK_GROUP_MAX + 1];
	char chan_desc[GSINK_CHANNELS_MAX];
	double tokens, burst;
	uint64_t tokens_ns;
	uint64_t last_expire_ns, expire_every_ns;
	uint64_t values, metadata, send_errors, rejected, forced;
};

void
gsink_opts_default(struct gsink_opts *o)
{
	o->group = "lustre";
	o->tmax = 60;
	o->dmax = 600;
	o->metadata_interval = 60;
	o->pace = 15000;
	o->tick_ms = GSINK_TICK_MS;
	o->max_entries = 1048576;
	o->check_timeout_ms = 10000;
}

/* The (host, metric) table and the token bucket, from s->o. */
static void
init_cache_and_pace(struct gsink *s)
{
	const struct gsink_opts *o = &s->o;
	struct gcache_opts co;
	uint64_t forget;

	/* Forget a pair when gmond will have (dmax); with dmax 0 only to
	 * bound memory. */
	forget = o->dmax > 0 ? o->dmax : 3600;
	if (o->dmax == 0 && forget < 4ULL * o->metadata_interval)
		forget = 4ULL * o->metadata_interval;
	co.meta_interval_ns = (uint64_t)o->metadata_interval * GSINK_NS;
	co.forget_ns = forget * GSINK_NS;
	co.max_entries = o->max_entries;
	gcache_init(&s->cache, &co);
	s->expire_every_ns = forget * GSINK_NS / 4;
	if (s->expire_every_ns > 60 * GSINK_NS)
		s->expire_every_ns = 60 * GSINK_NS;
	/* Two ticks' worth (and at least 10 ms worth), so a timer firing
	 * late loses no pace. */
	s->burst = o->pace / 100.0;
	if (s->burst < 2.0 * o->pace * o->tick_ms / 1000.0)
		s->burst = 2.0 * o->pace * o->tick_ms / 1000.0;
	if (s->burst < 16)
		s->burst = 16;
	s->tokens = s->burst;
}

/* The reason as the one line to log: "gmond_conf PATH: REASON". */
static int
conf_error(struct lh_err *err, const char *path, int rc)
{
	char reason[LH_ERR_REASON_MAX];

	if (err == NULL)
		return rc;
	memcpy(reason, err->reason, sizeof(reason));
	return lh_err_set(err, 0, rc, "gmond_conf %s: %s", path, reason);
}

/* A sink with the options o, checked, and nothing open yet; NULL with
 * *rc and err set when o is unusable or memory short. */
static struct gsink *
sink_new(const struct gsink_opts *o, int *rc, struct lh_err *err)
{
	struct gsink *s;

	if (o->group == NULL || strlen(o->group) > GSINK_GROUP_MAX ||
	    (o->group[0] != '\0' && !gcache_metric_ok(o->group))) {
		*rc = lh_err_set(err, 0, -EINVAL,
		    "group must be 0-%d of [A-Za-z0-9_.-]", GSINK_GROUP_MAX);
		return NULL;
	}
	if (o->pace > GSINK_PACE_MAX) {
		*rc = lh_err_set(err, 0, -EINVAL, "pace must be 0-%d",
		    GSINK_PACE_MAX);
		return NULL;
	}
	if (o->tick_ms == 0 || o->tick_ms > GSINK_TICK_MAX_MS) {
		*rc = lh_err_set(err, 0, -EINVAL, "tick must be 1-%d ms",
		    GSINK_TICK_MAX_MS);
		return NULL;
	}
	if (o->max_entries == 0 || o->max_entries > UINT32_MAX / 2) {
		*rc = lh_err_set(err, 0, -EINVAL, "bad max_entries");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		*rc = lh_err_set(err, 0, -ENOMEM, "out of memory");
		return NULL;
	}
	s->o = *o;
	(void)snprintf(s->group, sizeof(s->group), "%s", o->group);
	s->o.group = s->group;
	return s;
}

int
gsink_open(const char *gmond_conf, const struct gsink_opts *o,
    struct gsink **ret, struct lh_err *err)
{
	char libpath[64];
	struct gsink_opts def;
	struct gsink *s;
	Ganglia_gmond_config cfg;
	int mfd, rc;

	lh_err_clear(err);
	if (o == NULL) {
		gsink_opts_default(&def);
		o = &def;
	}
	s = sink_new(o, &rc, err);
	if (s == NULL)
		return rc;
	rc = gapi_load(&s->api, gapi_soname, err);
	if (rc < 0)
		goto out_free;
	mfd = sinkconf_snapshot(gmond_conf, libpath, sizeof(libpath), err);
	if (mfd < 0) {
		rc = mfd;
		goto out_free;
	}
	rc = sinkconf_check(&s->api, libpath, o->check_timeout_ms, s->chan_desc,
	    sizeof(s->chan_desc), err);
	if (rc < 0)
		goto out_memfd;

	/* The child built exactly this from the same bytes: libganglia will
	 * not end this process now, short of a name that stopped resolving
	 * within the last milliseconds or running out of descriptors. */
	s->pool = s->api.pool_create(NULL);
	if (s->pool == NULL) {
		rc = lh_err_set(err, 0, -ENOMEM, "cannot create an APR pool");
		goto out_memfd;
	}
	cfg = s->api.gmond_config_create(libpath, 0);
	s->channels = s->api.udp_send_channels_create(s->pool, cfg);
	if (s->channels == NULL) {
		rc = lh_err_set(err, 0, -EINVAL, "no udp_send_channel");
		goto out_pool;
	}
	(void)close(mfd);
	init_cache_and_pace(s);
	*ret = s;
	return 0;

out_pool:
	s->api.pool_destroy(s->pool);
out_memfd:
	(void)close(mfd);
out_free:
	free(s);
	return conf_error(err, gmond_conf, rc);
}

/* The value as gmond will show it: two decimals, as the legacy tool. */
static void
format_value(char *buf, size_t size, double v)
{
	if (fabs(v) < 0.005)
		(void)snprintf(buf, size, "0.00"); /* never "-0.00" */
	else if (fabs(v) < 1e15)
		(void)snprintf(buf, size, "%.2f", v);
	else
		(void)snprintf(buf, size, "%.6e", v);
}

/* Send e's value, preceded by its metadata when meta; returns what
 * happened to the metadata, and counts. */
static enum gcache_meta
send_entry(struct gsink *s, struct gcache_entry *e, bool meta)
{
	char value[64], type[] = "float", spoof_key[] = SPOOF_HOST;
	enum gcache_meta res = GCACHE_META_NONE;
	Ganglia_metric gm;
	int nerr;

	gm = s->api.metric_create(s->pool);
	if (gm == NULL) {
		s->rejected++;
		return meta ? GCACHE_META_FAILED : GCACHE_META_NONE;
	}
	format_value(value, sizeof(value), e->value);
	if (s->api.metric_set(gm, e->key + e->metric_off, value, type,
	        e->key + e->units_off, GANGLIA_SLOPE_BOTH, s->o.tmax,
	        s->o.dmax) != 0) {
		/* 1-4: bad parameter, '"', type, not a number; gcache
		 * checked all of them. */
		s->rejected++;
		s->api.metric_destroy(gm);
		return meta ? GCACHE_META_FAILED : GCACHE_META_NONE;
	}
	s->api.metadata_add(gm, spoof_key, e->key);
	if (meta) {
		if (s->group[0] != '\0') {
			char group_key[] = "GROUP";

			s->api.metadata_add(gm, group_key, s->group);
		}
		nerr = s->api.metadata_send(gm, s->channels);
		s->metadata++;
		s->send_errors += (unsigned)nerr;
		res = nerr == 0 ? GCACHE_META_SENT : GCACHE_META_FAILED;
	}
	nerr = s->api.value_send(gm, s->channels);
	s->values++;
	s->send_errors += (unsigned)nerr;
	if (nerr != 0 && res == GCACHE_META_SENT)
		res = GCACHE_META_FAILED; /* gmond may have missed both */
	s->api.metric_destroy(gm);
	return res;
}

int
gsink_put(struct gsink *s, const char *spoof_ip, const char *host,
    const char *metric, const char *units, double value, uint64_t now_ns)
{
	char spoof[GCACHE_SPOOF_MAX + 1];
	int rc;

	rc = gcache_spoof(spoof, sizeof(spoof), spoof_ip, host);
	if (rc < 0)
		return rc;
	return gcache_put(&s->cache, spoof, metric, units, value, now_ns);
}

size_t
gsink_flush(struct gsink *s, uint64_t now_ns)
{
	struct gcache_entry *e;

	if (s->o.pace > 0 && now_ns > s->tokens_ns) {
		s->tokens += (double)(now_ns - s->tokens_ns) * s->o.pace / 1e9;
		if (s->tokens > s->burst)
			s->tokens = s->burst;
	}
	s->tokens_ns = now_ns;
	while ((e = gcache_head(&s->cache)) != NULL) {
		bool meta = gcache_meta_due(&s->cache, e, now_ns);
		double need = meta ? 2 : 1;
		uint64_t errs = s->send_errors;

		if (s->o.pace > 0 && s->tokens < need)
			break;
		gcache_pop(&s->cache, send_entry(s, e, meta), now_ns);
		if (s->o.pace > 0)
			s->tokens -= need;
		/* gmond down (or restarted): whatever it gets next may be
		 * values of metrics it no longer knows. */
		if (s->send_errors != errs &&
		    gcache_force_meta(&s->cache, now_ns))
			s->forced++;
	}
	if (gcache_pending(&s->cache) == 0 &&
	    now_ns - s->last_expire_ns >= s->expire_every_ns) {
		(void)gcache_expire(&s->cache, now_ns);
		s->last_expire_ns = now_ns;
	}
	return gcache_pending(&s->cache);
}

unsigned
gsink_tick_ms(const struct gsink *s)
{
	return s->o.tick_ms;
}

const char *
gsink_channels(const struct gsink *s)
{
	return s->chan_desc;
}

void
gsink_stats(const struct gsink *s, struct gsink_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->values = s->values;
	ret->metadata = s->metadata;
	ret->send_errors = s->send_errors;
	ret->coalesced = s->cache.coalesced;
	ret->refused = s->cache.refused;
	ret->rejected = s->rejected;
	ret->forgotten = s->cache.forgotten;
	ret->forced = s->forced;
	ret->entries = s->cache.n;
	ret->pending = gcache_pending(&s->cache);
}

void
gsink_close(struct gsink *s)
{
	if (s == NULL)
		return;
	gcache_free(&s->cache);
	/* Closes the channels' sockets; the parsed gmond.conf is libconfuse
	 * memory libganglia has no exported way to free. */
	s->api.pool_destroy(s->pool);
	free(s);
}
