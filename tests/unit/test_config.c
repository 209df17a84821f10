/* SPDX-License-Identifier: BSD-2-Clause */
/* The shipped example configurations, and bad ones with the exact
 * "file:line: reason" the operator will see. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfgint.h"
#include "cidr.h"
#include "config.h"
#include "mdops.h"
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

/* The annotated examples of conf/ load as they are shipped. */
START_TEST(shipped_others)
{
	static const struct {
		const char *file;
		enum lh_role role;
	} conf[] = {{"/aggregator.conf", LH_ROLE_AGGREGATOR},
	    {"/relay.conf", LH_ROLE_RELAY}};
	struct lh_config *c = NULL;
	struct lh_err err;
	char path[4096];

	(void)snprintf(path, sizeof(path), "%s%s", LH_CONF_DIR, conf[_i].file);
	ck_assert_msg(config_load(path, &c, &err) == 0, "%s", err.reason);
	ck_assert_int_eq(c->role, conf[_i].role);
	ck_assert_uint_eq(c->interval, 20);
	if (c->role == LH_ROLE_RELAY) {
		ck_assert_uint_eq(c->nroutes, 2);
		ck_assert_int_eq(c->default_route, -1);
		ck_assert(!c->spoof);
	}
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
	ck_assert_uint_eq(c->ganglia_pace, CONFIG_DEFAULT_GANGLIA_PACE);
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

START_TEST(aggregator_values)
{
	struct lh_config *c = NULL;
	const char *p = write_conf(
	    "role = \"aggregator\"\ninterval = 2\ndeadline = 0.5\n"
	    "listen = \"127.0.0.1:0\"\nhosts_file = \"/etc/lh-hosts\"\n"
	    "rewrite = {\"s/-ib$//\"}\ndns = no\n"
	    "dns_servers = {\"127.0.0.1:5353\"}\n"
	    "gatherers = {\"oss1\", \"mds1\"}\n"
	    "metadata_ops = {\"open\", \"close\", \"fallocate\"}\n"
	    "filesystem \"scratch\" { metric_prefix = \"vu_short\" }\n"
	    "filesystem \"home\" { }\n"
	    "filesystem \"long\" { metric_prefix = "
	    "\"a23456789012345678901234567890123456789012345678\" }\n");

	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_int_eq(c->role, LH_ROLE_AGGREGATOR);
	ck_assert_uint_eq(c->deadline_ms, 500);
	ck_assert_str_eq(c->listen_host, "127.0.0.1");
	ck_assert_uint_eq(c->listen_port, 0);
	ck_assert_str_eq(c->hosts_file, "/etc/lh-hosts");
	ck_assert_uint_eq(c->nrewrites, 1);
	ck_assert(!c->dns);
	ck_assert_uint_eq(c->ndns_servers, 1);
	ck_assert_uint_eq(c->ngatherers, 2);
	ck_assert_str_eq(config_metric_prefix(c, "scratch"), "vu_short");
	ck_assert_str_eq(config_metric_prefix(c, "home"), "home");
	ck_assert_str_eq(config_metric_prefix(c, "other"), "other");
	ck_assert_uint_eq(c->tmax, 60);
	ck_assert_uint_eq(c->dmax, 600);
	ck_assert_uint_eq(c->metadata_ops,
	    (1u << MDOPS_OPEN) | (1u << MDOPS_CLOSE) | (1u << MDOPS_FALLOCATE));
	config_free(c);
	(void)unlink(p);

	p = write_conf("role = \"aggregator\"\nmetadata_ops = {\"getattr\", "
	               "\"all\"}\n");
	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_uint_eq(c->metadata_ops, (1u << MDOPS_N) - 1);
	config_free(c);
	(void)unlink(p);

	/* Defaults follow the interval. */
	p = write_conf("role = \"aggregator\"\ninterval = 60\n");
	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_uint_eq(c->deadline_ms, 15000);
	ck_assert_uint_eq(c->tmax, 180);
	ck_assert_uint_eq(c->dmax, 600);
	ck_assert_str_eq(c->listen_host, "0.0.0.0");
	ck_assert_uint_eq(c->listen_port, 8022);
	ck_assert_ptr_null(c->hosts_file);
	ck_assert(c->dns);
	ck_assert_uint_eq(c->metadata_ops, 0);
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
    {"interval = 2\ndeadline = 2\n",
        " deadline: 2 s is not below the interval (2 s)"},
    {"filesystem \"s\" { metric_prefix = \"a b\" }\n",
        "1: metric_prefix: 'a b' is not 1-48 of A-Z a-z 0-9 _ - ."},
    /* mprefix.h: 48 characters at most (49 here) */
    {"filesystem \"s\" {\n metric_prefix = "
     "\"a23456789012345678901234567890123456789012345678x\" }\n",
        "2: metric_prefix: "
        "'a23456789012345678901234567890123456789012345678x' is not 1-48"},
    {"filesystem \"much-too-long\" { }\n",
        " filesystem 'much-too-long': not a Lustre fsname (1-8 of A-Z a-z "
        "0-9 _ -)"},
    {"gatherers = {\"a b\"}\n",
        "1: gatherers: 'a b' is not 1-63 printable characters without "
        "blanks"},
    {"hosts_file = \"rel\"\n", "1: hosts_file: 'rel' is not an absolute path"},
    {"name = \"oss 1\"\n",
        "1: name: 'oss 1' is not 1-63 printable characters without blanks"},
    {"interval = \"x\"\n", "1: invalid integer value for option 'interval'"},
    {"role = \"relay\"\n", " a relay needs at least one route section"},
    {"route \"a\" {\n networks = {\"o2ib\", \"o2ib-x\"}\n}\n",
        "2: networks: 'o2ib-x' is not an LNet network pattern"},
    {"route \"a\" { server = \"h\" }\n", " route 'a': no networks"},
    {"route \"a\" { networks = {\"o2ib\"} }\n", " route 'a': no server"},
    {"route \"a\" { networks = {\"o2ib\"} server = \"h:0\" }\n",
        "1: server: 'h:0' is not host or host:port"},
    {"route \"a\" { networks = {\"o2ib*\"} server = \"h\" }\n"
     "route \"b\" { networks = {\"o2ib2\"} server = \"h\" }\n",
        " route 'b': 'o2ib2' overlaps 'o2ib*' of another route"},
    {"route \"a\" { networks = {\"o2ib\"} server = \"h\" }\n"
     "default_route = \"b\"\n",
        " default_route: no route 'b'"},
    {"\nmetadata_ops = {\"open\", \"lookup\"}\n",
        "2: metadata_ops: 'lookup' is not a metadata operation (all, open,"},
    /* issue 15, item 8: nan compares false with every bound */
    {"\ndeadline = nan\n",
        "2: deadline: nan is not between 0 and 3600 seconds"},
    {"interval = 30\nread_timeout = 30\n",
        " read_timeout: 30 s is not above the interval (30 s)"},
    {"totals_host = \"lustre:totals\"\n",
        "1: totals_host: 'lustre:totals' is not 1-63 printable characters "
        "without blanks, quotes"},
    {"totals_host = \"\"\n",
        "1: totals_host: '' is not 1-63 printable characters"},
    /* the ganglia section: the same checks, and one place per key */
    {"ganglia {\n  tmax = -1\n}\n",
        "2: tmax: -1 is not between 0 and 604800 seconds"},
    {"ganglia {\n\n  dmax = 604801\n}\n",
        "3: dmax: 604801 is not between 0 and 604800 seconds"},
    {"ganglia { metadata_interval = -5 }\n",
        "1: metadata_interval: -5 is not between 0 and 604800 seconds"},
    {"ganglia { gmond_conf = \"rel\" }\n",
        "1: gmond_conf: 'rel' is not an absolute path"},
    {"ganglia {\n totals_host = \"a<b\"\n}\n",
        "2: totals_host: 'a<b' is not 1-63 printable characters"},
    {"ganglia { bogus = 1 }\n", "1: no such option 'bogus'"},
    {"ganglia { pace = -1 }\n",
        "1: pace: -1 is not between 0 and 1000000 packets/s"},
    {"ganglia {\n  pace = 1000001\n}\n",
        "2: pace: 1000001 is not between 0 and 1000000 packets/s"},
    {"pace = 100\n", "1: no such option 'pace'"}, /* never top-level */
    {"\ntmax = 5\nganglia { tmax = 6 }\n",
        "2: tmax: also set in ganglia { }; keep one"},
    {"ganglia { gmond_conf = \"/a\" }\ngmond_conf = \"/b\"\n",
        "2: gmond_conf: also set in ganglia { }; keep one"},
    {"tmax = 1\ndmax = -1\n", "2: dmax: -1 is not between 0 and 604800"},
    {"ganglia { tmax = 1 }\nganglia { dmax = 1 }\n",
        " ganglia: one section, not 2"},
    /* ranges from the key table */
    {"max_frame = 4095\n",
        "1: max_frame: 4095 is not between 4096 and 268435456 bytes"},
    {"handshake_timeout = 0\n",
        "1: handshake_timeout: 0 is not between 1 and 86400 seconds"},
    {"read_timeout = -1\n",
        "1: read_timeout: -1 is not between 0 and 86400 seconds"},
    {"max_connections = 65537\n",
        "1: max_connections: 65537 is not between 1 and 65536"},
    {"interval = 3601\n",
        "1: interval: 3601 is not between 1 and 3600 seconds"},
    {"listen = \"[::1\"\n", "1: listen: '[::1' is not address or address:port"},
    {"dns_servers = {\"1.2.3.4:0\"}\n",
        "1: dns_servers: '1.2.3.4:0' is not address or address:port"},
    {"filesystem \"s\" { bogus = 1 }\n", "1: no such option 'bogus'"},
};

START_TEST(relay_values)
{
	struct lh_config *c = NULL;
	const char *p =
	    write_conf("role = \"relay\"\ninterval = 20\n"
	               "route \"alpha\" {\n  networks = {\"o2ib\", \"o2ib1\"}\n"
	               "  server = \"head-a:9022\"\n}\n"
	               "route \"beta\" {\n  networks = {\"tcp[100-199]\"}\n"
	               "  server = \"head-b\"\n}\n"
	               "default_route = \"beta\"\nspoof = yes\n");

	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_int_eq(c->role, LH_ROLE_RELAY);
	ck_assert_uint_eq(c->deadline_ms, 2500);
	ck_assert_uint_eq(c->nroutes, 2);
	ck_assert_str_eq(c->routes[0].name, "alpha");
	ck_assert_uint_eq(c->routes[0].nnetworks, 2);
	ck_assert_str_eq(c->routes[0].networks[1], "o2ib1");
	ck_assert_str_eq(c->routes[0].host, "head-a");
	ck_assert_uint_eq(c->routes[0].port, 9022);
	ck_assert_str_eq(c->routes[1].host, "head-b");
	ck_assert_uint_eq(c->routes[1].port, 8022);
	ck_assert_int_eq(c->default_route, 1);
	ck_assert(c->spoof);
	config_free(c);
	(void)unlink(p);
}
END_TEST

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

/* user (daemon/privsep.h): "" by default, a user name, nothing else. */
START_TEST(user_key)
{
	static const char *const refused[] = {"a b", "-x", "x/y", "r:oot",
	    "a-name-of-thirty-two-characters!",
	    "0123456789012345678901234567890X"};
	struct lh_config *c = NULL;
	struct lh_err err;
	char text[96], want[512];
	const char *p = write_conf("role = \"gatherer\"\n");
	size_t i;

	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_str_eq(c->user, "");
	config_free(c);
	(void)unlink(p);
	p = write_conf("user = \"lharvestd\"\n");
	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_str_eq(c->user, "lharvestd");
	config_free(c);
	(void)unlink(p);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		c = NULL;
		(void)snprintf(text, sizeof(text), "\nuser = \"%s\"\n",
		    refused[i]);
		p = write_conf(text);
		ck_assert_int_lt(config_load(p, &c, &err), 0);
		ck_assert_ptr_null(c);
		(void)snprintf(want, sizeof(want),
		    "%s:2: user: '%s' is not a user name", p, refused[i]);
		ck_assert_str_eq(err.reason, want);
		(void)unlink(p);
	}
}
END_TEST

