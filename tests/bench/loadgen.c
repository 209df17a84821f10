/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_loadgen: many gatherers in one process, for the aggregator's
 * benchmark (tests/bench/agg_load.sh, issue 9).  It opens one TCP
 * connection per simulated gatherer, each with its own name, does the
 * real handshake with the shared key (common/proto/session.c), and at every
 * sweep boundary of the wall clock (plus --offset-ms) sends each
 * gatherer's SWEEP, then reads the ACKs; a gatherer's next SWEEP goes
 * only once the previous one was acknowledged, as daemon/sender.c does.
 *
 * Layout: F filesystems; each gatherer serves S of them (F % S == 0), so
 * the gatherers form F / S groups, group k serving filesystems kS .. kS +
 * S - 1.  A gatherer reports C clients: C / S per filesystem.  Filesystem
 * f's clients are the NIDs 10.1.x.y@o2ib numbered f*C/S .. (f+1)*C/S - 1
 * of one pool, so every client NID is in exactly one filesystem and the
 * aggregator ends up with F*C/S hosts, each with one filesystem's metrics.
 * The first gatherer of each group is an MDS (mds_ops only); the others
 * are OSSes (bytes and bulk/OSS operations).  Deltas are non-zero and
 * grow from sweep to sweep; spans differ by gatherer, and some records
 * carry a span or counter spans of their own.
 *
 * The SWEEP payloads of every sweep are encoded before the first
 * connection (their sweep id and start are written in once the schedule
 * is known), and each frame is signed as soon as the previous one of its
 * connection is acknowledged, so that at a boundary the generator only
 * writes bytes: its own CPU stays out of the aggregator's way.
 *
 *   bench_loadgen --setup DIR [layout]       write DIR/hosts (the hosts map
 *                                            of the pool) and DIR/gatherers
 *                                            (the config's gatherers list)
 *   bench_loadgen --connect IP:PORT -k KEYFILE [layout] [--sweeps K]
 *       [--interval S] [--offset-ms MS] [--expect FILE]
 *
 * layout: --gatherers G (100) --clients C (10000) --filesystems F (4)
 *         --fs-per-gatherer S (2) --prefix NAME (lg)
 *
 * Output, one line per sweep:
 *   sweep ID frames N bytes B written_ms W acked_ms A cpu_ms C missed M
 * (W, A from the moment the sweep's frames were queued; C: this process's
 * CPU from then until the last ACK; M: gatherers whose previous batch was
 * still unacknowledged, so they did not send), and at the end
 *   loadgen encode_cpu_ms E total_cpu_ms T maxrss_kb R
 * --expect writes the last sweep's rates as the aggregator must show
 * them: "host metric value" per line (4 metrics per host, and each
 * filesystem's totals under lustre-totals).
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
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
#include "iocount.h"
#include "keyfile.h"
#include "msg.h"
#include "session.h"
#include "wire.h"

#include "loadgen.h"

_Noreturn void
die(const char *fmt, ...)
{
	va_list ap;

	(void)fputs("bench_loadgen: ", stderr);
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
	return (uint64_t)ts.tv_sec * LG_NS + (uint64_t)ts.tv_nsec;
}

static double
cpu_s(void)
{
	struct rusage ru;

	(void)getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void
put_be64(uint8_t *p, uint64_t v)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* Sign sweep s's frame of c into c->next. */
static void
sign_next(struct loadgen *lg, struct lg_conn *c, unsigned s)
{
	struct wbuf *p = &c->loads[s];
	uint64_t id = lg->t0 + (uint64_t)s * lg->interval;

	put_be64(p->data + LG_OFF_FIRST_SWEEP, id);
	put_be64(p->data + LG_OFF_START, (id - lg->interval) * LG_NS);
	wbuf_reset(&c->next);
	if (session_send(&c->s, FRAME_SWEEP, 0, id, p->data, p->len, &c->next) <
	    0)
		die("%s: cannot sign a SWEEP", c->name);
	c->next_sweep = (int)s;
}

static void
conn_dead(struct lg_conn *c, const char *why)
{
	if (c->state == CONN_DEAD)
		return;
	(void)fprintf(stderr, "bench_loadgen: %s: %s\n", c->name, why);
	c->state = CONN_DEAD;
	if (c->fd >= 0)
		(void)close(c->fd);
	c->fd = -1;
}

static void
queue_frame(struct lg_conn *c, const struct wbuf *w)
{
	if (wbuf_put(&c->out, w->data, w->len) < 0)
		die("out of memory");
}

static void
send_hello(struct loadgen *lg, struct lg_conn *c)
{
	struct msg_hello *h = calloc(1, sizeof(*h));
	struct wbuf w;
	unsigned k, t = 0, g = c->idx;

	if (h == NULL)
		die("out of memory");
	if (lh_random(h->nonce, sizeof(h->nonce)) < 0)
		die("no random bytes");
	h->role = MSG_ROLE_GATHERER;
	(void)snprintf(h->software, sizeof(h->software), "bench_loadgen");
	h->time_ns = now_ns();
	h->interval = lg->interval;
	h->caps = MSG_CAP_SWEEP | MSG_CAP_MDOPS;
	(void)snprintf(h->name, sizeof(h->name), "%s", c->name);
	h->nfs = (uint16_t)lg->fs_per_gat;
	for (k = 0; k < lg->fs_per_gat; k++) {
		const char *fs = lg->fsname[gat_fs(lg, g, k)];

		memcpy(h->fs[k], fs, MSG_FS_MAX);
		h->targets[t].fs = (uint16_t)k;
		if (is_mds(lg, g))
			(void)snprintf(h->targets[t].name, MSG_TARGET_MAX,
			    "%s-MDT0000", fs);
		else
			(void)snprintf(h->targets[t].name, MSG_TARGET_MAX,
			    "%s-OST%04x", fs, g % per_group(lg) - 1);
		t++;
	}
	h->ntargets = (uint16_t)t;
	wbuf_init(&w, 0);
	if (session_hello(&c->s, h, &w) < 0)
		die("%s: cannot make a HELLO", c->name);
	queue_frame(c, &w);
	wbuf_free(&w);
	free(h);
}

static void
on_ack(struct loadgen *lg, struct lg_conn *c, const struct session_frame *f)
{
	struct msg_ack ack;
	struct lh_err err;

	if (msg_ack_decode(&ack, f->payload, f->hdr.len, &err) < 0) {
		conn_dead(c, err.reason);
		return;
	}
	if (ack.kind == MSG_ACK_HELLO) {
		c->state = CONN_OPEN;
		return;
	}
	if (!c->awaiting_ack || ack.batch != c->inflight) {
		conn_dead(c, "ACK of a batch not sent");
		return;
	}
	if (ack.kind == MSG_ACK_DUPLICATE)
		(void)fprintf(stderr,
		    "bench_loadgen: %s: batch %" PRIu64
		    " acknowledged as a duplicate\n",
		    c->name, ack.batch);
	c->awaiting_ack = false;
	lg->cur_acks++;
	/* Sign the next one now, in the quiet time after the close. */
	if (lg->cur >= 0 && (unsigned)lg->cur + 1 < lg->nsweeps)
		sign_next(lg, c, (unsigned)lg->cur + 1);
}

static void
on_frame(struct loadgen *lg, struct lg_conn *c, const struct session_frame *f)
{
	struct msg_bye bye;
	struct lh_err err;

	switch (f->hdr.type) {
	case FRAME_CHALLENGE:
		send_hello(lg, c);
		break;
	case FRAME_ACK:
		on_ack(lg, c, f);
		break;
	case FRAME_BYE:
		if (msg_bye_decode(&bye, f->payload, f->hdr.len, &err) == 0)
			conn_dead(c, bye.text);
		else
			conn_dead(c, "BYE");
		break;
	default:
		break;
	}
}

static void
conn_read(struct loadgen *lg, struct lg_conn *c)
{
	size_t off = 0;

	for (;;) {
		ssize_t n;

		if (c->incap - c->inlen < LG_IN_START) {
			size_t cap = c->incap * 2;
			uint8_t *p = realloc(c->in, cap);

			if (p == NULL)
				die("out of memory");
			c->in = p;
			c->incap = cap;
		}
		n = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			conn_dead(c,
			    n == 0 ? "closed by the aggregator" :
			             strerror(errno));
			return;
		}
		c->inlen += (size_t)n;
	}
	while (c->state != CONN_DEAD) {
		struct session_frame f;
		struct lh_err err;
		size_t need = FRAME_HDR_LEN;
		int rc;

		lh_err_clear(&err);
		rc = session_input(&c->s, c->in + off, c->inlen - off, &f,
		    &need, &err);
		if (rc < 0) {
			conn_dead(c, err.reason);
			return;
		}
		if (rc == 0)
			break;
		on_frame(lg, c, &f);
		off += (size_t)rc;
	}
	memmove(c->in, c->in + off, c->inlen - off);
	c->inlen -= off;
}

static void
conn_write(struct lg_conn *c)
{
	while (c->outoff < c->out.len) {
		ssize_t n = write(c->fd, c->out.data + c->outoff,
		    c->out.len - c->outoff);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			conn_dead(c, strerror(errno));
			return;
		}
		c->outoff += (size_t)n;
	}
	wbuf_reset(&c->out);
	c->outoff = 0;
}

static void
conn_start(struct loadgen *lg, struct lg_conn *c)
{
	int one = 1;

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		die("socket: %s", strerror(errno));
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (session_init(&c->s, SESSION_CONNECTOR, &lg->ring, lg->hmac, c->name,
	        FRAME_MAX_DEFAULT) < 0)
		die("bad key ring");
	c->state = CONN_CONNECTING;
	if (connect(c->fd, (const struct sockaddr *)&lg->addr,
	        sizeof(lg->addr)) < 0 &&
	    errno != EINPROGRESS)
		die("connect: %s", strerror(errno));
}

static void
conn_connected(struct lg_conn *c)
{
	int e = 0;
	socklen_t len = sizeof(e);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e != 0) {
		conn_dead(c, strerror(e != 0 ? e : errno));
		return;
	}
	c->state = CONN_HANDSHAKE;
}

