/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CIDR networks: parsing with inet_pton(), matching by prefix.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cidr.h"
#include "err.h"

/* The bytes of sa's address as compared with a network: 4 for IPv4 and
 * for IPv4-mapped IPv6 addresses, 16 for other IPv6 ones. */
static const uint8_t ipv4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
    0xff};

static const uint8_t *
sa_bytes(const struct sockaddr *sa, int *ret_family)
{
	if (sa->sa_family == AF_INET) {
		*ret_family = AF_INET;
		return (const uint8_t *)&(
		    (const struct sockaddr_in *)(const void *)sa)
		    ->sin_addr;
	}
	if (sa->sa_family == AF_INET6) {
		const uint8_t *a =
		    ((const struct sockaddr_in6 *)(const void *)sa)
		        ->sin6_addr.s6_addr;

		if (memcmp(a, ipv4_mapped, sizeof(ipv4_mapped)) == 0) {
			*ret_family = AF_INET;
			return a + sizeof(ipv4_mapped);
		}
		*ret_family = AF_INET6;
		return a;
	}
	return NULL;
}

static bool
prefix_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a[whole] ^ b[whole]) & (uint8_t)(0xff00u >> rest)) == 0;
}

int
cidr_parse(const char *s, struct cidr *ret, struct lh_err *err)
{
	char text[CIDR_STR_MAX];
	const char *slash = strchr(s, '/');
	size_t alen = slash != NULL ? (size_t)(slash - s) : strlen(s);
	struct cidr c;
	unsigned max;

	memset(&c, 0, sizeof(c));
	if (alen == 0 || alen >= sizeof(text))
		return lh_err_set(err, 0, -EINVAL,
		    "'%.*s' is not an address or network", CIDR_STR_MAX, s);
	memcpy(text, s, alen);
	text[alen] = '\0';
	if (inet_pton(AF_INET, text, c.addr) == 1) {
		c.family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, text, c.addr) == 1) {
		c.family = AF_INET6;
		max = 128;
	} else {
		return lh_err_set(err, 0, -EINVAL,
		    "'%.*s' is not an IPv4 or IPv6 address", CIDR_STR_MAX,
		    text);
	}
	c.bits = max;
	if (slash != NULL) {
		const char *b = slash + 1;
		unsigned long v;
		char *end;

		errno = 0;
		v = strtoul(b, &end, 10);
		if (b[0] < '0' || b[0] > '9' || *end != '\0' || errno != 0 ||
		    v > max)
			return lh_err_set(err, 0, -EINVAL,
			    "'%.*s': the prefix length is not a number from "
			    "0 to %u",
			    CIDR_STR_MAX, s, max);
		c.bits = (unsigned)v;
	}
	/* An IPv4-mapped network is the IPv4 network, as a mapped peer's
	 * address is matched as IPv4. */
	if (c.family == AF_INET6 && c.bits >= 96 &&
	    memcmp(c.addr, ipv4_mapped, sizeof(ipv4_mapped)) == 0) {
		memmove(c.addr, c.addr + sizeof(ipv4_mapped), 4);
		memset(c.addr + 4, 0, sizeof(c.addr) - 4);
		c.family = AF_INET;
		c.bits -= 96;
		max = 32;
	}
	/* Clear the host bits, so that matching compares prefixes only. */
	for (unsigned i = 0; i < max / 8; i++) {
		if (i * 8 >= c.bits)
			c.addr[i] = 0;
		else if (i * 8 + 8 > c.bits)
			c.addr[i] &= (uint8_t)(0xff00u >> (c.bits - i * 8));
	}
	*ret = c;
	return 0;
}

bool
cidr_match(const struct cidr *c, const struct sockaddr *sa)
{
	int family;
	const uint8_t *a = sa_bytes(sa, &family);

	if (a == NULL || family != c->family)
		return false;
	return prefix_equal(a, c->addr, c->bits);
}
