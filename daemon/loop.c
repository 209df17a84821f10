/* SPDX-License-Identifier: BSD-2-Clause */
/* A role's event base, stop signals and detaching (loop.h). */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "loop.h"
#include "notify.h"

static const int loop_signals[3] = {SIGTERM, SIGINT, SIGHUP};

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct loop *l = arg;

	(void)what;
	if (sig == SIGHUP) {
		/* RELOADING=1 and READY=1 even with nothing to reload: a
		 * manager that sent the SIGHUP (Type=notify-reload) waits
		 * for them. */
		notify_reloading();
		if (l->reload == NULL) {
			log_info("SIGHUP: nothing to reload");
		} else {
			log_info("SIGHUP: reloading the configuration");
			l->reload(l->reload_arg);
		}
		notify_ready();
		return;
	}
	log_info("%s: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	notify_stopping();
	(void)event_base_loopbreak(l->base);
}

int
loop_detach(bool detach)
{
	if (!detach)
		return 0;
	if (daemon(0, 0) < 0) {
		log_warn("cannot detach");
		return -1;
	}
	log_detached();
	return 0;
}

int
loop_new(struct loop *l)
{
	size_t i;

	memset(l, 0, sizeof(*l));
	/* A peer that goes away must not kill us with SIGPIPE. */
	(void)signal(SIGPIPE, SIG_IGN);
	l->base = event_base_new();
	if (l->base == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	for (i = 0; i < sizeof(loop_signals) / sizeof(loop_signals[0]); i++) {
		l->sig[i] =
		    evsignal_new(l->base, loop_signals[i], signal_cb, l);
		if (l->sig[i] == NULL || evsignal_add(l->sig[i], NULL) < 0) {
			log_warnx("cannot set up signal handling");
			return -1;
		}
	}
	return notify_watchdog_new(l->base, &l->watchdog);
}

void
loop_on_reload(struct loop *l, loop_reload_fn fn, void *arg)
{
	l->reload = fn;
	l->reload_arg = arg;
}

void
loop_run(struct loop *l)
{
	notify_ready();
	(void)event_base_dispatch(l->base);
}

void
loop_free(struct loop *l)
{
	size_t i;

	notify_watchdog_free(l->watchdog);
	for (i = 0; i < sizeof(l->sig) / sizeof(l->sig[0]); i++) {
		if (l->sig[i] != NULL)
			event_free(l->sig[i]);
	}
	if (l->base != NULL)
		event_base_free(l->base);
	memset(l, 0, sizeof(*l));
}
