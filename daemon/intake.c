/* SPDX-License-Identifier: BSD-2-Clause */
/* The intake of the aggregator and relay roles (intake.h). */
#include <sys/socket.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cidr.h"
#include "clock.h"
#include "config.h"
#include "consumer.h"
#include "err.h"
#include "frame.h"
#include "intake.h"
#include "ledger.h"
#include "log.h"
#include "msg.h"
#include "receiver.h"
#include "roster.h"
#include "session.h"
#include "sweeps.h"
#include "wallclock.h"

#define RATELIMIT_NS (60 * CLOCK_NS_PER_S) /* repeated conditions */
/* How far ahead of this aggregator's wall clock a SWEEP's sweep id, and
 * the batch number of a sender with a ledger entry (microseconds, as a
 * sender without state numbers them), may be: beyond, refused
 * (docs/protocol.md section 6).  A day covers any clock in service. */
#define AHEAD_MAX_S  86400

/* Whether this occurrence gets its line (at most one a minute);
 * *ret_skipped: how many did not since the last one. */
static bool
ratelimit_pass(struct ratelog *r, uint64_t *ret_skipped)
{
	return ratelog_every(r, clock_monotonic_ns(), RATELIMIT_NS,
	    ret_skipped);
}

/* gatherer_networks: in name bound to networks is taken from them only
 * (issue 15, item 2); other names from wherever the listener admits. */
static int
check_bound(const struct intake *in, struct receiver_peer *p, const char *name,
    struct lh_err *err)
{
	const struct lh_bind *b = NULL;
	struct sockaddr_storage ss;
	size_t i;

	for (i = 0; i < in->cfg->nbinds && b == NULL; i++) {
		if (strcmp(in->cfg->binds[i].name, name) == 0)
			b = &in->cfg->binds[i];
	}
	if (b == NULL)
		return 0;
	if (receiver_peer_sockaddr(p, &ss) == 0) {
		for (i = 0; i < b->nnets; i++) {
			if (cidr_match(&b->nets[i],
			        (const struct sockaddr *)&ss))
				return 0;
		}
	}
	return lh_err_set(err, 0, -EACCES,
	    "not from the networks gatherer_networks binds this name to");
}

static int
on_hello(void *arg, struct receiver_peer *p, const struct msg_hello *h,
    struct lh_err *err)
{
	struct intake *in = arg;
	char name[MSG_NAME_MAX];
	int64_t skew = (int64_t)(h->time_ns - wallclock_ns(in->clock));

	log_safe(name, sizeof(name), h->name);
	if (check_bound(in, p, h->name, err) < 0)
		return -EACCES;
	const char *role = h->role == MSG_ROLE_RELAY ? "relay" : "gatherer";

	if (h->interval != in->cfg->interval)
		log_warnx("%s %s (%s): sweeps every %u s, this %s every %u s: "
		          "set the same interval",
		    role, name, receiver_peer_addr(p), h->interval,
		    config_role_name(in->cfg->role), in->cfg->interval);
	if (skew > 1000000000LL || skew < -1000000000LL)
		log_warnx("%s %s (%s): clock differs from ours by %.1f s", role,
		    name, receiver_peer_addr(p), (double)skew / 1e9);
	if (in->roster != NULL)
		roster_connected(in->roster, h->name, receiver_peer_addr(p));
	if (h->role == MSG_ROLE_RELAY)
		log_info("relay %s (%s): connected", name,
		    receiver_peer_addr(p));
	else
		log_info("gatherer %s (%s): connected, %u filesystems, %u "
		         "targets",
		    name, receiver_peer_addr(p), h->nfs, h->ntargets);
	return 0;
}

/*
 * A SWEEP's header, the whole payload checked, in the one pass that also
 * keeps its records for sweeps_add().  The one place that says what of
 * a SWEEP is refused: only one that cannot be decoded (the peer is
 * dropped with the reason).  What the decoder leaves out of one that
 * decodes (records of a filesystem whose name cannot be a metric name,
 * op counts above mds_ops) is noted by note_dropped() once it is counted.
 */
static int
sweep_header(struct intake *in, const struct session_frame *f,
    struct msg_sweep *h, struct lh_err *err)
{
	return sweeps_decode(in->sweeps, f->payload, f->hdr.len, h, err);
}

/* The first filesystem of h the decoder dropped, for the log. */
static void
first_dropped_fs(const struct msg_sweep *h, char *out, size_t size)
{
	unsigned i;

	(void)snprintf(out, size, "-");
	for (i = 0; i < h->nfs && i < 64; i++) {
		if ((h->fs_dropped & ((uint64_t)1 << i)) != 0) {
			log_safe(out, size, h->fs[i]);
			return;
		}
	}
}

/* A SWEEP counted without the parts the decoder could not use: counted,
 * and in line at most once in minute (issue 15, item 9). */
