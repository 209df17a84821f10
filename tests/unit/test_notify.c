/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The service manager's protocol as notify.c speaks it: the address
 * NOTIFY_SOCKET names (a path, or '@' for the abstract namespace, and
 * what does not fit), the datagrams a listener receives, nothing sent
 * without NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID, and a failing
 * manager costing one log line, never the daemon.
 */
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "notify.h"
#include "testutil.h"

#define SUN_OFF offsetof(struct sockaddr_un, sun_path)
#define SUN_MAX sizeof(((struct sockaddr_un *)NULL)->sun_path)

/* A NOTIFY_SOCKET value of n characters: the prefix, then 'x's. */
static char *
long_name(const char *prefix, size_t n)
{
	size_t pl = strlen(prefix);
	char *s = malloc(n + 1);

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_ge(n, pl);
	memcpy(s, prefix, pl);
	memset(s + pl, 'x', n - pl);
	s[n] = '\0';
	return s;
}

START_TEST(addr_path)
{
	struct sockaddr_un sa;
	socklen_t len;

	ck_assert_int_eq(notify_addr("/run/systemd/notify", &sa, &len), 0);
	ck_assert_int_eq(sa.sun_family, AF_UNIX);
	ck_assert_str_eq(sa.sun_path, "/run/systemd/notify");
	/* The path and its NUL. */
	ck_assert_uint_eq(len, SUN_OFF + strlen("/run/systemd/notify") + 1);
}
END_TEST

START_TEST(addr_abstract)
{
	struct sockaddr_un sa;
	socklen_t len;

	ck_assert_int_eq(notify_addr("@lh/notify", &sa, &len), 0);
	ck_assert_int_eq(sa.sun_family, AF_UNIX);
	ck_assert_int_eq(sa.sun_path[0], '\0');
	ck_assert_int_eq(memcmp(sa.sun_path + 1, "lh/notify", 9), 0);
	/* The leading NUL and the name, no NUL after it: the kernel takes
	 * every byte of the length as part of the name. */
	ck_assert_uint_eq(len, SUN_OFF + 10);
}
END_TEST

/* The longest that fit, and one byte more. */
START_TEST(addr_lengths)
{
	struct sockaddr_un sa;
	socklen_t len;
	char *s;

	s = long_name("/", SUN_MAX - 1);
	ck_assert_int_eq(notify_addr(s, &sa, &len), 0);
	ck_assert_uint_eq(len, SUN_OFF + SUN_MAX);
	ck_assert_int_eq(sa.sun_path[SUN_MAX - 1], '\0');
	free(s);
	s = long_name("/", SUN_MAX);
	ck_assert_int_eq(notify_addr(s, &sa, &len), -ENAMETOOLONG);
	free(s);

	s = long_name("@", SUN_MAX);
	ck_assert_int_eq(notify_addr(s, &sa, &len), 0);
	ck_assert_uint_eq(len, SUN_OFF + SUN_MAX);
	ck_assert_int_eq(sa.sun_path[0], '\0');
	ck_assert_int_eq(sa.sun_path[SUN_MAX - 1], 'x');
	free(s);
	s = long_name("@", SUN_MAX + 1);
	ck_assert_int_eq(notify_addr(s, &sa, &len), -ENAMETOOLONG);
	free(s);
}
END_TEST

static const struct {
	const char *name;
	int err;
} addr_bad[] = {
    {"", -EINVAL},
    {"@", -EINVAL},
    {"run/systemd/notify", -EAFNOSUPPORT},
    {"./notify", -EAFNOSUPPORT},
    {"vsock:2:1234", -EAFNOSUPPORT},
};

