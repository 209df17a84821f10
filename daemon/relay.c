/* SPDX-License-Identifier: BSD-2-Clause */
/* The relay's routes, their uplinks (uplink.h) and state (relay.h). */
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "err.h"
#include "ledger.h"
#include "log.h"
#include "ratelog.h"
#include "msg.h"
#include "netroute.h"
#include "outbox.h"
#include "relay.h"
#include "rstate.h"
#include "sender.h"
#include "statedir.h"
#include "status.h"
#include "sweeps.h"
#include "uplink.h"

#define UNROUTED_LOG_NS (600 * CLOCK_NS_PER_S)

struct route {
	const struct lh_route *conf;
	char label[80];   /* "route alpha" */
	struct uplink up; /* its outbox and sender (uplink.h) */
	struct relay *r;
	uint64_t dropped_logged; /* up.ob.dropped already logged */
	bool splitting;          /* the last batch numbered was cut to fit */
	/* For the status snapshot (relay_status()). */
	uint64_t acked;      /* batches the head node acknowledged */
	size_t clients;      /* routed in the sweep being closed */
	size_t clients_last; /* ... in the last one committed */
};

struct relay {
	const struct lh_config *cfg;
	const struct keyring *keys;
	char state_path[4096];
	struct netroute *table;
	struct route *routes;
	size_t nroutes;
	/* Clients of the sweep being closed that no route takes. */
	size_t unrouted;
	char first_unrouted[NID_STR_MAX];
	struct ratelog unrouted_rl; /* the unrouted-clients line */
	bool save_failing;          /* logged once until a save succeeds */
	/* The state file could not be restored (relay_restore() failed):
	 * never overwritten, should this relay run anyway (a reload). */
	bool state_refused;
	/* Restore: clients of routes no longer configured. */
	size_t rerouted, lost;
	uint64_t clients_sweep; /* the sweep of the routes' clients_last */
};

int
relay_new(const struct lh_config *cfg, const struct keyring *keys,
    const char *state_path, struct relay **ret)
{
	struct relay *r = calloc(1, sizeof(*r));
	struct lh_err err;
	size_t i, j;

	if (r == NULL || (r->table = netroute_new()) == NULL ||
	    (r->routes = calloc(cfg->nroutes, sizeof(*r->routes))) == NULL) {
		log_warnx("out of memory");
		relay_free(r);
		return -1;
	}
	r->cfg = cfg;
	r->keys = keys;
	(void)snprintf(r->state_path, sizeof(r->state_path), "%s", state_path);
	for (i = 0; i < cfg->nroutes; i++) {
		const struct lh_route *rc = &cfg->routes[i];

		r->routes[i].conf = rc;
		r->routes[i].r = r;
		/* Without saved state, batch numbers start from the clock
		 * (docs/protocol.md 5): never taken for resends. */
		uplink_init(&r->routes[i].up, clock_realtime_ns() / 1000);
		r->nroutes++;
		for (j = 0; j < rc->nnetworks; j++) {
			if (netroute_add(r->table, (unsigned)i, rc->networks[j],
			        &err) < 0) {
				log_warnx("%s: route '%s': %s", cfg->path,
				    rc->name, err.reason);
				relay_free(r);
				return -1;
			}
		}
	}
	*ret = r;
	return 0;
}

/* The route of a NID: its network's, else the default, else -1. */
static int
route_of(const struct relay *r, const char *nid)
{
	int i = netroute_lookup(r->table, nid);

	return i >= 0 ? i : r->cfg->default_route;
}

/* ---- restore --------------------------------------------------------- */

struct restore_ctx {
	struct relay *r;
	struct ledger *ledger;
};

static int
restore_ledger(void *arg, const char *sender, uint64_t batch)
{
	struct restore_ctx *c = arg;
	struct lh_err err;

	/* The file says these batches became the deltas restored with it;
	 * a crash may have come before the ledger learnt it. */
	if (ledger_get(c->ledger, sender, NULL) < batch &&
	    ledger_set(c->ledger, sender, batch, &err) < 0)
		log_warnx("ledger: %s", err.reason);
	return 0;
}

/* The records of batch b, routed again into the routes' pending
 * batches (their route is gone from the configuration). */
static void
reroute(struct relay *r, const struct outbox_batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		const struct outbox_rec *rec = &b->recs[i];
		int k = route_of(r, outbox_rec_nid(b, rec));
		uint64_t cspans[MSG_NCOUNTERS];
		struct mdops ops;

		outbox_rec_cspans(b, rec, cspans);
		if (k < 0 ||
		    outbox_add(&r->routes[k].up.ob, outbox_rec_fs(b, rec),
		        outbox_rec_nid(b, rec), &rec->d,
		        outbox_rec_ops(b, rec, &ops), rec->span_us, cspans,
		        b->last_sweep, b->start_ns) < 0)
			r->lost++;
		else
			r->rerouted++;
	}
}