static void
note_dropped(struct intake *in, struct receiver_peer *p,
    const struct msg_sweep *h)
{
	char fs[MSG_FS_MAX];
	uint64_t skipped;

	if (h->ndropped == 0 && h->nops_dropped == 0)
		return;
	in->dropped_recs += h->ndropped;
	in->dropped_ops += h->nops_dropped;
	if (!ratelimit_pass(&in->dropped_rl, &skipped))
		return;
	first_dropped_fs(h, fs, sizeof(fs));
	log_warnx("gatherer %s (%s): batch %" PRIu64 ": %" PRIu32
	          " records of filesystems whose names cannot be metric "
	          "names (%s) and the op counts of %" PRIu32
	          " records above their mds_ops dropped, the rest counted "
	          "(%" PRIu64 " records and %" PRIu64
	          " op counts in all, %" PRIu64 " lines not logged)",
	    receiver_peer_name(p), receiver_peer_addr(p), h->batch, h->ndropped,
	    fs, h->nops_dropped, in->dropped_recs, in->dropped_ops, skipped);
}

/* A batch counted already, sent again (its ACK was lost): acknowledged
 * as in duplicate, counted, and logged at most once in minute. */
static void
ack_duplicate(struct intake *in, struct receiver_peer *p,
    const struct session_frame *f, uint64_t batch, uint64_t safe)
{
	struct msg_ack ack = {MSG_ACK_DUPLICATE, f->hdr.seq, batch,
	    wallclock_ns(in->clock)};
	uint64_t skipped;

	in->duplicates++;
	if (ratelimit_pass(&in->dup_rl, &skipped))
		log_info("gatherer %s (%s): batch %" PRIu64 " was counted "
		         "already (ledger: %" PRIu64 "), acknowledged as in "
		         "duplicate, not counted again; %" PRIu64
		         " duplicates in all, %" PRIu64 " not logged",
		    receiver_peer_name(p), receiver_peer_addr(p), batch, safe,
		    in->duplicates, skipped);
	(void)receiver_peer_ack(p, &ack);
}

/* The sender's ledger entry cannot be read: its batch is neither counted
 * nor acknowledged (the sender keeps it and sends it again), and the
 * file is left for the operator (docs/reliability.md section 3). */
static void
hold_batch(struct intake *in, struct receiver_peer *p, uint64_t batch,
    const struct lh_err *lerr)
{
	uint64_t skipped;

	in->held_batches++;
	if (ratelimit_pass(&in->held_rl, &skipped))
		log_warnx("ledger %s; gatherer %s: batch %" PRIu64
		          " held unacknowledged, not counted (%" PRIu64
		          " held, %" PRIu64 " not logged): write that "
		          "number minus one into the file, or remove it "
		          "(lharvestd.conf(5), FILES)",
		    lerr->reason, receiver_peer_name(p), batch,
		    in->held_batches, skipped);
}

/*
 * A batch number or sweep id no clock in service can give: refused with
 * in reason (the peer is dropped, one line) and not recorded, so that one
 * holder of the key cannot make every later batch of in gatherer in
 * "duplicate" (issue 15, items 2 and 14).  A sender with no ledger entry
 * is never refused for its batch number: it may number from in clock of
 * its own (docs/protocol.md section 5).
 */
static int
check_bounds(struct intake *in, const struct session_frame *f,
    const struct msg_sweep *h, uint64_t safe, struct lh_err *err)
{
	uint64_t now_s = wallclock_ns(in->clock) / CLOCK_NS_PER_S, skipped;
	uint64_t max_s = now_s + AHEAD_MAX_S;
	uint64_t max_us = max_s * 1000000u;
	int rc = 0;

	if (f->hdr.sweep_id > max_s)
		rc = lh_err_set(err, 0, -ERANGE,
		    "sweep id %" PRIu64 " more than %d s ahead of our "
		    "clock (%" PRIu64 "), refused",
		    f->hdr.sweep_id, AHEAD_MAX_S, now_s);
	else if (safe != 0 && h->batch > max_us)
		rc = lh_err_set(err, 0, -ERANGE,
		    "batch %" PRIu64 " above our clock in microseconds "
		    "plus %d s (%" PRIu64 "), refused, not recorded",
		    h->batch, AHEAD_MAX_S, max_us);
	if (rc < 0) {
		in->refused++;
		/* The receiver logs the drop; this says how often. */
		if (ratelimit_pass(&in->refused_rl, &skipped) && skipped > 0)
			log_warnx("%" PRIu64 " SWEEPs refused for their batch "
			          "number or sweep id in all",
			    in->refused);
	}
	return rc;
}

static int
on_frame(void *arg, struct receiver_peer *p, const struct session_frame *f,
    struct lh_err *err)
{
	struct intake *in = arg;
	const char *sender = receiver_peer_name(p);
	struct msg_sweep h;
	struct lh_err lerr;
	uint64_t safe;
	int v;

