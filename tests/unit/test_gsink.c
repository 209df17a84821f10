/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sink's packets are libganglia's packets: the same (host, metric)
 * sent through gsink (its own XDR encoding, one sendmmsg per channel) and
 * through libganglia's call sequence for a spoofed metric (metric_set,
 * metadata_add of SPOOF_HOST and GROUP, metadata_send, value_send), each
 * captured on private UDP sockets on 127.0.0.1, byte for byte.
 */
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <arpa/inet.h>

#include <check.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "gapi.h"
#include "sink.h"
#include "sink_fmt.h"
#include "sink_gso.h"
#include "testutil.h"

#define PKT_MAX 2048

struct pkt {
	unsigned char b[PKT_MAX];
	ssize_t len;
};

/* A UDP socket on 127.0.0.1, port chosen by the kernel. */
static int
udp_listen(unsigned *ret_port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*ret_port = ntohs(a.sin_port);
	return fd;
}

/* The next datagram on fd, waiting at most 5 s. */
static void
recv_pkt(int fd, struct pkt *p)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	ck_assert_int_eq(poll(&pfd, 1, 5000), 1);
	p->len = recv(fd, p->b, sizeof(p->b), 0);
	ck_assert_int_gt(p->len, 0);
}

static void
no_more(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	ck_assert_int_eq(poll(&pfd, 1, 50), 0);
}

static void
same(const struct pkt *a, const struct pkt *b, const char *what)
{
	ck_assert_msg(a->len == b->len &&
	        memcmp(a->b, b->b, (size_t)a->len) == 0,
	    "%s: %zd bytes from libganglia, %zd from the sink, differ", what,
	    a->len, b->len);
}

