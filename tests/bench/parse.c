/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer's CPU cost per stats file, without the I/O: every
 * <nid>/stats under ROOT (the layout tests/bench/floor.c walks) is read
 * into memory once, then each round runs what the gatherer runs on each
 * file after reading it: lstats_digest, or for a file it declines
 * lstats_parse (without min, max and sumsq), iocount_from_stats,
 * mdops_from_stats (MDT files only) and delta_sample_from.
 *
 *   bench_parse ROOT ROUNDS   prints one line per round:
 *                             seconds files ns_per_file
 *
 * With LH_BENCH_GENERAL set in the environment, every file goes the
 * general way (what the gatherer did before the digest): the two ways
 * compared in one build.
 *
 * On stderr: files refused by the parser and a checksum of every result,
 * the same for any two builds that behave the same.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "delta.h"
#include "err.h"
#include "iocount.h"
#include "mdops.h"
#include "statsdigest.h"
#include "statsparse.h"

#define BENCH_FILE_MAX 65536 /* as the gatherer: larger files are refused */

struct bfile {
	size_t off;
	size_t len;
	enum lh_target_kind kind;
};

struct corpus {
	char *data;
	size_t len, cap;
	struct bfile *files;
	size_t nfiles, fcap;
};

static double
now_s(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
corpus_reserve(struct corpus *c, size_t more)
{
	char *p;
	size_t cap;

	if (c->cap - c->len >= more)
		return 0;
	cap = c->cap == 0 ? (size_t)1 << 24 : c->cap * 2;
	while (cap - c->len < more)
		cap *= 2;
	p = realloc(c->data, cap);
	if (p == NULL)
		return -ENOMEM;
	c->data = p;
	c->cap = cap;
	return 0;
}

/* Read one file at the end of the corpus. */
static int
corpus_add(struct corpus *c, int fd, enum lh_target_kind kind)
{
	struct bfile *f;
	size_t len = 0;
	ssize_t n;

	if (corpus_reserve(c, BENCH_FILE_MAX) < 0)
		return -ENOMEM;
	while ((n = read(fd, c->data + c->len + len, BENCH_FILE_MAX - len)) > 0)
		len += (size_t)n;
	if (n < 0)
		return -errno;
	if (c->nfiles == c->fcap) {
		size_t fcap = c->fcap == 0 ? 4096 : c->fcap * 2;

		f = realloc(c->files, fcap * sizeof(*f));
		if (f == NULL)
			return -ENOMEM;
		c->files = f;
		c->fcap = fcap;
	}
	f = &c->files[c->nfiles++];
	f->off = c->len;
	f->len = len;
	f->kind = kind;
	c->len += len;
	return 0;
}

/* Every <nid>/stats of one exports/ directory. */
static int
load_exports(struct corpus *c, int dfd, enum lh_target_kind kind)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	int rc = 0;

	if (d == NULL) {
		(void)close(dfd);
		return 0;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char path[512];
		int fd;

		if (e->d_name[0] == '.' || e->d_type == DT_REG)
			continue;
		(void)snprintf(path, sizeof(path), "%s/stats", e->d_name);
		fd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		rc = corpus_add(c, fd, kind);
		(void)close(fd);
	}
	(void)closedir(d);
	return rc;
}

/* Every target's exports/ under one obdfilter/ or mdt/ directory. */
static int
load_kind(struct corpus *c, const char *dir, enum lh_target_kind kind)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (d == NULL)
		return 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char path[512];
		int fd;

		if (e->d_name[0] == '.')
			continue;
		(void)snprintf(path, sizeof(path), "%s/exports", e->d_name);
		fd = openat(dirfd(d), path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			rc = load_exports(c, fd, kind);
	}
	(void)closedir(d);
	return rc;
}

static uint64_t
mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ULL;
}

/* What the gatherer makes of one file (gather_export()): the digest, or
 * when it declines (or general is set) the parse and its three passes.
 * Returns 0, or the parser's error with err set. */