/* Listener admission keys (issue 15, findings 1 and 15). */
START_TEST(admission_values)
{
	struct lh_config *c = NULL;
	const char *p = write_conf("role = \"aggregator\"\n");

	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_uint_eq(c->frame_timeout, 60);
	ck_assert_uint_eq(c->max_unauthenticated, 256);
	ck_assert_uint_eq(c->max_per_source, 256);
	ck_assert_uint_eq(c->accept_rate, 100);
	ck_assert_uint_eq(c->accept_burst, 256);
	ck_assert_uint_eq(c->nallow, 0);
	config_free(c);
	c = NULL;
	p = write_conf("role = \"aggregator\"\nframe_timeout = 5\n"
	               "max_unauthenticated = 10\nmax_per_source = 20\n"
	               "accept_rate = 30\naccept_burst = 40\n"
	               "allow = {\"10.1.2.3/8\", \"2001:db8::/32\", "
	               "\"192.0.2.7\"}\n");
	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_uint_eq(c->frame_timeout, 5);
	ck_assert_uint_eq(c->max_unauthenticated, 10);
	ck_assert_uint_eq(c->max_per_source, 20);
	ck_assert_uint_eq(c->accept_rate, 30);
	ck_assert_uint_eq(c->accept_burst, 40);
	ck_assert_uint_eq(c->nallow, 3);
	ck_assert_uint_eq(c->allow[0].bits, 8);
	ck_assert_uint_eq(c->allow[0].addr[1], 0); /* host bits cleared */
	ck_assert_uint_eq(c->allow[1].bits, 32);
	ck_assert_uint_eq(c->allow[2].bits, 32);
	config_free(c);
	(void)unlink(p);
}
END_TEST

