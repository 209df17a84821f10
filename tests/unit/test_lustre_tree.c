/* SPDX-License-Identifier: BSD-2-Clause */
/* Target discovery and export files on the tree-2.15 fixture (quirks 18,
 * 19, 22) and on trees built here (2.17 debugfs). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "lustre_tree.h"
#include "testutil.h"

START_TEST(parse_target)
{
	enum lh_target_kind k;
	char fs[LTREE_FS_MAX];

	ck_assert_int_eq(ltree_parse_target("scratch-OST000a", fs, sizeof(fs),
	                     &k),
	    0);
	ck_assert_str_eq(fs, "scratch");
	ck_assert_int_eq(k, LH_TARGET_OST);
	ck_assert_int_eq(ltree_parse_target("a-b-MDT0001", fs, sizeof(fs), &k),
	    0);
	ck_assert_str_eq(fs, "a-b");
	ck_assert_int_eq(k, LH_TARGET_MDT);
	ck_assert_int_eq(ltree_parse_target("scratch-OST01", fs, sizeof(fs),
	                     &k),
	    -EINVAL);
	ck_assert_int_eq(ltree_parse_target("-OST0000", fs, sizeof(fs), &k),
	    -EINVAL);
	ck_assert_int_eq(ltree_parse_target("scratch-MGS0000", fs, sizeof(fs),
	                     &k),
	    -EINVAL);
	ck_assert_int_eq(ltree_parse_target("waytoolongfsname-OST0000", fs, 8,
	                     &k),
	    -EINVAL);
}
END_TEST

START_TEST(classify_uuid)
{
	const char *mds = "lustrefs-MDT0000-mdtlov_UUID\n";
	const char *lwp = "fs-MDT0000-lwp-OST0001_UUID\n";
	const char *cli = "5f3c9a1e-0b7d-4e1c-9d55-7b2a3c4d5e6f\n";
	const char *two = "a1b2c3d4-0000-1111-2222-333344445555\n"
	                  "b1b2c3d4-0000-1111-2222-333344445555\n";
	size_t len;
	char *buf =
	    tu_read_file(tu_fixture("2.10/ost-export-uuid-mds-peer.txt"), &len);

	ck_assert_int_eq(ltree_classify_uuid(buf, len), LTREE_PEER_SERVER);
	free(buf);
	ck_assert_int_eq(ltree_classify_uuid(mds, strlen(mds)),
	    LTREE_PEER_SERVER);
	ck_assert_int_eq(ltree_classify_uuid(lwp, strlen(lwp)),
	    LTREE_PEER_SERVER);
	ck_assert_int_eq(ltree_classify_uuid(cli, strlen(cli)),
	    LTREE_PEER_CLIENT);
	ck_assert_int_eq(ltree_classify_uuid(two, strlen(two)),
	    LTREE_PEER_CLIENT);
	ck_assert_int_eq(ltree_classify_uuid("", 0), LTREE_PEER_STALE);
	ck_assert_int_eq(ltree_classify_uuid(" \n\n", 3), LTREE_PEER_STALE);
	ck_assert(ltree_nid_is_local("0@lo"));
	ck_assert(!ltree_nid_is_local("0@lo2"));
}
END_TEST

/* 18: exports/clear is a regular file among the NID directories; the
 * 2.15 fixture tree has one OST and one MDT. */
/* ltree_read_at() on a target's exports/, with its open flags. */
static int
read_in(struct ltree_target *tg, const char *path, char *buf, size_t cap,
    size_t *ret_len)
{
	return ltree_read_at(tg->exports_fd, path, &tg->open_flags, buf, cap,
	    ret_len);
}

