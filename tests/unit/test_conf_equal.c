/* SPDX-License-Identifier: BSD-2-Clause */
/* What a reload compares, module by module (issue 16):
 * receiver_conf_equal() (daemon/receiver.c) and sender_conf_equal()
 * (daemon/sender.c) on two configurations. */
#include <sys/socket.h>

#include <check.h>
#include <string.h>

#include "cidr.h"
#include "config.h"
#include "receiver.h"
#include "sender.h"
#include "testutil.h"

static char host[] = "127.0.0.1", other[] = "10.0.0.1", name[] = "agg1",
            name2[] = "agg2";

static void
agg(struct lh_config *c, struct cidr *allow)
{
	memset(c, 0, sizeof(*c));
	c->interval = 20;
	c->listen_host = host;
	c->listen_port = 8022;
	c->name = name;
	c->max_frame = 1 << 20;
	c->handshake_timeout = 10;
	c->max_connections = 1024;
	c->allow = allow;
	c->nallow = allow != NULL ? 1 : 0;
}

START_TEST(receiver_own_keys)
{
	struct cidr n1 = {AF_INET, {10, 0, 0, 0}, 8},
	            n2 = {AF_INET, {10, 1, 0, 0}, 16};
	struct lh_config a, b;

	agg(&a, &n1);
	agg(&b, &n1);
	ck_assert(receiver_conf_equal(&a, &b, NULL));
	b.allow = &n2; /* the same count, other networks */
	ck_assert(!receiver_conf_equal(&a, &b, NULL));
	agg(&b, &n1);
	b.name = name2;
	ck_assert(!receiver_conf_equal(&a, &b, NULL));
	agg(&b, &n1);
	b.read_timeout = 60; /* the default, 3 x interval, is 120 */
	ck_assert(!receiver_conf_equal(&a, &b, NULL));
	b.read_timeout = 120; /* what the default is in force */
	ck_assert(receiver_conf_equal(&a, &b, NULL));
	agg(&b, &n1);
	b.interval = 30; /* a name takeover is judged by it */
	ck_assert(!receiver_conf_equal(&a, &b, NULL));
	agg(&b, &n1);
	b.gmond_conf = other; /* not the receiver's */
	b.tmax = 60;
	ck_assert(receiver_conf_equal(&a, &b, NULL));
}
END_TEST

START_TEST(receiver_port_zero)
{
	struct lh_config a, b;

	agg(&a, NULL);
	agg(&b, NULL);
	a.listen_port = 0; /* the kernel gave 40123 */
	ck_assert(!receiver_conf_equal(&a, &b, NULL));
	b.listen_port = 40123;
	ck_assert(receiver_conf_equal(&a, &b, "127.0.0.1:40123"));
	ck_assert(!receiver_conf_equal(&a, &b, "127.0.0.1:40124"));
	b.listen_port = 0;
	ck_assert(receiver_conf_equal(&a, &b, "127.0.0.1:40123"));
	b.listen_host = other;
	ck_assert(!receiver_conf_equal(&a, &b, "127.0.0.1:40123"));
	agg(&b, NULL);
	b.listen_port = 40123;
	b.max_connections = 7; /* not where it listens: the same address */
	ck_assert(receiver_listen_same(&a, &b, "127.0.0.1:40123"));
	ck_assert(!receiver_conf_equal(&a, &b, "127.0.0.1:40123"));
	ck_assert(!receiver_listen_same(&a, &b, NULL));
}
END_TEST

START_TEST(sender_own_keys)
{
	struct lh_config a, b;

	memset(&a, 0, sizeof(a));
	a.server_host = host;
	a.server_port = 8022;
	a.name = name;
	a.max_frame = 1 << 20;
	a.handshake_timeout = 10;
	a.interval = 20;
	b = a;
	ck_assert(sender_conf_equal(&a, &b));
	b.lustre_root = other; /* not the sender's */
	b.interval = 30;       /* a key that needs a restart, not its */
	ck_assert(sender_conf_equal(&a, &b));
	b = a;
	b.server_host = other;
	ck_assert(!sender_conf_equal(&a, &b));
	b = a;
	b.server_port = 8023;
	ck_assert(!sender_conf_equal(&a, &b));
	b = a;
	b.name = name2;
	ck_assert(!sender_conf_equal(&a, &b));
	b = a;
	b.handshake_timeout = 5;
	ck_assert(!sender_conf_equal(&a, &b));
	b = a;
	b.max_frame = 1 << 16;
	ck_assert(!sender_conf_equal(&a, &b));
}
END_TEST

/* No sender (one could not be made at a reload): the gatherer's sweep
 * still kicks and asks, and must not crash. */
START_TEST(sender_null)
{
	sender_kick(NULL);
	ck_assert(!sender_connected(NULL));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("conf_equal");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, receiver_own_keys);
	tcase_add_test(tc, receiver_port_zero);
	tcase_add_test(tc, sender_own_keys);
	tcase_add_test(tc, sender_null);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