static const struct {
	const char *text;
	const char *reason; /* after "<file>:" */
} bad_admission[] = {
    {"\nallow = {\"10.0.0.0/8\", \"10.0.0.0/33\"}\n",
        "2: allow: '10.0.0.0/33': the prefix length is not a number from 0 "
        "to 32"},
    {"allow = {\"oss1\"}\n", "1: allow: 'oss1' is not an IPv4 or IPv6 address"},
    {"allow = {\"::1/\"}\n",
        "1: allow: '::1/': the prefix length is not a number from 0 to 128"},
    {"frame_timeout = 0\n", "1: frame_timeout: 0 is not between 1 and"},
    {"max_unauthenticated = 0\n",
        "1: max_unauthenticated: 0 is not between 1 and"},
    {"accept_rate = -1\n", "1: accept_rate: -1 is not between 1 and"},
};

START_TEST(bad_admission_configs)
{
	struct lh_config *c = NULL;
	struct lh_err err;
	char want[512];
	const char *p = write_conf(bad_admission[_i].text);

	ck_assert_int_lt(config_load(p, &c, &err), 0);
	ck_assert_ptr_null(c);
	(void)snprintf(want, sizeof(want), "%s:%s", p,
	    bad_admission[_i].reason);
	ck_assert_msg(strncmp(err.reason, want, strlen(want)) == 0,
	    "got '%s', want '%s'", err.reason, want);
	(void)unlink(p);
}
END_TEST

