/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Telling the service manager how we are (sd_notify(3), Type=notify):
 * ready, reloading, stopping, a status line, and the watchdog keep-alive
 * sent from the event loop, so that a loop stuck for half of WatchdogSec=
 * gets us restarted.  Every call does nothing when NOTIFY_SOCKET is unset
 * (not started by systemd, or not Type=notify).  The protocol (one
 * datagram of KEY=VALUE lines to the unix socket NOTIFY_SOCKET names) is
 * spoken here, without libsystemd, to keep the daemon small.
 */
#ifndef LH_NOTIFY_H
#define LH_NOTIFY_H

#include <sys/socket.h>

#include "log.h"

struct event_base;
struct notify_watchdog;
struct sockaddr_un;

/* READY=1: start-up (or a reload) is done. */
void notify_ready(void);

/* RELOADING=1 with MONOTONIC_USEC=<CLOCK_MONOTONIC in us> (systemd >= 253
 * wants it; older ones ignore it): a reload starts, READY=1 ends it. */
void notify_reloading(void);

/* STOPPING=1: a stop signal came; we save and leave. */
void notify_stopping(void);

/* STATUS=<text>: one line shown by systemctl status. */
void notify_status(const char *fmt, ...) LOG_FMT(1);

/* The watchdog: when the manager asked for one (WATCHDOG_USEC set, and
 * WATCHDOG_PID ours or unset), a timer on base that sends WATCHDOG=1 every
 * half period.  Returns 0 with *ret the timer, or NULL when no watchdog is
 * wanted; -1 after one log line. */
int notify_watchdog_new(struct event_base *base, struct notify_watchdog **ret);

/* Stop and free the timer; NULL is a no-op. */
void notify_watchdog_free(struct notify_watchdog *w);

/* The address NOTIFY_SOCKET names: an absolute path, or '@' then a name in
 * the abstract namespace.  0 with *ret_sa and *ret_len set; -ENAMETOOLONG
 * when it does not fit a sockaddr_un, -EAFNOSUPPORT for any other form
 * (a relative path, "vsock:"), -EINVAL for "" or "@" alone.  Also for
 * the tests. */
int
notify_addr(const char *name, struct sockaddr_un *ret_sa, socklen_t *ret_len);

#endif
