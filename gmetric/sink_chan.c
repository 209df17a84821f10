/* SPDX-License-Identifier: BSD-2-Clause */
/* The channels' sockets and batched sends (sink_chan.h). */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "sink_chan.h"
#include "sink_gso.h"

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* fd to *fds, grown as needed. */
static int
push_fd(int **fds, size_t *n, size_t *cap, int fd)
{
	if (*n == *cap) {
		size_t ncap = *cap > 0 ? *cap * 2 : 64;
		int *p = realloc(*fds, ncap * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		*fds = p;
		*cap = ncap;
	}
	(*fds)[(*n)++] = fd;
	return 0;
}

int
sinkchan_list(int **ret, size_t *ret_n)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	struct stat st;
	size_t n = 0, cap = 0;
	int *fds = NULL, rc = 0;

	if (d == NULL)
		return -errno;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (end == de->d_name || *end != '\0' || fd < 0 ||
		    fd > INT_MAX || fd == dirfd(d) || fstat((int)fd, &st) < 0 ||
		    !S_ISSOCK(st.st_mode))
			continue;
		rc = push_fd(&fds, &n, &cap, (int)fd);
	}
	(void)closedir(d);
	if (rc < 0) {
		free(fds);
		return rc;
	}
	if (n > 1)
		qsort(fds, n, sizeof(*fds), cmp_int);
	*ret = fds;
	*ret_n = n;
	return 0;
}

bool
sinkchan_in(const int *fds, size_t n, int fd)
{
	return n > 0 && bsearch(&fd, fds, n, sizeof(*fds), cmp_int) != NULL;
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

/* True if fd's peer is a unicast address: GSO is used for those only
 * (a multicast channel loops its packets back to local listeners, a
 * path not measured with GSO here). */
static bool
unicast_peer(int fd)
{
	struct sockaddr_storage ss = {0};
	socklen_t len = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		return false;
	if (ss.ss_family == AF_INET)
		return !IN_MULTICAST(
		    ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr));
	if (ss.ss_family == AF_INET6)
		return !IN6_IS_ADDR_MULTICAST(
		    &((struct sockaddr_in6 *)&ss)->sin6_addr);
	return false;
}

int
sinkchan_find(struct sinkchan *ch, const int *before, size_t nbefore)
{
	int *now = NULL;
	size_t n = 0, i;
	int rc = sinkchan_list(&now, &n);

	ch->n = 0;
	if (rc < 0)
		return rc;
	for (i = 0; i < n; i++) {
		if (sinkchan_in(before, nbefore, now[i]) ||
		    !connected_dgram(now[i]))
			continue;
		if (ch->n == SINKCHAN_MAX) {
			rc = -EMFILE;
			break;
		}
		ch->gso[ch->n] = unicast_peer(now[i]);
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

/* An error that says the socket or its device cannot do UDP GSO (no
 * checksum offload, a kernel before 4.18), or not for these packets (a
 * segment larger than the route's MTU: EMSGSIZE, EINVAL before Linux
 * 6.x, where a packet sent alone is fragmented and goes), not that gmond
 * is gone. */
static bool
gso_refused(int err)
{
	return err == EIO || err == EINVAL || err == EMSGSIZE ||
	    err == ENOPROTOOPT || err == EOPNOTSUPP;
}

/* gso's groups (n packets) to one socket.  A failed group's packets are
 * all marked; if GSO itself was refused, that group's packets and the
 * rest go one by one. */
static unsigned
send_groups(struct sinkchan *ch, size_t c, struct sinkgso *gso, size_t n,
    struct mmsghdr *msgs, bool *failed)
{
	size_t k = 0, i, cnt;
	unsigned errors = 0;
	int fd = ch->fd[c];

	while (k < gso->ngroups) {
		int rc =
		    sendmmsg(fd, gso->msg + k, (unsigned)(gso->ngroups - k), 0);

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc > 0) {
			k += (size_t)rc;
			continue;
		}
		cnt = sinkgso_count(gso, k);
		if (cnt > 1 && gso_refused(errno)) {
			ch->gso[c] = false;
			for (i = gso->first[k]; i < n; i++)
				errors += send_one(fd, &msgs[gso->pkt[i]], 1,
				    &failed[gso->pkt[i]]);
			break;
		}
		for (i = 0; i < cnt; i++)
			failed[gso->pkt[gso->first[k] + i]] = true;
		errors += (unsigned)cnt;
		k++;
	}
	return errors;
}

unsigned
sinkchan_send(struct sinkchan *ch, struct mmsghdr *msgs, size_t n,
    struct sinkgso *gso, bool *failed)
{
	unsigned errors = 0;
	size_t c;

	for (c = 0; c < ch->n; c++) {
		if (gso != NULL && ch->gso[c])
			errors += send_groups(ch, c, gso, n, msgs, failed);
		else
			errors += send_one(ch->fd[c], msgs, n, failed);
	}
	return errors;
}
