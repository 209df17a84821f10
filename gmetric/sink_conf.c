/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Checking a gmond.conf before the sink opens it (sink.c).  libganglia
 * 3.7.2 ends the process on a bad gmond.conf or an unresolvable channel
 * host, so a forked child parses a private copy of the file and opens its
 * channels first; the parent only does the same once the child came back
 * with status 0.  The child's output gives the channels ("ip:port") for
 * the log and, on failure, libganglia's or libconfuse's reason as one
 * line.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ganglia.h>

#include "err.h"
#include "gapi.h"
#include "sink_chan.h"
#include "sink_conf.h"

#define GSINK_CONF_MAX 1048576 /* a gmond.conf is a few KB */
#define GSINK_OUT_MAX  4096    /* what the check child prints */

/*
 * A private copy of gmond.conf, so that the child and this process parse
 * the same bytes even if the file is being edited meanwhile: a memfd,
 * named by a /proc/self/fd path (which the child inherits).  Returns the
 * memfd (>= 0) and its path, or a negative errno.  Files it includes are
 * read where they are, by both.
 */
int
sinkconf_snapshot(const char *path, char *ret_path, size_t size,
    struct lh_err *err)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	size_t got = 0;
	int fd, mfd = -1, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return lh_err_set(err, 0, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = lh_err_set(err, 0, -errno, "%s", strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > GSINK_CONF_MAX) {
		rc = lh_err_set(err, 0, -EINVAL,
		    "not a regular file of at most %d bytes", GSINK_CONF_MAX);
		goto out_close;
	}
	buf = malloc(GSINK_CONF_MAX);
	if (buf == NULL) {
		rc = lh_err_set(err, 0, -ENOMEM, "out of memory");
		goto out_close;
	}
	while (got < GSINK_CONF_MAX &&
	    (n = read(fd, buf + got, GSINK_CONF_MAX - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = lh_err_set(err, 0, -errno, "%s", strerror(errno));
			goto out_free;
		}
		got += (size_t)n;
	}
	mfd = memfd_create("gmond.conf", MFD_CLOEXEC);
	if (mfd < 0) {
		rc = lh_err_set(err, 0, -errno, "memfd_create: %s",
		    strerror(errno));
		goto out_free;
	}
	if (got > 0 && write(mfd, buf, got) != (ssize_t)got) {
		rc = lh_err_set(err, 0, -EIO, "cannot copy it to a memfd");
		(void)close(mfd);
		goto out_free;
	}
	(void)snprintf(ret_path, size, "/proc/self/fd/%d", mfd);
	rc = mfd;
out_free:
	free(buf);
out_close:
	(void)close(fd);
	return rc;
}

/* Print "channel ip:port" for each channel socket that was not open
 * before, as the parent will find them (sink_chan.h). */
static void
print_channels(const int *before, size_t nbefore)
{
	struct sinkchan ch;
	size_t i;

	if (sinkchan_find(&ch, before, nbefore) <= 0)
		return;
	for (i = 0; i < ch.n; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		char ip[INET6_ADDRSTRLEN] = "?";
		unsigned port = 0;

		memset(&ss, 0, sizeof(ss));
		if (getpeername(ch.fd[i], (struct sockaddr *)&ss, &len) < 0)
			continue;
		if (ss.ss_family == AF_INET) {
			const struct sockaddr_in *a = (const void *)&ss;

			(void)inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
			port = ntohs(a->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			const struct sockaddr_in6 *a = (const void *)&ss;

			(void)inet_ntop(AF_INET6, &a->sin6_addr, ip,
			    sizeof(ip));
			port = ntohs(a->sin6_port);
		}
		(void)dprintf(STDOUT_FILENO, "channel %s:%u\n", ip, port);
	}
}

/*
 * The child: let libganglia parse the file and open its channels, exactly
 * as the parent will.  libganglia prints its reason and ends the process
 * (status 1) on any problem; success is _Exit(0) (no atexit handlers, no
 * stdio flush of buffers inherited from the parent).
 */
_Noreturn static void
check_child(const struct gapi *api, int out_fd, char *libpath)
{
	int *before = NULL;
	size_t nbefore = 0;
	Ganglia_pool pool;
	Ganglia_gmond_config cfg;
	Ganglia_udp_send_channels ch;

	if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0)
		_Exit(3);
	pool = api->pool_create(NULL);
	if (pool == NULL) {
		(void)dprintf(STDERR_FILENO, "cannot create an APR pool\n");
		_Exit(3);
	}
	cfg = api->gmond_config_create(libpath, 0);
	if (sinkchan_list(&before, &nbefore) < 0) {
		(void)dprintf(STDERR_FILENO,
		    "cannot list this process's sockets\n");
		_Exit(3);
	}
	ch = api->udp_send_channels_create(pool, cfg);
	if (ch == NULL) {
		(void)dprintf(STDERR_FILENO, "no udp_send_channel\n");
		_Exit(2);
	}
	print_channels(before, nbefore);
	_Exit(0);
}

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Read the child's output until EOF or the deadline; NUL-terminated. */
static bool
read_child(int fd, char *out, size_t size, unsigned timeout_ms)
{
	uint64_t deadline = mono_ms() + timeout_ms;
	size_t got = 0;

	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		uint64_t now = mono_ms();
		ssize_t n;
		int rc;

		if (now >= deadline)
			break;
		rc = poll(&pfd, 1, (int)(deadline - now));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			break;
		if (got + 1 < size) {
			n = read(fd, out + got, size - 1 - got);
		} else {
			char scratch[256];

			n = read(fd, scratch, sizeof(scratch)); /* discard */
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			out[got] = '\0';
			return n == 0;
		}
		if (got + 1 < size)
			got += (size_t)n;
	}
	out[got] = '\0';
	return false;
}