/* One round of poll over every connection, at most timeout_ms. */
static void
pump(struct loadgen *lg, struct pollfd *pfd, int timeout_ms)
{
	unsigned i;

	for (i = 0; i < lg->ngat; i++) {
		struct lg_conn *c = &lg->conns[i];

		pfd[i].fd = c->state == CONN_DEAD ? -1 : c->fd;
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
		if (c->state == CONN_CONNECTING || c->outoff < c->out.len)
			pfd[i].events |= POLLOUT;
	}
	if (poll(pfd, lg->ngat, timeout_ms) < 0 && errno != EINTR)
		die("poll: %s", strerror(errno));
	for (i = 0; i < lg->ngat; i++) {
		struct lg_conn *c = &lg->conns[i];

		if (c->state == CONN_DEAD || pfd[i].revents == 0)
			continue;
		if (c->state == CONN_CONNECTING) {
			if ((pfd[i].revents & (POLLOUT | POLLERR | POLLHUP)) !=
			    0)
				conn_connected(c);
			continue;
		}
		if ((pfd[i].revents & (POLLIN | POLLERR | POLLHUP)) != 0)
			conn_read(lg, c);
		if (c->state != CONN_DEAD && c->outoff < c->out.len &&
		    (pfd[i].revents & POLLOUT) != 0)
			conn_write(c);
	}
}

