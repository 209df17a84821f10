/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every role's process shares: becoming a daemon once the start-up
 * checks are done, and an event base that stops on SIGTERM or SIGINT and
 * hands SIGHUP to the role's reload function, telling the service manager
 * each of these (notify.h) and sending it the watchdog keep-alive.
 */
#ifndef LH_LOOP_H
#define LH_LOOP_H

#include <stdbool.h>

struct event;
struct event_base;
struct notify_watchdog;

/* Reload the configuration (SIGHUP). */
typedef void (*loop_reload_fn)(void *arg);

struct loop {
	struct event_base *base;
	struct event *sig[3];  /* SIGTERM, SIGINT, SIGHUP */
	loop_reload_fn reload; /* NULL: SIGHUP is only logged */
	void *reload_arg;
	struct notify_watchdog *watchdog; /* NULL: none asked for */
};

/* Detach (daemon(3), then log to syslog) when asked.  Returns 0, or -1
 * after one log line. */
int loop_detach(bool detach);

/* A new event base with the signal handlers and, when the service
 * manager asked for one, the watchdog timer.  Returns 0, or -1 after one
 * log line (l is then safe to loop_free()). */
int loop_new(struct loop *l);

/* Call fn(arg) on SIGHUP, between RELOADING=1 and READY=1. */
void loop_on_reload(struct loop *l, loop_reload_fn fn, void *arg);

/* Tell the service manager we are ready (the role's set-up is done), then
 * run until a stop signal. */
void loop_run(struct loop *l);

/* Free what loop_new() made, the base last; l may be zeroed or half
 * made.  Events of the caller on the base must be freed first. */
void loop_free(struct loop *l);

#endif