static int
restore_route(void *arg, const char *name, struct outbox *ob)
{
	struct restore_ctx *c = arg;
	struct relay *r = c->r;
	size_t i;

	for (i = 0; i < r->nroutes; i++) {
		if (strcmp(r->routes[i].conf->name, name) == 0) {
			outbox_free(&r->routes[i].up.ob);
			r->routes[i].up.ob = *ob; /* moved */
			return 0;
		}
	}
	if (ob->have_inflight)
		reroute(r, &ob->inflight);
	reroute(r, &ob->pending);
	outbox_free(ob);
	return 0;
}

/* Every route's outbox emptied: what a failed restore left half-filled. */
static void
routes_clear(struct relay *r)
{
	size_t i;

	for (i = 0; i < r->nroutes; i++) {
		outbox_free(&r->routes[i].up.ob);
		outbox_init(&r->routes[i].up.ob, clock_realtime_ns() / 1000);
	}
	r->rerouted = 0;
	r->lost = 0;
}

/*
 * A relay.state that cannot be used holds deltas whose batches were
 * acknowledged upstream and recorded in the ledger: their senders will
 * never send them again, so starting without it would lose them for
 * good, silently.  The relay does not start; the file stays as it is.
 * The gatherers keep their deltas meanwhile (coalesced, bounded), so
 * waiting loses nothing more; an operator who accepts the loss moves the
 * file aside (docs/relay.md).
 */
static void
refuse_state(const struct relay *r, const char *reason)
{
	struct stat sb;
	char when[32] = "?";
	struct tm tm;

	if (lstat(r->state_path, &sb) == 0 &&
	    gmtime_r(&sb.st_mtime, &tm) != NULL)
		(void)strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	log_warnx("%s: %s; not starting: it holds the deltas of batches "
	          "already acknowledged upstream (saved %s), which their "
	          "senders will not send again; fix it, or move it aside to "
	          "start without them (they are then lost)",
	    r->state_path, reason, when);
}

int
relay_restore(struct relay *r, struct ledger *ledger)
{
	struct restore_ctx c = {r, ledger};
	const struct rstate_cb cb = {restore_ledger, restore_route, &c};
	struct lh_err err;
	size_t i, pending = 0;
	unsigned tries = 0;
	int rc;

	for (;;) {
		rc = rstate_load(r->state_path, &cb, &err);
		if (rc == 0 || rc == -ENOENT || rc == -EBADMSG ||
		    ++tries == STATEDIR_LOAD_TRIES)
			break;
		log_warnx("%s: %s; trying again", r->state_path, err.reason);
		routes_clear(r);
		(void)sleep(1);
	}
	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		routes_clear(r);
		refuse_state(r, err.reason);
		r->state_refused = true;
		return -1;
	}
	for (i = 0; i < r->nroutes; i++) {
		struct outbox *ob = &r->routes[i].up.ob;

		/* Saved by a version that did not split: a batch in flight
		 * too large for the frame was never sent, and is split. */
		if (outbox_fit(ob, outbox_payload_max(r->cfg->max_frame)) > 0)
			log_warnx(
			    "route %s: batch %" PRIu64 " in flight larger "
			    "than max_frame (%u bytes): split, %zu client "
			    "records in it, the others in the next batches",
			    r->routes[i].conf->name, ob->inflight.batch,
			    r->cfg->max_frame, ob->inflight.n);
		pending +=
		    ob->pending.n + (ob->have_inflight ? ob->inflight.n : 0);
	}
	log_info("state restored: %zu client records not yet acknowledged "
	         "downstream",
	    pending);
	if (r->rerouted > 0 || r->lost > 0)
		log_warnx(
		    "%s: %zu client records of routes no longer "
		    "configured routed again, %zu without a route dropped",
		    r->state_path, r->rerouted, r->lost);
	return 0;
}

/* ---- delivery -------------------------------------------------------- */

static void
fill_hello(void *arg, struct msg_hello *h)
{
	const struct route *rt = arg;

	h->role = MSG_ROLE_RELAY;
	h->interval = rt->r->cfg->interval;
}

static void
acked(void *arg, uint64_t batch, bool duplicate)
{
	struct route *rt = arg;

	rt->acked++;
	log_debug("route %s: batch %" PRIu64 " acknowledged%s", rt->conf->name,
	    batch, duplicate ? " (it had it already)" : "");
}

