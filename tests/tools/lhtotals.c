/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lhtotals FILE: the aggregator's counters file (state_dir/totals) as
 * JSON on stdout, for the integration tests to compare with the
 * simulator's truth:
 *   {"last_sweep": N, "marks": {"oss1": BATCH, ...},
 *    "fs": {"scratch": {"clients": N, "last_sweep": N, "read_bytes": N,
 *                       ..., "ops": {"open": N, ...}}, ...},
 *    "rows": [{"host": H, "fs": F, "last_sweep": N, "read_bytes": N, ...,
 *              "ops": {...}}, ...]}
 * Exit status 0, 1 (no file: "none" on stderr), 2 (refused: the reason).
 * Names are printed as they are: the file's names are host names and
 * filesystem names, which never need JSON escapes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "err.h"
#include "hosttotals.h"
#include "iocount.h"
#include "mdops.h"

static const char *const fields[IOCOUNT_N] = {"read_bytes", "write_bytes",
    "read_ops", "write_ops", "oss_ops", "mds_ops"};

static void
put_counts(const struct iocount *c, const uint64_t *ops)
{
	uint64_t v[IOCOUNT_N];
	const char *sep = "";
	unsigned i;

	iocount_to_array(c, v);
	for (i = 0; i < IOCOUNT_N; i++)
		(void)printf(", \"%s\": %" PRIu64, fields[i], v[i]);
	(void)printf(", \"ops\": {");
	for (i = 0; i < MDOPS_N; i++) {
		if (ops[i] == 0)
			continue;
		(void)printf("%s\"%s\": %" PRIu64, sep, mdops_name(i), ops[i]);
		sep = ", ";
	}
	(void)printf("}");
}

static void
put_mark(void *arg, const char *sender, uint64_t batch)
{
	const char **sep = arg;

	(void)printf("%s\"%s\": %" PRIu64, *sep, sender, batch);
	*sep = ", ";
}

static void
put_table(const struct hosttotals *t)
{
	const struct hosttotals_row *r;
	const struct hosttotals_fs *f;
	const char *sep = "";
	size_t i, n;

	(void)printf("{\"last_sweep\": %" PRIu64 ", \"marks\": {",
	    hosttotals_last_sweep(t));
	hosttotals_each_mark(t, put_mark, &sep);
	(void)printf("},\n \"fs\": {");
	f = hosttotals_fss(t, &n);
	for (i = 0; i < n; i++) {
		(void)printf("%s\n  \"%s\": {\"clients\": %zu, \"last_sweep\": "
		             "%" PRIu64,
		    i > 0 ? "," : "", f[i].fs, f[i].clients, f[i].last_sweep);
		put_counts(&f[i].total, f[i].op_total);
		(void)printf("}");
	}
	(void)printf("},\n \"rows\": [");
	r = hosttotals_rows(t, &n);
	for (i = 0; i < n; i++) {
		(void)printf("%s\n  {\"host\": \"%s\", \"fs\": \"%s\", "
		             "\"last_sweep\": %" PRIu64,
		    i > 0 ? "," : "", r[i].host, r[i].fs, r[i].last_sweep);
		put_counts(&r[i].total, r[i].op_total);
		(void)printf("}");
	}
	(void)printf("]}\n");
}

int
main(int argc, char **argv)
{
	struct hosttotals *t;
	struct lh_err err;
	int rc;

	if (argc != 2) {
		(void)fprintf(stderr, "usage: lhtotals FILE\n");
		return 2;
	}
	if (hosttotals_new(0, &t) < 0)
		return 2;
	lh_err_clear(&err);
	rc = hosttotals_load(t, argv[1], &err);
	if (rc == -ENOENT) {
		(void)fprintf(stderr, "%s: none\n", argv[1]);
		hosttotals_free(t);
		return 1;
	}
	if (rc < 0) {
		(void)fprintf(stderr, "%s: %s\n", argv[1], err.reason);
		hosttotals_free(t);
		return 2;
	}
	put_table(t);
	hosttotals_free(t);
	return 0;
}
