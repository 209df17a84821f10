/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Networks in CIDR notation ("10.0.0.0/8", "2001:db8::/32", or a bare
 * address for one host), as the listener's allow list names them, and the
 * test whether a peer's address lies in one.  An IPv4 peer reaching an
 * IPv6 socket (::ffff:10.0.0.3) is matched as the IPv4 address it is.
 */
#ifndef LH_CIDR_H
#define LH_CIDR_H

#include <stdbool.h>
#include <stdint.h>

struct sockaddr;
struct lh_err;

#define CIDR_STR_MAX 64 /* longest text accepted, NUL included */

struct cidr {
	int family;       /* AF_INET or AF_INET6 */
	uint8_t addr[16]; /* network, host bits cleared; 4 used for IPv4 */
	unsigned bits;    /* prefix length */
};

/*
 * Parse s into *ret.  Host bits set below the prefix are cleared
 * ("10.1.2.3/8" is 10.0.0.0/8).  Returns 0, or -EINVAL with the reason in
 * err (which may be NULL); *ret is untouched on failure.
 */
int cidr_parse(const char *s, struct cidr *ret, struct lh_err *err);

/* Whether the address of sa (AF_INET or AF_INET6) lies in c. */
bool cidr_match(const struct cidr *c, const struct sockaddr *sa);

#endif