/* Refused, and what the caller passed left as it was. */
START_TEST(addr_refused)
{
	struct sockaddr_un sa, before;
	socklen_t len = 12345;

	memset(&sa, 0x5a, sizeof(sa));
	before = sa;
	ck_assert_int_eq(notify_addr(addr_bad[_i].name, &sa, &len),
	    addr_bad[_i].err);
	ck_assert_int_eq(memcmp(&sa, &before, sizeof(sa)), 0);
	ck_assert_uint_eq(len, 12345);
}
END_TEST

/* A listener, as the service manager has, on a path in a fresh directory
 * or on an abstract name; NOTIFY_SOCKET names it. */
struct listener {
	int fd;
	char dir[64];
	char path[128];
};

static void
listen_on(struct listener *l, bool abstract)
{
	struct sockaddr_un sa;
	struct timeval tv = {2, 0};
	socklen_t len;
	char name[128];

	memset(l, 0, sizeof(*l));
	if (abstract) {
		(void)snprintf(name, sizeof(name), "@lharvestd-test-notify-%ld",
		    (long)getpid());
	} else {
		(void)snprintf(l->dir, sizeof(l->dir),
		    "/tmp/lh-test-notify-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(l->dir));
		(void)snprintf(l->path, sizeof(l->path), "%s/notify", l->dir);
		(void)snprintf(name, sizeof(name), "%s", l->path);
	}
	ck_assert_int_eq(notify_addr(name, &sa, &len), 0);
	l->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(l->fd, 0);
	ck_assert_int_eq(bind(l->fd, (const struct sockaddr *)&sa, len), 0);
	ck_assert_int_eq(setsockopt(l->fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
	                     sizeof(tv)),
	    0);
	ck_assert_int_eq(setenv("NOTIFY_SOCKET", name, 1), 0);
}

static void
listen_close(struct listener *l)
{
	(void)close(l->fd);
	if (l->path[0] != '\0')
		(void)unlink(l->path);
	if (l->dir[0] != '\0')
		(void)rmdir(l->dir);
}

/* The next datagram, as text; "" when none comes (within 2 s, or at once
 * with flags MSG_DONTWAIT). */
static const char *
listen_next(struct listener *l, int flags)
{
	static char buf[512];
	ssize_t n = recv(l->fd, buf, sizeof(buf) - 1, flags);

	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void
env_clear(void)
{
	(void)unsetenv("NOTIFY_SOCKET");
	(void)unsetenv("WATCHDOG_USEC");
	(void)unsetenv("WATCHDOG_PID");
}

/* Every message, on a path (_i 0) and on an abstract name (_i 1). */
START_TEST(send_messages)
{
	struct listener l;
	const char *got;
	char *end;

	env_clear();
	listen_on(&l, _i == 1);
	notify_ready();
	ck_assert_str_eq(listen_next(&l, 0), "READY=1");
	notify_reloading();
	got = listen_next(&l, 0);
	ck_assert_msg(strncmp(got, "RELOADING=1\nMONOTONIC_USEC=", 27) == 0,
	    "got '%s'", got);
	ck_assert_msg(got[27] >= '1' && got[27] <= '9', "got '%s'", got);
	(void)strtoull(got + 27, &end, 10);
	ck_assert_msg(*end == '\0', "got '%s'", got);
	notify_status("%d peers\nsecond line", 3);
	ck_assert_str_eq(listen_next(&l, 0), "STATUS=3 peers");
	notify_stopping();
	ck_assert_str_eq(listen_next(&l, 0), "STOPPING=1");
	ck_assert_str_eq(listen_next(&l, MSG_DONTWAIT), "");
	listen_close(&l);
}
END_TEST

/* Without NOTIFY_SOCKET (not started by a manager) nothing is sent. */
START_TEST(send_unset)
{
	struct listener l;

	env_clear();
	listen_on(&l, true);
	ck_assert_int_eq(unsetenv("NOTIFY_SOCKET"), 0);
	notify_ready();
	notify_stopping();
	ck_assert_str_eq(listen_next(&l, MSG_DONTWAIT), "");
	listen_close(&l);
}
END_TEST

/* stderr, where the log lines go, into a file; its text back. */
static int
stderr_capture(char *path, size_t size)
{
	int fd, saved;

	(void)snprintf(path, size, "/tmp/lh-test-notify-log-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	(void)fflush(stderr);
	saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
	(void)close(fd);
	return saved;
}

static char *
stderr_restore(int saved, const char *path)
{
	size_t len;
	char *text;

	(void)fflush(stderr);
	ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
	(void)close(saved);
	text = tu_read_file(path, &len);
	(void)unlink(path);
	return text;
}

static size_t
count(const char *text, const char *what)
{
	size_t n = 0;

	while ((text = strstr(text, what)) != NULL) {
		n++;
		text += strlen(what);
	}
	return n;
}

/* Nobody listening, or a NOTIFY_SOCKET that cannot be: one line each,
 * and we carry on. */
START_TEST(send_failing)
{
	char path[64];
	char *text;
	int saved;

	env_clear();
	saved = stderr_capture(path, sizeof(path));
	(void)setenv("NOTIFY_SOCKET", "/nonexistent/lh-test-notify", 1);
	notify_ready();
	(void)setenv("NOTIFY_SOCKET", "notify", 1);
	notify_stopping();
	text = stderr_restore(saved, path);
	ck_assert_uint_eq(count(text, "cannot send READY"), 1);
	ck_assert_uint_eq(count(text, "cannot send STOPPING"), 1);
	ck_assert_uint_eq(count(text, "\n"), 2);
	free(text);
}
END_TEST

/* Run base for ms milliseconds. */
static void
run_for(struct event_base *base, long ms)
{
	struct timeval tv = {0, ms * 1000};

	ck_assert_int_eq(event_base_loopexit(base, &tv), 0);
	ck_assert_int_ge(event_base_dispatch(base), 0);
}

/* WATCHDOG_USEC=20000 (the shortest period: pings every 10 ms): pings
 * come, with WATCHDOG_PID ours (_i 1) or unset (_i 0). */
START_TEST(watchdog_pings)
{
	struct event_base *base = event_base_new();
	struct notify_watchdog *w = NULL;
	struct listener l;
	int n = 0;

	env_clear();
	listen_on(&l, true);
	(void)setenv("WATCHDOG_USEC", "20000", 1);
	if (_i == 1) {
		char pid[32];

		(void)snprintf(pid, sizeof(pid), "%ld", (long)getpid());
		(void)setenv("WATCHDOG_PID", pid, 1);
	}
	ck_assert_int_eq(notify_watchdog_new(base, &w), 0);
	ck_assert_ptr_nonnull(w);
	run_for(base, 100);
	while (strcmp(listen_next(&l, MSG_DONTWAIT), "WATCHDOG=1") == 0)
		n++;
	ck_assert_msg(n >= 3, "%d pings in 100 ms", n);
	notify_watchdog_free(w);
	notify_watchdog_free(NULL);
	event_base_free(base);
	listen_close(&l);
}
END_TEST

static const struct {
	const char *usec;
	const char *pid; /* NULL: unset */
	const char *log; /* a line expected, or NULL for silence */
} watchdog_none[] = {
    {NULL, NULL, NULL},
    {NULL, "1", NULL},
    {"1000000", "1", NULL}, /* another process's */
    {"0", NULL, "WATCHDOG_USEC or WATCHDOG_PID: Invalid argument"},
    {"", NULL, "WATCHDOG_USEC or WATCHDOG_PID: Invalid argument"},
    {"-1000000", NULL, "WATCHDOG_USEC or WATCHDOG_PID: Invalid argument"},
    {" 1000000", NULL, "WATCHDOG_USEC or WATCHDOG_PID: Invalid argument"},
    {"1000000s", NULL, "WATCHDOG_USEC or WATCHDOG_PID: Invalid argument"},
    {"18446744073709551615", NULL,
        "WATCHDOG_USEC or WATCHDOG_PID: Invalid argument"},
    {"18446744073709551616", NULL,
        "WATCHDOG_USEC or WATCHDOG_PID: Numerical result out of range"},
    {"1000000", "", "WATCHDOG_USEC or WATCHDOG_PID: Invalid argument"},
    {"1000000", "0", "WATCHDOG_USEC or WATCHDOG_PID: Invalid argument"},
    {"1000000", "pid", "WATCHDOG_USEC or WATCHDOG_PID: Invalid argument"},
    {"1000000", "4294967296",
        "WATCHDOG_USEC or WATCHDOG_PID: Numerical result out of range"},
};

/* No watchdog: not asked for, meant for another process, or asked for
 * in a form we cannot read (one line, and the daemon carries on). */
START_TEST(watchdog_not_wanted)
{
	struct event_base *base = event_base_new();
	/* Anything but NULL: notify_watchdog_new() must clear it. */
	struct notify_watchdog *w = (struct notify_watchdog *)&w;
	char path[64];
	char *text;
	int saved;

	env_clear();
	(void)setenv("NOTIFY_SOCKET", "@lharvestd-test-notify-unused", 1);
	if (watchdog_none[_i].usec != NULL)
		(void)setenv("WATCHDOG_USEC", watchdog_none[_i].usec, 1);
	if (watchdog_none[_i].pid != NULL)
		(void)setenv("WATCHDOG_PID", watchdog_none[_i].pid, 1);
	saved = stderr_capture(path, sizeof(path));
	ck_assert_int_eq(notify_watchdog_new(base, &w), 0);
	text = stderr_restore(saved, path);
	ck_assert_ptr_null(w);
	if (watchdog_none[_i].log == NULL)
		ck_assert_str_eq(text, "");
	else
		ck_assert_msg(strstr(text, watchdog_none[_i].log) != NULL &&
		        count(text, "\n") == 1,
		    "case %d: '%s'", _i, text);
	free(text);
	event_base_free(base);
}
END_TEST

/* Pings that fail: said once, not on every ping. */
START_TEST(watchdog_failing)
{
	struct event_base *base = event_base_new();
	struct notify_watchdog *w = NULL;
	char path[64];
	char *text;
	int saved;

	env_clear();
	(void)setenv("NOTIFY_SOCKET", "/nonexistent/lh-test-notify", 1);
	(void)setenv("WATCHDOG_USEC", "20000", 1);
	ck_assert_int_eq(notify_watchdog_new(base, &w), 0);
	ck_assert_ptr_nonnull(w);
	saved = stderr_capture(path, sizeof(path));
	run_for(base, 60);
	text = stderr_restore(saved, path);
	ck_assert_msg(count(text, "cannot send WATCHDOG") == 1 &&
	        count(text, "\n") == 1,
	    "'%s'", text);
	free(text);
	notify_watchdog_free(w);
	event_base_free(base);
}
END_TEST

static Suite *
notify_suite(void)
{
	Suite *s = suite_create("notify");
	TCase *tc = tcase_create("addr");

	tcase_add_test(tc, addr_path);
	tcase_add_test(tc, addr_abstract);
	tcase_add_test(tc, addr_lengths);
	tcase_add_loop_test(tc, addr_refused, 0,
	    (int)(sizeof(addr_bad) / sizeof(addr_bad[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("send");
	tcase_add_loop_test(tc, send_messages, 0, 2);
	tcase_add_test(tc, send_unset);
	tcase_add_test(tc, send_failing);
	suite_add_tcase(s, tc);

	tc = tcase_create("watchdog");
	tcase_add_loop_test(tc, watchdog_pings, 0, 2);
	tcase_add_loop_test(tc, watchdog_not_wanted, 0,
	    (int)(sizeof(watchdog_none) / sizeof(watchdog_none[0])));
	tcase_add_test(tc, watchdog_failing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(notify_suite());
}