/* gatherer_networks: names bound to networks (issue 15, item 2). */
START_TEST(gatherer_networks)
{
	struct lh_config *c = NULL;
	const char *p = write_conf("role = \"aggregator\"\n"
	                           "gatherer_networks = {\"oss1 10.1.0.11\", "
	                           "\"mds1  10.1.0.0/24\t2001:db8::/64 \"}\n");

	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_uint_eq(c->nbinds, 2);
	ck_assert_str_eq(c->binds[0].name, "oss1");
	ck_assert_uint_eq(c->binds[0].nnets, 1);
	ck_assert_uint_eq(c->binds[0].nets[0].bits, 32);
	ck_assert_str_eq(c->binds[1].name, "mds1");
	ck_assert_uint_eq(c->binds[1].nnets, 2);
	ck_assert_uint_eq(c->binds[1].nets[1].bits, 64);
	config_free(c);
	(void)unlink(p);
}
END_TEST

static const struct {
	const char *text, *reason;
} bad_binds[] = {
    {"gatherer_networks = {\"oss1\"}\n",
        "1: gatherer_networks: 'oss1': a name, then the networks"},
    {"gatherer_networks = {\"oss1 10.0.0.0/33\"}\n",
        "1: gatherer_networks: 'oss1 10.0.0.0/33': '10.0.0.0/33': the "
        "prefix length"},
    {"gatherer_networks = {\"oss1 oss2\"}\n",
        "1: gatherer_networks: 'oss1 oss2': 'oss2' is not an IPv4"},
    {"gatherer_networks = {\"oss1 10.0.0.1\", \"oss1 10.0.0.2\"}\n",
        "1: gatherer_networks: 'oss1' named twice"},
    {"gatherer_networks = {\" \"}\n",
        "1: gatherer_networks: ' ': a name, then the networks"},
};

