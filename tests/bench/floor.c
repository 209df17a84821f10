/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The floor of a gatherer sweep: the least any program must do to see
 * every client's counters.  For each target under ROOT/proc/fs/lustre/
 * {obdfilter,mdt}/ (and ROOT/sys/kernel/debug/lustre/ for 2.17), list its
 * exports/ directory and open, read and close every <nid>/stats file in
 * it; nothing else (no parsing, no arithmetic, no output but the timing).
 * Files are opened O_NOATIME where allowed, as the gatherer opens them: on
 * a tree of regular files, a reader that wrote access times would do more
 * than the least.
 *
 *   floor ROOT RUNS        prints one line per run:
 *                          seconds files bytes cpu-seconds
 *   floor move ROOT STEP   moves every counter of every stats file (the
 *                          gatherer "under load"), prints one line:
 *                          seconds files counters-moved
 *
 * tests/bench/run compares lharvestd's sweep with this, in the same run.
 * "move" is what makes a busy server between two sweeps, fast enough to
 * run between two sweeps 10 s apart (lustresim.py run takes 15-30 s on
 * this tree): snapshot_time becomes now, elapsed_time follows, and every
 * counter line gets k more samples and k * min more in its sum, k from 1
 * to 997 by file and STEP, so that deltas differ from export to export
 * and grow with STEP.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct tally {
	int noatime; /* O_NOATIME until refused */
	unsigned long files;
	unsigned long long bytes;
	/* move: the step, and counter lines moved */
	unsigned long step;
	unsigned long moved;
};

/* What to do with one stats file (read it, or move it). */
typedef void (*file_fn)(int dfd, const char *path, struct tally *t);

