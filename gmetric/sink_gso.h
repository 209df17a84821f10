/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A batch of packets grouped for UDP GSO (UDP_SEGMENT, Linux 4.18): the
 * packets of one length go to the kernel as one send, which it cuts into
 * datagrams of that length, the same bytes gmond would get one by one.
 * The kernel's work per datagram (routing, building the skb, the device,
 * the loopback's receive up to the UDP socket) is then done once per
 * group.  Packets of a lower class go out before those of a higher one
 * (an entry's metadata before its value); within a class the order may
 * change, which gmond cannot tell (each packet is another metric).
 * Internal to gmetric/.
 */
#ifndef LH_SINK_GSO_H
#define LH_SINK_GSO_H

#include <sys/socket.h>
#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

#define SINKGSO_MAX 64 /* packets of one batch; the kernel's segment limit */

/* What one group of at most 60,000 bytes may hold (a UDP datagram is at
 * most 65,507 bytes of payload). */
#define SINKGSO_BYTES_MAX 60000

struct sinkgso {
	struct iovec iov[SINKGSO_MAX];   /* the packets, group after group */
	uint8_t pkt[SINKGSO_MAX];        /* iov[i] is the caller's pkt[i] */
	struct mmsghdr msg[SINKGSO_MAX]; /* one per group */
	/* a UDP_SEGMENT control message per group (CMSG_SPACE is a
	 * multiple of the header's alignment) */
	_Alignas(
	    struct cmsghdr) char cm[SINKGSO_MAX][CMSG_SPACE(sizeof(uint16_t))];
	size_t first[SINKGSO_MAX]; /* a group's first index into iov */
	size_t ngroups;
};

/* Group iov[0..n) (n <= SINKGSO_MAX), packet i of class cls[i], into g:
 * g->msg[0..ngroups) is what one sendmmsg() takes.  The iovecs are copied;
 * the bytes they point to must live until the send. */
void sinkgso_group(struct sinkgso *g, const struct iovec *iov,
    const uint8_t *cls, size_t n);

/* How many packets group k holds. */
size_t sinkgso_count(const struct sinkgso *g, size_t k);

#endif
