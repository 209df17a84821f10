/* SPDX-License-Identifier: BSD-2-Clause */
/* lharvest-dump FILE: every frame of a captured byte stream (one
 * direction of a connection), MACs not verified. */
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

/*
 * The next frame of the stream into buf, its header decoded: 1, or 0 at
 * the end of the input, or -1 after a line on stderr (truncated, not a
 * frame).
 */
static int
read_frame(FILE *in, uint8_t *buf, size_t max_frame, uint64_t off,
    struct frame_hdr *hdr)
{
	size_t got = read_full(in, buf, FRAME_HDR_LEN), whole;
	struct lh_err err;

	if (got == 0)
		return 0;
	if (got < FRAME_HDR_LEN) {
		(void)fprintf(stderr,
		    "lharvest-dump: offset %" PRIu64
		    ": truncated header (%zu of %u bytes)\n",
		    off, got, FRAME_HDR_LEN);
		return -1;
	}
	lh_err_clear(&err);
	if (frame_hdr_decode(hdr, buf, max_frame, &err) < 0) {
		(void)fprintf(stderr, "lharvest-dump: offset %" PRIu64 ": %s\n",
		    off, err.reason);
		return -1;
	}
	whole = FRAME_OVERHEAD + (size_t)hdr->len;
	got = read_full(in, buf + FRAME_HDR_LEN, whole - FRAME_HDR_LEN);
	if (got < whole - FRAME_HDR_LEN) {
		(void)fprintf(stderr,
		    "lharvest-dump: offset %" PRIu64
		    ": truncated %s frame (%zu of %zu bytes)\n",
		    off, frame_type_name(hdr->type), FRAME_HDR_LEN + got,
		    whole);
		return -1;
	}
	return 1;
}

static int
dump_stream(FILE *in, const struct dump_options *o, FILE *out)
{
	uint8_t *buf = malloc(o->max_frame);
	struct frame_hdr hdr;
	struct lh_err err;
	uint64_t off = 0, nframes = 0;
	int status = 1, rc;

	if (buf == NULL) {
		(void)fprintf(stderr, "lharvest-dump: out of memory\n");
		return 1;
	}
	(void)fprintf(out,
	    "MAC not verified: a capture holds one direction "
	    "of the connection, the key is derived from both\n");
	while ((rc = read_frame(in, buf, o->max_frame, off, &hdr)) > 0) {
		dump_print_hdr(out, off, &hdr);
		if (o->verbose > 0) {
			(void)fprintf(out, "  mac ");
			dump_print_hex(out, buf + FRAME_HDR_LEN + hdr.len,
			    FRAME_MAC_LEN);
			(void)fputc('\n', out);
		}
		lh_err_clear(&err);
		if (dump_print_payload(out, &hdr, buf + FRAME_HDR_LEN, &err) <
		    0) {
			(void)fprintf(stderr,
			    "lharvest-dump: offset %" PRIu64
			    ": bad %s payload: "
			    "%s\n",
			    off, frame_type_name(hdr.type), err.reason);
			goto out;
		}
		off += FRAME_OVERHEAD + (size_t)hdr.len;
		nframes++;
	}
	if (rc < 0)
		goto out;
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

int
dump_file_main(const struct dump_options *o)
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
