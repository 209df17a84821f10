/* SPDX-License-Identifier: BSD-2-Clause */
/* A batch grouped by length for UDP GSO (sink_gso.h). */
#include <netinet/in.h>
#include <netinet/udp.h>

#include <string.h>

#include "sink_gso.h"

/* The group of the packet with class cls and length len that still has
 * room, or a new one; its index. */
static size_t
group_for(size_t *ng, uint8_t *gcls, size_t *glen, size_t *gcount,
    size_t *gbytes, uint8_t cls, size_t len)
{
	size_t k;

	for (k = 0; k < *ng; k++) {
		if (gcls[k] == cls && glen[k] == len &&
		    gbytes[k] + len <= SINKGSO_BYTES_MAX)
			return k;
	}
	gcls[k] = cls;
	glen[k] = len;
	gcount[k] = gbytes[k] = 0;
	(*ng)++;
	return k;
}

/* Group k's message: its packets, and their length as the segment size
 * when there is more than one. */
static void
group_msg(struct sinkgso *g, size_t k, size_t count, size_t len)
{
	struct msghdr *h = &g->msg[k].msg_hdr;
	struct cmsghdr *cm;
	uint16_t seg = (uint16_t)len;

	memset(&g->msg[k], 0, sizeof(g->msg[k]));
	h->msg_iov = &g->iov[g->first[k]];
	h->msg_iovlen = count;
	if (count < 2)
		return;
	memset(g->cm[k], 0, sizeof(g->cm[k]));
	h->msg_control = g->cm[k];
	h->msg_controllen = sizeof(g->cm[k]);
	cm = CMSG_FIRSTHDR(h);
	cm->cmsg_level = IPPROTO_UDP;
	cm->cmsg_type = UDP_SEGMENT;
	cm->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
}

void
sinkgso_group(struct sinkgso *g, const struct iovec *iov, const uint8_t *cls,
    size_t n)
{
	uint8_t gcls[SINKGSO_MAX], of[SINKGSO_MAX], order[SINKGSO_MAX];
	size_t glen[SINKGSO_MAX], gcount[SINKGSO_MAX], gbytes[SINKGSO_MAX];
	size_t ng = 0, i, k, o, at = 0;

	for (i = 0; i < n; i++) {
		k = group_for(&ng, gcls, glen, gcount, gbytes, cls[i],
		    iov[i].iov_len);
		of[i] = (uint8_t)k;
		gcount[k]++;
		gbytes[k] += iov[i].iov_len;
	}
	/* The groups by class, each class's in the order they began (an
	 * insertion sort: stable, and a batch has few groups). */
	for (k = 0; k < ng; k++) {
		for (o = k; o > 0 && gcls[order[o - 1]] > gcls[k]; o--)
			order[o] = order[o - 1];
		order[o] = (uint8_t)k;
	}
	g->ngroups = ng;
	for (o = 0; o < ng; o++) {
		k = order[o];
		g->first[o] = at;
		for (i = 0; i < n; i++) {
			if (of[i] != k)
				continue;
			g->iov[at] = iov[i];
			g->pkt[at++] = (uint8_t)i;
		}
		group_msg(g, o, gcount[k], glen[k]);
	}
}

size_t
sinkgso_count(const struct sinkgso *g, size_t k)
{
	return g->msg[k].msg_hdr.msg_iovlen;
}
