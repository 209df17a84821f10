/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sockets of gmond.conf's udp_send_channels, as libganglia opened
 * them (connected UDP sockets, multicast TTL and interface set), and a
 * batch of packets sent to each of them with one sendmmsg(2) per channel
 * instead of one write(2) per packet and channel.  libganglia does not
 * tell where its sockets are: they are the connected datagram sockets
 * that appeared while it opened the channels.  Internal to gmetric/.
 */
#ifndef LH_SINK_CHAN_H
#define LH_SINK_CHAN_H

#include <stdbool.h>
#include <stddef.h>

struct mmsghdr;
struct sinkgso;

#define SINKCHAN_MAX 64 /* channels of one gmond.conf */

struct sinkchan {
	int fd[SINKCHAN_MAX]; /* borrowed: libganglia's pool owns them */
	size_t n;
	/* per channel: UDP GSO (sink_gso.h) for its batches; false for a
	 * multicast peer or once its socket refused UDP_SEGMENT */
	bool gso[SINKCHAN_MAX];
};

/*
 * Every socket descriptor open now, however many (an aggregator may hold
 * thousands of connections), sorted: *ret (the caller frees it) and
 * *ret_n.  Returns 0, or -ENOMEM or -errno (/proc/self/fd unreadable).
 */
int sinkchan_list(int **ret, size_t *ret_n);

/* True if fd is one of the sorted fds[0..n). */
bool sinkchan_in(const int *fds, size_t n, int fd);

/*
 * The connected datagram sockets open now that were not in the sorted
 * before[0..nbefore), into ch.  Returns how many (0 and up), -EMFILE
 * when there are more than SINKCHAN_MAX, or sinkchan_list()'s error.
 */
int sinkchan_find(struct sinkchan *ch, const int *before, size_t nbefore);

/*
 * Send msgs[0..n) to every channel, in order, or when gso is not NULL
 * (msgs grouped by sinkgso_group()), to a channel with GSO the groups of
 * gso, a send each (a channel that refuses GSO gets its packets one by
 * one, and every later batch as msgs).  failed[i] is
 * set for a packet some channel refused (gmond down: ECONNREFUSED; in a
 * group, every packet of the group), as libganglia counts them.  Returns
 * how many (packet, channel) sends failed.
 */
unsigned sinkchan_send(struct sinkchan *ch, struct mmsghdr *msgs, size_t n,
    struct sinkgso *gso, bool *failed);

#endif
