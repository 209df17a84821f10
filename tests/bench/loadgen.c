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

#define LG_NS              1000000000ULL
#define LG_NID_MAX         32
#define LG_HOST_MAX        16
#define LG_SWEEPS_MAX      1000
#define LG_FS_MAX          16
#define LG_IN_START        4096
#define LG_POOL_BASE       0x0a010001u /* 10.1.0.1: the pool's first NID */
#define LG_TOTALS_HOST     "lustre-totals"
/* The payload's fields before the filesystems (docs/protocol.md 4.4). */
#define LG_OFF_FIRST_SWEEP 8
#define LG_OFF_START       16

enum conn_state {
	CONN_CONNECTING,
	CONN_HANDSHAKE,
	CONN_OPEN,
	CONN_DEAD,
};

struct lg_conn {
	unsigned idx;
	char name[MSG_NAME_MAX];
	int fd;
	enum conn_state state;
	struct session s;
	uint8_t *in;
	size_t inlen, incap;
	struct wbuf out;    /* bytes being written */
	size_t outoff;      /* of out, already written */
	struct wbuf next;   /* the next SWEEP frame, signed */
	int next_sweep;     /* its sweep index, -1: none */
	bool awaiting_ack;  /* a SWEEP is unacknowledged */
	uint64_t inflight;  /* its batch */
	struct wbuf *loads; /* [nsweeps] encoded payloads */
};

struct loadgen {
	/* layout */
	unsigned ngat, nclients, nfs, fs_per_gat;
	const char *prefix;
	char fsname[LG_FS_MAX][MSG_FS_MAX];
	/* run */
	unsigned nsweeps, interval, offset_ms;
	uint64_t batch0; /* batch number of sweep 0 */
	uint64_t t0;     /* sweep id of sweep 0, seconds */
	struct keyring ring;
	struct hmac_ctx *hmac;
	struct sockaddr_in addr;
	struct lg_conn *conns;
	char (*nids)[LG_NID_MAX];    /* the pool */
	double (*expect)[IOCOUNT_N]; /* last sweep, per pool NID */
	/* the sweep in flight */
	int cur;            /* sweep index, -1 before the first */
	uint64_t cur_t0_ns; /* realtime when it was queued */
	double cur_cpu;     /* process CPU then, s */
	size_t cur_frames, cur_bytes, cur_acks, cur_missed;
	uint64_t written_ns;
	bool reported;
};

static _Noreturn void
die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static _Noreturn void
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

static unsigned
parse_uint(const char *s, const char *what, unsigned lo, unsigned hi)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		die("%s: %s is not a number from %u to %u", what, s, lo, hi);
	return (unsigned)v;
}

/* Clients per filesystem of one gatherer. */
static unsigned
per_fs(const struct loadgen *lg)
{
	return lg->nclients / lg->fs_per_gat;
}

static unsigned
npool(const struct loadgen *lg)
{
	return lg->nfs * per_fs(lg);
}

/* Gatherers per group, and whether gatherer g is its group's MDS. */
static unsigned
per_group(const struct loadgen *lg)
{
	return lg->ngat / (lg->nfs / lg->fs_per_gat);
}

static bool
is_mds(const struct loadgen *lg, unsigned g)
{
	return g % per_group(lg) == 0;
}

/* The filesystem index of gatherer g's k-th filesystem. */
static unsigned
gat_fs(const struct loadgen *lg, unsigned g, unsigned k)
{
	return g / per_group(lg) * lg->fs_per_gat + k;
}

static void
layout_check(struct loadgen *lg)
{
	static const char *const names[] = {"scratch", "home", "project",
	    "work", "archive", "data", "fast", "tmp"};
	unsigned f;

	if (lg->nfs % lg->fs_per_gat != 0 ||
	    lg->nclients % lg->fs_per_gat != 0 ||
	    lg->ngat % (lg->nfs / lg->fs_per_gat) != 0 || per_group(lg) < 2)
		die("layout: filesystems %% fs-per-gatherer, clients %% "
		    "fs-per-gatherer and gatherers %% groups must be 0, with "
		    "at least 2 gatherers per group");
	if ((uint64_t)npool(lg) > 0xfe000000u - LG_POOL_BASE)
		die("layout: too many clients");
	for (f = 0; f < lg->nfs; f++) {
		if (f < sizeof(names) / sizeof(names[0]))
			(void)snprintf(lg->fsname[f], MSG_FS_MAX, "%s",
			    names[f]);
		else
			(void)snprintf(lg->fsname[f], MSG_FS_MAX, "fs%u", f);
	}
}

