/* SPDX-License-Identifier: BSD-2-Clause */
/* The channels' sockets and batched sends (sink_chan.h). */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>

#include "sink_chan.h"

size_t
sinkchan_list(int *fds, size_t max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	struct stat st;
	size_t n = 0;

	if (d == NULL)
		return 0;
	while (n < max && (de = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (end == de->d_name || *end != '\0' || fd < 0 || fd > 65535 ||
		    fd == dirfd(d) || fstat((int)fd, &st) < 0 ||
		    !S_ISSOCK(st.st_mode))
			continue;
		fds[n++] = (int)fd;
	}
	(void)closedir(d);
	return n;
}

bool
sinkchan_in(const int *fds, size_t n, int fd)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (fds[i] == fd)
			return true;
	}
	return false;
}

/* A UDP socket with a peer: what apr_socket_connect() made of a
 * channel. */
static bool
connected_dgram(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int type = 0;
	socklen_t tlen = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) < 0 ||
	    type != SOCK_DGRAM)
		return false;
	return getpeername(fd, (struct sockaddr *)&ss, &len) == 0;
}

int
sinkchan_find(struct sinkchan *ch, const int *before, size_t nbefore)
{
	int *now = calloc(SINKCHAN_SOCKS, sizeof(*now));
	size_t n, i;
	int rc = 0;

	if (now == NULL)
		return -ENOMEM;
	ch->n = 0;
	n = sinkchan_list(now, SINKCHAN_SOCKS);
	for (i = 0; i < n; i++) {
		if (sinkchan_in(before, nbefore, now[i]) ||
		    !connected_dgram(now[i]))
			continue;
		if (ch->n == SINKCHAN_MAX) {
			rc = -EMFILE;
			break;
		}
		ch->fd[ch->n++] = now[i];
	}
	free(now);
	return rc < 0 ? rc : (int)ch->n;
}

/* msgs[0..n) to one socket; failed packets are marked and skipped, as
 * libganglia's apr_socket_send() of each would fail alone. */
static unsigned
send_one(int fd, struct mmsghdr *msgs, size_t n, bool *failed)
{
	size_t off = 0;
	unsigned errors = 0;

	while (off < n) {
		int rc = sendmmsg(fd, msgs + off, (unsigned)(n - off), 0);

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0) {
			failed[off++] = true;
			errors++;
			continue;
		}
		off += (size_t)rc;
	}
	return errors;
}

unsigned
sinkchan_send(const struct sinkchan *ch, struct mmsghdr *msgs, size_t n,
    bool *failed)
{
	unsigned errors = 0;
	size_t c;

	for (c = 0; c < ch->n; c++)
		errors += send_one(ch->fd[c], msgs, n, failed);
	return errors;
}
