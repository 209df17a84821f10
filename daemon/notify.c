/* SPDX-License-Identifier: BSD-2-Clause */
/* Messages to the service manager and the watchdog timer (notify.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#ifdef LH_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "clock.h"
#include "log.h"
#include "notify.h"

/* Send state; 1 sent, 0 no manager listening, negative errno. */
static int
notify_send(const char *state)
{
#ifdef LH_SYSTEMD
	return sd_notify(0, state);
#else
	(void)state;
	return 0;
#endif
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

#ifdef LH_SYSTEMD
/* Pings closer than this would keep the loop busy for nothing. */
#define NOTIFY_WATCHDOG_MIN_US 10000ULL

struct notify_watchdog {
	struct event *ev;
	bool failing; /* the last ping failed: said once, until one works */
};

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

/* The watchdog period the manager asked of this process, in us; 0 for
 * none. */
static uint64_t
watchdog_usec(void)
{
	uint64_t usec = 0;
	int r = sd_watchdog_enabled(0, &usec);

	if (r < 0) {
		log_warnx("service manager: WATCHDOG_USEC or WATCHDOG_PID: %s, "
		          "no watchdog",
		    strerror(-r));
		return 0;
	}
	return r > 0 ? usec : 0;
}

int
notify_watchdog_new(struct event_base *base, struct notify_watchdog **ret)
{
	struct notify_watchdog *w;
	struct timeval tv;
	uint64_t usec = watchdog_usec();

	*ret = NULL;
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
#else
int
notify_watchdog_new(struct event_base *base, struct notify_watchdog **ret)
{
	/* Nothing can ask for the watchdog without libsystemd's help. */
	(void)base;
	*ret = NULL;
	return 0;
}

void
notify_watchdog_free(struct notify_watchdog *w)
{
	(void)w; /* notify_watchdog_new() never makes one */
}
#endif