START_TEST(bad_gatherer_networks)
{
	struct lh_config *c = NULL;
	struct lh_err err;
	char want[512];
	const char *p = write_conf(bad_binds[_i].text);

	ck_assert_int_lt(config_load(p, &c, &err), 0);
	ck_assert_ptr_null(c);
	(void)snprintf(want, sizeof(want), "%s:%s", p, bad_binds[_i].reason);
	ck_assert_msg(strncmp(err.reason, want, strlen(want)) == 0,
	    "got '%s', want '%s'", err.reason, want);
	(void)unlink(p);
}
END_TEST

/* Reload support: a change shows in its own part only. */
static const struct {
	const char *key, *section;
} changes[] = {
    {"tmax = 99\n", "ganglia"},
    {"gmond_conf = \"/other\"\n", "ganglia"},
    {"totals_host = \"t2\"\n", "ganglia"},
    {"metadata_interval = 5\n", "ganglia"},
    {"ganglia { pace = 2000 }\n", "ganglia"},
    {"listen = \"127.0.0.1:9\"\n", "listen"},
    {"accept_rate = 7\n", "listener"},
    {"allow = {\"10.0.0.0/8\"}\n", "listener"},
    {"max_frame = 8192\n", "listener"},
    {"dns = no\n", "resolver"},
    {"rewrite = {\"s/a/b/\"}\n", "hosts"},
    {"gatherers = {\"oss9\"}\n", "sweeps"},
    {"deadline = 1\n", "sweeps"},
    {"server = \"h2\"\n", "sender"},
    {"prometheus { max_series = 5 }\n", "prometheus"},
    {"prometheus { families = {\"bytes\"} }\n", "prometheus"},
    {"prometheus { filesystems = {\"scratch\"} }\n", "prometheus"},
    {"prometheus { metadata_ops = {\"open\"} }\n", "prometheus"},
};

static struct lh_config *
load_text(const char *text)
{
	struct lh_config *c = NULL;
	struct lh_err err;
	const char *p = write_conf(text);

	ck_assert_msg(config_load(p, &c, &err) == 0, "%s", err.reason);
	(void)unlink(p);
	return c;
}