static void
pool_ip(unsigned i, char *buf, size_t size)
{
	uint32_t ip = LG_POOL_BASE + i;

	(void)snprintf(buf, size, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff,
	    (ip >> 8) & 0xff, ip & 0xff);
}

static void
pool_host(unsigned i, char *buf, size_t size)
{
	(void)snprintf(buf, size, "cn%05u", i + 1);
}

static void
make_pool(struct loadgen *lg)
{
	char ip[16]; /* a dotted quad */
	unsigned i, n = npool(lg);

	lg->nids = calloc(n, sizeof(*lg->nids));
	lg->expect = calloc(n, sizeof(*lg->expect));
	if (lg->nids == NULL || lg->expect == NULL)
		die("out of memory");
	for (i = 0; i < n; i++) {
		pool_ip(i, ip, sizeof(ip));
		(void)snprintf(lg->nids[i], LG_NID_MAX, "%.15s@o2ib", ip);
	}
}

static void
gat_name(const struct loadgen *lg, unsigned g, char *buf, size_t size)
{
	(void)snprintf(buf, size, "%s%03u", lg->prefix, g);
}

static void
write_setup(struct loadgen *lg, const char *dir)
{
	char path[4096], ip[LG_NID_MAX], host[LG_HOST_MAX], name[MSG_NAME_MAX];
	unsigned i;
	FILE *f;

	(void)snprintf(path, sizeof(path), "%s/hosts", dir);
	f = fopen(path, "w");
	if (f == NULL)
		die("%s: %s", path, strerror(errno));
	(void)fprintf(f, "# bench_loadgen's client pool: %u hosts\n",
	    npool(lg));
	for (i = 0; i < npool(lg); i++) {
		pool_ip(i, ip, sizeof(ip));
		pool_host(i, host, sizeof(host));
		(void)fprintf(f, "%s %s\n", ip, host);
	}
	if (fclose(f) != 0)
		die("%s: %s", path, strerror(errno));
	(void)snprintf(path, sizeof(path), "%s/gatherers", dir);
	f = fopen(path, "w");
	if (f == NULL)
		die("%s: %s", path, strerror(errno));
	(void)fputs("gatherers = {", f);
	for (i = 0; i < lg->ngat; i++) {
		gat_name(lg, i, name, sizeof(name));
		(void)fprintf(f, "%s\"%s\"", i > 0 ? ", " : " ", name);
	}
	(void)fputs(" }\n", f);
	if (fclose(f) != 0)
		die("%s: %s", path, strerror(errno));
}

/*
 * Gatherer g's record of its k-th filesystem's j-th client in sweep s.
 * Deltas are non-zero and grow with s; the default span differs by
 * gatherer and sweep; every 10th record has a span of its own (an export
 * read a little later), every 50th an OSS record's write_bytes its own
 * counter span (the client's targets were read at different times).
 */
static void
make_rec(const struct loadgen *lg, unsigned g, unsigned s, unsigned k,
    unsigned j, uint64_t span, struct msg_rec *r)
{
	unsigned f = gat_fs(lg, g, k), i;
	uint64_t base = 1 + (j * 7 + g * 13 + f * 5) % 97, grow = s + 1;

	memset(r, 0, sizeof(*r));
	r->fs = (uint16_t)k;
	r->nid = lg->nids[f * per_fs(lg) + j];
	r->span_us = j % 10 == 3 ? span + 500 + j % 1000 : span;
	if (is_mds(lg, g)) {
		r->d.mds_ops = (base + 5 * (uint64_t)s) * 10 + j % 3;
	} else {
		r->d.read_bytes =
		    (base * 65536 + 4096 * (uint64_t)(g % 16)) * grow;
		r->d.write_bytes = ((base + 31) % 97 + 1) * 32768 * grow;
		r->d.read_ops = r->d.read_bytes / 1048576 + 1;
		r->d.write_ops = r->d.write_bytes / 1048576 + 1;
		r->d.oss_ops = r->d.read_ops + r->d.write_ops + 2 + s % 3;
	}
	for (i = 0; i < MSG_NCOUNTERS; i++)
		r->cspan_us[i] = 0; /* the record's span */
	if (!is_mds(lg, g) && j % 50 == 7)
		r->cspan_us[1] = r->span_us - 1000;
}

