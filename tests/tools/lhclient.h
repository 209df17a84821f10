/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lhclient's parts (lhclient.c: the session; lhclient_args.c: the
 * command line and the records it sends).
 */
#ifndef LH_TESTS_LHCLIENT_H
#define LH_TESTS_LHCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hmac.h"
#include "iocount.h"
#include "keyfile.h"
#include "msg.h"
#include "nid.h"
#include "session.h"

#define LHC_TIMEOUT_DEFAULT 30 /* seconds to wait for anything */
#define LHC_LINE_MAX        512

enum lhc_mode {
	LHC_GOOD,
	LHC_BAD_MAC,       /* flip the last MAC byte of the first SWEEP */
	LHC_REPLAY,        /* send the first SWEEP twice, same seq */
	LHC_OVERSIZE,      /* a header announcing more than max frame */
	LHC_IDLE,          /* never answer the CHALLENGE */
	LHC_IDLE_OPEN,     /* handshake, then silence */
	LHC_GARBAGE,       /* an HTTP request instead of a HELLO */
	LHC_WRONG_VERSION, /* HELLO with the next protocol version */
	LHC_HALF_FRAME,    /* half a SWEEP, then close */
	LHC_VERSION_1,     /* HELLO with protocol version 1 */
	LHC_SEND_ACK,      /* handshake, then an empty ACK (only a listener
	                    * may send one) */
	LHC_SLOW,          /* the first SWEEP one byte a second */
	LHC_LAST = LHC_SLOW,
};

struct lhc_rec {
	char fs[MSG_FS_MAX];
	char nid[NID_STR_MAX];
	struct iocount d;
	uint64_t span_us;
};

struct lhc {
	/* options */
	const char *connect;
	const char *keyfile;
	const char *name;
	const char *records;
	const char *capture;
	const char *rcapture;
	enum lhc_mode mode;
	unsigned clients;
	unsigned sweeps;
	uint64_t sweep_id;
	uint64_t first_batch;
	uint32_t interval;
	int64_t clock_offset;
	unsigned delay;
	unsigned timeout;
	size_t max_frame;
	bool no_bye;
	bool print_sent;
	bool pipeline;         /* every SWEEP sent, then the ACKs awaited */
	uint8_t role;          /* the HELLO's; outside 1-3 it must be refused */
	const char *rename_fs; /* "OLD=NEW", same length: in the SWEEPs only */
	/* state */
	int fd;
	FILE *cap;
	FILE *rcap; /* what the listener sent */
	struct keyring ring;
	struct hmac_ctx *hmac;
	struct session s;
	uint8_t *buf;
	struct lhc_rec *recs;
	size_t nrecs;
	char fs[MSG_SWEEP_FS_MAX][MSG_FS_MAX];
	uint16_t nfs;
};

/* "lhclient: " and the message on stderr, then exit 1. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The command line into c (usage and exit 2 when it is wrong). */
void parse_args(struct lhc *c, int argc, char **argv);
/* c's records: from --records, or --clients generated ones. */
void records_load(struct lhc *c);
void records_generate(struct lhc *c);
/* The index of filesystem fs among c's, added if new. */
uint16_t fs_index(struct lhc *c, const char *fs);

#endif