START_TEST(section_equal)
{
	static const char *const sections[] = {"ganglia", "ganglia_channels",
	    "listen", "listener", "relay", "sender", "resolver", "hosts",
	    "sweeps", "prometheus"};
	static const char base[] = "role = \"aggregator\"\nname = \"a1\"\n";
	struct lh_config *a = load_text(base), *b;
	char text[256];
	size_t i;

	(void)snprintf(text, sizeof(text), "%s%s", base, changes[_i].key);
	b = load_text(text);
	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		bool want = strcmp(sections[i], changes[_i].section) != 0;

		/* max_frame belongs to every link; interval-free keys only
		 * to their own part. */
		if (strcmp(changes[_i].key, "max_frame = 8192\n") == 0 &&
		    (strcmp(sections[i], "relay") == 0 ||
		        strcmp(sections[i], "sender") == 0))
			want = false;
		/* the channels: every Ganglia key but totals_host */
		if (strcmp(sections[i], "ganglia_channels") == 0)
			want = strcmp(changes[_i].section, "ganglia") != 0 ||
			    strcmp(changes[_i].key, "totals_host = \"t2\"\n") ==
			        0;
		ck_assert_msg(config_section_equal(a, b, sections[i]) == want,
		    "%s: %s", changes[_i].key, sections[i]);
		ck_assert(config_section_equal(a, a, sections[i]));
	}
	ck_assert(!config_section_equal(a, a, "no-such-section"));
	ck_assert_ptr_null(config_restart_key(a, b));
	config_free(b);
	config_free(a);
}
END_TEST

/* ganglia { pace }: its value, 0 (unpaced) and the default. */
START_TEST(ganglia_pace)
{
	struct lh_config *a = load_text("ganglia { pace = 0 }\n");
	struct lh_config *b = load_text("ganglia { pace = 1000000 }\n");
	struct lh_config *c = load_text("ganglia { tmax = 5 }\n");

	ck_assert_uint_eq(a->ganglia_pace, 0);
	ck_assert_uint_eq(b->ganglia_pace, 1000000);
	ck_assert_uint_eq(c->ganglia_pace, CONFIG_DEFAULT_GANGLIA_PACE);
	config_free(c);
	config_free(b);
	config_free(a);
}
END_TEST

START_TEST(restart_keys)
{
	struct lh_config *a = load_text("role = \"aggregator\"\n");
	struct lh_config *b = load_text("role = \"relay\"\n"
	                                "route \"r\" { networks = {\"o2ib\"} "
	                                "server = \"h\" }\n");
	struct lh_config *c =
	    load_text("role = \"aggregator\"\ninterval = 30\n");
	struct lh_config *d =
	    load_text("role = \"aggregator\"\nstate_dir = \"/tmp/x\"\n");

	ck_assert_str_eq(config_restart_key(a, b), "role");
	ck_assert_str_eq(config_restart_key(a, c), "interval");
	ck_assert_str_eq(config_restart_key(a, d), "state_dir");
	ck_assert_ptr_null(config_restart_key(a, a));
	ck_assert(!config_section_equal(a, b, "relay"));
	ck_assert(!config_section_equal(a, c, "sweeps"));
	ck_assert(!config_section_equal(a, c, "listener"));
	config_free(d);
	config_free(c);
	config_free(b);
	config_free(a);
}
END_TEST

/* The Ganglia keys in their section, and each at its old place: the
 * same value, and one line that names the file, the line, the key and
 * the new form. */
static const struct {
	const char *key, *value;
} ganglia_keys[] = {
    {"gmond_conf", "\"/etc/g.conf\""},
    {"totals_host", "\"tot\""},
    {"tmax", "33"},
    {"dmax", "777"},
    {"metadata_interval", "5"},
};

static void
ganglia_check(const struct lh_config *c, const char *key)
{
	if (strcmp(key, "gmond_conf") == 0)
		ck_assert_str_eq(c->gmond_conf, "/etc/g.conf");
	else if (strcmp(key, "totals_host") == 0)
		ck_assert_str_eq(c->totals_host, "tot");
	else if (strcmp(key, "tmax") == 0)
		ck_assert_uint_eq(c->tmax, 33);
	else if (strcmp(key, "dmax") == 0)
		ck_assert_uint_eq(c->dmax, 777);
	else
		ck_assert_uint_eq(c->metadata_interval, 5);
}

START_TEST(ganglia_section)
{
	char text[256];
	struct lh_config *c;

	(void)snprintf(text, sizeof(text),
	    "role = \"aggregator\"\nganglia {\n  %s = %s\n}\n",
	    ganglia_keys[_i].key, ganglia_keys[_i].value);
	c = load_text(text);
	ganglia_check(c, ganglia_keys[_i].key);
	ck_assert_uint_eq(c->ndeprecations, 0);
	config_free(c);
}
END_TEST