/* A gmond.conf with one channel per port. */
static const char *
conf_for(const unsigned *ports, size_t n)
{
	static char path[] = "/tmp/lh-test-gsink-XXXXXX";
	FILE *f;
	size_t i;
	int fd;

	memcpy(path + sizeof(path) - 7, "XXXXXX", 6);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	for (i = 0; i < n; i++)
		(void)fprintf(f,
		    "udp_send_channel {\n  host = 127.0.0.1\n  port = %u\n}\n",
		    ports[i]);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

struct ref {
	struct gapi api;
	Ganglia_pool pool;
	Ganglia_udp_send_channels ch;
};

static void
ref_open(struct ref *r, const char *conf)
{
	char path[256];
	struct lh_err err;

	ck_assert_msg(gapi_load(&r->api, gapi_soname, &err) == 0, "%s",
	    err.reason);
	(void)snprintf(path, sizeof(path), "%s", conf);
	r->pool = r->api.pool_create(NULL);
	r->ch = r->api.udp_send_channels_create(r->pool,
	    r->api.gmond_config_create(path, 0));
	ck_assert_ptr_nonnull(r->ch);
}

/* libganglia's packets for one spoofed float: metadata (when meta) and
 * value, as gmetric --spoof sends them. */
static void
ref_send(struct ref *r, const char *spoof, const char *metric,
    const char *units, const char *value, const char *group, bool meta)
{
	char n[64], v[64], u[64], s[320], g[80], type[] = "float";
	char spoof_key[] = SPOOF_HOST, group_key[] = "GROUP";
	Ganglia_metric gm = r->api.metric_create(r->pool);

	(void)snprintf(n, sizeof(n), "%s", metric);
	(void)snprintf(v, sizeof(v), "%s", value);
	(void)snprintf(u, sizeof(u), "%s", units);
	(void)snprintf(s, sizeof(s), "%s", spoof);
	(void)snprintf(g, sizeof(g), "%s", group);
	ck_assert_int_eq(r->api.metric_set(gm, n, v, type, u,
	                     GANGLIA_SLOPE_BOTH, 77, 888),
	    0);
	r->api.metadata_add(gm, spoof_key, s);
	if (meta) {
		if (g[0] != '\0')
			r->api.metadata_add(gm, group_key, g);
		ck_assert_int_eq(r->api.metadata_send(gm, r->ch), 0);
	}
	ck_assert_int_eq(r->api.value_send(gm, r->ch), 0);
	r->api.metric_destroy(gm);
}

static struct gsink *
sink_open(const char *conf, const char *group)
{
	struct gsink_opts o;
	struct gsink *s = NULL;
	struct lh_err err;

	gsink_opts_default(&o);
	o.group = group;
	o.tmax = 77;
	o.dmax = 888;
	o.pace = 0;
	o.metadata_interval = 3600;
	ck_assert_msg(gsink_open(conf, &o, &s, &err) == 0, "%s", err.reason);
	return s;
}

static const struct {
	const char *group, *units;
	double value;
	const char *text;
} cases[] = {
    {"lustre", "bytes/sec", 1234.5, "1234.50"},
    {"", "ops/sec", 0.0, "0.00"},
    {"g.1-x", "", -0.001, "0.00"},
    {"lustre", "bytes/sec", 12345678.125, "12345678.12"},
    {"lustre", "x", 3e15, "3.000000e+15"},
};

/* The packets of one flush of the sink, then libganglia's for the same
 * value: n of each, byte for byte. */
static void
compare(int fd, struct gsink *s, struct ref *r, unsigned i, int k)
{
	struct pkt got[2], want[2];
	int n = k < 2 ? 2 : 1, j;

	ck_assert_int_eq(gsink_put(s, "10.20.0.8", "n7.lh.test",
	                     "scratch_read_bytes", cases[i].units,
	                     cases[i].value, 1000 + (uint64_t)k),
	    0);
	ck_assert_uint_eq(gsink_flush(s, 2000 + (uint64_t)k), 0);
	for (j = 0; j < n; j++)
		recv_pkt(fd, &got[j]);
	no_more(fd);
	ref_send(r, "10.20.0.8:n7.lh.test", "scratch_read_bytes",
	    cases[i].units, cases[i].text, cases[i].group, n == 2);
	for (j = 0; j < n; j++)
		recv_pkt(fd, &want[j]);
	for (j = 0; j < n; j++)
		same(&want[j], &got[j], j + 1 < n ? "metadata" : "value");
}

/* The text the sink sent before it formatted values by hand: snprintf. */
static void
ref_text(char *buf, size_t size, double v)
{
	if (fabs(v) < 0.005)
		(void)snprintf(buf, size, "0.00");
	else if (fabs(v) < 1e15)
		(void)snprintf(buf, size, "%.2f", v);
	else
		(void)snprintf(buf, size, "%.6e", v);
}

/* Values where rounding to cents is close or the form changes. */
static const double edges[] = {0.0, -0.0, 0.005, -0.005, 0.004999999,
    0.0050000001, 0.015, 0.125, 0.375, -0.625, 1.005, 2.675, 1.115, 100.445,
    0.995, 9.995, 99.995, 1e13, 9999999999999.99, 9999999999999.995,
    1e13 + 0.005, 2.5e13, 1e14 + 0.125, 999999999999999.9, 1e15, -1e15, 3e15,
    1e300, -1e-300, DBL_MAX, -DBL_MAX, DBL_MIN, 4.9e-324, 9007199254740993.0,
    4503599627370495.5, 1125899906842623.5, 123456789.125};

static uint64_t
next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A value of one of the kinds a rate can be, and around each rounding
 * edge: any double from 2^-20 to 2^60, cents, a cent and a half (the
 * double nearest, and its neighbours), exact ties (m/8), integers. */
static double
some_value(uint64_t *x)
{
	uint64_t r = next_rand(x), k = r >> 24;
	double v, sign = (r & 1) != 0 ? -1.0 : 1.0;

	switch ((r >> 1) % 6) {
	case 0:
		v = ldexp(1.0 + (double)(k & 0xfffffffffULL) / 68719476736.0,
		    (int)((r >> 4) % 81) - 20);
		break;
	case 1:
		v = (double)(k % 1000000000000000ULL) / 100.0;
		break;
	case 2:
		v = (double)(2 * (k % 100000000000ULL) + 1) / 200.0;
		v = nextafter(v, (r & 2) != 0 ? 0.0 : DBL_MAX);
		break;
	case 3:
		v = (double)(2 * (k % 10000000ULL) + 1) / 200.0;
		break;
	case 4:
		v = (double)(k % 1000000000000ULL) / 8.0;
		break;
	default:
		v = (double)(k % 100000000ULL);
		break;
	}
	return sign * v;
}

/* The text written by hand is printf's for every value tried: the edges,
 * then 500,000 values of every kind. */
START_TEST(value_text_is_printfs)
{
	char got[SINKFMT_MAX], want[64];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t i, n;
	double v;

	for (i = 0; i < 500000 + sizeof(edges) / sizeof(edges[0]); i++) {
		v = i < sizeof(edges) / sizeof(edges[0]) ? edges[i] :
		                                           some_value(&x);
		n = sinkfmt_value(got, v);
		ref_text(want, sizeof(want), v);
		ck_assert_msg(strcmp(got, want) == 0 && n == strlen(want),
		    "%.17g: \"%s\", printf \"%s\"", v, got, want);
	}
}
END_TEST

/* Three values of one (host, metric): metadata with the first two
 * (gcache.h), then the value alone. */
START_TEST(packets_are_libganglias)
{
	unsigned port;
	int fd = udp_listen(&port), k;
	const char *conf = conf_for(&port, 1);
	struct gsink *s = sink_open(conf, cases[_i].group);
	struct gsink_stats st;
	struct ref r;

	ref_open(&r, conf);
	for (k = 0; k < 3; k++)
		compare(fd, s, &r, (unsigned)_i, k);
	gsink_stats(s, &st);
	ck_assert_uint_eq(st.values, 3);
	ck_assert_uint_eq(st.metadata, 2);
	ck_assert_uint_eq(st.send_errors, 0);
	gsink_close(s);
	r.api.pool_destroy(r.pool);
	(void)unlink(conf);
	(void)close(fd);
}
END_TEST

/* Many values of one (host, metric) through the sink and through
 * libganglia, with the text printf gave them: every packet the same. */
START_TEST(many_values_are_libganglias)
{
	unsigned port;
	int fd = udp_listen(&port), k, j, n;
	const char *conf = conf_for(&port, 1);
	struct gsink *s = sink_open(conf, "lustre");
	uint64_t x = 12345;
	struct pkt got[2], want[2];
	char text[64];
	struct ref r;
	double v;

	ref_open(&r, conf);
	for (k = 0; k < 400; k++) {
		n = k < 2 ? 2 : 1; /* metadata with the first two */
		v = k < (int)(sizeof(edges) / sizeof(edges[0])) ?
		    edges[k] :
		    some_value(&x);
		ck_assert_int_eq(gsink_put(s, "10.20.0.9", "n9", "fs_ops",
		                     "ops/sec", v, 1000 + (uint64_t)k),
		    0);
		ck_assert_uint_eq(gsink_flush(s, 2000 + (uint64_t)k), 0);
		for (j = 0; j < n; j++)
			recv_pkt(fd, &got[j]);
		ref_text(text, sizeof(text), v);
		ref_send(&r, "10.20.0.9:n9", "fs_ops", "ops/sec", text,
		    "lustre", n == 2);
		for (j = 0; j < n; j++)
			recv_pkt(fd, &want[j]);
		for (j = 0; j < n; j++)
			same(&want[j], &got[j], text);
	}
	no_more(fd);
	gsink_close(s);
	r.api.pool_destroy(r.pool);
	(void)unlink(conf);
	(void)close(fd);
}
END_TEST

/* The segment size of group k, or 0 when it has no control message. */
static unsigned
seg_of(struct sinkgso *g, size_t k)
{
	struct cmsghdr *cm = CMSG_FIRSTHDR(&g->msg[k].msg_hdr);
	uint16_t seg;

	if (cm == NULL)
		return 0;
	ck_assert_int_eq(cm->cmsg_level, IPPROTO_UDP);
	ck_assert_int_eq(cm->cmsg_type, UDP_SEGMENT);
	memcpy(&seg, CMSG_DATA(cm), sizeof(seg));
	return seg;
}

/* Grouping for GSO: by class (metadata first) and length, each group's
 * packets in their order, a lone packet without a segment size, and no
 * group over SINKGSO_BYTES_MAX. */
START_TEST(gso_groups)
{
	static char bytes[SINKGSO_MAX][1200];
	static const size_t len[] = {200, 80, 84, 200, 80, 212, 84, 80};
	static const uint8_t cls[] = {0, 1, 1, 0, 1, 0, 1, 1};
	struct iovec iov[SINKGSO_MAX];
	uint8_t c[SINKGSO_MAX];
	struct sinkgso g;
	size_t i;

	for (i = 0; i < 8; i++) {
		iov[i].iov_base = bytes[i];
		iov[i].iov_len = len[i];
	}
	sinkgso_group(&g, iov, cls, 8);
	ck_assert_uint_eq(g.ngroups, 4);
	/* metadata of 200 (packets 0, 3), of 212 (5); values of 80 (1, 4,
	 * 7), of 84 (2, 6) */
	ck_assert_uint_eq(seg_of(&g, 0), 200);
	ck_assert_uint_eq(seg_of(&g, 1), 0);
	ck_assert_uint_eq(seg_of(&g, 2), 80);
	ck_assert_uint_eq(seg_of(&g, 3), 84);
	ck_assert_uint_eq(sinkgso_count(&g, 2), 3);
	{
		static const uint8_t want[] = {0, 3, 5, 1, 4, 7, 2, 6};

		for (i = 0; i < 8; i++) {
			ck_assert_uint_eq(g.pkt[i], want[i]);
			ck_assert_ptr_eq(g.iov[i].iov_base, bytes[want[i]]);
		}
	}
	/* 64 packets of 1,200 bytes: 50 fit in one group, then 14. */
	for (i = 0; i < SINKGSO_MAX; i++) {
		iov[i].iov_base = bytes[i];
		iov[i].iov_len = 1200;
		c[i] = 1;
	}
	sinkgso_group(&g, iov, c, SINKGSO_MAX);
	ck_assert_uint_eq(g.ngroups, 2);
	ck_assert_uint_eq(sinkgso_count(&g, 0), SINKGSO_BYTES_MAX / 1200);
	ck_assert_uint_eq(sinkgso_count(&g, 1),
	    SINKGSO_MAX - SINKGSO_BYTES_MAX / 1200);
}
END_TEST

/* Every channel gets every packet, in order: 3 channels, 100 values (a
 * batch is 64 packets) of which the first carry metadata. */
START_TEST(every_channel_every_packet)
{
	unsigned port[3];
	int fd[3], c, i;
	const char *conf;
	struct gsink *s;
	struct pkt p[3];

	for (c = 0; c < 3; c++)
		fd[c] = udp_listen(&port[c]);
	conf = conf_for(port, 3);
	s = sink_open(conf, "lustre");
	for (i = 0; i < 100; i++) {
		char host[32];

		(void)snprintf(host, sizeof(host), "n%d", i);
		ck_assert_int_eq(gsink_put(s, "10.0.0.1", host, "m", "u",
		                     (double)i, 1),
		    0);
	}
	ck_assert_uint_eq(gsink_flush(s, 2), 0);
	for (i = 0; i < 200; i++) {
		for (c = 0; c < 3; c++)
			recv_pkt(fd[c], &p[c]);
		same(&p[0], &p[1], "channel 2");
		same(&p[0], &p[2], "channel 3");
	}
	for (c = 0; c < 3; c++) {
		no_more(fd[c]);
		(void)close(fd[c]);
	}
	gsink_close(s);
	(void)unlink(conf);
}
END_TEST

/* The channels are found however many sockets the process already holds
 * (an aggregator may have thousands of connections), and a socket that
 * was already connected before (evdns's, say) is never taken for one:
 * 1,100 connected UDP sockets to a decoy, then the sink; the decoy gets
 * nothing, the channel everything. */
START_TEST(channels_among_many_sockets)
{
	enum { NOLD = 1100 };
	struct rlimit rl;
	struct sockaddr_in a;
	unsigned port, dport;
	int fd, decoy, *old, i;
	const char *conf;
	struct gsink *s;
	struct pkt p;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < NOLD + 64)
		return; /* cannot hold that many here */
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? NOLD + 64 : rl.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	decoy = udp_listen(&dport);
	fd = udp_listen(&port);
	old = calloc(NOLD, sizeof(*old));
	ck_assert_ptr_nonnull(old);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)dport);
	for (i = 0; i < NOLD; i++) {
		old[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(old[i], 0);
		ck_assert_int_eq(connect(old[i], (struct sockaddr *)&a,
		                     sizeof(a)),
		    0);
	}
	conf = conf_for(&port, 1);
	s = sink_open(conf, "lustre");
	ck_assert_int_eq(gsink_put(s, "10.0.0.1", "n1", "m", "u", 1.0, 1), 0);
	ck_assert_uint_eq(gsink_flush(s, 2), 0);
	recv_pkt(fd, &p); /* metadata */
	recv_pkt(fd, &p); /* value */
	no_more(fd);
	no_more(decoy);
	gsink_close(s);
	for (i = 0; i < NOLD; i++)
		(void)close(old[i]);
	free(old);
	(void)close(fd);
	(void)close(decoy);
	(void)unlink(conf);
}
END_TEST

