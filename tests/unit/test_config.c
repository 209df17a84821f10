/* SPDX-License-Identifier: BSD-2-Clause */
/* The shipped example configurations, and bad ones with the exact
 * "file:line: reason" the operator will see. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "err.h"
#include "testutil.h"

static char tmp_path[] = "/tmp/lh-config-XXXXXX";

static const char *
write_conf(const char *text)
{
	FILE *f;
	int fd;

	memcpy(tmp_path + sizeof("/tmp/lh-config-") - 1, "XXXXXX", 6);
	fd = mkstemp(tmp_path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	(void)fputs(text, f);
	(void)fclose(f);
	return tmp_path;
}

START_TEST(shipped_gatherer)
{
	struct lh_config *c = NULL;
	struct lh_err err;

	ck_assert_msg(config_load(LH_CONF_DIR "/gatherer.conf", &c, &err) == 0,
	    "%s", err.reason);
	ck_assert_int_eq(c->role, LH_ROLE_GATHERER);
	ck_assert_uint_eq(c->interval, 20);
	ck_assert_uint_eq(c->server_port, 8022);
	config_free(c);
}
END_TEST

START_TEST(defaults)
{
	struct lh_config *c = NULL;
	const char *p = write_conf("# nothing\n");

	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_int_eq(c->role, LH_ROLE_GATHERER);
	ck_assert_uint_eq(c->interval, CONFIG_DEFAULT_INTERVAL);
	ck_assert_str_eq(c->lustre_root, "/");
	ck_assert_str_eq(c->secret_file, CONFIG_DEFAULT_SECRET_FILE);
	ck_assert_str_eq(c->state_dir, CONFIG_DEFAULT_STATE_DIR);
	ck_assert_uint_eq(c->nfilesystems, 0);
	ck_assert(config_wants_fs(c, "anything"));
	ck_assert(c->name[0] != '\0'); /* the host name */
	config_free(c);
	(void)unlink(p);
}
END_TEST

START_TEST(values)
{
	struct lh_config *c = NULL;
	const char *p = write_conf(
	    "role = \"gatherer\"\ninterval = 2\nlustre_root = \"/tmp/x\"\n"
	    "filesystems = {\"scratch\", \"home_1\"}\n"
	    "server = \"[::1]:9000\"\nname = \"oss7\"\n");

	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_uint_eq(c->interval, 2);
	ck_assert_str_eq(c->lustre_root, "/tmp/x");
	ck_assert_uint_eq(c->nfilesystems, 2);
	ck_assert(config_wants_fs(c, "home_1"));
	ck_assert(!config_wants_fs(c, "home"));
	ck_assert_str_eq(c->server_host, "::1");
	ck_assert_uint_eq(c->server_port, 9000);
	ck_assert_str_eq(c->name, "oss7");
	config_free(c);
	(void)unlink(p);
}
END_TEST

static const struct {
	const char *text;
	const char *reason; /* after "<file>:" */
} bad[] = {
    {"\ninterval = 0\n", "2: interval: 0 is not between 1 and 3600 seconds"},
    {"role = \"server\"\n",
        "1: role: 'server' is not one of gatherer, aggregator, relay"},
    {"\n\nfilesystems = {\"ok\", \"much-too-long\"}\n",
        "3: filesystems: 'much-too-long' is not a Lustre fsname"},
    {"server = \"a:b:c\"\n", "1: server: 'a:b:c' is not host or host:port"},
    {"server = \"host:70000\"\n",
        "1: server: 'host:70000' is not host or host:port"},
    {"lustre_root = \"relative\"\n",
        "1: lustre_root: 'relative' is not an absolute path"},
    {"bogus = 1\n", "1: no such option 'bogus'"},
    {"name = \"oss 1\"\n",
        "1: name: 'oss 1' is not 1-63 printable characters without blanks"},
    {"interval = \"x\"\n", "1: invalid integer value for option 'interval'"},
};

START_TEST(bad_configs)
{
	struct lh_config *c = NULL;
	struct lh_err err;
	char want[512];
	const char *p = write_conf(bad[_i].text);

	ck_assert_int_lt(config_load(p, &c, &err), 0);
	ck_assert_ptr_null(c);
	(void)snprintf(want, sizeof(want), "%s:%s", p, bad[_i].reason);
	ck_assert_msg(strncmp(err.reason, want, strlen(want)) == 0,
	    "got '%s', want '%s'", err.reason, want);
	(void)unlink(p);
}
END_TEST

START_TEST(missing_file)
{
	struct lh_config *c = NULL;
	struct lh_err err;

	ck_assert_int_eq(config_load("/nonexistent/x.conf", &c, &err), -ENOENT);
	ck_assert_str_eq(err.reason,
	    "/nonexistent/x.conf: No such file or directory");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, shipped_gatherer);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, values);
	tcase_add_loop_test(tc, bad_configs, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, missing_file);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