START_TEST(ganglia_alias)
{
	struct lh_config *c = NULL;
	struct lh_err err;
	char text[256], want[512];
	const char *p;

	(void)snprintf(text, sizeof(text), "role = \"aggregator\"\n%s = %s\n",
	    ganglia_keys[_i].key, ganglia_keys[_i].value);
	p = write_conf(text);
	ck_assert_msg(config_load(p, &c, &err) == 0, "%s", err.reason);
	ganglia_check(c, ganglia_keys[_i].key);
	ck_assert_uint_eq(c->ndeprecations, 1);
	(void)snprintf(want, sizeof(want),
	    "%s:2: %s: deprecated at the top level; write it in ganglia { %s "
	    "= ... }",
	    p, ganglia_keys[_i].key, ganglia_keys[_i].key);
	ck_assert_str_eq(c->deprecations[0], want);
	config_free(c);
	(void)unlink(p);
}
END_TEST

/* Several old forms: one line each, in the file's order, once per key;
 * the defaults still follow the interval. */
START_TEST(ganglia_alias_lines)
{
	struct lh_config *c = NULL;
	char want[512];
	const char *p = write_conf("role = \"aggregator\"\ninterval = 60\n"
	                           "totals_host = \"t1\"\ntmax = 0\n"
	                           "totals_host = \"t2\"\n");

	ck_assert_int_eq(config_load(p, &c, NULL), 0);
	ck_assert_str_eq(c->totals_host, "t2");
	ck_assert_uint_eq(c->tmax, 180);
	ck_assert_uint_eq(c->dmax, 600);
	ck_assert_str_eq(c->gmond_conf, CONFIG_DEFAULT_GMOND_CONF);
	ck_assert_uint_eq(c->ndeprecations, 2);
	(void)snprintf(want, sizeof(want), "%s:3: totals_host: deprecated", p);
	ck_assert(strncmp(c->deprecations[0], want, strlen(want)) == 0);
	(void)snprintf(want, sizeof(want), "%s:4: tmax: deprecated", p);
	ck_assert(strncmp(c->deprecations[1], want, strlen(want)) == 0);
	config_free(c);
	(void)unlink(p);
}
END_TEST

/* The shipped examples show the new form: no deprecation line. */
START_TEST(shipped_new_form)
{
	static const char *const files[] = {"/gatherer.conf",
	    "/aggregator.conf", "/relay.conf"};
	struct lh_config *c = NULL;
	struct lh_err err;
	char path[4096];

	(void)snprintf(path, sizeof(path), "%s%s", LH_CONF_DIR, files[_i]);
	ck_assert_msg(config_load(path, &c, &err) == 0, "%s", err.reason);
	ck_assert_msg(c->ndeprecations == 0, "%s", c->deprecations[0]);
	config_free(c);
}
END_TEST

/* The prometheus section (issue 17): defaults, values, and what is
 * refused where it is written. */
