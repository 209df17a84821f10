/* SPDX-License-Identifier: BSD-2-Clause */
/* lharvest-dump --listen: a minimal receiver that acks every SWEEP and
 * prints its records as JSON lines (dump.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "clock.h"
#include "err.h"
#include "frame.h"
#include "json.h"
#include "keyfile.h"
#include "ledger.h"
#include "log.h"
#include "mdops.h"
#include "msg.h"
#include "receiver.h"
#include "session.h"
#include "wire.h"
#include "dump.h"

static int
listen_hello_cb(void *arg, struct receiver_peer *p, const struct msg_hello *h,
    struct lh_err *err)
{
	char software[MSG_SOFTWARE_MAX];

	(void)arg;
	(void)err;
	log_safe(software, sizeof(software), h->software);
	log_info("peer %s %s: HELLO role %s software \"%s\" interval %" PRIu32
	         " s, %u filesystems, %u targets",
	    receiver_peer_name(p), receiver_peer_addr(p),
	    dump_role_name(h->role), software, h->interval, h->nfs,
	    h->ntargets);
	return 0;
}

static int
json_rec_cb(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	struct dump_sweep *d = arg;
	FILE *out = d->out;

	(void)fputs("{\"sender\":", out);
	json_str(out, d->sender);
	(void)fprintf(out,
	    ",\"sweep\":%" PRIu64 ",\"batch\":%" PRIu64 ",\"fs\":", d->sweep_id,
	    h->batch);
	json_str(out, r->fs < h->nfs ? h->fs[r->fs] : "?");
	(void)fputs(",\"nid\":", out);
	json_str(out, r->nid);
	(void)fprintf(out,
	    ",\"read_bytes\":%" PRIu64 ",\"write_bytes\":%" PRIu64
	    ",\"read_ops\":%" PRIu64 ",\"write_ops\":%" PRIu64
	    ",\"oss_ops\":%" PRIu64 ",\"mds_ops\":%" PRIu64
	    ",\"span_us\":%" PRIu64,
	    r->d.read_bytes, r->d.write_bytes, r->d.read_ops, r->d.write_ops,
	    r->d.oss_ops, r->d.mds_ops, r->span_us);
	if (r->has_cspan) {
		dump_print_cspans(out, ",\"cspan_us\":[", r);
		(void)fputc(']', out);
	}
	dump_print_ops(out, ",\"mdt_ops\":{", "}", true, r);
	(void)fprintf(out, ",\"start_ns\":%" PRIu64 "}\n", h->start_ns);
	d->nrecs++;
	return 0;
}

/* Queue the ACK; a peer dropped for not reading (-ENOBUFS) is no error
 * of this frame's. */
static int
listen_ack(struct receiver_peer *p, struct msg_ack *ack, uint8_t kind,
    struct lh_err *err)
{
	int rc;

	ack->kind = kind;
	rc = receiver_peer_ack(p, ack);
	if (rc < 0 && rc != -ENOBUFS)
		return lh_err_set(err, 0, rc, "cannot queue its ACK");
	return 0;
}

static int
listen_sweep(struct ledger *ledger, struct receiver_peer *p,
    const struct session_frame *f, struct lh_err *err)
{
	struct lh_err lerr;
	uint64_t safe;
	struct dump_sweep d = {stdout, receiver_peer_name(p), f->hdr.sweep_id,
	    0};
	struct msg_sweep sw;
	struct msg_ack ack;
	int rc;

	/* Check the whole payload before printing any of it. */
	if (msg_sweep_decode(&sw, f->payload, f->hdr.len, NULL, NULL, err) <
	    0) {
		char why[LH_ERR_REASON_MAX];

		(void)snprintf(why, sizeof(why), "%s", err->reason);
		return lh_err_set(err, 0, -EBADMSG, "bad SWEEP: %s", why);
	}
	memset(&ack, 0, sizeof(ack));
	ack.seq = f->hdr.seq;
	ack.batch = sw.batch;
	ack.time_ns = clock_realtime_ns();
	lh_err_clear(&lerr);
	if (ledger_lookup(ledger, receiver_peer_name(p), &safe, &lerr) < 0) {
		/* As the aggregator: neither printed nor acknowledged until
		 * the file is fixed or removed (lharvestd.conf(5), FILES). */
		log_warnx("ledger %s; peer %s: batch %" PRIu64 " held "
		          "unacknowledged, not printed",
		    lerr.reason, receiver_peer_name(p), sw.batch);
		return 0;
	}
	if (sw.batch <= safe) {
		/* A resend of what was printed already (the ACK was lost, or
		 * this process restarted): acknowledge, do not print. */
		log_info("peer %s %s: batch %" PRIu64 " was printed already, "
		         "acknowledging it as a duplicate",
		    receiver_peer_name(p), receiver_peer_addr(p), sw.batch);
		return listen_ack(p, &ack, MSG_ACK_DUPLICATE, err);
	}
	rc =
	    msg_sweep_decode(&sw, f->payload, f->hdr.len, json_rec_cb, &d, err);
	if (fflush(stdout) != 0 || rc < 0)
		return lh_err_set(err, 0, -EIO, "cannot print its SWEEP");
	if (sw.ndropped != 0 || sw.nops_dropped != 0)
		log_warnx("peer %s %s: batch %" PRIu64 ": dropped %" PRIu32
		          " records of filesystems whose names cannot be "
		          "metric names, op counts of %" PRIu32
		          " records above their mds_ops",
		    receiver_peer_name(p), receiver_peer_addr(p), sw.batch,
		    sw.ndropped, sw.nops_dropped);
	if (ledger_set(ledger, receiver_peer_name(p), sw.batch, &lerr) < 0)
		log_warnx("%s", lerr.reason);
	log_debug("peer %s %s: SWEEP %" PRIu64 " batch %" PRIu64 ", %" PRIu64
	          " records",
	    receiver_peer_name(p), receiver_peer_addr(p), f->hdr.sweep_id,
	    sw.batch, d.nrecs);
	/* Printed and flushed: as safe as the dump tool makes anything. */
	return listen_ack(p, &ack, MSG_ACK_SWEEP, err);
}

