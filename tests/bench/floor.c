/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The floor of a gatherer sweep: the least any program must do to see
 * every client's counters.  For each target under ROOT/proc/fs/lustre/
 * {obdfilter,mdt}/ (and ROOT/sys/kernel/debug/lustre/ for 2.17), list its
 * exports/ directory and open, read and close every <nid>/stats file in
 * it; nothing else (no parsing, no arithmetic, no output but the timing).
 *
 *   floor ROOT RUNS     prints one line per run: seconds files bytes
 *
 * tests/bench/run compares lharvestd's sweep with this, in the same run.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct tally {
	unsigned long files;
	unsigned long long bytes;
};

static double
now_s(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every <nid>/stats of one exports/ directory. */
static void
read_exports(int dfd, struct tally *t)
{
	static char buf[65536];
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (d == NULL) {
		(void)close(dfd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		char path[512];
		ssize_t n;
		int fd;

		if (e->d_name[0] == '.' || e->d_type == DT_REG)
			continue;
		(void)snprintf(path, sizeof(path), "%s/stats", e->d_name);
		fd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			t->bytes += (unsigned long long)n;
		(void)close(fd);
		t->files++;
	}
	(void)closedir(d);
}

/* Every target's exports/ under one obdfilter/ or mdt/ directory. */
static void
read_kind(const char *dir, struct tally *t)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[512];
		int fd;

		if (e->d_name[0] == '.')
			continue;
		(void)snprintf(path, sizeof(path), "%s/exports", e->d_name);
		fd = openat(dirfd(d), path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			read_exports(fd, t);
	}
	(void)closedir(d);
}

int
main(int argc, char **argv)
{
	static const char *const kinds[] = {"proc/fs/lustre/obdfilter",
	    "proc/fs/lustre/mdt", "sys/kernel/debug/lustre/obdfilter",
	    "sys/kernel/debug/lustre/mdt"};
	char dir[4096];
	long runs;
	long r;
	size_t k;

	if (argc != 3 || (runs = strtol(argv[2], NULL, 10)) <= 0) {
		(void)fprintf(stderr, "usage: floor ROOT RUNS\n");
		return 2;
	}
	for (r = 0; r < runs; r++) {
		struct tally t = {0, 0};
		double t0 = now_s();

		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			(void)snprintf(dir, sizeof(dir), "%s/%s", argv[1],
			    kinds[k]);
			read_kind(dir, &t);
		}
		(void)printf("%.6f %lu %llu\n", now_s() - t0, t.files, t.bytes);
	}
	return 0;
}
