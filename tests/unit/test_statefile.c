/* SPDX-License-Identifier: BSD-2-Clause */
/* State files on disk (issue 15, items 4 and 5): a link or a file planted
 * at the temporary name is never written through; what cannot be read
 * (a directory, a FIFO in the file's place) is told apart from what is
 * refused (a link, damage); a refused file is set aside, never over
 * another. */
#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "statefile.h"
#include "testutil.h"
#include "wire.h"

struct dir {
	char d[64];
	char path[128]; /* d/x.state */
	char tmp[160];  /* d/x.state.tmp */
};

static void
dir_make(struct dir *t)
{
	(void)snprintf(t->d, sizeof(t->d), "/tmp/test_statefile.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(t->d));
	(void)snprintf(t->path, sizeof(t->path), "%s/x.state", t->d);
	(void)snprintf(t->tmp, sizeof(t->tmp), "%s.tmp", t->path);
}

static void
dir_remove(const struct dir *t)
{
	char cmd[128];

	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->d);
	ck_assert_int_eq(system(cmd), 0);
}

static void
put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

static void
assert_file(const char *path, const char *text)
{
	size_t len;
	char *got = tu_read_file(path, &len);

	ck_assert_str_eq(got, text);
	free(got);
}

/* Write "hello" through the state file API. */
static int
save(const char *path, struct lh_err *err)
{
	struct statefile_out *o;
	int rc = statefile_create(path, &o, err);

	if (rc < 0)
		return rc;
	ck_assert_int_eq(wbuf_put(statefile_buf(o), "hello", 5), 0);
	return statefile_commit(o, err);
}

/* A link planted at the temporary name: removed, never followed. */
START_TEST(tmp_link_not_followed)
{
	struct dir t;
	struct lh_err err;
	struct stat sb;
	char victim[128];
	uint8_t *buf;
	size_t len, body;

	dir_make(&t);
	(void)snprintf(victim, sizeof(victim), "%s/victim", t.d);
	put_file(victim, "precious");
	ck_assert_int_eq(symlink(victim, t.tmp), 0);
	ck_assert_int_eq(save(t.path, &err), 0);
	assert_file(victim, "precious");
	ck_assert_int_eq(lstat(t.path, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	ck_assert_int_eq(lstat(t.tmp, &sb), -1);
	ck_assert_int_eq(statefile_read(t.path, &buf, &len, &err), 0);
	ck_assert_int_eq(statefile_verify(buf, len, &body, &err), 0);
	ck_assert_uint_eq(body, 5);
	ck_assert(memcmp(buf, "hello", 5) == 0);
	free(buf);
	dir_remove(&t);
}
END_TEST

/* A file left (or planted, readable by others) at the temporary name:
 * replaced by a new one of mode 0600, not written into. */
START_TEST(tmp_file_replaced)
{
	struct dir t;
	struct lh_err err;
	struct stat sb;
	char other[160];

	dir_make(&t);
	put_file(t.tmp, "someone else's");
	ck_assert_int_eq(chmod(t.tmp, 0666), 0);
	/* A hard link to it would see any write into it. */
	(void)snprintf(other, sizeof(other), "%s/other", t.d);
	ck_assert_int_eq(link(t.tmp, other), 0);
	ck_assert_int_eq(save(t.path, &err), 0);
	assert_file(other, "someone else's");
	ck_assert_int_eq(stat(t.path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0600);
	dir_remove(&t);
}
END_TEST

/* A directory at the temporary name: the save fails, naming it, and the
 * file in place is untouched. */
START_TEST(tmp_dir_in_the_way)
{
	struct dir t;
	struct lh_err err;

	dir_make(&t);
	put_file(t.path, "old");
	ck_assert_int_eq(mkdir(t.tmp, 0700), 0);
	ck_assert_int_lt(save(t.path, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.reason, "x.state.tmp"));
	assert_file(t.path, "old");
	dir_remove(&t);
}
END_TEST

/* Both readers: what cannot be read is not "refused" (-EBADMSG), and a
 * FIFO does not block. */
START_TEST(read_kinds)
{
	struct dir t;
	struct lh_err err;
	struct statefile_in *in;
	uint8_t *buf;
	size_t len;

	dir_make(&t);
	ck_assert_int_eq(statefile_read(t.path, &buf, &len, &err), -ENOENT);
	ck_assert_int_eq(statefile_open(t.path, 0, &in, &err), -ENOENT);
	/* A directory where the file should be: cannot be read (kept). */
	ck_assert_int_eq(mkdir(t.path, 0700), 0);
	ck_assert_int_eq(statefile_read(t.path, &buf, &len, &err), -EISDIR);
	ck_assert_int_eq(statefile_open(t.path, 0, &in, &err), -EISDIR);
	ck_assert_str_eq(err.reason, "a directory, not a file");
	ck_assert_int_eq(rmdir(t.path), 0);
	/* A FIFO: at once, not refused. */
	ck_assert_int_eq(mkfifo(t.path, 0600), 0);
	ck_assert_int_eq(statefile_read(t.path, &buf, &len, &err), -EINVAL);
	ck_assert_int_eq(statefile_open(t.path, 0, &in, &err), -EINVAL);
	ck_assert_str_eq(err.reason, "not a regular file");
	ck_assert_int_eq(unlink(t.path), 0);
	/* A symbolic link: refused (it can be set aside). */
	ck_assert_int_eq(symlink("/etc/passwd", t.path), 0);
	ck_assert_int_eq(statefile_read(t.path, &buf, &len, &err), -EBADMSG);
	ck_assert_int_eq(statefile_open(t.path, 0, &in, &err), -EBADMSG);
	ck_assert_str_eq(err.reason, "a symbolic link, not a file");
	dir_remove(&t);
}
END_TEST

/* A refused file moved aside, never over an earlier one. */
START_TEST(set_aside)
{
	struct dir t;
	struct lh_err err;
	struct stat sb;
	char bad[256], want[256];

	dir_make(&t);
	put_file(t.path, "first");
	ck_assert_int_eq(statefile_set_aside(t.path, 1700000000, bad,
	                     sizeof(bad), &err),
	    0);
	(void)snprintf(want, sizeof(want), "%s.bad.1700000000", t.path);
	ck_assert_str_eq(bad, want);
	assert_file(want, "first");
	ck_assert_int_eq(lstat(t.path, &sb), -1);
	put_file(t.path, "second");
	ck_assert_int_eq(statefile_set_aside(t.path, 1700000000, bad,
	                     sizeof(bad), &err),
	    0);
	(void)snprintf(want, sizeof(want), "%s.bad.1700000000.1", t.path);
	ck_assert_str_eq(bad, want);
	assert_file(want, "second");
	(void)snprintf(want, sizeof(want), "%s.bad.1700000000", t.path);
	assert_file(want, "first");
	/* Nothing to move: says so. */
	ck_assert_int_eq(statefile_set_aside(t.path, 1700000001, bad,
	                     sizeof(bad), &err),
	    -ENOENT);
	ck_assert_ptr_nonnull(strstr(err.reason, "cannot move it aside"));
	dir_remove(&t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("statefile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, tmp_link_not_followed);
	tcase_add_test(tc, tmp_file_replaced);
	tcase_add_test(tc, tmp_dir_in_the_way);
	tcase_add_test(tc, read_kinds);
	tcase_add_test(tc, set_aside);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