	if (f->hdr.type != FRAME_SWEEP)
		return 0; /* in later message type this version ignores */
	v = sweep_header(in, f, &h, err);
	if (v < 0)
		return v;
	if (consumers_held_resend(in->outs, sender, h.batch,
	        receiver_peer_id(p), f->hdr.seq))
		return 0;
	lh_err_clear(&lerr);
	if (ledger_lookup(in->ledger, sender, &safe, &lerr) < 0) {
		hold_batch(in, p, h.batch, &lerr);
		return 0;
	}
	if (h.batch <= safe) {
		ack_duplicate(in, p, f, h.batch, safe);
		return 0;
	}
	if (check_bounds(in, f, &h, safe, err) < 0)
		return -ERANGE;
	v = sweeps_add(in->sweeps, sender, f->hdr.sweep_id, &h, f->payload,
	    f->hdr.len, safe, receiver_peer_id(p), f->hdr.seq, err);
	if (v < 0)
		return v;
	if (v != SWEEPS_RESEND)
		note_dropped(in, p, &h);
	if (v != SWEEPS_RESEND && in->roster != NULL)
		roster_counted(in->roster, sender, v == SWEEPS_LATE);
	in->counted(in->arg);
	return 0;
}

static void
on_close(void *arg, struct receiver_peer *p, const char *reason)
{
	struct intake *in = arg;

	if (in->roster != NULL)
		roster_closed(in->roster, receiver_peer_name(p));
	log_debug("gatherer %s (%s): %s", receiver_peer_name(p),
	    receiver_peer_addr(p), reason);
}

static int
make_receiver(struct intake *in, struct event_base *base,
    const struct lh_config *cfg, struct receiver **ret)
{
	struct receiver_conf rc;
	char bind[300];

	(void)snprintf(bind, sizeof(bind),
	    strchr(cfg->listen_host, ':') != NULL ? "[%s]:%u" : "%s:%u",
	    cfg->listen_host, cfg->listen_port);
	memset(&rc, 0, sizeof(rc));
	rc.bind = bind;
	rc.keys = in->ring;
	rc.name = cfg->name;
	rc.role =
	    cfg->role == LH_ROLE_RELAY ? MSG_ROLE_RELAY : MSG_ROLE_AGGREGATOR;
	rc.max_frame = cfg->max_frame;
	rc.handshake_timeout = cfg->handshake_timeout;
	rc.read_timeout = config_read_timeout(cfg);
	rc.max_conns = cfg->max_connections;
	rc.interval = cfg->interval;
	rc.frame_timeout = cfg->frame_timeout;
	rc.max_unauth = cfg->max_unauthenticated;
	rc.max_per_source = cfg->max_per_source;
	rc.accept_rate = cfg->accept_rate;
	rc.accept_burst = cfg->accept_burst;
	rc.allow = cfg->allow;
	rc.nallow = cfg->nallow;
	rc.on_hello = on_hello;
	rc.on_frame = on_frame;
	rc.on_close = on_close;
	rc.arg = in;
	return receiver_new(base, &rc, ret);
}

/* The address the running receiver was given (port 0: the kernel's). */
static const char *
bound_addr(const struct intake *in)
{
	return in->rcv != NULL ? receiver_addr(in->rcv) : NULL;
}

int
intake_start(struct intake *in, struct event_base *base)
{
	return make_receiver(in, base, in->cfg, &in->rcv);
}

const char *
intake_addr(const struct intake *in)
{
	return receiver_addr(in->rcv);
}

void
intake_ack(struct intake *in, const struct sweeps_ack *acks, size_t n,
    uint64_t now_ns)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct receiver_peer *p =
		    receiver_peer_find(in->rcv, acks[i].peer);
		struct msg_ack ack = {MSG_ACK_SWEEP, acks[i].seq, acks[i].batch,
		    now_ns};

		if (p != NULL)
			(void)receiver_peer_ack(p, &ack);
	}
}

int
intake_reload_prepare(struct intake *in, struct event_base *base,
    const struct lh_config *cfg)
{
	if (receiver_conf_equal(in->cfg, cfg, bound_addr(in)))
		return 0;
	/* A new address is bound before the old one is let go; the same
	 * one only after. */
	if (receiver_listen_same(in->cfg, cfg, bound_addr(in)))
		in->next_later = true;
	else if (make_receiver(in, base, cfg, &in->next) < 0)
		return -1;
	return 0;
}

void
intake_reload_apply(struct intake *in, struct event_base *base,
    const struct lh_config *cfg)
{
	if (in->next != NULL || in->next_later) {
		receiver_free(in->rcv);
		in->rcv = in->next;
		in->next = NULL;
		in->next_later = false;
	}
	in->cfg = cfg;
	if (in->rcv == NULL && make_receiver(in, base, cfg, &in->rcv) < 0)
		log_warnx("%s: no gatherer can connect until the next "
		          "reload",
		    cfg->path);
}

void
intake_reload_abort(struct intake *in)
{
	if (in->next != NULL)
		receiver_free(in->next);
	in->next = NULL;
	in->next_later = false;
}

void
intake_free(struct intake *in)
{
	intake_reload_abort(in);
	if (in->rcv != NULL)
		receiver_free(in->rcv);
	in->rcv = NULL;
}
