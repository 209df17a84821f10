/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shared secret: a key file with one key per line.  The first key
 * signs; every key is accepted, so a site can roll a new secret out to
 * hundreds of servers (add it as a second line everywhere, then move it
 * first, then drop the old one) without a moment where they disagree.
 * A key is the line's bytes with surrounding whitespace stripped (a base64
 * string is used as it is, not decoded), at least 32 bytes long.  Its id
 * is the first 4 bytes of SHA-256(key), big-endian (kept for the local
 * log and tests; on the wire, protocol 2 sends a salted id instead).
 */
#ifndef LH_KEYFILE_H
#define LH_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

struct lh_err;

#define KEYRING_MAX     16   /* keys in one file */
#define KEY_MIN_LEN     32   /* bytes: openssl rand -base64 32 gives 44 */
#define KEY_MAX_LEN     1024 /* bytes */
#define KEYFILE_MAX_LEN ((size_t)64 << 10)

struct keyring_key {
	uint8_t *bytes; /* owned, wiped on keyring_clear() */
	size_t len;
	uint32_t id;
};

struct keyring {
	size_t n;
	struct keyring_key keys[KEYRING_MAX]; /* keys[0] signs */
};

/*
 * Load path into ring.  Refuses (-EPERM) a file that is readable or
 * writable by group or other, or owned by anyone but root or the effective
 * user; err then reads "<path>: <reason>".  Blank lines and lines starting
 * with '#' are skipped; any other line must be a valid key.
 */
int keyfile_load(const char *path, struct keyring *ring, struct lh_err *err);

/* The parsing half of keyfile_load(), on text already read. */
int keyring_parse(struct keyring *ring, const char *text, size_t len,
    struct lh_err *err);

/* Wipe and free every key; ring can be reused. */
void keyring_clear(struct keyring *ring);

/* The key with that id, or NULL. */
const struct keyring_key *keyring_find(const struct keyring *ring, uint32_t id);

/* First 4 bytes of SHA-256(key), big-endian. */
uint32_t keyring_key_id(const uint8_t *key, size_t len);

#endif