static int
count_file(const char *buf, size_t len, enum lh_target_kind kind, bool general,
    struct lstats *st, struct delta_sample *s, struct mdops *ops,
    struct lh_err *err)
{
	struct lstats_digest dg;
	struct iocount io;
	int rc;

	if (!general && lstats_digest(&dg, buf, len, kind) == 0) {
		delta_sample_make(s, &dg.io, dg.samples, &dg.snapshot,
		    &dg.start);
		if (kind == LH_TARGET_MDT)
			*ops = dg.ops;
		return 0;
	}
	rc = lstats_parse(st, buf, len, LSTATS_PARSE_NO_MINMAX, err);
	if (rc < 0)
		return rc;
	iocount_from_stats(&io, st, kind);
	delta_sample_from(s, st, &io);
	if (kind == LH_TARGET_MDT)
		mdops_from_stats(ops, st);
	return 0;
}

/* One round over every file; returns a checksum of the results. */
static uint64_t
run_round(const struct corpus *c, bool general, struct lstats *st,
    unsigned long *ret_bad)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned long bad = 0;
	size_t i;

	for (i = 0; i < c->nfiles; i++) {
		const struct bfile *f = &c->files[i];
		uint64_t v[IOCOUNT_N];
		struct delta_sample s;
		struct mdops ops;
		struct lh_err err;
		unsigned k;

		if (count_file(c->data + f->off, f->len, f->kind, general, st,
		        &s, &ops, &err) < 0) {
			bad++;
			h = mix(h, err.line);
			continue;
		}
		if (f->kind == LH_TARGET_MDT) {
			for (k = 0; k < MDOPS_N; k++)
				h = mix(h, ops.v[k]);
		}
		iocount_to_array(&s.c, v);
		for (k = 0; k < IOCOUNT_N; k++)
			h = mix(h, v[k]);
		h = mix(mix(mix(h, s.samples), s.snap_ns), s.start_ns);
	}
	*ret_bad = bad;
	return h;
}

int
main(int argc, char **argv)
{
	static const struct {
		const char *dir;
		enum lh_target_kind kind;
	} kinds[] = {{"proc/fs/lustre/obdfilter", LH_TARGET_OST},
	    {"proc/fs/lustre/mdt", LH_TARGET_MDT},
	    {"sys/kernel/debug/lustre/obdfilter", LH_TARGET_OST},
	    {"sys/kernel/debug/lustre/mdt", LH_TARGET_MDT}};
	struct corpus c = {NULL, 0, 0, NULL, 0, 0};
	struct lstats *st = NULL;
	char dir[4096];
	unsigned long bad = 0;
	uint64_t sum = 0;
	long rounds, r;
	bool general;
	int rc = 1;
	size_t k;

	general = getenv("LH_BENCH_GENERAL") != NULL;
	if (argc != 3 || (rounds = strtol(argv[2], NULL, 10)) <= 0) {
		(void)fprintf(stderr, "usage: bench_parse ROOT ROUNDS\n");
		return 2;
	}
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		(void)snprintf(dir, sizeof(dir), "%s/%s", argv[1],
		    kinds[k].dir);
		if (load_kind(&c, dir, kinds[k].kind) < 0) {
			(void)fprintf(stderr, "%s: cannot load\n", dir);
			goto out;
		}
	}
	st = malloc(sizeof(*st));
	if (c.nfiles == 0 || st == NULL) {
		(void)fprintf(stderr, "%s: no stats files\n", argv[1]);
		goto out;
	}
	for (r = 0; r < rounds; r++) {
		double t0 = now_s(), dt;

		sum = run_round(&c, general, st, &bad);
		dt = now_s() - t0;
		(void)printf("%.6f %zu %.1f\n", dt, c.nfiles,
		    dt * 1e9 / (double)c.nfiles);
	}
	(void)fflush(stdout);
	(void)fprintf(stderr, "refused %lu checksum %016llx bytes %zu\n", bad,
	    (unsigned long long)sum, c.len);
	rc = 0;
out:
	free(st);
	free(c.files);
	free(c.data);
	return rc;
}