/* This network namespace's loopback up, with the given MTU. */
static void
lo_set(int mtu)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memset(&ifr, 0, sizeof(ifr));
	(void)snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	ck_assert_int_eq(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags = (short)(ifr.ifr_flags | IFF_UP);
	ck_assert_int_eq(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	ifr.ifr_mtu = mtu;
	ck_assert_msg(ioctl(fd, SIOCSIFMTU, &ifr) == 0, "lo: MTU %d: %s", mtu,
	    strerror(errno));
	(void)close(fd);
}

/* What a UDP_SEGMENT send of two 100-byte segments to 127.0.0.1:port
 * gives: 0, or the -errno the kernel refuses it with. */
static int
gso_probe(unsigned port)
{
	char buf[200] = {0};
	char cbuf[CMSG_SPACE(sizeof(uint16_t))] = {0};
	struct iovec iov = {buf, sizeof(buf)};
	struct msghdr m = {0};
	struct sockaddr_in a = {0};
	struct cmsghdr *cm;
	uint16_t seg = 100;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	ck_assert_int_ge(fd, 0);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_UDP;
	cm->cmsg_type = UDP_SEGMENT;
	cm->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
	rc = sendmsg(fd, &m, 0) < 0 ? -errno : 0;
	(void)close(fd);
	return rc;
}

/*
 * A channel the kernel refuses UDP GSO for gets every packet all the
 * same, one by one, from the first batch on.  The refusal is made real
 * in a network namespace of the test's own (root only): its loopback's
 * MTU below the packets' size, so that a segment does not fit
 * (EMSGSIZE, EINVAL before Linux 6.x, as the probe shows first), while a
 * packet alone is fragmented and delivered.  A device without transmit
 * checksum offload (EIO) takes the same way.
 */
START_TEST(gso_refused_one_by_one)
{
	struct pkt p;
	unsigned port;
	const char *conf;
	struct gsink *s;
	int fd, i, round, rc;

	if (unshare(CLONE_NEWNET) < 0) {
		(void)printf("gso_refused_one_by_one: skipped, no network "
		             "namespace of its own (%s)\n",
		    strerror(errno));
		return;
	}
	lo_set(65536);
	fd = udp_listen(&port);
	ck_assert_int_eq(gso_probe(port), 0);
	recv_pkt(fd, &p);
	recv_pkt(fd, &p);
	lo_set(100);
	rc = gso_probe(port);
	ck_assert_msg(rc == -EMSGSIZE || rc == -EINVAL,
	    "a segment over the MTU: %s", strerror(-rc));
	conf = conf_for(&port, 1);
	s = sink_open(conf, "lustre");
	/* Two batches of 100 hosts: the refusal is met in the first, and
	 * the second goes one by one from the start. */
	for (round = 0; round < 2; round++) {
		for (i = 0; i < 100; i++) {
			char host[32];

			(void)snprintf(host, sizeof(host), "n%d", i);
			ck_assert_int_eq(gsink_put(s, "10.0.0.1", host, "m",
			                     "u", (double)(i + round), 1),
			    0);
		}
		ck_assert_uint_eq(gsink_flush(s, 2), 0);
		/* metadata then value for each host, in both rounds (the
		 * metadata is echoed once with the next value) */
		for (i = 0; i < 200; i++)
			recv_pkt(fd, &p);
		no_more(fd);
	}
	gsink_close(s);
	(void)unlink(conf);
	(void)close(fd);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gsink");
	TCase *tc = tcase_create("core");
	TCase *many = tcase_create("many");

	tcase_add_loop_test(tc, packets_are_libganglias, 0,
	    sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, gso_groups);
	tcase_add_test(tc, every_channel_every_packet);
	tcase_add_test(tc, channels_among_many_sockets);
	tcase_add_test(tc, gso_refused_one_by_one);
	suite_add_tcase(s, tc);
	/* Loops of about a second each, several under ASan (its slow
	 * unwinding for libganglia's allocations) on a busy machine. */
	tcase_set_timeout(many, 60);
	tcase_add_test(many, value_text_is_printfs);
	tcase_add_test(many, many_values_are_libganglias);
	suite_add_tcase(s, many);
	return tu_run(s);
}
