/* SPDX-License-Identifier: BSD-2-Clause */
/* lharvest-dump: frames and their payloads as text (dump.h). */
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

/* "2023-11-14T22:13:20Z" for seconds since the epoch. */
static void
fmt_utc(uint64_t sec, uint32_t nsec, char *buf, size_t size)
{
	struct tm tm;
	time_t t = (time_t)sec;
	char base[32];

	if (sec > (uint64_t)253402300799u || gmtime_r(&t, &tm) == NULL ||
	    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
		(void)snprintf(buf, size, "out of range");
		return;
	}
	if (nsec != 0)
		(void)snprintf(buf, size, "%s.%09" PRIu32 "Z", base, nsec);
	else
		(void)snprintf(buf, size, "%sZ", base);
}

static void
fmt_ns(uint64_t ns, char *buf, size_t size)
{
	fmt_utc(ns / 1000000000u, (uint32_t)(ns % 1000000000u), buf, size);
}

const char *
dump_role_name(uint8_t role)
{
	switch (role) {
	case MSG_ROLE_GATHERER:
		return "gatherer";
	case MSG_ROLE_AGGREGATOR:
		return "aggregator";
	case MSG_ROLE_RELAY:
		return "relay";
	default:
		return "unknown";
	}
}

static const char *
ack_kind_name(uint8_t kind)
{
	switch (kind) {
	case MSG_ACK_HELLO:
		return "HELLO";
	case MSG_ACK_SWEEP:
		return "SWEEP";
	case MSG_ACK_DUPLICATE:
		return "DUPLICATE";
	default:
		return "unknown";
	}
}

void
dump_print_hex(FILE *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		(void)fprintf(out, "%02x", p[i]);
}

/* ---- FILE mode ---- */

void
dump_print_hdr(FILE *out, uint64_t off, const struct frame_hdr *h)
{
	char when[48];

	if (h->sweep_id != 0)
		fmt_utc(h->sweep_id, 0, when, sizeof(when));
	else
		(void)snprintf(when, sizeof(when), "-");
	(void)fprintf(out,
	    "@%" PRIu64 " %s type %u flags 0x%04x len %" PRIu32
	    " key %08" PRIx32 " sender %016" PRIx64 " seq %" PRIu64
	    " sweep %" PRIu64 " (%s)\n",
	    off, frame_type_name(h->type), h->type, h->flags, h->len, h->key_id,
	    h->sender_id, h->seq, h->sweep_id, when);
}

static void
print_challenge(FILE *out, const struct msg_challenge *c)
{
	char when[48];

	fmt_ns(c->time_ns, when, sizeof(when));
	(void)fprintf(out, "  name ");
	json_str(out, c->name);
	(void)fprintf(out, " role %s time %s caps 0x%" PRIx64 " nonce ",
	    dump_role_name(c->role), when, c->caps);
	dump_print_hex(out, c->nonce, sizeof(c->nonce));
	(void)fputc('\n', out);
}

static void
print_hello(FILE *out, const struct msg_hello *h)
{
	char when[48];

	fmt_ns(h->time_ns, when, sizeof(when));
	(void)fprintf(out, "  name ");
	json_str(out, h->name);
	(void)fprintf(out, " role %s software ", dump_role_name(h->role));
	json_str(out, h->software);
	(void)fprintf(out,
	    " time %s interval %" PRIu32 " s caps 0x%" PRIx64 " nonce ", when,
	    h->interval, h->caps);
	dump_print_hex(out, h->nonce, sizeof(h->nonce));
	(void)fputc('\n', out);
	for (uint16_t i = 0; i < h->nfs && i < MSG_HELLO_FS_MAX; i++)
		(void)fprintf(out, "  fs[%u] %s\n", i, h->fs[i]);
	for (uint16_t i = 0; i < h->ntargets && i < MSG_HELLO_TGT_MAX; i++) {
		const struct msg_hello_target *t = &h->targets[i];

		(void)fprintf(out, "  target %s fs %s\n", t->name,
		    t->fs < h->nfs && t->fs < MSG_HELLO_FS_MAX ? h->fs[t->fs] :
		                                                 "?");
	}
}

/* The counters' own spans, "a,b,c,d,e,f", when the record has them
 * (mask bit 7); nothing when every counter has the record's span. */
void
dump_print_cspans(FILE *out, const char *before, const struct msg_rec *r)
{
	unsigned i;

	if (!r->has_cspan)
		return;
	(void)fputs(before, out);
	for (i = 0; i < MSG_NCOUNTERS; i++)
		(void)fprintf(out, "%s%" PRIu64, i > 0 ? "," : "",
		    r->cspan_us[i]);
}

/* The record's non-zero op counts, in mdops.h order: "open=5,close=4"
 * (text) or "\"open\":5,\"close\":4" (JSON); nothing without any. */