/* Add a record to the expected rates, as the aggregator sums them. */
static void
expect_add(struct loadgen *lg, unsigned g, unsigned k, unsigned j,
    const struct msg_rec *r)
{
	unsigned f = gat_fs(lg, g, k), i;
	uint64_t v[IOCOUNT_N];
	double *e = lg->expect[f * per_fs(lg) + j];

	iocount_to_array(&r->d, v);
	for (i = 0; i < IOCOUNT_N; i++) {
		uint64_t span =
		    r->cspan_us[i] != 0 ? r->cspan_us[i] : r->span_us;

		if (v[i] != 0)
			e[i] += (double)v[i] * 1e6 / (double)span;
	}
}

static uint64_t
gat_span(const struct loadgen *lg, unsigned g, unsigned s)
{
	return (uint64_t)lg->interval * 1000000u + (g * 37 + s * 11) % 2000;
}

/* Encode every payload of every gatherer (sweep ids written in later). */
static void
encode_all(struct loadgen *lg)
{
	unsigned g, s, k, j, pf = per_fs(lg);
	struct msg_rec *recs = calloc(lg->nclients, sizeof(*recs));

	if (recs == NULL)
		die("out of memory");
	for (g = 0; g < lg->ngat; g++) {
		struct lg_conn *c = &lg->conns[g];

		c->loads = calloc(lg->nsweeps, sizeof(*c->loads));
		if (c->loads == NULL)
			die("out of memory");
		for (s = 0; s < lg->nsweeps; s++) {
			struct msg_sweep h;
			uint64_t span = gat_span(lg, g, s);

			memset(&h, 0, sizeof(h));
			h.batch = lg->batch0 + s;
			h.span_us = span;
			h.nfs = (uint16_t)lg->fs_per_gat;
			for (k = 0; k < lg->fs_per_gat; k++)
				memcpy(h.fs[k], lg->fsname[gat_fs(lg, g, k)],
				    MSG_FS_MAX);
			for (k = 0; k < lg->fs_per_gat; k++) {
				for (j = 0; j < pf; j++) {
					struct msg_rec *r = &recs[k * pf + j];

					make_rec(lg, g, s, k, j, span, r);
					if (s + 1 == lg->nsweeps)
						expect_add(lg, g, k, j, r);
				}
			}
			wbuf_init(&c->loads[s], 0);
			if (msg_sweep_encode(&c->loads[s], &h, recs,
			        lg->nclients) < 0)
				die("cannot encode a SWEEP");
		}
	}
	free(recs);
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

static void
write_expect(const struct loadgen *lg, const char *path)
{
	static const struct {
		const char *suffix;
		unsigned counter;
	} m[] = {{"read_bytes", 0}, {"write_bytes", 1}, {"oss_ops", 4},
	    {"mds_ops", 5}};
	double tot[LG_FS_MAX][IOCOUNT_N];
	char host[LG_HOST_MAX];
	unsigned i, f, k;
	FILE *fp = fopen(path, "w");

	if (fp == NULL)
		die("%s: %s", path, strerror(errno));
	memset(tot, 0, sizeof(tot));
	for (i = 0; i < npool(lg); i++) {
		f = i / per_fs(lg);
		pool_host(i, host, sizeof(host));
		for (k = 0; k < 4; k++)
			(void)fprintf(fp, "%s %s_%s %.6f\n", host,
			    lg->fsname[f], m[k].suffix,
			    lg->expect[i][m[k].counter]);
		for (k = 0; k < IOCOUNT_N; k++)
			tot[f][k] += lg->expect[i][k];
	}
	for (f = 0; f < lg->nfs; f++) {
		for (k = 0; k < 4; k++)
			(void)fprintf(fp, "%s %s_%s %.6f\n", LG_TOTALS_HOST,
			    lg->fsname[f], m[k].suffix, tot[f][m[k].counter]);
	}
	if (fclose(fp) != 0)
		die("%s: %s", path, strerror(errno));
}

static void
parse_connect(struct loadgen *lg, const char *arg)
{
	char host[64];
	const char *colon = strrchr(arg, ':');
	size_t n;

	if (colon == NULL || (n = (size_t)(colon - arg)) >= sizeof(host))
		die("--connect IPV4:PORT");
	memcpy(host, arg, n);
	host[n] = '\0';
	memset(&lg->addr, 0, sizeof(lg->addr));
	lg->addr.sin_family = AF_INET;
	lg->addr.sin_port =
	    htons((uint16_t)parse_uint(colon + 1, "port", 1, 65535));
	if (inet_pton(AF_INET, host, &lg->addr.sin_addr) != 1)
		die("--connect: %s is not an IPv4 address", host);
}

static void
usage(void)
{
	(void)fprintf(stderr,
	    "usage: bench_loadgen --setup DIR [layout]\n"
	    "       bench_loadgen --connect IP:PORT -k KEYFILE [layout] "
	    "[--sweeps K] [--interval S] [--offset-ms MS] [--expect FILE]\n"
	    "layout: [--gatherers G] [--clients C] [--filesystems F] "
	    "[--fs-per-gatherer S] [--prefix NAME]\n");
	exit(2);
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

/* What the command line names, besides the layout in struct loadgen. */
struct lg_opts {
	const char *setup, *connect_to, *keyfile, *expect;
};

/* One layout option (ch, its argument arg) into lg; false if ch is
 * another. */
static bool
parse_layout_opt(struct loadgen *lg, int ch, const char *arg)
{
	switch (ch) {
	case 'g':
		lg->ngat = parse_uint(arg, "--gatherers", 2, 1000);
		return true;
	case 'C':
		lg->nclients = parse_uint(arg, "--clients", 1, 1000000);
		return true;
	case 'F':
		lg->nfs = parse_uint(arg, "--filesystems", 1, LG_FS_MAX);
		return true;
	case 'P':
		lg->fs_per_gat =
		    parse_uint(arg, "--fs-per-gatherer", 1, LG_FS_MAX);
		return true;
	case 'p':
		if (strlen(arg) == 0 || strlen(arg) > 40)
			die("--prefix: 1 to 40 characters");
		lg->prefix = arg;
		return true;
	case 's':
		lg->nsweeps = parse_uint(arg, "--sweeps", 1, LG_SWEEPS_MAX);
		return true;
	case 'i':
		lg->interval = parse_uint(arg, "--interval", 1, 3600);
		return true;
	case 'o':
		lg->offset_ms = parse_uint(arg, "--offset-ms", 0, 60000);
		return true;
	default:
		return false;
	}
}

/* The defaults, then the command line. */
static void
parse_args(struct loadgen *lg, struct lg_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"setup", required_argument, NULL, 'S'},
	    {"connect", required_argument, NULL, 'c'},
	    {"gatherers", required_argument, NULL, 'g'},
	    {"clients", required_argument, NULL, 'C'},
	    {"filesystems", required_argument, NULL, 'F'},
	    {"fs-per-gatherer", required_argument, NULL, 'P'},
	    {"prefix", required_argument, NULL, 'p'},
	    {"sweeps", required_argument, NULL, 's'},
	    {"interval", required_argument, NULL, 'i'},
	    {"offset-ms", required_argument, NULL, 'o'},
	    {"expect", required_argument, NULL, 'e'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	memset(lg, 0, sizeof(*lg));
	lg->ngat = 100;
	lg->nclients = 10000;
	lg->nfs = 4;
	lg->fs_per_gat = 2;
	lg->prefix = "lg";
	lg->nsweeps = 5;
	lg->interval = 20;
	lg->offset_ms = 200;
	lg->cur = -1;
	while ((ch = getopt_long(argc, argv, "k:", longopts, NULL)) != -1) {
		if (parse_layout_opt(lg, ch, optarg))
			continue;
		switch (ch) {
		case 'S':
			o->setup = optarg;
			break;
		case 'c':
			o->connect_to = optarg;
			break;
		case 'k':
			o->keyfile = optarg;
			break;
		case 'e':
			o->expect = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
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
