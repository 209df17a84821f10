/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: the gatherer's state journal (gstate_journal.h).  The
 * input is a list of record bodies (each a be16 length and that many
 * bytes; the first byte's low bit cuts the last record short by the
 * second byte, as a torn end would; its second bit makes the journal one
 * of version 1); the journal's header, each record's
 * length and SHA-256 are written here, or no mutation would ever get past
 * them: what is fuzzed is the replay behind the checksums.  The same
 * journal written to a file after an empty base and loaded through
 * gstate_journal_load(), a window at a time, must give the same verdict
 * as the decoder over memory; a state that loads must sweep and resend.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "fuzz_gstate_use.h"
#include "gstate.h"
#include "gstate_int.h"
#include "gstate_journal.h"
#include "gtable.h"
#include "hmac.h"
#include "outbox.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char base[64], journal[80];
static uint8_t base_sum[SHA256_LEN];

static void
scratch_remove(void)
{
	(void)unlink(base);
	(void)unlink(journal);
}

/* An empty base of its own, made once per process, and its checksum. */
static void
scratch_init(void)
{
	struct gtable t;
	struct outbox ob;
	struct lh_err err;
	int fd;

	if (base[0] != '\0')
		return;
	(void)snprintf(base, sizeof(base), "/tmp/fuzz_gjournal.XXXXXX");
	fd = mkstemp(base);
	if (fd < 0)
		abort();
	(void)close(fd);
	(void)snprintf(journal, sizeof(journal), "%s.journal", base);
	(void)atexit(scratch_remove);
	gtable_init(&t);
	outbox_init(&ob, 0);
	if (gstate_save(base, 1, &t, &ob, &err) != 0 ||
	    gstate_base_sum(base, base_sum, NULL, &err) != 0)
		abort();
	gtable_free(&t);
	outbox_free(&ob);
}

static void
put_record(struct wbuf *w, const uint8_t *p, size_t n, size_t cut)
{
	uint8_t sum[SHA256_LEN];
	size_t start = w->len;

	if (sha256(p, n, sum) < 0)
		abort();
	(void)wbuf_put_be32(w, (uint32_t)n);
	(void)wbuf_put_be32(w, ~(uint32_t)n);
	(void)wbuf_put(w, p, n);
	(void)wbuf_put(w, sum, sizeof(sum));
	if (cut > 0 && cut < w->len - start)
		w->len -= cut;
}

/* The journal of the input, after the empty base. */
static void
build(const uint8_t *data, size_t size, struct wbuf *w)
{
	uint8_t head[GSTATE_JHEAD], sum[SHA256_LEN];
	size_t off = 2, cut = 0;

	memcpy(head, GSTATE_JMAGIC, 4);
	head[4] = head[5] = head[6] = 0;
	/* The first byte's second bit: a journal of version 1, whose
	 * outbox is in the base's form. */
	head[7] = size >= 1 && (data[0] & 2) != 0 ? GSTATE_JVERSION1 :
	                                            GSTATE_JVERSION;
	memcpy(head + 8, base_sum, SHA256_LEN);
	if (sha256(head, sizeof(head), sum) < 0)
		abort();
	(void)wbuf_put(w, head, sizeof(head));
	(void)wbuf_put(w, sum, sizeof(sum));
	if (size >= 2 && (data[0] & 1) != 0)
		cut = data[1];
	while (off < size) {
		size_t n = size - off >= 2 ?
		    (size_t)(data[off] << 8 | data[off + 1]) :
		    0;

		off += size - off >= 2 ? 2 : size - off;
		if (n > size - off)
			n = size - off;
		put_record(w, data + off, n, off + n == size ? cut : 0);
		off += n;
	}
}

/* gstate_journal_load() of the same journal from files: the same verdict
 * and reason, the same tables. */
static void
load_too(const struct wbuf *w, int want_rc, const struct lh_err *want_err,
    const struct gtable *want_t, const struct outbox *want_ob)
{
	struct gstate_jinfo ji;
	struct gtable t;
	struct outbox ob;
	struct lh_err err;
	uint64_t scope;
	FILE *f = fopen(journal, "w");
	int rc;

	if (f == NULL || fwrite(w->data, 1, w->len, f) != w->len ||
	    fclose(f) != 0)
		abort();
	gtable_init(&t);
	outbox_init(&ob, 0);
	lh_err_clear(&err);
	rc = gstate_journal_load(base, journal, &scope, &t, &ob, &ji, &err);
	fuzz_gstate_same(rc, &err, &t, &ob, want_rc, want_err, want_t, want_ob);
	gtable_free(&t);
	outbox_free(&ob);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gstate_jinfo ji;
	struct gtable t;
	struct outbox ob;
	struct lh_err err;
	struct wbuf w;
	int rc;

	scratch_init();
	wbuf_init(&w, 0);
	build(data, size, &w);
	if (wbuf_status(&w) < 0)
		abort();
	gtable_init(&t);
	outbox_init(&ob, 0);
	lh_err_clear(&err);
	rc = gstate_journal_decode(w.data, w.len, base_sum, &t, &ob, &ji, &err);
	load_too(&w, rc, &err, &t, &ob);
	fuzz_gstate_use(&t, &ob, rc, &err);
	gtable_free(&t);
	outbox_free(&ob);
	wbuf_free(&w);
	return 0;
}
