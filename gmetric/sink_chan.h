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

#define SINKCHAN_MAX   64   /* channels of one gmond.conf */
#define SINKCHAN_SOCKS 1024 /* sockets listed at most */

struct sinkchan {
	int fd[SINKCHAN_MAX]; /* borrowed: libganglia's pool owns them */
	size_t n;
};

/* The socket descriptors open now, into fds (at most max). */
size_t sinkchan_list(int *fds, size_t max);

/* True if fd is one of fds[0..n). */
bool sinkchan_in(const int *fds, size_t n, int fd);

/*
 * The connected datagram sockets open now that were not in before[0..
 * nbefore), into ch.  Returns how many (0 and up), or -EMFILE when there
 * are more than SINKCHAN_MAX.
 */
int sinkchan_find(struct sinkchan *ch, const int *before, size_t nbefore);

/*
 * Send msgs[0..n) to every channel, in order.  failed[i] is set for a
 * packet some channel refused (gmond down: ECONNREFUSED), as libganglia
 * counts them.  Returns how many (packet, channel) sends failed.
 */
unsigned sinkchan_send(const struct sinkchan *ch, struct mmsghdr *msgs,
    size_t n, bool *failed);

#endif
