/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: any bytes as the text of a key file.  The input is
 * copied into a buffer of exactly its size so ASan sees any read past the
 * end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "keyfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct keyring ring;
	struct lh_err err;
	char *buf = malloc(size > 0 ? size : 1);
	size_t i;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	lh_err_clear(&err);
	if (keyring_parse(&ring, buf, size, &err) == 0) {
		if (ring.n == 0 || ring.n > KEYRING_MAX)
			abort();
		for (i = 0; i < ring.n; i++) {
			const struct keyring_key *k = &ring.keys[i];

			if (k->len < KEY_MIN_LEN || k->len > KEY_MAX_LEN ||
			    k->id != keyring_key_id(k->bytes, k->len) ||
			    keyring_find(&ring, k->id) == NULL)
				abort();
		}
	} else if (err.reason[0] == '\0' || ring.n != 0) {
		abort(); /* every failure must say why, and keep nothing */
	}
	keyring_clear(&ring);
	free(buf);
	return 0;
}
