/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging, OpenBSD style: log_warn() appends strerror(errno), log_warnx()
 * does not; fatal()/fatalx() are for states that cannot happen.  Lines go
 * to stderr in the foreground (-d), to stderr with syslog priority prefixes
 * under systemd (journald keeps the levels), and to syslog otherwise.
 * The only mutable global state of the program lives in log.c.
 */
#ifndef LH_LOG_H
#define LH_LOG_H

#include <stdbool.h>
#include <stddef.h>

#define LOG_FMT(i) __attribute__((format(printf, (i), (i) + 1)))

/* verbose: 0 info, 1+ debug.  foreground: log to stderr. */
void log_init(const char *ident, bool foreground, int verbose);
void log_set_verbose(int verbose);
/* The process became a daemon: stderr is gone, log to syslog. */
void log_detached(void);

void log_warn(const char *fmt, ...) LOG_FMT(1);
void log_warnx(const char *fmt, ...) LOG_FMT(1);
void log_info(const char *fmt, ...) LOG_FMT(1);
void log_debug(const char *fmt, ...) LOG_FMT(1);
_Noreturn void fatal(const char *fmt, ...) LOG_FMT(1);

/* Copy a peer's text for a log line, with anything but printable ASCII
 * replaced by '?', so that no name or reason can forge a log line. */
void log_safe(char *out, size_t size, const char *in);
_Noreturn void fatalx(const char *fmt, ...) LOG_FMT(1);

#endif
