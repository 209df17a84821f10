/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: the listener's allow list entries.  Each line is a
 * network; an accepted one has a prefix no longer than its family's
 * address, no host bits set, and matches its own network address, mapped
 * into IPv6 too for an IPv4 network (IPv4-mapped IPv6 networks of /96 or
 * longer are parsed as IPv4). */
#include <sys/socket.h>

#include <netinet/in.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cidr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(const struct cidr *c)
{
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	unsigned max = c->family == AF_INET ? 32 : 128;

	if ((c->family != AF_INET && c->family != AF_INET6) || c->bits > max)
		abort();
	for (unsigned b = c->bits; b < max; b++)
		if (c->addr[b / 8] & (0x80u >> (b % 8)))
			abort();
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	if (c->family == AF_INET) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		memcpy(&sin.sin_addr, c->addr, 4);
		if (!cidr_match(c, (const struct sockaddr *)&sin))
			abort();
		sin6.sin6_addr.s6_addr[10] = 0xff;
		sin6.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&sin6.sin6_addr.s6_addr[12], c->addr, 4);
	} else {
		/* Shorter than /96, a network of mapped addresses matches
		 * none: a mapped peer is matched as IPv4. */
		if (c->addr[10] == 0xff && c->addr[11] == 0xff &&
		    memcmp(c->addr, (const uint8_t[10]){0}, 10) == 0)
			return;
		memcpy(&sin6.sin6_addr, c->addr, 16);
	}
	if (!cidr_match(c, (const struct sockaddr *)&sin6))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *line, *next;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	for (line = s; line != NULL; line = next) {
		struct cidr c;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (cidr_parse(line, &c, NULL) == 0)
			check(&c);
	}
	free(s);
	return 0;
}
