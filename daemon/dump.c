/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lharvest-dump: what is on the wire, for operators debugging a site.
 * "lharvest-dump FILE" prints every frame of a captured byte stream (one
 * direction of a connection); "lharvest-dump --listen ADDR:PORT -k KEYFILE"
 * is a minimal receiver that acks every SWEEP and prints its records as
 * JSON lines, so a gatherer can be tested end to end on its own.
 */
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

#define DUMP_DEFAULT_NAME "lharvest-dump"

struct dump_options {
	const char *listen;
	const char *keyfile;
	const char *name;
	const char *file;
	size_t max_frame;
	unsigned handshake_timeout;
	unsigned read_timeout;
	unsigned max_conns;
	const char *state_dir; /* --state: remember batches across restarts */
	bool log_all; /* --log-all: no rate limit on strangers' lines */
	int verbose;
};

/* What the SWEEP record callbacks need. */
struct dump_sweep {
	FILE *out;
	const char *sender;
	uint64_t sweep_id;
	uint64_t nrecs;
};

static _Noreturn void
usage(FILE *out, int status)
{
	(void)fprintf(out,
	    "usage: lharvest-dump [-v] [--max-frame N] FILE|-\n"
	    "       lharvest-dump [-v] --listen ADDR:PORT -k KEYFILE "
	    "[--name NAME]\n"
	    "                     [--max-frame N] [--handshake-timeout S] "
	    "[--read-timeout S]\n"
	    "                     [--max-conns N] [--state DIR] [--log-all]\n"
	    "  FILE                  a captured stream of frames (one "
	    "direction); - is stdin\n"
	    "  --listen ADDR:PORT    receive, ack every SWEEP, print its "
	    "records as JSON lines\n"
	    "  -k KEYFILE            the shared key file (mode 0600)\n"
	    "  --name NAME           this side's name in the CHALLENGE "
	    "(default " DUMP_DEFAULT_NAME ")\n"
	    "  --max-frame N         largest frame accepted, bytes (default "
	    "%zu)\n"
	    "  --state DIR           remember each sender's last batch in DIR, "
	    "so a resend\n"
	    "                        after a restart is not printed twice\n"
	    "  --log-all             log every refused peer (by default lines "
	    "about\n"
	    "                        peers without a verified HELLO are "
	    "rate-limited)\n"
	    "  -v                    more detail (MACs; debug log)\n",
	    FRAME_MAX_DEFAULT);
	exit(status);
}

static int
parse_num(const char *s, unsigned long long lo, unsigned long long hi,
    unsigned long long *ret)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v < lo ||
	    v > hi)
		return -EINVAL;
	*ret = v;
	return 0;
}

static void
num_opt(const char *opt, const char *arg, unsigned long long lo,
    unsigned long long hi, unsigned long long *ret)
{
	if (parse_num(arg, lo, hi, ret) < 0) {
		(void)fprintf(stderr,
		    "lharvest-dump: %s %s: not a number from %llu to %llu\n",
		    opt, arg, lo, hi);
		exit(2);
	}
}

