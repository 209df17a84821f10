/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * LNet NIDs as Lustre prints them (libcfs_nid2str): "<addr>@<net>", where
 * net is an LND name with an optional number ("o2ib", "o2ib2", "tcp102",
 * "gni", "lo"; a number of 0 is not printed, so "o2ib" and "o2ib0" are the
 * same network) and addr is dotted IPv4 (tcp, o2ib), a decimal number
 * (gni, kfi, lo, ptlf) or, since 2.16, a compressed IPv6 address (tcp).
 * Anything else is kept as an opaque string, so no NID is ever lost.
 */
#ifndef LH_NID_H
#define LH_NID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NID_STR_MAX 128 /* LNET_NIDSTR_SIZE is 64 since 2.15 */
#define NID_NET_MAX 32

/* How the address part is written; the values are the wire format's. */
enum nid_kind {
	NID_KIND_STRING = 0, /* opaque text (IPv6, unknown LNDs) */
	NID_KIND_IPV4 = 1,   /* canonical dotted quad */
	NID_KIND_NUM = 2,    /* canonical decimal, 0 to 2^32-1 */
};

struct nid_parts {
	enum nid_kind kind;
	char net[NID_NET_MAX];  /* "o2ib2": the text after '@' */
	uint32_t num;           /* IPV4 (host order) and NUM */
	char addr[NID_STR_MAX]; /* the text before '@' */
};

/*
 * Split "10.1.2.3@o2ib" into its parts.  The kind is IPV4 or NUM only when
 * nid_format() gives the very same text back (no leading zeros, ...).
 * Returns 0, or -EINVAL (no '@', empty address or net, too long).
 */
int nid_split(const char *nid, struct nid_parts *ret);

/* "<addr>@<net>" from parts into buf.  Returns 0 or -ENAMETOOLONG. */
int nid_format(const struct nid_parts *p, char *buf, size_t size);

/*
 * The network a NID belongs to, normalised so that "o2ib" and "o2ib0"
 * compare equal ("o2ib0" -> "o2ib"): into buf.  Returns 0 or -EINVAL.
 */
int nid_net(const char *nid, char *buf, size_t size);

/* The length of the network net (n bytes) without a trailing number 0:
 * "o2ib0" -> 4, "o2ib10" and "tcp102" keep theirs (nid_net's rule). */
size_t nid_net_canon_len(const char *net, size_t n);

/*
 * Canonicalise an opaque text address in place: an IPv6 address becomes
 * its RFC 5952 text ("2001:DB8:0:0::17" -> "2001:db8::17"), so that two
 * spellings of one client are one NID; anything else is left as it is.
 * addr holds NID_STR_MAX bytes.  Returns true if it changed.
 */
bool nid_addr_canon(char *addr);

/*
 * The canonical text of a NID, as a receiver compares NIDs: the network
 * without a number 0 and an IPv6 address in canonical form.  Returns 0,
 * -EINVAL (not a NID) or -ENAMETOOLONG.
 */
int nid_canon(const char *nid, char *buf, size_t size);

#endif
