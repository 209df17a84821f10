/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: any text as a NID.  A NID that splits must format
 * back to the very same text (the point of the IPv4 and number kinds is
 * that they do so only when canonical; a string always does). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), out[NID_STR_MAX], net[NID_NET_MAX];
	char canon[NID_STR_MAX], again[NID_STR_MAX];
	struct nid_parts p;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (nid_split(s, &p) == 0) {
		if (strnlen(p.addr, sizeof(p.addr)) == sizeof(p.addr) ||
		    strnlen(p.net, sizeof(p.net)) == sizeof(p.net))
			abort();
		if (nid_format(&p, out, sizeof(out)) != 0)
			abort();
		if (strcmp(out, s) != 0)
			abort();
		if (nid_net(s, net, sizeof(net)) != 0)
			abort();
		/* One text per NID: canonical text is a fixed point, and its
		 * network is what nid_net() says. */
		if (nid_canon(s, canon, sizeof(canon)) == 0) {
			if (nid_canon(canon, again, sizeof(again)) != 0 ||
			    strcmp(canon, again) != 0)
				abort();
			if (strcmp(strrchr(canon, '@') + 1, net) != 0)
				abort();
		}
	} else {
		(void)nid_net(s, net, sizeof(net));
	}
	free(s);
	return 0;
}