static void
parse_args(int argc, char **argv, struct dump_options *o)
{
	static const struct option longopts[] = {
	    {"listen", required_argument, NULL, 'L'},
	    {"name", required_argument, NULL, 'N'},
	    {"max-frame", required_argument, NULL, 'M'},
	    {"handshake-timeout", required_argument, NULL, 'H'},
	    {"read-timeout", required_argument, NULL, 'R'},
	    {"max-conns", required_argument, NULL, 'C'},
	    {"state", required_argument, NULL, 'S'},
	    {"log-all", no_argument, NULL, 'A'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	unsigned long long v;
	int ch;

	memset(o, 0, sizeof(*o));
	o->name = DUMP_DEFAULT_NAME;
	o->max_frame = (size_t)FRAME_MAX_DEFAULT;
	while ((ch = getopt_long(argc, argv, "hk:vV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'L':
			o->listen = optarg;
			break;
		case 'k':
			o->keyfile = optarg;
			break;
		case 'N':
			o->name = optarg;
			break;
		case 'M':
			num_opt("--max-frame", optarg, FRAME_MIN_MAX,
			    (unsigned long long)FRAME_MAX_LIMIT, &v);
			o->max_frame = (size_t)v;
			break;
		case 'H':
			num_opt("--handshake-timeout", optarg, 1, 3600, &v);
			o->handshake_timeout = (unsigned)v;
			break;
		case 'R':
			num_opt("--read-timeout", optarg, 1, 86400, &v);
			o->read_timeout = (unsigned)v;
			break;
		case 'C':
			num_opt("--max-conns", optarg, 1, 65536, &v);
			o->max_conns = (unsigned)v;
			break;
		case 'S':
			o->state_dir = optarg;
			break;
		case 'A':
			o->log_all = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			(void)printf("lharvest-dump %s\n", LH_VERSION);
			exit(0);
		case 'h':
			usage(stdout, 0);
		default:
			usage(stderr, 2);
		}
	}
	if (o->listen != NULL) {
		if (optind != argc || o->keyfile == NULL)
			usage(stderr, 2);
	} else {
		if (optind != argc - 1 || o->keyfile != NULL)
			usage(stderr, 2);
		o->file = argv[optind];
	}
}

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

static const char *
role_name(uint8_t role)
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

static void
print_hex(FILE *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		(void)fprintf(out, "%02x", p[i]);
}

/* ---- FILE mode ---- */

static void
print_hdr(FILE *out, uint64_t off, const struct frame_hdr *h)
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
	    role_name(c->role), when, c->caps);
	print_hex(out, c->nonce, sizeof(c->nonce));
	(void)fputc('\n', out);
}

static void
print_hello(FILE *out, const struct msg_hello *h)
{
	char when[48];

	fmt_ns(h->time_ns, when, sizeof(when));
	(void)fprintf(out, "  name ");
	json_str(out, h->name);
	(void)fprintf(out, " role %s software ", role_name(h->role));
	json_str(out, h->software);
	(void)fprintf(out,
	    " time %s interval %" PRIu32 " s caps 0x%" PRIx64 " nonce ", when,
	    h->interval, h->caps);
	print_hex(out, h->nonce, sizeof(h->nonce));
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
static void
print_cspans(FILE *out, const char *before, const struct msg_rec *r)
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
static void
print_ops(FILE *out, const char *before, const char *after, bool json,
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
	print_cspans(d->out, " cspan_us ", r);
	print_ops(d->out, " mdops ", "", false, r);
	(void)fputc('\n', d->out);
	d->nrecs++;
	return 0;
}

/* Decode and print one payload; -1 with err filled when malformed. */
static int
print_payload(FILE *out, const struct frame_hdr *hdr, const uint8_t *p,
    struct lh_err *err)
{
	struct dump_sweep d = {out, NULL, hdr->sweep_id, 0};
	struct msg_challenge c;
	struct msg_hello *h;
	struct msg_ack a;
	struct msg_bye b;
	struct msg_sweep sw;
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
		/* Header line first, so print it from the first record. */
		if (msg_sweep_decode(&sw, p, hdr->len, NULL, NULL, err) < 0)
			return -1;
		fmt_ns(sw.start_ns, when, sizeof(when));
		(void)fprintf(out,
		    "  batch %" PRIu64 " first_sweep %" PRIu64
		    " start %s (%" PRIu64 " ns) span_us %" PRIu64
		    " filesystems %u records %" PRIu32 "\n",
		    sw.batch, sw.first_sweep, when, sw.start_ns, sw.span_us,
		    sw.nfs, sw.nrecs);
		if (msg_sweep_decode(&sw, p, hdr->len, print_rec_cb, &d, err) <
		    0)
			return -1;
		/* What a receiver would leave out (docs/protocol.md 4.4). */
		if (sw.ndropped != 0 || sw.nops_dropped != 0)
			(void)fprintf(out,
			    "  dropped %" PRIu32 " records (unusable "
			    "filesystem names), op counts of %" PRIu32
			    " records (above mds_ops)\n",
			    sw.ndropped, sw.nops_dropped);
		return 0;
	default:
		(void)fprintf(out, "  %" PRIu32 " bytes of an unknown type%s\n",
		    hdr->len,
		    hdr->flags & FRAME_F_IGNORABLE ? " (ignorable)" : "");
		return 0;
	}
}

/* Read exactly n bytes; the number read (short at end of input). */
static size_t
read_full(FILE *in, uint8_t *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		size_t k = fread(p + got, 1, n - got, in);

		if (k == 0)
			break;
		got += k;
	}
	return got;
}