static size_t
count_state(const struct loadgen *lg, enum conn_state st)
{
	size_t i, n = 0;

	for (i = 0; i < lg->ngat; i++)
		n += lg->conns[i].state == st;
	return n;
}

static bool
all_written(const struct loadgen *lg)
{
	unsigned i;

	for (i = 0; i < lg->ngat; i++) {
		const struct lg_conn *c = &lg->conns[i];

		if (c->state != CONN_DEAD && c->outoff < c->out.len)
			return false;
	}
	return true;
}

/* Queue sweep s's frames on every connection that may send. */
static void
start_sweep(struct loadgen *lg, unsigned s)
{
	unsigned i;

	lg->cur = (int)s;
	lg->cur_t0_ns = now_ns();
	lg->cur_cpu = cpu_s();
	lg->cur_frames = lg->cur_bytes = lg->cur_acks = lg->cur_missed = 0;
	lg->written_ns = 0;
	lg->reported = false;
	for (i = 0; i < lg->ngat; i++) {
		struct lg_conn *c = &lg->conns[i];

		if (c->state != CONN_OPEN)
			continue;
		if (c->awaiting_ack || c->next_sweep != (int)s) {
			lg->cur_missed++;
			continue;
		}
		queue_frame(c, &c->next);
		c->next_sweep = -1;
		c->awaiting_ack = true;
		c->inflight = lg->batch0 + s;
		lg->cur_frames++;
		lg->cur_bytes += c->next.len;
	}
	for (i = 0; i < lg->ngat; i++) {
		struct lg_conn *c = &lg->conns[i];

		if (c->state == CONN_OPEN && c->outoff < c->out.len)
			conn_write(c);
	}
}