int
relay_start(struct relay *r, struct event_base *base)
{
	size_t i;

	for (i = 0; i < r->nroutes; i++) {
		struct route *rt = &r->routes[i];
		const struct uplink_peer peer = {
		    .host = rt->conf->host,
		    .port = rt->conf->port,
		    .label = rt->label,
		    .keys = r->keys,
		    .fill_hello = fill_hello,
		    .on_acked = acked,
		    .arg = rt,
		};

		(void)snprintf(rt->label, sizeof(rt->label), "route %s",
		    rt->conf->name);
		if (uplink_connect(&rt->up, base, r->cfg, &peer) < 0)
			return -1;
	}
	return 0;
}

/* Each counter's span for a rate: delta / span = rate exactly (to the
 * microsecond), so that the downstream shows the relay's rates. */
static uint64_t
span_of(uint64_t delta, double rate, uint64_t dflt)
{
	double s;

	if (delta == 0 || !(rate > 0))
		return dflt;
	s = (double)delta * 1e6 / rate + 0.5;
	if (s < 1)
		return 1;
	if (s >= 9.2e18)
		return (uint64_t)INT64_MAX;
	return (uint64_t)s;
}

void
relay_add(struct relay *r, uint64_t sweep_id, unsigned interval_s,
    const struct sweeps_client *c)
{
	uint64_t v[IOCOUNT_N], cspan[IOCOUNT_N], ivl = interval_s * 1000000ULL;
	uint64_t span = 0;
	int k = route_of(r, c->nid);
	unsigned i;

	if (k < 0) {
		if (r->unrouted++ == 0)
			(void)snprintf(r->first_unrouted,
			    sizeof(r->first_unrouted), "%s", c->nid);
		return;
	}
	r->routes[k].clients++;
	iocount_to_array(&c->d, v);
	for (i = 0; i < IOCOUNT_N; i++) {
		cspan[i] = span_of(v[i], c->rate[i], ivl);
		if (span == 0 && v[i] != 0)
			span = cspan[i];
	}
	if (span == 0)
		span = ivl;
	/* -ENOSPC is counted in the outbox (logged at commit). */
	(void)outbox_add(&r->routes[k].up.ob, c->fs, c->nid, &c->d,
	    c->ops != NULL && !mdops_is_zero(&c->ops->d) ? &c->ops->d : NULL,
	    span, cspan, sweep_id, (sweep_id - interval_s) * CLOCK_NS_PER_S);
}