static double
clock_s(clockid_t id)
{
	struct timespec ts;

	(void)clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static void
read_file(int dfd, const char *path, struct tally *t)
{
	static char buf[65536];
	ssize_t n;
	int fd;

	/* O_NOATIME, as the gatherer asks (lustre_tree.h): the least any
	 * reader must do does not write access times. */
	fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | t->noatime);
	if (fd < 0 && errno == EPERM && t->noatime != 0) {
		t->noatime = 0;
		fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		t->bytes += (unsigned long long)n;
	(void)close(fd);
	t->files++;
}

/* A time in Lustre's "secs.nsecs" form, from nanoseconds. */
static int
put_time(char *out, size_t len, const char *name, uint64_t ns)
{
	return snprintf(out, len,
	    "%-25s %" PRIu64 ".%09" PRIu64 " secs.nsecs\n", name,
	    ns / 1000000000u, ns % 1000000000u);
}

/* "secs.nsecs" into nanoseconds. */
static uint64_t
get_time(const char *s)
{
	char *end;
	uint64_t sec = strtoull(s, &end, 10), ns = 0;
	int i;

	if (*end == '.') {
		for (i = 0, end++; i < 9; i++) {
			ns = ns * 10 +
			    (uint64_t)(*end >= '0' && *end <= '9' ?
			            *end++ - '0' :
			            0);
		}
	}
	return sec * 1000000000u + ns;
}

/* One line of a stats file, moved by k, appended to out (of room
 * left bytes); returns the bytes written. */
static size_t
move_line(char *line, uint64_t k, uint64_t now_ns, uint64_t *start_ns,
    char *out, size_t left, struct tally *t)
{
	char *tok[8], *save = NULL, *p;
	unsigned long long v[8];
	int n = 0, i, w;

	for (p = strtok_r(line, " \t", &save); p != NULL && n < 8;
	     p = strtok_r(NULL, " \t", &save))
		tok[n++] = p;
	if (n == 0)
		return 0;
	if (strcmp(tok[0], "snapshot_time") == 0)
		w = put_time(out, left, tok[0], now_ns);
	else if (n > 1 && strcmp(tok[0], "start_time") == 0) {
		*start_ns = get_time(tok[1]);
		w = put_time(out, left, tok[0], *start_ns);
	} else if (strcmp(tok[0], "elapsed_time") == 0)
		w = put_time(out, left, tok[0],
		    now_ns > *start_ns ? now_ns - *start_ns : 0);
	else if (n >= 4 && strcmp(tok[2], "samples") == 0) {
		for (i = 0; i < n; i++)
			v[i] =
			    i == 2 || i == 3 ? 0 : strtoull(tok[i], NULL, 10);
		w = snprintf(out, left, "%-25s %llu samples %s", tok[0],
		    v[1] + k, tok[3]);
		for (i = 4; i < n && w > 0 && (size_t)w < left; i++)
			w += snprintf(out + w, left - (size_t)w, " %llu",
			    i == 6 ? v[6] + k * v[4] : v[i]);
		if (w > 0 && (size_t)w < left)
			w += snprintf(out + w, left - (size_t)w, "\n");
		t->moved++;
	} else {
		w = snprintf(out, left, "%s\n", tok[0]);
	}
	return w > 0 && (size_t)w < left ? (size_t)w : 0;
}

/* Rewrite one stats file with every counter moved. */
static void
move_file(int dfd, const char *path, struct tally *t)
{
	static char in[65536], out[65536 + 4096];
	uint64_t k = 1 + (t->files * 7919 + t->step * 104729) % 997;
	uint64_t now_ns = (uint64_t)(clock_s(CLOCK_REALTIME) * 1e9), st = 0;
	char *line, *save = NULL;
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((n = read(fd, in + len, sizeof(in) - 1 - len)) > 0)
		len += (size_t)n;
	(void)close(fd);
	in[len] = '\0';
	len = 0;
	for (line = strtok_r(in, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		len += move_line(line, k, now_ns, &st, out + len,
		    sizeof(out) - len, t);
	fd = openat(dfd, path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0 || write(fd, out, len) != (ssize_t)len) {
		(void)fprintf(stderr, "floor: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	(void)close(fd);
	t->bytes += len;
	t->files++;
}

/* Every <nid>/stats of one exports/ directory. */
static void
read_exports(int dfd, file_fn fn, struct tally *t)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (d == NULL) {
		(void)close(dfd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		char path[512];

		if (e->d_name[0] == '.' || e->d_type == DT_REG)
			continue;
		(void)snprintf(path, sizeof(path), "%s/stats", e->d_name);
		fn(dirfd(d), path, t);
	}
	(void)closedir(d);
}

/* Every target's exports/ under one obdfilter/ or mdt/ directory. */
static void
read_kind(const char *dir, file_fn fn, struct tally *t)
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
			read_exports(fd, fn, t);
	}
	(void)closedir(d);
}

/* Every stats file under root, through fn. */
static void
walk(const char *root, file_fn fn, struct tally *t)
{
	static const char *const kinds[] = {"proc/fs/lustre/obdfilter",
	    "proc/fs/lustre/mdt", "sys/kernel/debug/lustre/obdfilter",
	    "sys/kernel/debug/lustre/mdt"};
	char dir[4096];
	size_t k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		(void)snprintf(dir, sizeof(dir), "%s/%s", root, kinds[k]);
		read_kind(dir, fn, t);
	}
}

int
main(int argc, char **argv)
{
	struct tally t;
	double t0, c0;
	long runs, r;

	if (argc == 4 && strcmp(argv[1], "move") == 0) {
		memset(&t, 0, sizeof(t));
		t.step = strtoul(argv[3], NULL, 10);
		t0 = now_s();
		walk(argv[2], move_file, &t);
		(void)printf("%.6f %lu %lu\n", now_s() - t0, t.files, t.moved);
		return t.files > 0 ? 0 : 1;
	}
	if (argc != 3 || (runs = strtol(argv[2], NULL, 10)) <= 0) {
		(void)fprintf(stderr,
		    "usage: floor ROOT RUNS | floor move ROOT STEP\n");
		return 2;
	}
	for (r = 0; r < runs; r++) {
		memset(&t, 0, sizeof(t));
		t.noatime = O_NOATIME;
		t0 = now_s();
		c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		walk(argv[1], read_file, &t);
		(void)printf("%.6f %lu %llu %.6f\n", now_s() - t0, t.files,
		    t.bytes, clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
	}
	return 0;
}
