/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Ganglia sink (see sink.h): with gapi.c (the library's entry
 * points) and sink_conf.c (gmond.conf checked in a child first), the only
 * code that sees libganglia.
 *
 * The packets are the bytes of ganglia's own gmetric.c for --spoof
 * (Ganglia_metric_create, Ganglia_metric_set, Ganglia_metadata_add of
 * SPOOF_HOST "ip:host" and GROUP), except that Ganglia_metric_send, which
 * always sends metadata and value, is replaced by Ganglia_metadata_send
 * when metadata is due and Ganglia_value_send for the value.  They are
 * encoded by libganglia's XDR functions once per (host, metric) and kept
 * in the cache; per value only the value's text is written (sink_xdr.c).
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ganglia.h>

#include "gapi.h"
#include "gcache.h"
#include "sink.h"
#include "sink_chan.h"
#include "sink_conf.h"
#include "sink_gso.h"
#include "sink_xdr.h"

#define GSINK_CHANNELS_MAX 256
#define GSINK_NS           1000000000ULL

_Static_assert(GSINK_BATCH <= SINKGSO_MAX, "a batch is grouped whole");

/* The packets of one sendmmsg(), and which entry each belongs to. */
struct gsink_batch {
	char buf[GSINK_BATCH][SINKXDR_MAX];
	struct iovec iov[GSINK_BATCH];
	struct mmsghdr msg[GSINK_BATCH];
	bool failed[GSINK_BATCH];
	uint8_t cls[GSINK_BATCH]; /* per packet: 0 metadata, 1 value */
	struct sinkgso gso;       /* the packets grouped by length */
	bool due[GSINK_BATCH];    /* per entry: its metadata was due */
	/* per entry: its metadata packet and its value packet, -1 = none
	 * (metadata not due, or a packet that did not encode) */
	int meta[GSINK_BATCH], value[GSINK_BATCH];
};

struct gsink {
	struct gapi api;   /* libganglia, opened for the first sink */
	Ganglia_pool pool; /* owns the channels' sockets */
	Ganglia_udp_send_channels channels;
	struct sinkchan chans; /* their sockets */
	struct sinkxdr xdr;
	struct gsink_batch *batch;
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
	o->tick_ms = 0;
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
	if (o->tick_ms == 0) {
		/* One batch a tick: 1-10 ms. */
		s->o.tick_ms = o->pace > 0 ? GSINK_BATCH * 1000 / o->pace : 10;
		if (s->o.tick_ms < 1)
			s->o.tick_ms = 1;
		if (s->o.tick_ms > 10)
			s->o.tick_ms = 10;
	}
	/* Two ticks' worth (and at least 10 ms worth), so a timer firing
	 * late loses no pace. */
	s->burst = o->pace / 100.0;
	if (s->burst < 2.0 * o->pace * s->o.tick_ms / 1000.0)
		s->burst = 2.0 * o->pace * s->o.tick_ms / 1000.0;
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

/* 0 if the options are usable, else a negative errno and the reason. */
static int
check_opts(const struct gsink_opts *o, struct lh_err *err)
{
	if (o->group == NULL || strlen(o->group) > GSINK_GROUP_MAX ||
	    (o->group[0] != '\0' && !gcache_metric_ok(o->group)))
		return lh_err_set(err, 0, -EINVAL,
		    "group must be 0-%d of [A-Za-z0-9_.-]", GSINK_GROUP_MAX);
	if (o->pace > GSINK_PACE_MAX)
		return lh_err_set(err, 0, -EINVAL, "pace must be 0-%d",
		    GSINK_PACE_MAX);
	if (o->tick_ms > GSINK_TICK_MAX_MS)
		return lh_err_set(err, 0, -EINVAL, "tick must be 0-%d ms",
		    GSINK_TICK_MAX_MS);
	if (o->max_entries == 0 || o->max_entries > UINT32_MAX / 2)
		return lh_err_set(err, 0, -EINVAL, "bad max_entries");
	return 0;
}

/* A sink with the options o, checked, and nothing open yet; NULL with
 * *rc and err set when o is unusable or memory short. */
static struct gsink *
sink_new(const struct gsink_opts *o, int *rc, struct lh_err *err)
{
	struct gsink *s;
	size_t i;

	*rc = check_opts(o, err);
	if (*rc < 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s != NULL)
		s->batch = calloc(1, sizeof(*s->batch));
	if (s == NULL || s->batch == NULL) {
		free(s);
		*rc = lh_err_set(err, 0, -ENOMEM, "out of memory");
		return NULL;
	}
	/* Each packet of a batch is one buffer of its own. */
	for (i = 0; i < GSINK_BATCH; i++) {
		s->batch->iov[i].iov_base = s->batch->buf[i];
		s->batch->msg[i].msg_hdr.msg_iov = &s->batch->iov[i];
		s->batch->msg[i].msg_hdr.msg_iovlen = 1;
	}
	s->o = *o;
	(void)snprintf(s->group, sizeof(s->group), "%s", o->group);
	s->o.group = s->group;
	s->xdr.api = &s->api;
	s->xdr.group = s->group;
	s->xdr.tmax = o->tmax;
	s->xdr.dmax = o->dmax;
	return s;
}

/*
 * Open the channels of libpath as the child did, and find their sockets.
 * The child built exactly this from the same bytes: libganglia will not
 * end this process now, short of a name that stopped resolving within
 * the last milliseconds or running out of descriptors.
 */
static int
open_channels(struct gsink *s, char *libpath, struct lh_err *err)
{
	int *before = NULL;
	Ganglia_gmond_config cfg;
	size_t nbefore = 0;
	int rc;

	s->pool = s->api.pool_create(NULL);
	if (s->pool == NULL)
		return lh_err_set(err, 0, -ENOMEM, "cannot create an APR pool");
	cfg = s->api.gmond_config_create(libpath, 0);
	rc = sinkchan_list(&before, &nbefore);
	if (rc < 0) {
		s->api.pool_destroy(s->pool);
		return lh_err_set(err, 0, rc,
		    "cannot list this process's sockets");
	}
	s->channels = s->api.udp_send_channels_create(s->pool, cfg);
	rc = s->channels == NULL ? -EINVAL :
	                           sinkchan_find(&s->chans, before, nbefore);
	free(before);
	if (rc <= 0) {
		s->api.pool_destroy(s->pool);
		if (s->channels == NULL)
			return lh_err_set(err, 0, -EINVAL,
			    "no udp_send_channel");
		return lh_err_set(err, 0, rc < 0 ? rc : -ENOTSOCK,
		    "cannot find the sockets libganglia opened for its "
		    "channels");
	}
	return 0;
}

int
gsink_open(const char *gmond_conf, const struct gsink_opts *o,
    struct gsink **ret, struct lh_err *err)
{
	char libpath[64];
	struct gsink_opts def;
	struct gsink *s;
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