START_TEST(discover_fixture_tree)
{
	struct ltree t;
	char buf[4096];
	size_t len, i;
	int seen_ost = 0, seen_mdt = 0;

	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(ltree_discover(&t, tu_fixture("tree-2.15"), NULL), 0);
	ck_assert_uint_eq(t.ntargets, 2);
	for (i = 0; i < t.ntargets; i++) {
		ck_assert_str_eq(t.targets[i].fs, "scratch");
		if (t.targets[i].kind == LH_TARGET_OST) {
			seen_ost++;
			ck_assert_str_eq(t.targets[i].name, "scratch-OST0000");
			/* 19: a NID with dots and @o2ib, read by openat(). */
			ck_assert_int_eq(read_in(&t.targets[i],
			                     "10.1.2.3@o2ib/stats", buf,
			                     sizeof(buf), &len),
			    0);
			ck_assert(len > 100);
			ck_assert_int_eq(read_in(&t.targets[i],
			                     "192.168.0.4@tcp102/stats", buf,
			                     sizeof(buf), &len),
			    0);
			/* The stale NID has an empty uuid. */
			ck_assert_int_eq(read_in(&t.targets[i],
			                     "10.1.2.17@o2ib/uuid", buf,
			                     sizeof(buf), &len),
			    0);
			ck_assert_uint_eq(len, 0);
			/* 22: an export that went away reads as ENOENT. */
			ck_assert_int_eq(read_in(&t.targets[i],
			                     "10.9.9.9@o2ib/stats", buf,
			                     sizeof(buf), &len),
			    -ENOENT);
			/* "clear" is a file, not a NID directory. */
			ck_assert_int_eq(read_in(&t.targets[i], "clear/stats",
			                     buf, sizeof(buf), &len),
			    -ENOTDIR);
			/* A file larger than the buffer is refused whole. */
			ck_assert_int_eq(read_in(&t.targets[i],
			                     "10.1.2.3@o2ib/stats", buf, 16,
			                     &len),
			    -EFBIG);
		} else {
			seen_mdt++;
			ck_assert_str_eq(t.targets[i].name, "scratch-MDT0000");
		}
	}
	ck_assert_int_eq(seen_ost, 1);
	ck_assert_int_eq(seen_mdt, 1);
	ltree_free(&t);
}
END_TEST

static void
mkdirs(const char *base, const char *rel)
{
	char path[4096], *p;

	(void)snprintf(path, sizeof(path), "%s/%s", base, rel);
	for (p = path + strlen(base) + 1; *p != '\0'; p++) {
		if (*p == '/') {
			*p = '\0';
			(void)mkdir(path, 0755);
			*p = '/';
		}
	}
	(void)mkdir(path, 0755);
}

/* 2.17 moved exports to debugfs; the /proc target dir stays without
 * exports/.  Both roots are probed; names that are not targets are not. */