START_TEST(prometheus_section)
{
	static const char base[] = "role = \"aggregator\"\nname = \"a1\"\n";
	struct lh_config *c = load_text(base);
	struct lh_err err;
	const char *p;

	ck_assert_uint_eq(c->prom_families, CONFIG_PROM_ALL);
	ck_assert_uint_eq(c->prom_max_series, CONFIG_DEFAULT_PROM_MAX_SERIES);
	ck_assert_uint_eq(c->prom_metadata_ops, 0);
	ck_assert(config_prom_wants_fs(c, "any"));
	config_free(c);
	c = load_text("role = \"aggregator\"\nname = \"a1\"\n"
	              "prometheus {\n families = {\"bytes\", \"mds_ops\"}\n"
	              " filesystems = {\"scratch\"}\n max_series = 0\n"
	              " metadata_ops = {\"open\", \"getattr\"}\n}\n");
	ck_assert_uint_eq(c->prom_families,
	    CONFIG_PROM_BYTES | CONFIG_PROM_MDS_OPS);
	ck_assert_uint_eq(c->prom_max_series, 0);
	ck_assert_uint_eq(c->prom_metadata_ops,
	    (1u << MDOPS_OPEN) | (1u << MDOPS_GETATTR));
	ck_assert(config_prom_wants_fs(c, "scratch"));
	ck_assert(!config_prom_wants_fs(c, "home"));
	config_free(c);
	c = load_text("role = \"aggregator\"\nname = \"a1\"\n"
	              "prometheus { families = {} }\n");
	ck_assert_uint_eq(c->prom_families, 0);
	config_free(c);
	p = write_conf("role = \"aggregator\"\nname = \"a1\"\n"
	               "prometheus {\n families = {\"bytes\", \"iops\"}\n}\n");
	ck_assert_int_eq(config_load(p, &c, &err), -EINVAL);
	ck_assert_msg(strstr(err.reason, ":4: families: 'iops' is not") !=
	            NULL ||
	        strstr(err.reason, ":3: families: 'iops' is not") != NULL,
	    "%s", err.reason);
	(void)unlink(p);
	p = write_conf("role = \"aggregator\"\nname = \"a1\"\n"
	               "prometheus {\n max_series = -1\n}\n");
	ck_assert_int_eq(config_load(p, &c, &err), -EINVAL);
	ck_assert_msg(strstr(err.reason, "max_series: -1 is not between") !=
	        NULL,
	    "%s", err.reason);
	(void)unlink(p);
}
END_TEST

/* Every key of the table is documented in lharvestd.conf(5), and says
 * which roles read it. */
START_TEST(keys_documented)
{
	size_t n, i;
	const struct cfgkey *k = cfgkeys_table(&n);
	char path[4096], *man, want[128];
	FILE *f;
	long len;

	(void)snprintf(path, sizeof(path), "%s/../man/lharvestd.conf.5",
	    LH_CONF_DIR);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	ck_assert_int_gt(len, 0);
	rewind(f);
	man = calloc(1, (size_t)len + 1);
	ck_assert_ptr_nonnull(man);
	ck_assert_uint_eq(fread(man, 1, (size_t)len, f), (size_t)len);
	(void)fclose(f);
	for (i = 0; i < n; i++) {
		(void)snprintf(want, sizeof(want), "Ic %s ", k[i].name);
		ck_assert_msg(strstr(man, want) != NULL, "%s: not in %s",
		    k[i].name, path);
		ck_assert_msg(k[i].roles != 0, "%s: no role", k[i].name);
		ck_assert_msg(!k[i].alias || k[i].section != NULL,
		    "%s: an alias of no section", k[i].name);
		/* A name is unique in its section (a few, such as the
		 * route's server, are a top-level key's too). */
		ck_assert_ptr_eq(cfgkeys_find_in(k[i].section, k[i].name),
		    &k[i]);
	}
	free(man);
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
	tcase_add_loop_test(tc, shipped_others, 0, 2);
	tcase_add_test(tc, aggregator_values);
	tcase_add_test(tc, relay_values);
	tcase_add_loop_test(tc, bad_configs, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, admission_values);
	tcase_add_loop_test(tc, bad_admission_configs, 0,
	    sizeof(bad_admission) / sizeof(bad_admission[0]));
	tcase_add_test(tc, user_key);
	tcase_add_test(tc, gatherer_networks);
	tcase_add_loop_test(tc, bad_gatherer_networks, 0,
	    sizeof(bad_binds) / sizeof(bad_binds[0]));
	tcase_add_loop_test(tc, section_equal, 0,
	    sizeof(changes) / sizeof(changes[0]));
	tcase_add_test(tc, restart_keys);
	tcase_add_test(tc, ganglia_pace);
	tcase_add_loop_test(tc, ganglia_section, 0,
	    sizeof(ganglia_keys) / sizeof(ganglia_keys[0]));
	tcase_add_loop_test(tc, ganglia_alias, 0,
	    sizeof(ganglia_keys) / sizeof(ganglia_keys[0]));
	tcase_add_test(tc, ganglia_alias_lines);
	tcase_add_loop_test(tc, shipped_new_form, 0, 3);
	tcase_add_test(tc, prometheus_section);
	tcase_add_test(tc, keys_documented);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
