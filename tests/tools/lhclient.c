/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lhclient: a test client for the listening side of the wire protocol.  It
 * connects, does the connector half of the handshake, sends SWEEP frames
 * built from a records file (or generated), waits for each ACK, and on
 * request breaks one rule so that integration tests can prove the
 * receiver drops it.  Blocking sockets, no libevent: a test tool.
 *
 * Records file: one record a line, "#" comments:
 *   FS NID READ_BYTES WRITE_BYTES READ_OPS WRITE_OPS OSS_OPS MDS_OPS [SPAN_US]
 *
 * Exit status: 0 the session went as asked (for a misbehaviour: the
 * listener closed the connection), 1 it did not, 2 usage.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "frame.h"
#include "hmac.h"
#include "keyfile.h"
#include "msg.h"
#include "nid.h"
#include "session.h"
#include "wire.h"

#include "lhclient.h"

_Noreturn void
die(const char *fmt, ...)
{
	va_list ap;

	(void)fputs("lhclient: ", stderr);
	va_start(ap, fmt);
	(void)vfprintf(stderr, fmt, ap);
	va_end(ap);
	(void)fputc('\n', stderr);
	exit(1);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
lhc_connect(struct lhc *c)
{
	char host[256];
	const char *port;
	struct addrinfo hints, *res = NULL;
	struct timeval tv = {(time_t)c->timeout, 0};
	struct sockaddr_storage local;
	socklen_t llen = sizeof(local);
	char serv[NI_MAXSERV];
	size_t hl;
	int one = 1, rc;

	port = strrchr(c->connect, ':');
	if (port == NULL)
		die("%s: not HOST:PORT", c->connect);
	hl = (size_t)(port - c->connect);
	port++;
	if (hl >= 2 && c->connect[0] == '[' && c->connect[hl - 1] == ']') {
		(void)snprintf(host, sizeof(host), "%.*s", (int)(hl - 2),
		    c->connect + 1);
	} else {
		(void)snprintf(host, sizeof(host), "%.*s", (int)hl, c->connect);
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0)
		die("%s: %s", c->connect, gai_strerror(rc));
	c->fd = socket(res->ai_family, SOCK_STREAM, 0);
	if (c->fd < 0)
		die("socket: %s", strerror(errno));
	if (connect(c->fd, res->ai_addr, res->ai_addrlen) < 0)
		die("connect %s: %s", c->connect, strerror(errno));
	freeaddrinfo(res);
	(void)setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* The listener logs this address: tests look for it. */
	memset(&local, 0, sizeof(local));
	if (getsockname(c->fd, (struct sockaddr *)&local, &llen) == 0 &&
	    getnameinfo((struct sockaddr *)&local, llen, host, sizeof(host),
	        serv, sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		(void)printf(local.ss_family == AF_INET6 ? "local [%s]:%s\n" :
		                                           "local %s:%s\n",
		    host, serv);
}

static void
send_all(struct lhc *c, const uint8_t *p, size_t n)
{
	size_t done = 0;

	if (c->cap != NULL && fwrite(p, 1, n, c->cap) != n)
		die("%s: %s", c->capture, strerror(errno));
	while (done < n) {
		ssize_t k = send(c->fd, p + done, n - done, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			die("send: %s", strerror(errno));
		done += (size_t)k;
	}
}

/* 0, or -1 at end of stream / reset; dies on a timeout. */
static int
recv_full(struct lhc *c, uint8_t *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = recv(c->fd, p + got, n - got, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			die("nothing from the listener for %u s", c->timeout);
		if (k <= 0)
			return -1;
		if (c->rcap != NULL &&
		    fwrite(p + got, 1, (size_t)k, c->rcap) != (size_t)k)
			die("%s: %s", c->rcapture, strerror(errno));
		got += (size_t)k;
	}
	return 0;
}

/* Read and verify one frame; dies if the listener closes. */
static void
read_frame(struct lhc *c, struct session_frame *f)
{
	struct lh_err err;
	size_t need = FRAME_HDR_LEN, have = 0;

	for (;;) {
		int n;

		if (recv_full(c, c->buf + have, need - have) < 0)
			die("connection closed by the listener");
		have = need;
		lh_err_clear(&err);
		n = session_input(&c->s, c->buf, have, f, &need, &err);
		if (n < 0)
			die("bad frame from the listener: %s", err.reason);
		if (n > 0)
			return;
		if (need <= have || need > c->max_frame)
			die("bad frame length %zu from the listener", need);
	}
}

/* After breaking a rule: the listener must close the connection. */
static _Noreturn void
expect_close(struct lhc *c, const char *what)
{
	uint8_t junk[4096];

	for (;;) {
		ssize_t k = recv(c->fd, junk, sizeof(junk), 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN) {
			(void)fprintf(stderr,
			    "lhclient: %s: still connected after %u s\n", what,
			    c->timeout);
			exit(1);
		}
		if (k <= 0)
			break;
	}
	(void)printf("%s: closed by the listener\n", what);
	exit(0);
}

static void
handshake(struct lhc *c, bool wrong_version)
{
	struct session_frame f;
	struct msg_hello *h;
	struct msg_ack ack;
	struct lh_err err;
	struct wbuf w;

	read_frame(c, &f);
	if (f.hdr.type != FRAME_CHALLENGE)
		die("first frame is %s, not CHALLENGE",
		    frame_type_name(f.hdr.type));
	if (c->mode == LHC_IDLE)
		expect_close(c, "idle");
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		die("out of memory");
	if (lh_random(h->nonce, sizeof(h->nonce)) < 0)
		die("no random bytes");
	h->role = c->role;
	(void)snprintf(h->software, sizeof(h->software), "lhclient %s",
	    LH_VERSION);
	h->time_ns = now_ns() + (uint64_t)(c->clock_offset * 1000000000);
	h->interval = c->interval;
	h->caps = MSG_CAP_SWEEP;
	(void)snprintf(h->name, sizeof(h->name), "%s", c->name);
	h->nfs = c->nfs;
	for (uint16_t i = 0; i < c->nfs; i++) {
		(void)snprintf(h->fs[i], MSG_FS_MAX, "%s", c->fs[i]);
		(void)snprintf(h->targets[i].name, MSG_TARGET_MAX, "%s-OST%04x",
		    c->fs[i], i);
		h->targets[i].fs = i;
	}
	h->ntargets = c->nfs;
	wbuf_init(&w, c->max_frame);
	if (session_hello(&c->s, h, &w) < 0)
		die("cannot encode the HELLO");
	free(h);
	if (wrong_version || c->mode == LHC_VERSION_1) {
		w.data[4] = wrong_version ? FRAME_VERSION + 1 : 1;
		send_all(c, w.data, w.len);
		wbuf_free(&w);
		expect_close(c, wrong_version ? "wrong-version" : "version-1");
	}
	send_all(c, w.data, w.len);
	wbuf_free(&w);
	if (c->role < MSG_ROLE_GATHERER || c->role > MSG_ROLE_RELAY)
		expect_close(c, "role");
	read_frame(c, &f);
	if (f.hdr.type != FRAME_ACK)
		die("answer to HELLO is %s, not ACK",
		    frame_type_name(f.hdr.type));
	if (msg_ack_decode(&ack, f.payload, f.hdr.len, &err) < 0)
		die("bad ACK: %s", err.reason);
	if (ack.kind != MSG_ACK_HELLO)
		die("ACK of kind %u, not HELLO", ack.kind);
	(void)printf("HELLO acked\n");
}

/*
 * --rename-fs OLD=NEW: a name the encoder refuses (an unusable filesystem
 * name) put into an encoded SWEEP payload, so that a receiver's handling
 * of it can be tested.  The names are the str8s after the 32 bytes of
 * batch, first sweep, start and span and the count (one byte: at most 64).
 */
static void
rename_fs(const struct lhc *c, struct wbuf *p)
{
	const char *eq = strchr(c->rename_fs, '=');
	size_t n = (size_t)(eq - c->rename_fs), off = 33, i;

	if (p->len < off)
		die("--rename-fs: SWEEP too short");
	for (i = 0; i < p->data[32] && off < p->len; i++) {
		size_t k = p->data[off];

		if (k == n && off + 1 + k <= p->len &&
		    memcmp(p->data + off + 1, c->rename_fs, n) == 0) {
			memcpy(p->data + off + 1, eq + 1, n);
			return;
		}
		off += 1 + k;
	}
	die("--rename-fs: no filesystem %.*s in the SWEEP", (int)n,
	    c->rename_fs);
}

/* One signed SWEEP frame of every record into w. */
static void
build_sweep(struct lhc *c, unsigned k, struct wbuf *w)
{
	struct msg_sweep h;
	struct msg_rec *recs = calloc(c->nrecs + 1, sizeof(*recs));
	uint64_t sweep_id = c->sweep_id + (uint64_t)k * c->interval;
	struct wbuf p;

	if (recs == NULL)
		die("out of memory");
	memset(&h, 0, sizeof(h));
	h.batch = c->first_batch + k;
	h.first_sweep = sweep_id;
	h.start_ns = (sweep_id - c->interval) * 1000000000u;
	h.span_us = c->interval * 1000000u;
	h.nfs = c->nfs;
	for (uint16_t i = 0; i < c->nfs; i++)
		(void)snprintf(h.fs[i], MSG_FS_MAX, "%s", c->fs[i]);
	for (size_t i = 0; i < c->nrecs; i++) {
		recs[i].fs = fs_index(c, c->recs[i].fs);
		recs[i].nid = c->recs[i].nid;
		recs[i].d = c->recs[i].d;
		recs[i].span_us = c->recs[i].span_us;
		if (c->print_sent)
			(void)printf("{\"sender\":\"%s\",\"sweep\":%" PRIu64
			             ",\"batch\":%" PRIu64
			             ",\"fs\":\"%s\",\"nid\":\"%s\","
			             "\"read_bytes\":%" PRIu64
			             ",\"write_bytes\":%" PRIu64
			             ",\"read_ops\":%" PRIu64
			             ",\"write_ops\":%" PRIu64
			             ",\"oss_ops\":%" PRIu64
			             ",\"mds_ops\":%" PRIu64
			             ",\"span_us\":%" PRIu64
			             ",\"start_ns\":%" PRIu64 "}\n",
			    c->name, sweep_id, h.batch, c->recs[i].fs,
			    c->recs[i].nid, recs[i].d.read_bytes,
			    recs[i].d.write_bytes, recs[i].d.read_ops,
			    recs[i].d.write_ops, recs[i].d.oss_ops,
			    recs[i].d.mds_ops, recs[i].span_us, h.start_ns);
	}
	wbuf_init(&p, c->max_frame);
	if (msg_sweep_encode(&p, &h, recs, c->nrecs) < 0)
		die("cannot encode the SWEEP (bad NID or duplicate record?)");
	if (c->rename_fs != NULL)
		rename_fs(c, &p);
	if (session_send(&c->s, FRAME_SWEEP, 0, sweep_id, p.data, p.len, w) < 0)
		die("cannot sign the SWEEP");
	wbuf_free(&p);
	free(recs);
}

static void
wait_ack(struct lhc *c, uint64_t seq, uint64_t batch)
{
	struct session_frame f;
	struct msg_ack ack;
	struct lh_err err;

	read_frame(c, &f);
	if (f.hdr.type != FRAME_ACK)
		die("answer to SWEEP is %s, not ACK",
		    frame_type_name(f.hdr.type));
	if (msg_ack_decode(&ack, f.payload, f.hdr.len, &err) < 0)
		die("bad ACK: %s", err.reason);
	if (ack.kind != MSG_ACK_SWEEP && ack.kind != MSG_ACK_DUPLICATE)
		die("ACK of kind %u, not SWEEP", ack.kind);
	if (ack.seq != seq || ack.batch != batch)
		die("ACK of seq %" PRIu64 " batch %" PRIu64
		    ", want seq %" PRIu64 " batch %" PRIu64,
		    ack.seq, ack.batch, seq, batch);
	(void)printf("SWEEP acked seq %" PRIu64 " batch %" PRIu64 "\n", seq,
	    batch);
}

static void
send_oversize(struct lhc *c)
{
	struct frame_hdr h;
	uint8_t out[FRAME_HDR_LEN];

	memset(&h, 0, sizeof(h));
	h.version = FRAME_VERSION;
	h.type = FRAME_SWEEP;
	h.len = (uint32_t)(c->max_frame - FRAME_OVERHEAD + 1);
	h.key_id = c->s.key_id;
	h.sender_id = c->s.my_id;
	h.seq = c->s.send_seq + 1;
	h.sweep_id = c->sweep_id;
	frame_hdr_encode(&h, out);
	send_all(c, out, sizeof(out));
	expect_close(c, "oversize");
}

/* A byte a second, each of which a read timer alone would count as
 * progress: the listener must drop the peer at its frame deadline. */
static _Noreturn void
send_slowly(struct lhc *c, const struct wbuf *w)
{
	struct timespec second = {1, 0};
	uint8_t junk[4096];
	size_t i;

	for (i = 0; i < w->len; i++) {
		ssize_t k;

		if (send(c->fd, w->data + i, 1, MSG_NOSIGNAL) < 0)
			break;
		(void)nanosleep(&second, NULL);
		k = recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (k == 0 ||
		    (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			break;
	}
	if (i == w->len) {
		(void)fprintf(stderr, "lhclient: slow: the whole frame went\n");
		exit(1);
	}
	(void)printf("slow: closed by the listener after %zu of %zu bytes\n", i,
	    w->len);
	exit(0);
}

/* --send-ack: an ACK from a gatherer, refused on its header (empty,
 * whatever would follow). */
static void
send_ack(struct lhc *c)
{
	struct wbuf w;

	wbuf_init(&w, 0);
	if (session_send(&c->s, FRAME_ACK, 0, 0, NULL, 0, &w) < 0)
		die("cannot sign the ACK");
	send_all(c, w.data, w.len);
	wbuf_free(&w);
	expect_close(c, "send-ack");
}

static void
send_bye(struct lhc *c)
{
	struct msg_bye bye;
	struct wbuf p, w;

	memset(&bye, 0, sizeof(bye));
	(void)snprintf(bye.text, sizeof(bye.text), "lhclient done");
	wbuf_init(&p, 0);
	wbuf_init(&w, 0);
	if (msg_bye_encode(&p, &bye) < 0 ||
	    session_send(&c->s, FRAME_BYE, 0, 0, p.data, p.len, &w) < 0)
		die("cannot encode the BYE");
	send_all(c, w.data, w.len);
	wbuf_free(&p);
	wbuf_free(&w);
}

static void
run(struct lhc *c)
{
	static const char http[] = "GET / HTTP/1.1\r\nHost: lharvest\r\n\r\n";
	uint64_t seq0 = 0;
	struct wbuf w;

	if (c->mode == LHC_GARBAGE) {
		send_all(c, (const uint8_t *)http, sizeof(http) - 1);
		expect_close(c, "garbage");
	}
	handshake(c, c->mode == LHC_WRONG_VERSION);
	if (c->mode == LHC_IDLE_OPEN)
		expect_close(c, "idle-open");
	if (c->mode == LHC_OVERSIZE)
		send_oversize(c);
	if (c->mode == LHC_SEND_ACK)
		send_ack(c);
	for (unsigned k = 0; k < c->sweeps; k++) {
		if (c->delay > 0)
			(void)sleep(c->delay);
		wbuf_init(&w, c->max_frame);
		build_sweep(c, k, &w);
		if (wbuf_status(&w) < 0)
			die("SWEEP too big for --max-frame");
		switch (c->mode) {
		case LHC_BAD_MAC:
			w.data[w.len - 1] ^= 0x01;
			send_all(c, w.data, w.len);
			expect_close(c, "bad-mac");
		case LHC_SLOW:
			send_slowly(c, &w);
		case LHC_HALF_FRAME:
			send_all(c, w.data, w.len / 2);
			(void)printf("half-frame: sent %zu of %zu bytes, "
			             "closing\n",
			    w.len / 2, w.len);
			exit(0);
		case LHC_REPLAY:
			send_all(c, w.data, w.len);
			wait_ack(c, c->s.send_seq, c->first_batch + k);
			send_all(c, w.data, w.len);
			expect_close(c, "replay");
		default:
			send_all(c, w.data, w.len);
			if (k == 0)
				seq0 = c->s.send_seq;
			if (!c->pipeline)
				wait_ack(c, c->s.send_seq, c->first_batch + k);
			break;
		}
		wbuf_free(&w);
	}
	/* Pipelined: the ACKs come in batch order (docs/protocol.md 5). */
	for (unsigned k = 0; c->pipeline && k < c->sweeps; k++)
		wait_ack(c, seq0 + k, c->first_batch + k);
	if (!c->no_bye)
		send_bye(c);
}

int
main(int argc, char **argv)
{
	struct lhc c;
	struct lh_err err;

	memset(&c, 0, sizeof(c));
	c.fd = -1;
	parse_args(&c, argc, argv);
	(void)setvbuf(stdout, NULL, _IOLBF, 0);
	if (keyfile_load(c.keyfile, &c.ring, &err) < 0)
		die("%s", err.reason);
	if (c.records != NULL)
		records_load(&c);
	else
		records_generate(&c);
	if (c.capture != NULL) {
		c.cap = fopen(c.capture, "wb");
		if (c.cap == NULL)
			die("%s: %s", c.capture, strerror(errno));
	}
	if (c.rcapture != NULL) {
		c.rcap = fopen(c.rcapture, "wb");
		if (c.rcap == NULL)
			die("%s: %s", c.rcapture, strerror(errno));
	}
	c.hmac = hmac_new();
	c.buf = malloc(c.max_frame);
	if (c.hmac == NULL || c.buf == NULL)
		die("out of memory");
	if (session_init(&c.s, SESSION_CONNECTOR, &c.ring, c.hmac, c.name,
	        c.max_frame) < 0)
		die("cannot set up the session");
	lhc_connect(&c);
	run(&c);
	if (c.cap != NULL && fclose(c.cap) != 0)
		die("%s: %s", c.capture, strerror(errno));
	if (c.rcap != NULL && fclose(c.rcap) != 0)
		die("%s: %s", c.rcapture, strerror(errno));
	(void)close(c.fd);
	session_clear(&c.s);
	hmac_free(c.hmac);
	keyring_clear(&c.ring);
	free(c.buf);
	free(c.recs);
	return 0;
}
