/* SPDX-License-Identifier: BSD-2-Clause */
/* Where log lines go, and how they are written. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"

enum log_sink {
	LOG_SINK_STDERR,  /* -d: plain lines */
	LOG_SINK_JOURNAL, /* systemd: "<3>text", journald parses the level */
	LOG_SINK_SYSLOG,
};

static struct {
	enum log_sink sink;
	int verbose;
	const char *ident;
} log_state = {LOG_SINK_STDERR, 0, "lharvestd"};

void
log_init(const char *ident, bool foreground, int verbose)
{
	log_state.ident = ident;
	log_state.verbose = verbose;
	if (foreground)
		log_state.sink = LOG_SINK_STDERR;
	else if (getenv("JOURNAL_STREAM") != NULL)
		log_state.sink = LOG_SINK_JOURNAL;
	else
		log_state.sink = LOG_SINK_SYSLOG;
	if (log_state.sink == LOG_SINK_SYSLOG)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_detached(void)
{
	log_state.sink = LOG_SINK_SYSLOG;
	openlog(log_state.ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_safe(char *out, size_t size, const char *in)
{
	size_t i;

	if (size == 0)
		return;
	for (i = 0; i + 1 < size && in[i] != '\0'; i++)
		out[i] = (char)(in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?');
	out[i] = '\0';
}

void
log_set_verbose(int verbose)
{
	log_state.verbose = verbose;
}

static void
vlog(int pri, const char *fmt, va_list ap, const char *suffix)
{
	char line[1024];

	(void)vsnprintf(line, sizeof(line), fmt, ap);
	switch (log_state.sink) {
	case LOG_SINK_STDERR:
		(void)fprintf(stderr, "%s: %s%s%s\n", log_state.ident, line,
		    suffix != NULL ? ": " : "", suffix != NULL ? suffix : "");
		break;
	case LOG_SINK_JOURNAL:
		(void)fprintf(stderr, "<%d>%s%s%s\n", pri, line,
		    suffix != NULL ? ": " : "", suffix != NULL ? suffix : "");
		break;
	case LOG_SINK_SYSLOG:
		syslog(pri, "%s%s%s", line, suffix != NULL ? ": " : "",
		    suffix != NULL ? suffix : "");
		break;
	}
}

void
log_warn(const char *fmt, ...)
{
	const char *e = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, e);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, NULL);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap, NULL);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_state.verbose < 1)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap, NULL);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	const char *e = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, e);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, NULL);
	va_end(ap);
	exit(1);
}