static int
dump_stream(FILE *in, const struct dump_options *o, FILE *out)
{
	uint8_t *buf = malloc(o->max_frame);
	struct frame_hdr hdr;
	struct lh_err err;
	uint64_t off = 0, nframes = 0;
	int status = 1;

	if (buf == NULL) {
		(void)fprintf(stderr, "lharvest-dump: out of memory\n");
		return 1;
	}
	(void)fprintf(out,
	    "MAC not verified: a capture holds one direction "
	    "of the connection, the key is derived from both\n");
	for (;;) {
		size_t got = read_full(in, buf, FRAME_HDR_LEN), whole;

		if (got == 0)
			break;
		if (got < FRAME_HDR_LEN) {
			(void)fprintf(stderr,
			    "lharvest-dump: offset %" PRIu64
			    ": truncated header (%zu of %u bytes)\n",
			    off, got, FRAME_HDR_LEN);
			goto out;
		}
		lh_err_clear(&err);
		if (frame_hdr_decode(&hdr, buf, o->max_frame, &err) < 0) {
			(void)fprintf(stderr,
			    "lharvest-dump: offset %" PRIu64 ": %s\n", off,
			    err.reason);
			goto out;
		}
		whole = FRAME_OVERHEAD + (size_t)hdr.len;
		got = read_full(in, buf + FRAME_HDR_LEN, whole - FRAME_HDR_LEN);
		if (got < whole - FRAME_HDR_LEN) {
			(void)fprintf(stderr,
			    "lharvest-dump: offset %" PRIu64
			    ": truncated %s frame (%zu of %zu bytes)\n",
			    off, frame_type_name(hdr.type), FRAME_HDR_LEN + got,
			    whole);
			goto out;
		}
		print_hdr(out, off, &hdr);
		if (o->verbose > 0) {
			(void)fprintf(out, "  mac ");
			print_hex(out, buf + FRAME_HDR_LEN + hdr.len,
			    FRAME_MAC_LEN);
			(void)fputc('\n', out);
		}
		lh_err_clear(&err);
		if (print_payload(out, &hdr, buf + FRAME_HDR_LEN, &err) < 0) {
			(void)fprintf(stderr,
			    "lharvest-dump: offset %" PRIu64
			    ": bad %s payload: "
			    "%s\n",
			    off, frame_type_name(hdr.type), err.reason);
			goto out;
		}
		off += whole;
		nframes++;
	}
	if (ferror(in)) {
		(void)fprintf(stderr, "lharvest-dump: offset %" PRIu64 ": %s\n",
		    off, strerror(errno));
		goto out;
	}
	(void)fprintf(out, "%" PRIu64 " frames, %" PRIu64 " bytes\n", nframes,
	    off);
	status = 0;
out:
	free(buf);
	return status;
}

static int
file_main(const struct dump_options *o)
{
	FILE *in = stdin;
	int status;

	if (strcmp(o->file, "-") != 0) {
		in = fopen(o->file, "rb");
		if (in == NULL) {
			(void)fprintf(stderr, "lharvest-dump: %s: %s\n",
			    o->file, strerror(errno));
			return 1;
		}
	}
	status = dump_stream(in, o, stdout);
	if (in != stdin)
		(void)fclose(in);
	if (fflush(stdout) != 0)
		status = 1;
	return status;
}

/* ---- --listen mode ---- */

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
	    receiver_peer_name(p), receiver_peer_addr(p), role_name(h->role),
	    software, h->interval, h->nfs, h->ntargets);
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
		print_cspans(out, ",\"cspan_us\":[", r);
		(void)fputc(']', out);
	}
	print_ops(out, ",\"mdt_ops\":{", "}", true, r);
	(void)fprintf(out, ",\"start_ns\":%" PRIu64 "}\n", h->start_ns);
	d->nrecs++;
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
		ack.kind = MSG_ACK_DUPLICATE;
		rc = receiver_peer_ack(p, &ack);
		if (rc < 0 && rc != -ENOBUFS)
			return lh_err_set(err, 0, rc, "cannot queue its ACK");
		return 0;
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
	ack.kind = MSG_ACK_SWEEP;
	rc = receiver_peer_ack(p, &ack);
	if (rc < 0 && rc != -ENOBUFS)
		return lh_err_set(err, 0, rc, "cannot queue its ACK");
	return 0;
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

static int
listen_main(const struct dump_options *o)
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
	memset(&conf, 0, sizeof(conf));
	conf.bind = o->listen;
	conf.keys = &ring;
	conf.name = o->name;
	conf.role = MSG_ROLE_AGGREGATOR;
	conf.max_frame = o->max_frame;
	conf.handshake_timeout = o->handshake_timeout;
	conf.read_timeout = o->read_timeout;
	conf.max_conns = o->max_conns;
	conf.log_all = o->log_all;
	conf.on_hello = listen_hello_cb;
	conf.on_frame = listen_frame_cb;
	conf.on_close = listen_close_cb;
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

int
main(int argc, char **argv)
{
	struct dump_options o;

	parse_args(argc, argv, &o);
	log_init("lharvest-dump", true, o.verbose);
	if (o.listen != NULL)
		return listen_main(&o);
	return file_main(&o);
}