static int
save(struct relay *r, const struct sweeps_ack *acks, size_t nacks)
{
	struct rstate_ledger *l = NULL;
	struct rstate_route *rr;
	struct lh_err err;
	size_t i;
	int rc;

	if (r->state_refused) {
		(void)lh_err_set(&err, 0, -EBADMSG,
		    "not overwritten: it could not be restored");
		rc = -EBADMSG;
		goto out;
	}
	rr = calloc(r->nroutes > 0 ? r->nroutes : 1, sizeof(*rr));
	if (nacks > 0)
		l = calloc(nacks, sizeof(*l));
	if (rr == NULL || (nacks > 0 && l == NULL)) {
		free(rr);
		free(l);
		(void)lh_err_set(&err, 0, -ENOMEM, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nacks; i++) {
		l[i].sender = acks[i].sender;
		l[i].batch = acks[i].batch;
	}
	for (i = 0; i < r->nroutes; i++) {
		rr[i].name = r->routes[i].conf->name;
		rr[i].ob = &r->routes[i].up.ob;
	}
	rc = rstate_save(r->state_path, l, nacks, rr, r->nroutes, &err);
	free(rr);
	free(l);
out:
	if (rc < 0 && !r->save_failing)
		log_warnx("%s: %s; holding acknowledgements back",
		    r->state_path, err.reason);
	else if (rc == 0 && r->save_failing)
		log_info("%s: saved again", r->state_path);
	r->save_failing = rc < 0;
	return rc;
}

/*
 * Number a route's pending batch, cut to fit the downstream's frame (a
 * batch that could never be sent would hold the route, and every ACK
 * given upstream for its deltas, for good): true when a batch was
 * numbered now.
 */
static bool
route_seal(struct relay *r, struct route *rt)
{
	bool was = outbox_ready(&rt->up.ob);
	int rc;

	rc = outbox_seal_within(&rt->up.ob,
	    outbox_payload_max(r->cfg->max_frame));
	if (rc < 0) {
		log_warnx("route %s: cannot number the next batch: %s; holding "
		          "it back",
		    rt->conf->name, strerror(-rc));
		return false;
	}
	if (was || !outbox_ready(&rt->up.ob))
		return false;
	if (rc > 0 && !rt->splitting)
		log_warnx("route %s: batch %" PRIu64 " larger than max_frame "
		          "(%u bytes): %zu client records in it, %zu left for "
		          "the next batches",
		    rt->conf->name, rt->up.ob.inflight.batch, r->cfg->max_frame,
		    rt->up.ob.inflight.n, rt->up.ob.pending.n);
	else if (rc == 0 && rt->splitting)
		log_info("route %s: batch %" PRIu64 " within max_frame again",
		    rt->conf->name, rt->up.ob.inflight.batch);
	rt->splitting = rc > 0;
	return true;
}

int
relay_commit(struct relay *r, uint64_t sweep_id, const struct sweeps_ack *acks,
    size_t nacks)
{
	bool sealed[NETROUTE_MAX_ROUTES] = {false};
	size_t i;

	if (r->unrouted > 0 &&
	    ratelog_every(&r->unrouted_rl, clock_monotonic_ns(),
	        UNROUTED_LOG_NS, NULL)) {
		log_warnx("sweep %" PRIu64 ": %zu clients on networks no route "
		          "takes (%s, ...): add a route, or default_route",
		    sweep_id, r->unrouted, r->first_unrouted);
	}
	r->unrouted = 0;
	/* Number the batches before saving, as a gatherer does: every
	 * number ever sent is in the saved state. */
	for (i = 0; i < r->nroutes; i++) {
		struct route *rt = &r->routes[i];

		sealed[i] = route_seal(r, rt);
		if (sweep_id != r->clients_sweep) { /* not a save again */
			rt->clients_last = rt->clients;
			rt->clients = 0;
		}
		if (rt->up.ob.dropped > rt->dropped_logged) {
			log_warnx("route %s: %" PRIu64 " client records "
			          "dropped: more clients than an outbox holds",
			    rt->conf->name,
			    rt->up.ob.dropped - rt->dropped_logged);
			rt->dropped_logged = rt->up.ob.dropped;
		}
	}
	r->clients_sweep = sweep_id;
	if (save(r, acks, nacks) < 0) {
		/* What could not be saved must not be sent: back to pending,
		 * sealed again with the next sweep's. */
		for (i = 0; i < r->nroutes; i++) {
			if (sealed[i])
				(void)outbox_unseal(&r->routes[i].up.ob);
		}
		return -1;
	}
	for (i = 0; i < r->nroutes; i++)
		uplink_kick(&r->routes[i].up);
	return 0;
}

void
relay_rebind(struct relay *r, const struct lh_config *cfg)
{
	size_t i;

	r->cfg = cfg;
	for (i = 0; i < r->nroutes && i < cfg->nroutes; i++)
		r->routes[i].conf = &cfg->routes[i];
}

void
relay_free(struct relay *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nroutes; i++)
		uplink_free(&r->routes[i].up);
	free(r->routes);
	netroute_free(r->table);
	free(r);
}

/* A route's networks as one string: "o2ib2, tcp102", with "*" when it
 * is the default route. */
static void
nets_of(const struct lh_route *rc, bool dflt, char *out, size_t size)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i <= rc->nnetworks && len < size; i++) {
		const char *net = i < rc->nnetworks ? rc->networks[i] : "*";
		int w;

		if (i == rc->nnetworks && !dflt)
			break;
		w = snprintf(out + len, size - len, "%s%s", i > 0 ? ", " : "",
		    net);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

int
relay_status(const struct relay *r, struct status_route **ret, size_t *ret_n)
{
	struct status_route *v;
	size_t i;

	*ret = NULL;
	*ret_n = 0;
	if (r->nroutes == 0)
		return 0;
	v = calloc(r->nroutes, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	for (i = 0; i < r->nroutes; i++) {
		const struct route *rt = &r->routes[i];
		const struct outbox *ob = &rt->up.ob;

		(void)snprintf(v[i].name, sizeof(v[i].name), "%s",
		    rt->conf->name);
		(void)snprintf(v[i].dest, sizeof(v[i].dest),
		    strchr(rt->conf->host, ':') != NULL ? "[%s]:%u" : "%s:%u",
		    rt->conf->host, rt->conf->port);
		nets_of(rt->conf, (int)i == r->cfg->default_route, v[i].nets,
		    sizeof(v[i].nets));
		v[i].connected =
		    rt->up.snd != NULL && sender_connected(rt->up.snd);
		v[i].queued_batches =
		    (ob->have_inflight ? 1 : 0) + (ob->pending.n > 0 ? 1 : 0);
		v[i].batches_sent = rt->acked;
		v[i].clients_last_sweep = rt->clients_last;
	}
	*ret = v;
	*ret_n = r->nroutes;
	return 0;
}