static void
report_sweep(struct loadgen *lg, uint64_t now)
{
	uint64_t id = lg->t0 + (uint64_t)lg->cur * lg->interval;

	(void)printf("sweep %" PRIu64 " frames %zu bytes %zu written_ms %.1f "
	             "acked_ms %.1f cpu_ms %.1f missed %zu\n",
	    id, lg->cur_frames, lg->cur_bytes,
	    (double)(lg->written_ns - lg->cur_t0_ns) / 1e6,
	    (double)(now - lg->cur_t0_ns) / 1e6, (cpu_s() - lg->cur_cpu) * 1e3,
	    lg->cur_missed);
	(void)fflush(stdout);
	lg->reported = true;
}

/* Connect everything and finish every handshake (10 s at most). */
static void
connect_all(struct loadgen *lg, struct pollfd *pfd)
{
	uint64_t deadline = now_ns() + 10 * LG_NS;
	unsigned i;

	for (i = 0; i < lg->ngat; i++)
		conn_start(lg, &lg->conns[i]);
	while (count_state(lg, CONN_OPEN) + count_state(lg, CONN_DEAD) <
	    lg->ngat) {
		if (now_ns() > deadline)
			die("handshakes not done within 10 s");
		pump(lg, pfd, 100);
	}
	if (count_state(lg, CONN_DEAD) > 0)
		die("%zu connections failed", count_state(lg, CONN_DEAD));
}

/* Run every sweep on schedule; returns the number of problems. */
static unsigned
run(struct loadgen *lg, struct pollfd *pfd)
{
	uint64_t end = 0;
	unsigned next = 0, bad = 0, i;

	for (i = 0; i < lg->ngat; i++)
		sign_next(lg, &lg->conns[i], 0);
	for (;;) {
		uint64_t now = now_ns();
		int timeout = 1000;

		if (lg->cur >= 0 && !lg->reported) {
			if (lg->written_ns == 0 && all_written(lg))
				lg->written_ns = now;
			if (lg->cur_acks == lg->cur_frames &&
			    lg->written_ns != 0)
				report_sweep(lg, now);
		}
		if (next < lg->nsweeps) {
			uint64_t due =
			    (lg->t0 + (uint64_t)next * lg->interval) * LG_NS +
			    (uint64_t)lg->offset_ms * 1000000u;
			if (now >= due) {
				if (lg->cur >= 0 && !lg->reported) {
					report_sweep(lg, now);
					bad++;
				}
				start_sweep(lg, next++);
				bad += lg->cur_missed > 0;
				continue;
			}
			if (due - now < 1000000000u)
				timeout = (int)((due - now) / 1000000u) + 1;
		} else if (lg->reported) {
			break;
		} else {
			if (end == 0)
				end = now + (uint64_t)lg->interval * LG_NS;
			if (now > end) {
				report_sweep(lg, now);
				bad++;
				break;
			}
		}
		if (count_state(lg, CONN_DEAD) == lg->ngat)
			die("every connection is gone");
		pump(lg, pfd, timeout);
	}
	return bad + (unsigned)count_state(lg, CONN_DEAD);
}

/* A BYE on each connection, best effort, then close. */
static void
say_goodbye(struct loadgen *lg, struct pollfd *pfd)
{
	struct msg_bye bye = {0, "benchmark done"};
	uint64_t deadline = now_ns() + 2 * LG_NS;
	struct wbuf p, w;
	unsigned i;

	wbuf_init(&p, 0);
	wbuf_init(&w, 0);
	if (msg_bye_encode(&p, &bye) < 0)
		die("out of memory");
	for (i = 0; i < lg->ngat; i++) {
		struct lg_conn *c = &lg->conns[i];

		if (c->state != CONN_OPEN)
			continue;
		wbuf_reset(&w);
		if (session_send(&c->s, FRAME_BYE, 0, 0, p.data, p.len, &w) ==
		    0)
			queue_frame(c, &w);
		conn_write(c);
	}
	while (!all_written(lg) && now_ns() < deadline)
		pump(lg, pfd, 100);
	for (i = 0; i < lg->ngat; i++) {
		struct lg_conn *c = &lg->conns[i];

		if (c->fd >= 0)
			(void)close(c->fd);
		c->fd = -1;
	}
	wbuf_free(&p);
	wbuf_free(&w);
}

