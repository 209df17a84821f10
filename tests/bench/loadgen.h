/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_loadgen's parts (loadgen.c: the connections and the schedule;
 * loadgen_layout.c: the layout of gatherers, filesystems and the client
 * pool, and the SWEEP payloads it makes).
 */
#ifndef LH_TESTS_LOADGEN_H
#define LH_TESTS_LOADGEN_H

#include <netinet/in.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* "bench_loadgen: " and the message on stderr, then exit 1. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What the command line names, besides the layout in struct loadgen. */
struct lg_opts {
	const char *setup, *connect_to, *keyfile, *expect;
};

/* loadgen_args.c: the defaults, then the command line; --connect's
 * address into lg->addr; usage (exit 2). */
void parse_args(struct loadgen *lg, struct lg_opts *o, int argc, char **argv);
void parse_connect(struct loadgen *lg, const char *arg);
_Noreturn void usage(void);

/* loadgen_layout.c */
unsigned npool(const struct loadgen *lg);
unsigned per_group(const struct loadgen *lg);
bool is_mds(const struct loadgen *lg, unsigned g);
unsigned gat_fs(const struct loadgen *lg, unsigned g, unsigned k);
void layout_check(struct loadgen *lg);
void make_pool(struct loadgen *lg);
void gat_name(const struct loadgen *lg, unsigned g, char *buf, size_t size);
void write_setup(struct loadgen *lg, const char *dir);
void encode_all(struct loadgen *lg);
void write_expect(const struct loadgen *lg, const char *path);

#endif