	rc = open_channels(s, libpath, err);
	if (rc < 0)
		goto out_memfd;
	(void)close(mfd);
	init_cache_and_pace(s);
	*ret = s;
	return 0;

out_memfd:
	(void)close(mfd);
out_free:
	free(s->batch);
	free(s);
	return conf_error(err, gmond_conf, rc);
}

/*
 * Put the entries waiting, from the head, into the batch while the tokens
 * (need) and the batch last; returns how many entries, *ret_pkts their
 * packets.  An entry's packets are built once (libganglia's encoders);
 * then its metadata goes out from the entry itself and its value packet
 * is the prefix and the value's text.  Nothing is popped yet: what
 * happens to each packet decides what gcache_pop() is told.
 */
static size_t
fill_batch(struct gsink *s, uint64_t now_ns, size_t *ret_pkts)
{
	struct gsink_batch *b = s->batch;
	struct gcache_entry *e;
	size_t n = 0, p = 0;

	while ((e = gcache_peek(&s->cache, n)) != NULL) {
		bool meta = gcache_meta_due(&s->cache, e, now_ns);
		size_t need = meta ? 2 : 1, len;

		if (p + need > GSINK_BATCH ||
		    (s->o.pace > 0 && s->tokens < (double)(p + need)))
			break;
		b->meta[n] = b->value[n] = -1;
		b->due[n] = meta;
		if (e->pkt == NULL)
			(void)sinkxdr_build(&s->xdr, e); /* else no packets */
		if (meta && e->pkt != NULL) {
			b->iov[p].iov_base = e->pkt;
			b->iov[p].iov_len = e->pkt_meta_len;
			b->cls[p] = 0;
			b->meta[n] = (int)p++;
		}
		if ((len = sinkxdr_value(e, b->buf[p])) > 0) {
			b->iov[p].iov_base = b->buf[p];
			b->iov[p].iov_len = len;
			b->cls[p] = 1;
			b->value[n] = (int)p++;
		}
		n++;
	}
	*ret_pkts = p;
	return n;
}

/* The batch's n entries after their p packets went out: counts, and
 * each entry popped with what happened to its metadata. */
static void
settle_batch(struct gsink *s, size_t n, uint64_t now)
{
	const struct gsink_batch *b = s->batch;
	size_t i;

	for (i = 0; i < n; i++) {
		enum gcache_meta res = GCACHE_META_NONE;
		bool vfail = b->value[i] < 0 || b->failed[b->value[i]];

		if (b->value[i] >= 0)
			s->values++;
		else
			s->rejected++; /* never expected: gcache checked it */
		if (b->meta[i] >= 0) {
			s->metadata++;
			/* a lost value: gmond may have missed both */
			res = b->failed[b->meta[i]] || vfail ?
			    GCACHE_META_FAILED :
			    GCACHE_META_SENT;
		} else if (b->due[i]) {
			s->rejected++;
			res = GCACHE_META_FAILED;
		}
		gcache_pop(&s->cache, res, now);
	}
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
	struct gsink_batch *b = s->batch;
	size_t n, p;

	if (s->o.pace > 0 && now_ns > s->tokens_ns) {
		s->tokens += (double)(now_ns - s->tokens_ns) * s->o.pace / 1e9;
		if (s->tokens > s->burst)
			s->tokens = s->burst;
	}
	s->tokens_ns = now_ns;
	while ((n = fill_batch(s, now_ns, &p)) > 0) {
		unsigned errs;

		memset(b->failed, 0, sizeof(b->failed));
		errs = 0;
		if (p > 0) {
			sinkgso_group(&b->gso, b->iov, b->cls, p);
			errs = sinkchan_send(&s->chans, b->msg, p, &b->gso,
			    b->failed);
		}
		settle_batch(s, n, now_ns);
		if (s->o.pace > 0)
			s->tokens -= (double)p;
		s->send_errors += errs;
		/* gmond down (or restarted): whatever it gets next may be
		 * values of metrics it no longer knows. */
		if (errs > 0 && gcache_force_meta(&s->cache, now_ns))
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
	free(s->batch);
	/* Closes the channels' sockets; the parsed gmond.conf is libconfuse
	 * memory libganglia has no exported way to free. */
	s->api.pool_destroy(s->pool);
	free(s);
}
