/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Messages to the service manager and the watchdog timer (notify.h).
 * The protocol is small and documented as stable (sd_notify(3)): each
 * message is one datagram of "KEY=VALUE" lines sent to the AF_UNIX socket
 * named by NOTIFY_SOCKET, and the watchdog period comes in WATCHDOG_USEC.
 * We speak it here rather than link libsystemd, whose dependencies
 * (libgcrypt, libzstd, liblzma, liblz4, libcap...) cost the idle gatherer
 * about 1 MB of RSS for this alone (issue 9).
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "notify.h"

/* Pings closer than this would keep the loop busy for nothing. */
#define NOTIFY_WATCHDOG_MIN_US 10000ULL

struct notify_watchdog {
	struct event *ev;
	bool failing; /* the last ping failed: said once, until one works */
};

int
notify_addr(const char *name, struct sockaddr_un *ret_sa, socklen_t *ret_len)
{
	struct sockaddr_un sa;
	size_t len = strlen(name);

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (name[0] == '/') {
		/* A path, with room for its NUL. */
		if (len >= sizeof(sa.sun_path))
			return -ENAMETOOLONG;
		memcpy(sa.sun_path, name, len + 1);
		len++;
	} else if (name[0] == '@') {
		/* Abstract: a NUL, then the name; every byte of the given
		 * length is part of the name, so no NUL is counted after
		 * it. */
		if (len < 2)
			return -EINVAL;
		if (len > sizeof(sa.sun_path))
			return -ENAMETOOLONG;
		memcpy(sa.sun_path + 1, name + 1, len - 1);
	} else {
		return len == 0 ? -EINVAL : -EAFNOSUPPORT;
	}
	*ret_sa = sa;
	*ret_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	return 0;
}

/* Send state; 1 sent, 0 no manager asked (no NOTIFY_SOCKET), negative
 * errno. */
static int
notify_send(const char *state)
{
	const char *name = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t salen;
	int fd, r;

	if (name == NULL || name[0] == '\0')
		return 0;
	r = notify_addr(name, &sa, &salen);
	if (r < 0)
		return r;
	/* A socket per message, as the messages are rare: nothing to keep
	 * open, nothing for a child to inherit.  The send may block: the
	 * manager reads at once, and a READY=1 dropped on a full queue
	 * would fail the start. */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL,
	        (const struct sockaddr *)&sa, salen) < 0)
		r = -errno;
	else
		r = 1;
	(void)close(fd);
	return r;
}

static void
notify_say(const char *what, const char *state)
{
	int r = notify_send(state);

	if (r < 0)
		log_warnx("service manager: cannot send %s: %s, ignoring", what,
		    strerror(-r));
}

void
notify_ready(void)
{
	notify_say("READY", "READY=1");
}

void
notify_reloading(void)
{
	char state[64];

	(void)snprintf(state, sizeof(state),
	    "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
	    clock_monotonic_ns() / 1000);
	notify_say("RELOADING", state);
}

void
notify_stopping(void)
{
	notify_say("STOPPING", "STOPPING=1");
}

void
notify_status(const char *fmt, ...)
{
	char state[256];
	va_list ap;
	int n;

	n = snprintf(state, sizeof(state), "STATUS=");
	va_start(ap, fmt);
	(void)vsnprintf(state + n, sizeof(state) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One line: a newline would start another assignment. */
	state[strcspn(state, "\n")] = '\0';
	notify_say("STATUS", state);
}

static void
watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct notify_watchdog *w = arg;
	int r;

	(void)fd;
	(void)what;
	r = notify_send("WATCHDOG=1");
	if (r < 0 && !w->failing)
		log_warnx("service manager: cannot send WATCHDOG: %s, "
		          "retrying",
		    strerror(-r));
	else if (r >= 0 && w->failing)
		log_info("service manager: WATCHDOG sent again");
	w->failing = r < 0;
}

/* A positive decimal number from the environment: digits only, no sign,
 * space or trailing text. */
static int
watchdog_number(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != '\0' || v == 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* The watchdog period the manager asked of this process, in us: 0 for
 * none (WATCHDOG_USEC unset, or WATCHDOG_PID another process's). */
static int
watchdog_period(uint64_t *ret_usec)
{
	const char *s = getenv("WATCHDOG_USEC");
	uint64_t usec, pid;
	int r;

	if (s == NULL) {
		*ret_usec = 0;
		return 0;
	}
	r = watchdog_number(s, &usec);
	if (r == 0 && usec == UINT64_MAX)
		r = -EINVAL; /* systemd's "infinity" */
	if (r < 0)
		return r;
	s = getenv("WATCHDOG_PID");
	if (s != NULL) {
		r = watchdog_number(s, &pid);
		if (r == 0 && pid > INT32_MAX)
			r = -ERANGE;
		if (r < 0)
			return r;
		if (pid != (uint64_t)getpid())
			usec = 0;
	}
	*ret_usec = usec;
	return 0;
}

int
notify_watchdog_new(struct event_base *base, struct notify_watchdog **ret)
{
	struct notify_watchdog *w;
	struct timeval tv;
	uint64_t usec;
	int r;

	*ret = NULL;
	r = watchdog_period(&usec);
	if (r < 0) {
		log_warnx("service manager: WATCHDOG_USEC or WATCHDOG_PID: %s, "
		          "no watchdog",
		    strerror(-r));
		return 0;
	}
	if (usec == 0)
		return 0;
	/* Half the period, as sd_watchdog_enabled(3) advises: a ping late
	 * by a busy callback still arrives in time. */
	usec /= 2;
	if (usec < NOTIFY_WATCHDOG_MIN_US)
		usec = NOTIFY_WATCHDOG_MIN_US;
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	w->ev = event_new(base, -1, EV_PERSIST, watchdog_cb, w);
	tv.tv_sec = (time_t)(usec / 1000000);
	tv.tv_usec = (suseconds_t)(usec % 1000000);
	if (w->ev == NULL || event_add(w->ev, &tv) < 0) {
		log_warnx("cannot set up the watchdog timer");
		notify_watchdog_free(w);
		return -1;
	}
	log_debug("service manager: watchdog, WATCHDOG=1 every %" PRIu64 " ms",
	    usec / 1000);
	*ret = w;
	return 0;
}

void
notify_watchdog_free(struct notify_watchdog *w)
{
	if (w == NULL)
		return;
	if (w->ev != NULL)
		event_free(w->ev);
	free(w);
}
