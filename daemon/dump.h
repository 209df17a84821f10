/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lharvest-dump's parts, shared by its files: dump.c (options, main),
 * dump_print.c (frames as text), dump_file.c (a captured stream) and
 * dump_listen.c (a minimal receiver printing JSON lines).
 */
#ifndef LH_DUMP_H
#define LH_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct frame_hdr;
struct lh_err;
struct msg_rec;

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

/* "aggregator", "gatherer", "relay", or "role N". */
const char *dump_role_name(uint8_t role);
void dump_print_hex(FILE *out, const uint8_t *p, size_t n);
/* One frame header line, at offset off of the stream. */
void dump_print_hdr(FILE *out, uint64_t off, const struct frame_hdr *h);
/* A record's client spans, after before ("[" in JSON). */
void dump_print_cspans(FILE *out, const char *before, const struct msg_rec *r);
/* A record's per-op counts between before and after, as JSON or text. */
void dump_print_ops(FILE *out, const char *before, const char *after, bool json,
    const struct msg_rec *r);
/* Decode and print one payload; -1 with err filled when malformed. */
int dump_print_payload(FILE *out, const struct frame_hdr *hdr, const uint8_t *p,
    struct lh_err *err);

/* The two modes: the process exit status. */
int dump_file_main(const struct dump_options *o);
int dump_listen_main(const struct dump_options *o);

#endif
