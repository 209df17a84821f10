/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: any bytes as the body of the counters' file (the
 * trailing SHA-256 is appended here, so that mutations reach the decoder
 * behind it).  A table that decodes must be one the role can use: every
 * row found again by its names, each name once, no row ahead of the
 * last sweep; a refusal leaves it empty and says why.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hmac.h"
#include "hosttotals.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_table(const struct hosttotals *t)
{
	const struct hosttotals_row *v;
	const struct hosttotals_fs *f;
	size_t i, n;

	v = hosttotals_rows(t, &n);
	for (i = 0; i < n; i++) {
		if (v[i].host[0] == '\0' || v[i].fs[0] == '\0' ||
		    hosttotals_find(t, v[i].host, v[i].fs) != &v[i] ||
		    v[i].last_sweep > hosttotals_last_sweep(t))
			abort();
	}
	f = hosttotals_fss(t, &n);
	for (i = 0; i < n; i++) {
		if (f[i].fs[0] == '\0' ||
		    f[i].last_sweep > hosttotals_last_sweep(t))
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + SHA256_LEN);
	struct hosttotals *t;
	struct lh_err err;
	size_t n;
	int rc;

	if (buf == NULL || hosttotals_new(0, &t) < 0) {
		free(buf);
		return 0;
	}
	memcpy(buf, data, size);
	if (sha256(buf, size, buf + size) < 0)
		abort();
	lh_err_clear(&err);
	rc = hosttotals_decode(t, buf, size + SHA256_LEN, &err);
	if (rc == 0) {
		check_table(t);
	} else {
		if (err.reason[0] == '\0')
			abort(); /* every refusal says why */
		(void)hosttotals_rows(t, &n);
		if (n != 0 || hosttotals_last_sweep(t) != 0)
			abort(); /* refused: nothing of it kept */
	}
	hosttotals_free(t);
	free(buf);
	return 0;
}