START_TEST(discover_debugfs)
{
	char tmpl[] = "/tmp/lh-tree-XXXXXX";
	char *root = mkdtemp(tmpl), cmd[4200];
	struct ltree t;

	ck_assert_ptr_nonnull(root);
	mkdirs(root, "proc/fs/lustre/obdfilter/big-OST0003");
	mkdirs(root, "proc/fs/lustre/obdfilter/num_exports");
	mkdirs(root,
	    "sys/kernel/debug/lustre/obdfilter/big-OST0003/exports/"
	    "1@gni");
	mkdirs(root, "sys/kernel/debug/lustre/mdt/big-MDT0000/exports");
	mkdirs(root, "sys/kernel/debug/lustre/mdt/big-MDTxyz1/exports");
	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(ltree_discover(&t, root, NULL), 0);
	ck_assert_uint_eq(t.ntargets, 2);
	ck_assert(strstr(t.targets[0].path, "sys/kernel/debug") != NULL);
	ltree_clear(&t);
	ck_assert_uint_eq(t.ntargets, 0);
	/* Nothing at all under a root: no target, no error. */
	ck_assert_int_eq(ltree_discover(&t, "/nonexistent-lharvestd", NULL), 0);
	ck_assert_uint_eq(t.ntargets, 0);
	ltree_free(&t);
	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A file the reader owns is read without touching its access time (a
 * regular-file tree stays as its writer left it); one it does not own
 * (EPERM for O_NOATIME) is read all the same, and the flag is dropped so
 * that later opens do not fail first. */
static int
read_not_owned(void)
{
	int oflags = O_NOATIME, dfd, rc;
	char buf[64];
	size_t len;

	/* /etc/passwd: root's, readable by all. */
	dfd = open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 1;
	rc = ltree_read_at(dfd, "passwd", &oflags, buf, sizeof(buf), &len);
	(void)close(dfd);
	/* -EFBIG: it was opened and read (it is longer than buf). */
	return (rc == 0 || rc == -EFBIG) && oflags == 0 ? 0 : 1;
}

START_TEST(read_without_atime)
{
	char tmpl[] = "/tmp/lh-atime-XXXXXX", buf[64];
	char *dir = mkdtemp(tmpl), path[64];
	const struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
	int oflags = O_NOATIME, dfd, fd, status = -1;
	struct stat sb;
	size_t len;
	pid_t pid;

	ck_assert_ptr_nonnull(dir);
	(void)snprintf(path, sizeof(path), "%s/stats", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x 1 samples [reqs]\n", 19), 19);
	ck_assert_int_eq(close(fd), 0);
	/* atime older than mtime: relatime would update it on a read. */
	ck_assert_int_eq(utimensat(AT_FDCWD, path, old, 0), 0);
	ck_assert_int_eq(utimensat(AT_FDCWD, path,
	                     (const struct timespec[2]){{1000000000, 0},
	                         {0, UTIME_NOW}},
	                     0),
	    0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(ltree_read_at(dfd, "stats", &oflags, buf, sizeof(buf),
	                     &len),
	    0);
	ck_assert_uint_eq(len, 19);
	ck_assert_int_eq(ltree_read_stats_at(dfd, "stats", &oflags, buf,
	                     sizeof(buf), &len),
	    0);
	ck_assert_int_eq(oflags, O_NOATIME);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_eq(sb.st_atim.tv_sec, 1000000000);
	/* An empty file (a stale export's uuid): whole at the first read. */
	(void)snprintf(path, sizeof(path), "%s/uuid", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(close(fd), 0);
	len = 7;
	ck_assert_int_eq(ltree_read_stats_at(dfd, "uuid", &oflags, buf,
	                     sizeof(buf), &len),
	    0);
	ck_assert_uint_eq(len, 0);
	(void)unlink(path);
	(void)snprintf(path, sizeof(path), "%s/stats", dir);
	(void)close(dfd);
	(void)unlink(path);
	(void)rmdir(dir);

	/* Not the owner: as root, in a child that becomes nobody. */
	if (geteuid() != 0) {
		ck_assert_int_eq(read_not_owned(), 0);
		return;
	}
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(setgid(65534) == 0 && setuid(65534) == 0 ?
		        read_not_owned() :
		        2);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* A listing's end is its own: an errno left by the caller between two
 * entries (an fstatat() of an entry that went away) is not taken for an
 * error of the listing, as it was when errno was cleared only after
 * each entry counted. */
START_TEST(next_entry_ends_clean)
{
	char tmpl[] = "/tmp/lh-entries-XXXXXX", path[64];
	char *dir = mkdtemp(tmpl);
	struct dirent *de;
	unsigned n = 0;
	int err = -1;
	DIR *d;

	ck_assert_ptr_nonnull(dir);
	(void)snprintf(path, sizeof(path), "%s/a", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((de = ltree_next_entry(d, &err)) != NULL) {
		ck_assert_int_eq(err, 0);
		n++;
		errno = ENOENT; /* what the caller's own calls left */
	}
	ck_assert_int_eq(err, 0);
	ck_assert_uint_eq(n, 3); /* ".", ".." and "a" */
	(void)closedir(d);
	(void)rmdir(path);
	(void)rmdir(dir);
}
END_TEST

/* Targets another process found (the gatherer's stats reader): copied
 * in, grown past the first allocation, and cleared (they hold no
 * descriptor). */
START_TEST(add_remote_targets)
{
	struct ltree t;
	struct ltree_target tg;
	unsigned i;

	memset(&t, 0, sizeof(t));
	memset(&tg, 0, sizeof(tg));
	tg.exports_fd = -1;
	tg.kind = LH_TARGET_OST;
	for (i = 0; i < 40; i++) {
		(void)snprintf(tg.name, sizeof(tg.name), "fs-OST%04x", i);
		tg.ino = i;
		ck_assert_int_eq(ltree_add(&t, &tg), 0);
	}
	ck_assert_uint_eq(t.ntargets, 40);
	ck_assert_str_eq(t.targets[39].name, "fs-OST0027");
	ck_assert_uint_eq(t.targets[39].ino, 39);
	ck_assert_int_eq(t.targets[0].exports_fd, -1);
	ltree_clear(&t);
	ck_assert_uint_eq(t.ntargets, 0);
	ltree_free(&t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("lustre_tree");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, parse_target);
	tcase_add_test(tc, classify_uuid);
	tcase_add_test(tc, discover_fixture_tree);
	tcase_add_test(tc, discover_debugfs);
	tcase_add_test(tc, add_remote_targets);
	tcase_add_test(tc, read_without_atime);
	tcase_add_test(tc, next_entry_ends_clean);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