static void
cleanup(struct loadgen *lg)
{
	unsigned i, s;

	for (i = 0; i < lg->ngat; i++) {
		struct lg_conn *c = &lg->conns[i];

		for (s = 0; s < lg->nsweeps && c->loads != NULL; s++)
			wbuf_free(&c->loads[s]);
		free(c->loads);
		wbuf_free(&c->out);
		wbuf_free(&c->next);
		free(c->in);
		session_clear(&c->s);
	}
	free(lg->conns);
	free(lg->nids);
	free(lg->expect);
	hmac_free(lg->hmac);
	keyring_clear(&lg->ring);
}

/* The connections' state before they connect. */
static void
conns_init(struct loadgen *lg)
{
	unsigned i;

	for (i = 0; i < lg->ngat; i++) {
		struct lg_conn *c = &lg->conns[i];

		c->idx = i;
		c->fd = -1;
		c->next_sweep = -1;
		gat_name(lg, i, c->name, sizeof(c->name));
		wbuf_init(&c->out, 0);
		wbuf_init(&c->next, 0);
		c->incap = (size_t)LG_IN_START * 4;
		c->in = malloc(c->incap);
		if (c->in == NULL)
			die("out of memory");
	}
}

int
main(int argc, char **argv)
{
	struct lg_opts o = {NULL, NULL, NULL, NULL};
	struct loadgen lg;
	struct pollfd *pfd;
	struct lh_err err;
	double cpu0, encode_cpu;
	struct rusage ru;
	uint64_t now;
	unsigned bad;

	parse_args(&lg, &o, argc, argv);
	layout_check(&lg);
	make_pool(&lg);
	if (o.setup != NULL) {
		write_setup(&lg, o.setup);
		free(lg.nids);
		free(lg.expect);
		return 0;
	}
	if (o.connect_to == NULL || o.keyfile == NULL)
		usage();
	if (lg.offset_ms >= lg.interval * 1000u)
		die("--offset-ms must be below the interval");
	parse_connect(&lg, o.connect_to);
	if (keyfile_load(o.keyfile, &lg.ring, &err) < 0)
		die("%s", err.reason);
	(void)signal(SIGPIPE, SIG_IGN);
	lg.hmac = hmac_new();
	lg.conns = calloc(lg.ngat, sizeof(*lg.conns));
	pfd = calloc(lg.ngat, sizeof(*pfd));
	if (lg.hmac == NULL || lg.conns == NULL || pfd == NULL)
		die("out of memory");
	conns_init(&lg);
	/* Batch numbers as a sender without saved state picks them. */
	lg.batch0 = now_ns() / 1000;
	cpu0 = cpu_s();
	encode_all(&lg);
	encode_cpu = cpu_s() - cpu0;
	if (o.expect != NULL)
		write_expect(&lg, o.expect);
	connect_all(&lg, pfd);
	/* The first boundary at least a second away. */
	now = now_ns() / LG_NS + 1;
	lg.t0 = (now / lg.interval + 1) * lg.interval;
	(void)fprintf(stderr,
	    "bench_loadgen: %u gatherers connected, %u clients each, %u "
	    "filesystems, %u hosts; first sweep %" PRIu64 ", every %u s\n",
	    lg.ngat, lg.nclients, lg.nfs, npool(&lg), lg.t0, lg.interval);
	bad = run(&lg, pfd);
	say_goodbye(&lg, pfd);
	(void)getrusage(RUSAGE_SELF, &ru);
	(void)printf("loadgen encode_cpu_ms %.1f total_cpu_ms %.1f "
	             "maxrss_kb %ld\n",
	    encode_cpu * 1e3, cpu_s() * 1e3, ru.ru_maxrss);
	free(pfd);
	cleanup(&lg);
	return bad == 0 ? 0 : 1;
}