static int
listen_frame_cb(void *arg, struct receiver_peer *p,
    const struct session_frame *f, struct lh_err *err)
{
	switch (f->hdr.type) {
	case FRAME_SWEEP:
		return listen_sweep(arg, p, f, err);
	case FRAME_ACK:
		log_debug("peer %s %s: ACK, ignoring", receiver_peer_name(p),
		    receiver_peer_addr(p));
		return 0;
	default:
		if (f->hdr.flags & FRAME_F_IGNORABLE) {
			log_debug("peer %s %s: ignorable frame type %u, "
			          "skipping",
			    receiver_peer_name(p), receiver_peer_addr(p),
			    f->hdr.type);
			return 0;
		}
		return lh_err_set(err, 0, -EBADMSG, "unexpected %s frame",
		    frame_type_name(f->hdr.type));
	}
}

static void
listen_close_cb(void *arg, struct receiver_peer *p, const char *reason)
{
	(void)arg;
	log_debug("peer %s %s: gone (%s)", receiver_peer_name(p),
	    receiver_peer_addr(p), reason);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct event_base *base = arg;

	(void)what;
	log_info("signal %d, exiting", (int)sig);
	(void)event_base_loopbreak(base);
}

/* The receiver as the options say; conf.arg is left to the caller. */
static void
listen_conf(const struct dump_options *o, const struct keyring *ring,
    struct receiver_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->bind = o->listen;
	conf->keys = ring;
	conf->name = o->name;
	conf->role = MSG_ROLE_AGGREGATOR;
	conf->max_frame = o->max_frame;
	conf->handshake_timeout = o->handshake_timeout;
	conf->read_timeout = o->read_timeout;
	conf->max_conns = o->max_conns;
	conf->log_all = o->log_all;
	conf->on_hello = listen_hello_cb;
	conf->on_frame = listen_frame_cb;
	conf->on_close = listen_close_cb;
}

int
dump_listen_main(const struct dump_options *o)
{
	struct keyring ring;
	struct lh_err err;
	struct receiver_conf conf;
	struct receiver *r = NULL;
	struct ledger *ledger = NULL;
	struct event_base *base;
	struct event *sigint = NULL, *sigterm = NULL;
	struct sigaction sa;
	int status = 1;

	memset(&ring, 0, sizeof(ring));
	lh_err_clear(&err);
	if (keyfile_load(o->keyfile, &ring, &err) < 0) {
		log_warnx("%s", err.reason);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPIPE, &sa, NULL);
	base = event_base_new();
	if (base == NULL) {
		log_warnx("cannot create the event loop");
		goto out_keys;
	}
	sigint = evsignal_new(base, SIGINT, signal_cb, base);
	sigterm = evsignal_new(base, SIGTERM, signal_cb, base);
	if (sigint == NULL || sigterm == NULL ||
	    evsignal_add(sigint, NULL) < 0 || evsignal_add(sigterm, NULL) < 0) {
		log_warnx("cannot set up signal handling");
		goto out_base;
	}
	listen_conf(o, &ring, &conf);
	if (ledger_new(&ledger, o->state_dir) < 0) {
		log_warnx("out of memory");
		goto out_base;
	}
	conf.arg = ledger;
	if (receiver_new(base, &conf, &r) < 0)
		goto out_base;
	log_info("listening on %s as %s, %zu keys", receiver_addr(r), o->name,
	    ring.n);
	if (event_base_dispatch(base) < 0)
		log_warnx("event loop failed");
	else
		status = 0;
	receiver_free(r);
out_base:
	ledger_free(ledger);
	if (sigint != NULL)
		event_free(sigint);
	if (sigterm != NULL)
		event_free(sigterm);
	event_base_free(base);
out_keys:
	keyring_clear(&ring);
	return status;
}