/* libganglia's and libconfuse's message, made one line about the file:
 * the first line that is not a channel, the memfd path replaced. */
static void
child_reason(const char *out, const char *libpath, int status,
    struct lh_err *err)
{
	char line[LH_ERR_REASON_MAX];
	const char *p = out, *nl;
	size_t lp = strlen(libpath), n;

	while (*p != '\0') {
		nl = strchr(p, '\n');
		n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		if (n > 0 && strncmp(p, "channel ", 8) != 0)
			break;
		p += n + (nl != NULL ? 1 : 0);
	}
	nl = strchr(p, '\n');
	n = nl != NULL ? (size_t)(nl - p) : strlen(p);
	if (n == 0) {
		if (WIFSIGNALED(status))
			(void)lh_err_set(err, 0, -EINVAL,
			    "libganglia's check died of signal %d",
			    WTERMSIG(status));
		else
			(void)lh_err_set(err, 0, -EINVAL,
			    "libganglia refused it (exit status %d)",
			    WEXITSTATUS(status));
		return;
	}
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	memcpy(line, p, n);
	line[n] = '\0';
	/* libconfuse: "PATH:LINE: reason" */
	if (strncmp(line, libpath, lp) == 0 && line[lp] == ':') {
		(void)lh_err_set(err, 0, -EINVAL, "line %s", line + lp + 1);
	} else {
		(void)lh_err_set(err, 0, -EINVAL, "%s", line);
	}
	/* libganglia ends with " Exiting." (and a path we made up). */
	n = strlen(err->reason);
	while (n > 0 &&
	    (err->reason[n - 1] == ' ' || err->reason[n - 1] == '.' ||
	        err->reason[n - 1] == '\r'))
		err->reason[--n] = '\0';
	if (n >= 8 && strcmp(err->reason + n - 8, " Exiting") == 0) {
		err->reason[n - 8] = '\0';
		n -= 8;
		while (n > 0 && err->reason[n - 1] == '.')
			err->reason[--n] = '\0';
	}
}

/* Keep the "channel ip:port" lines, comma-separated. */
static void
channel_list(const char *out, char *buf, size_t size)
{
	const char *p = out;
	size_t used = 0;

	buf[0] = '\0';
	while ((p = strstr(p, "channel ")) != NULL) {
		size_t n;
		int w;

		p += 8;
		n = strcspn(p, "\n");
		w = snprintf(buf + used, size - used, "%s%.*s",
		    used > 0 ? "," : "", (int)n, p);
		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
		p += n;
	}
}

int
sinkconf_check(const struct gapi *api, char *libpath, unsigned timeout_ms,
    char *chans, size_t size, struct lh_err *err)
{
	char out[GSINK_OUT_MAX];
	int fds[2], status = 0;
	bool eof;
	pid_t pid, w;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return lh_err_set(err, 0, -errno, "pipe: %s", strerror(errno));
	/* libganglia ending the child flushes stdio: nothing of ours
	 * may be waiting in a buffer then. */
	(void)fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		(void)close(fds[0]);
		(void)close(fds[1]);
		return lh_err_set(err, 0, -e, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		(void)close(fds[0]);
		check_child(api, fds[1], libpath);
	}
	(void)close(fds[1]);
	eof = read_child(fds[0], out, sizeof(out), timeout_ms);
	(void)close(fds[0]);
	if (!eof)
		(void)kill(pid, SIGKILL); /* our own child, still running */
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return lh_err_set(err, 0, -ECHILD,
		    "lost the checking child (SIGCHLD ignored or reaped "
		    "elsewhere)");
	if (!eof)
		return lh_err_set(err, 0, -ETIMEDOUT,
		    "libganglia's check took more than %u ms "
		    "(a channel host that does not resolve?)",
		    timeout_ms);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		channel_list(out, chans, size);
		return 0;
	}
	child_reason(out, libpath, status, err);
	return -EINVAL;
}
