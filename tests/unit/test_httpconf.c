/* SPDX-License-Identifier: BSD-2-Clause */
/* The http { } section of lharvestd.conf (common/config/cfghttp.c): its
 * defaults, its values, its refusals, and its reload comparison. */
#include <sys/socket.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cidr.h"
#include "config.h"
#include "err.h"
#include "testutil.h"

#define AGG "role = \"aggregator\"\n"

static int
load(const char *text, struct lh_config **ret, struct lh_err *err)
{
	char path[] = "/tmp/lh-httpconf-XXXXXX";
	int fd = mkstemp(path), rc;
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	(void)fputs(text, f);
	(void)fclose(f);
	*ret = NULL;
	rc = config_load(path, ret, err);
	(void)unlink(path);
	return rc;
}

static struct lh_config *
load_ok(const char *text)
{
	struct lh_config *c;
	struct lh_err err;

	ck_assert_msg(load(text, &c, &err) == 0, "%s", err.reason);
	return c;
}

START_TEST(defaults)
{
	struct lh_config *c = load_ok(AGG);

	ck_assert_str_eq(c->http_listen_host, "127.0.0.1");
	ck_assert_uint_eq(c->http_listen_port, 8023);
	ck_assert(!c->http_listen_set);
	ck_assert_ptr_null(c->http_socket);
	ck_assert_uint_eq(c->nhttp_allow, 0);
	ck_assert_uint_eq(c->http_max_connections, 64);
	ck_assert_uint_eq(c->http_max_header_size, 8192);
	ck_assert_uint_eq(c->http_timeout, 10);
	config_free(c);
	/* A section without listen: the default, not "set". */
	c = load_ok(AGG "http {\n  timeout = 3\n}\n");
	ck_assert_str_eq(c->http_listen_host, "127.0.0.1");
	ck_assert(!c->http_listen_set);
	ck_assert_uint_eq(c->http_timeout, 3);
	config_free(c);
}
END_TEST

START_TEST(values)
{
	struct lh_config *c =
	    load_ok(AGG "max_connections = 500\n"
	                "http {\n"
	                "  listen = \"[::1]:9000\"\n"
	                "  socket = \"/run/lh/http.sock\"\n"
	                "  allow = { \"10.0.0.0/8\", \"::1\" }\n"
	                "  max_connections = 5\n"
	                "  max_header_size = 2048\n"
	                "  timeout = 30\n"
	                "}\n");

	ck_assert_str_eq(c->http_listen_host, "::1");
	ck_assert_uint_eq(c->http_listen_port, 9000);
	ck_assert(c->http_listen_set);
	ck_assert_str_eq(c->http_socket, "/run/lh/http.sock");
	ck_assert_uint_eq(c->nhttp_allow, 2);
	ck_assert_int_eq(c->http_allow[1].family, AF_INET6);
	ck_assert_uint_eq(c->http_max_connections, 5);
	ck_assert_uint_eq(c->max_connections, 500); /* the gatherers' */
	ck_assert_uint_eq(c->http_max_header_size, 2048);
	ck_assert_uint_eq(c->http_timeout, 30);
	config_free(c);
	c = load_ok(AGG "http {\n  listen = \"\"\n}\n");
	ck_assert_ptr_null(c->http_listen_host);
	ck_assert(c->http_listen_set);
	config_free(c);
	c = load_ok("role = \"relay\"\n"
	            "route \"a\" {\n  networks = { \"o2ib\" }\n"
	            "  server = \"127.0.0.1:9\"\n}\n"
	            "http {\n  listen = \"127.0.0.1:0\"\n}\n");
	ck_assert_uint_eq(c->http_listen_port, 0);
	config_free(c);
}
END_TEST

static const struct {
	const char *text;
	const char *why;
} bad[] = {
    {"http {\n listen = \"localhost:8023\"\n}\n",
        ":3: listen: 'localhost:8023' is not address:port"},
    {"http {\n listen = \"127.0.0.1\"\n}\n",
        "listen: '127.0.0.1' is not address:port"},
    {"http {\n listen = \"::1:8023\"\n}\n", "listen: '::1:8023' is not"},
    {"http {\n listen = \"[::1]\"\n}\n", "listen: '[::1]' is not"},
    {"http {\n listen = \"127.0.0.1:65536\"\n}\n", "listen: '127.0.0.1:6"},
    {"http {\n socket = \"run/x.sock\"\n}\n",
        "socket: 'run/x.sock' is not an absolute path"},
    {"http {\n allow = { \"10.0.0.0/33\" }\n}\n",
        "allow: '10.0.0.0/33': the prefix length"},
    {"http {\n max_connections = 0\n}\n",
        "max_connections: 0 is not between 1 and 65536"},
    {"http {\n max_header_size = 512\n}\n",
        "max_header_size: 512 is not between 1024 and 65536 bytes"},
    {"http {\n timeout = 0\n}\n", "timeout: 0 is not between 1 and 3600"},
    {"http {\n port = 1\n}\n", "port"},
    {"http {\n}\nhttp {\n}\n", "http: one section, not 2"},
    /* The top level's key keeps its own range. */
    {"max_connections = 70000\n", "max_connections: 70000 is not between"},
};

START_TEST(refused)
{
	struct lh_config *c;
	struct lh_err err;
	char text[512];

	(void)snprintf(text, sizeof(text), AGG "%s", bad[_i].text);
	ck_assert_int_lt(load(text, &c, &err), 0);
	ck_assert_msg(strstr(err.reason, bad[_i].why) != NULL, "%s: %s",
	    bad[_i].why, err.reason);
}
END_TEST

START_TEST(section_equal)
{
	struct lh_config *a = load_ok(AGG);
	struct lh_config *b = load_ok(AGG "http {\n timeout = 5\n}\n");
	struct lh_config *d =
	    load_ok(AGG "http {\n listen = \"127.0.0.1:8023\"\n}\n");
	struct lh_config *e =
	    load_ok(AGG "http {\n allow = { \"10.0.0.0/8\" }\n}\n");

	ck_assert(config_section_equal(a, a, "http"));
	ck_assert(!config_section_equal(a, b, "http"));
	ck_assert(config_section_equal(a, b, "http_listen"));
	/* The same address, now written: its bind failure now matters. */
	ck_assert(!config_section_equal(a, d, "http_listen"));
	ck_assert(!config_section_equal(a, e, "http"));
	ck_assert(config_section_equal(a, e, "http_listen"));
	config_free(a);
	config_free(b);
	config_free(d);
	config_free(e);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("httpconf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, defaults);
	tcase_add_test(tc, values);
	tcase_add_loop_test(tc, refused, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, section_equal);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
