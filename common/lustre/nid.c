/* SPDX-License-Identifier: BSD-2-Clause */
/* LNet NID parsing and formatting. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nid.h"

/* "10.1.2.3" in canonical form (no leading zeros, 0-255 each). */
static bool
parse_ipv4(const char *s, uint32_t *ret)
{
	uint32_t v = 0;
	int part;

	for (part = 0; part < 4; part++) {
		unsigned x = 0, digits = 0;

		while (*s >= '0' && *s <= '9') {
			if (digits > 0 && x == 0)
				return false; /* leading zero */
			x = x * 10 + (unsigned)(*s - '0');
			if (++digits > 3 || x > 255)
				return false;
			s++;
		}
		if (digits == 0)
			return false;
		v = v << 8 | x;
		if (part < 3 && *s++ != '.')
			return false;
	}
	if (*s != '\0')
		return false;
	*ret = v;
	return true;
}

/* A canonical decimal number below 2^32. */
static bool
parse_num(const char *s, uint32_t *ret)
{
	uint64_t v = 0;
	const char *p;

	if (*s == '\0' || (s[0] == '0' && s[1] != '\0'))
		return false;
	for (p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (unsigned)(*p - '0');
		if (v > UINT32_MAX)
			return false;
	}
	*ret = (uint32_t)v;
	return true;
}

int
nid_split(const char *nid, struct nid_parts *ret)
{
	const char *at = strrchr(nid, '@');
	size_t alen, nlen;

	if (at == NULL || at == nid || at[1] == '\0')
		return -EINVAL;
	alen = (size_t)(at - nid);
	nlen = strlen(at + 1);
	if (alen >= sizeof(ret->addr) || nlen >= sizeof(ret->net) ||
	    alen + 1 + nlen >= NID_STR_MAX)
		return -EINVAL;
	memcpy(ret->addr, nid, alen);
	ret->addr[alen] = '\0';
	memcpy(ret->net, at + 1, nlen + 1);
	ret->num = 0;
	if (parse_ipv4(ret->addr, &ret->num))
		ret->kind = NID_KIND_IPV4;
	else if (parse_num(ret->addr, &ret->num))
		ret->kind = NID_KIND_NUM;
	else
		ret->kind = NID_KIND_STRING;
	return 0;
}

int
nid_format(const struct nid_parts *p, char *buf, size_t size)
{
	int n;

	switch (p->kind) {
	case NID_KIND_IPV4:
		n = snprintf(buf, size, "%u.%u.%u.%u@%s", p->num >> 24,
		    (p->num >> 16) & 0xff, (p->num >> 8) & 0xff, p->num & 0xff,
		    p->net);
		break;
	case NID_KIND_NUM:
		n = snprintf(buf, size, "%u@%s", p->num, p->net);
		break;
	case NID_KIND_STRING:
	default:
		n = snprintf(buf, size, "%s@%s", p->addr, p->net);
		break;
	}
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

size_t
nid_net_canon_len(const char *net, size_t n)
{
	const char *end = net + n;

	/* A trailing network number of 0 is the same network as none:
	 * libcfs prints "o2ib" for o2ib0.  "o2ib0" -> "o2ib", but "o2ib10"
	 * and "tcp102" keep their numbers. */
	if (n >= 2 && end[-1] == '0') {
		const char *d = end - 1;

		while (d > net && d[-1] >= '0' && d[-1] <= '9')
			d--;
		if (d == end - 1 && d > net)
			n--; /* exactly one digit, and it is 0 */
	}
	return n;
}

bool
nid_addr_canon(char *addr)
{
	unsigned char a6[16];
	char text[INET6_ADDRSTRLEN];
	size_t n;

	/* inet_pton() takes no zone ("fe80::1%eth0"), which stays text. */
	if (strchr(addr, ':') == NULL || inet_pton(AF_INET6, addr, a6) != 1 ||
	    inet_ntop(AF_INET6, a6, text, sizeof(text)) == NULL)
		return false;
	n = strlen(text);
	if (strcmp(text, addr) == 0 || n >= NID_STR_MAX)
		return false;
	memcpy(addr, text, n + 1);
	return true;
}

int
nid_canon(const char *nid, char *buf, size_t size)
{
	struct nid_parts p;
	size_t nl;
	int rc;

	rc = nid_split(nid, &p);
	if (rc < 0)
		return rc;
	nl = nid_net_canon_len(p.net, strlen(p.net));
	p.net[nl] = '\0';
	if (p.kind == NID_KIND_STRING)
		(void)nid_addr_canon(p.addr);
	return nid_format(&p, buf, size);
}

int
nid_net(const char *nid, char *buf, size_t size)
{
	const char *at = strrchr(nid, '@'), *net;
	size_t n;

	if (at == NULL || at == nid || at[1] == '\0')
		return -EINVAL;
	net = at + 1;
	n = nid_net_canon_len(net, strlen(net));
	if (n >= size)
		return -EINVAL;
	memcpy(buf, net, n);
	buf[n] = '\0';
	return 0;
}