void
dump_print_ops(FILE *out, const char *before, const char *after, bool json,
    const struct msg_rec *r)
{
	unsigned i;
	bool first = true;

	if (r->ops == NULL || mdops_is_zero(r->ops))
		return;
	(void)fputs(before, out);
	for (i = 0; i < MDOPS_N; i++) {
		if (r->ops->v[i] == 0)
			continue;
		(void)fprintf(out, json ? "%s\"%s\":%" PRIu64 : "%s%s=%" PRIu64,
		    first ? "" : ",", mdops_name(i), r->ops->v[i]);
		first = false;
	}
	(void)fputs(after, out);
}

static int
print_rec_cb(void *arg, const struct msg_sweep *h, const struct msg_rec *r)
{
	struct dump_sweep *d = arg;

	(void)fprintf(d->out,
	    "  %s %s read_bytes %" PRIu64 " write_bytes %" PRIu64
	    " read_ops %" PRIu64 " write_ops %" PRIu64 " oss_ops %" PRIu64
	    " mds_ops %" PRIu64 " span_us %" PRIu64,
	    r->fs < h->nfs ? h->fs[r->fs] : "?", r->nid, r->d.read_bytes,
	    r->d.write_bytes, r->d.read_ops, r->d.write_ops, r->d.oss_ops,
	    r->d.mds_ops, r->span_us);
	dump_print_cspans(d->out, " cspan_us ", r);
	dump_print_ops(d->out, " mdops ", "", false, r);
	(void)fputc('\n', d->out);
	d->nrecs++;
	return 0;
}

/* A SWEEP: its header line first, then its records. */
static int
print_sweep(FILE *out, const struct frame_hdr *hdr, const uint8_t *p,
    struct lh_err *err)
{
	struct dump_sweep d = {out, NULL, hdr->sweep_id, 0};
	struct msg_sweep sw;
	char when[48];

	if (msg_sweep_decode(&sw, p, hdr->len, NULL, NULL, err) < 0)
		return -1;
	fmt_ns(sw.start_ns, when, sizeof(when));
	(void)fprintf(out,
	    "  batch %" PRIu64 " first_sweep %" PRIu64 " start %s (%" PRIu64
	    " ns) span_us %" PRIu64 " filesystems %u records %" PRIu32 "\n",
	    sw.batch, sw.first_sweep, when, sw.start_ns, sw.span_us, sw.nfs,
	    sw.nrecs);
	if (msg_sweep_decode(&sw, p, hdr->len, print_rec_cb, &d, err) < 0)
		return -1;
	/* What a receiver would leave out (docs/protocol.md 4.4). */
	if (sw.ndropped != 0 || sw.nops_dropped != 0)
		(void)fprintf(out,
		    "  dropped %" PRIu32 " records (unusable "
		    "filesystem names), op counts of %" PRIu32
		    " records (above mds_ops)\n",
		    sw.ndropped, sw.nops_dropped);
	return 0;
}

/* Decode and print one payload; -1 with err filled when malformed. */
int
dump_print_payload(FILE *out, const struct frame_hdr *hdr, const uint8_t *p,
    struct lh_err *err)
{
	struct msg_challenge c;
	struct msg_hello *h;
	struct msg_ack a;
	struct msg_bye b;
	char when[48];
	int rc;

	switch (hdr->type) {
	case FRAME_CHALLENGE:
		if (msg_challenge_decode(&c, p, hdr->len, err) < 0)
			return -1;
		print_challenge(out, &c);
		return 0;
	case FRAME_HELLO:
		h = malloc(sizeof(*h)); /* 40 KB: not on the stack */
		if (h == NULL)
			return lh_err_set(err, 0, -1, "out of memory");
		rc = msg_hello_decode(h, p, hdr->len, err);
		if (rc == 0)
			print_hello(out, h);
		free(h);
		return rc < 0 ? -1 : 0;
	case FRAME_ACK:
		if (msg_ack_decode(&a, p, hdr->len, err) < 0)
			return -1;
		fmt_ns(a.time_ns, when, sizeof(when));
		(void)fprintf(out,
		    "  ack %s seq %" PRIu64 " batch %" PRIu64 " time %s\n",
		    ack_kind_name(a.kind), a.seq, a.batch, when);
		return 0;
	case FRAME_BYE:
		if (msg_bye_decode(&b, p, hdr->len, err) < 0)
			return -1;
		(void)fprintf(out, "  bye reason %u text ", b.reason);
		json_str(out, b.text);
		(void)fputc('\n', out);
		return 0;
	case FRAME_SWEEP:
		return print_sweep(out, hdr, p, err);
	default:
		(void)fprintf(out, "  %" PRIu32 " bytes of an unknown type%s\n",
		    hdr->len,
		    hdr->flags & FRAME_F_IGNORABLE ? " (ignorable)" : "");
		return 0;
	}
}
