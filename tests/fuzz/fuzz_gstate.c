/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: any bytes as the body of a gatherer state file.  The
 * trailing SHA-256 is appended here, or no mutation would ever get past
 * it; what is fuzzed is the decoder behind the checksum.  A state that
 * decodes must be one the tables can sweep on and save again.  The same
 * bytes written to a file and loaded through gstate_load(), a window at a
 * time, must give the same answer as the decoder over memory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "fuzz_gstate_use.h"
#include "gstate.h"
#include "gtable.h"
#include "hmac.h"
#include "outbox.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[64];

static void
scratch_remove(void)
{
	(void)unlink(scratch);
}

/* A file of its own for the loading path, made once per process. */
static const char *
scratch_path(void)
{
	int fd;

	if (scratch[0] != '\0')
		return scratch;
	(void)snprintf(scratch, sizeof(scratch), "/tmp/fuzz_gstate.XXXXXX");
	fd = mkstemp(scratch);
	if (fd < 0)
		abort();
	(void)close(fd);
	(void)atexit(scratch_remove);
	return scratch;
}

/* gstate_load() of the same bytes, from a file: the same verdict, the
 * same reason, the same tables. */
static void
load_too(const uint8_t *buf, size_t n, int want_rc,
    const struct lh_err *want_err, const struct gtable *want_t,
    const struct outbox *want_ob)
{
	const char *path = scratch_path();
	struct gtable t;
	struct outbox ob;
	struct lh_err err;
	uint64_t scope;
	FILE *f = fopen(path, "w");
	int rc;

	if (f == NULL || fwrite(buf, 1, n, f) != n || fclose(f) != 0)
		abort();
	gtable_init(&t);
	outbox_init(&ob, 0);
	lh_err_clear(&err);
	rc = gstate_load(path, &scope, &t, &ob, &err);
	fuzz_gstate_same(rc, &err, &t, &ob, want_rc, want_err, want_t, want_ob);
	gtable_free(&t);
	outbox_free(&ob);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + SHA256_LEN);
	struct gtable t;
	struct outbox ob;
	struct lh_err err;
	uint64_t scope;
	int rc;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	if (sha256(buf, size, buf + size) < 0)
		abort();
	gtable_init(&t);
	outbox_init(&ob, 0);
	lh_err_clear(&err);
	rc = gstate_decode(buf, size + SHA256_LEN, &scope, &t, &ob, &err);
	load_too(buf, size + SHA256_LEN, rc, &err, &t, &ob);
	fuzz_gstate_use(&t, &ob, rc, &err);
	gtable_free(&t);
	outbox_free(&ob);
	free(buf);
	return 0;
}
