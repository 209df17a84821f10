/* SPDX-License-Identifier: BSD-2-Clause */
/* The shared-secret key file: permissions, parsing, key ids. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "hmac.h"
#include "keyfile.h"
#include "wire.h"

uint32_t
keyring_key_id(const uint8_t *key, size_t len)
{
	uint8_t d[SHA256_LEN];

	if (sha256(key, len, d) < 0)
		return 0;
	return wire_be32(d);
}

void
keyring_clear(struct keyring *ring)
{
	size_t i;

	for (i = 0; i < ring->n; i++) {
		lh_cleanse(ring->keys[i].bytes, ring->keys[i].len);
		free(ring->keys[i].bytes);
		ring->keys[i].bytes = NULL;
		ring->keys[i].len = 0;
	}
	ring->n = 0;
}

const struct keyring_key *
keyring_find(const struct keyring *ring, uint32_t id)
{
	size_t i;

	for (i = 0; i < ring->n; i++) {
		if (ring->keys[i].id == id)
			return &ring->keys[i];
	}
	return NULL;
}

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The key of line lineno, s (n bytes, blanks trimmed), checked and added
 * to ring.  Returns 0, -EINVAL or -ENOMEM with err set. */
static int
key_add(struct keyring *ring, const char *s, size_t n, unsigned lineno,
    struct lh_err *err)
{
	struct keyring_key *k;

	if (memchr(s, '\0', n) != NULL)
		return lh_err_set(err, lineno, -EINVAL,
		    "line %u: NUL byte in key", lineno);
	/* A short key is a weak key: whoever sees one MAC can try guesses
	 * offline.  32 bytes is what the documented generator gives. */
	if (n < KEY_MIN_LEN)
		return lh_err_set(err, lineno, -EINVAL,
		    "line %u: key is %zu bytes, at least %d needed "
		    "(make one with: openssl rand -base64 32)",
		    lineno, n, KEY_MIN_LEN);
	if (n > KEY_MAX_LEN)
		return lh_err_set(err, lineno, -EINVAL,
		    "line %u: key is %zu bytes, at most %d allowed", lineno, n,
		    KEY_MAX_LEN);
	if (ring->n == KEYRING_MAX)
		return lh_err_set(err, lineno, -EINVAL,
		    "line %u: more than %d keys", lineno, KEYRING_MAX);
	k = &ring->keys[ring->n];
	k->bytes = malloc(n);
	if (k->bytes == NULL)
		return lh_err_set(err, lineno, -ENOMEM, "out of memory");
	memcpy(k->bytes, s, n);
	k->len = n;
	k->id = keyring_key_id(k->bytes, n);
	ring->n++;
	return 0;
}

int
keyring_parse(struct keyring *ring, const char *text, size_t len,
    struct lh_err *err)
{
	const char *p = text, *end = text + len;
	unsigned lineno = 0;
	int rc;

	ring->n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl != NULL ? nl : end, *s = p;

		lineno++;
		p = nl != NULL ? nl + 1 : end;
		while (s < le && is_blank(*s))
			s++;
		while (le > s && is_blank(le[-1]))
			le--;
		if (s == le || *s == '#')
			continue;
		rc = key_add(ring, s, (size_t)(le - s), lineno, err);
		if (rc < 0)
			goto fail;
	}
	if (ring->n == 0)
		return lh_err_set(err, 0, -EINVAL, "no key in file");
	return 0;
fail:
	keyring_clear(ring);
	return rc;
}

/* Whether the open file fd at path may hold a secret: a regular file of
 * root or ours, for nobody else.  Returns 0 or -errno with err set. */
static int
keyfile_secret(int fd, const char *path, struct lh_err *err)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0)
		return lh_err_set(err, 0, -errno, "%s: %s", path,
		    strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return lh_err_set(err, 0, -EPERM, "%s: not a regular file",
		    path);
	/* Like OpenBSD's secrecy check: a secret others can read is no
	 * secret, and one others can write is not ours. */
	if (sb.st_uid != 0 && sb.st_uid != geteuid())
		return lh_err_set(err, 0, -EPERM,
		    "%s: owned by uid %u, must be root or uid %u", path,
		    (unsigned)sb.st_uid, (unsigned)geteuid());
	if ((sb.st_mode & (S_IRWXG | S_IRWXO)) != 0)
		return lh_err_set(err, 0, -EPERM,
		    "%s: mode %04o gives group or other access, must be 0600 "
		    "or stricter",
		    path, (unsigned)(sb.st_mode & 07777));
	return 0;
}

int
keyfile_load(const char *path, struct keyring *ring, struct lh_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd, rc;

	ring->n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return lh_err_set(err, 0, -errno, "%s: %s", path,
		    strerror(errno));
	rc = keyfile_secret(fd, path, err);
	if (rc < 0)
		goto out;
	/* One byte more than allowed, to tell "exactly full" from "too
	 * large". */
	buf = malloc(KEYFILE_MAX_LEN + 1);
	if (buf == NULL) {
		rc = lh_err_set(err, 0, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	while ((n = read(fd, buf + len, KEYFILE_MAX_LEN + 1 - len)) > 0) {
		len += (size_t)n;
		if (len > KEYFILE_MAX_LEN) {
			rc = lh_err_set(err, 0, -EFBIG,
			    "%s: larger than %zu bytes", path, KEYFILE_MAX_LEN);
			goto out;
		}
	}
	if (n < 0) {
		rc =
		    lh_err_set(err, 0, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	rc = keyring_parse(ring, buf, len, err);
	if (rc < 0 && err != NULL) {
		char reason[LH_ERR_REASON_MAX];

		memcpy(reason, err->reason, sizeof(reason));
		(void)lh_err_set(err, err->line, rc, "%s: %s", path, reason);
	}
out:
	if (buf != NULL) {
		lh_cleanse(buf, KEYFILE_MAX_LEN + 1);
		free(buf);
	}
	(void)close(fd);
	return rc;
}
