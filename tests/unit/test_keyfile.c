/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The key file: what a line is, which files are refused and why, and the
 * key ids.  The expected ids were computed in the shell with
 * `printf %s KEY | sha256sum` (first 8 hex digits).
 */
#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "keyfile.h"
#include "testutil.h"

#define K_HORSE "correct horse battery staple, 2026" /* 0764a776 */
#define K_HEX32 "0123456789abcdef0123456789abcdef"   /* 3eb1bd43 */
#define K_B64   "c2VjcmV0LWtleS1mb3ItbGhhcnZlc3Rk"   /* e08f5678 */
#define K_NEW   "new-key-2024-rotation-0123456789ab" /* a564cd37 */
#define K_OLD   "old-key-2019-original-0123456789ab" /* 121e4292 */

#define ID_HORSE 0x0764a776u
#define ID_HEX32 0x3eb1bd43u
#define ID_B64   0xe08f5678u
#define ID_NEW   0xa564cd37u
#define ID_OLD   0x121e4292u
#define ID_K1024 0xfb236ae2u /* 1024 times 'k' */

static void
assert_key(const struct keyring *ring, size_t i, const char *key, uint32_t id)
{
	ck_assert_uint_gt(ring->n, i);
	ck_assert_uint_eq(ring->keys[i].len, strlen(key));
	ck_assert_msg(memcmp(ring->keys[i].bytes, key, strlen(key)) == 0,
	    "key %zu is not \"%s\"", i, key);
	ck_assert_msg(ring->keys[i].id == id, "key %zu id %08x, expected %08x",
	    i, ring->keys[i].id, id);
}

START_TEST(key_ids)
{
	char k1024[KEY_MAX_LEN];

	memset(k1024, 'k', sizeof(k1024));
	ck_assert_uint_eq(keyring_key_id((const uint8_t *)K_HORSE,
	                      strlen(K_HORSE)),
	    ID_HORSE);
	ck_assert_uint_eq(keyring_key_id((const uint8_t *)K_HEX32, 32),
	    ID_HEX32);
	ck_assert_uint_eq(keyring_key_id((const uint8_t *)K_B64, strlen(K_B64)),
	    ID_B64);
	ck_assert_uint_eq(keyring_key_id((const uint8_t *)k1024, sizeof(k1024)),
	    ID_K1024);
}
END_TEST

struct parse_ok {
	const char *what;
	const char *text;
	size_t n;
	const char *keys[3];
	uint32_t ids[3];
};

static const struct parse_ok parse_oks[] = {
    {"one key", K_HORSE "\n", 1, {K_HORSE}, {ID_HORSE}},
    {"no final newline", K_HORSE, 1, {K_HORSE}, {ID_HORSE}},
    {"whitespace around", " \t" K_HORSE " \t\r\n", 1, {K_HORSE}, {ID_HORSE}},
    {"CRLF", K_NEW "\r\n" K_OLD "\r\n", 2, {K_NEW, K_OLD}, {ID_NEW, ID_OLD}},
    {"comments and blanks",
        "# lharvestd shared secret\n\n" K_NEW "\n\n   \t\n# old one, "
        "drop after the rollout\n" K_OLD "\n#\n",
        2, {K_NEW, K_OLD}, {ID_NEW, ID_OLD}},
    {"exactly 32 bytes", K_HEX32 "\n", 1, {K_HEX32}, {ID_HEX32}},
    {"base64 used as it is", K_B64 "\n" K_HEX32 "\n" K_HORSE "\n", 3,
        {K_B64, K_HEX32, K_HORSE}, {ID_B64, ID_HEX32, ID_HORSE}},
};

START_TEST(parse_good)
{
	const struct parse_ok *c = &parse_oks[_i];
	struct keyring ring;
	struct lh_err err;
	size_t i;

	memset(&ring, 0, sizeof(ring));
	lh_err_clear(&err);
	ck_assert_msg(keyring_parse(&ring, c->text, strlen(c->text), &err) == 0,
	    "%s: %s", c->what, err.reason);
	ck_assert_uint_eq(ring.n, c->n);
	for (i = 0; i < c->n; i++)
		assert_key(&ring, i, c->keys[i], c->ids[i]);
	for (i = 0; i < c->n; i++)
		ck_assert_ptr_eq(keyring_find(&ring, c->ids[i]), &ring.keys[i]);
	ck_assert_ptr_null(keyring_find(&ring, 0x12345678u));
	keyring_clear(&ring);
	ck_assert_uint_eq(ring.n, 0);
	ck_assert_ptr_null(keyring_find(&ring, c->ids[0]));
	/* The ring can be used again. */
	ck_assert_int_eq(keyring_parse(&ring, c->text, strlen(c->text), NULL),
	    0);
	ck_assert_uint_eq(ring.n, c->n);
	keyring_clear(&ring);
}
END_TEST

/* The longest key, and the most keys. */
START_TEST(parse_limits)
{
	char *text = malloc(KEYRING_MAX * 40 + KEY_MAX_LEN + 64);
	struct keyring ring;
	size_t len = 0;
	int i;

	ck_assert_ptr_nonnull(text);
	memset(&ring, 0, sizeof(ring));
	memset(text, 'k', KEY_MAX_LEN);
	text[KEY_MAX_LEN] = '\n';
	ck_assert_int_eq(keyring_parse(&ring, text, KEY_MAX_LEN + 1, NULL), 0);
	ck_assert_uint_eq(ring.n, 1);
	ck_assert_uint_eq(ring.keys[0].len, KEY_MAX_LEN);
	ck_assert_uint_eq(ring.keys[0].id, ID_K1024);
	keyring_clear(&ring);

	for (i = 0; i < KEYRING_MAX; i++)
		len += (size_t)snprintf(text + len, 40,
		    "key-number-%02d-of-16-0123456789ab\n", i);
	ck_assert_int_eq(keyring_parse(&ring, text, len, NULL), 0);
	ck_assert_uint_eq(ring.n, KEYRING_MAX);
	ck_assert_uint_eq(ring.keys[KEYRING_MAX - 1].len, 32);
	ck_assert(memcmp(ring.keys[KEYRING_MAX - 1].bytes,
	              "key-number-15-of-16-0123456789ab", 32) == 0);
	keyring_clear(&ring);
	free(text);
}
END_TEST

struct parse_bad {
	const char *what;
	const char *text;   /* NULL: built by the test */
	const char *secret; /* must not appear in the reason */
};

static const struct parse_bad parse_bads[] = {
    {"empty file", "", NULL},
    {"only comments and blanks", "# nothing yet\n\n  \n#\n", NULL},
    {"15 bytes", "0123456789abcde\n", "0123456789abcde"},
    /* Issue 15, item 6: what was the minimum before is too short now. */
    {"16 bytes", "0123456789abcdef\n", "0123456789abcdef"},
    {"31 bytes", "0123456789abcdef0123456789abcde\n",
        "0123456789abcdef0123456789abcde"},
    {"31 bytes after stripping", "  0123456789abcdef0123456789abcde \t\r\n",
        "0123456789abcdef0123456789abcde"},
    {"short after a good one", K_HORSE "\nshort-key\n", "short-key"},
    {"short after stripping", "  0123456789abcde  \n", "0123456789abcde"},
    {"1025 bytes", NULL, NULL},
    {"17 keys", NULL, NULL},
};

START_TEST(parse_rejects)
{
	const struct parse_bad *c = &parse_bads[_i];
	char *text = NULL;
	const char *t = c->text;
	struct keyring ring;
	struct lh_err err;
	int i;

	if (t == NULL) {
		size_t len = 0;

		text = malloc(64 * 1024);
		ck_assert_ptr_nonnull(text);
		if (strcmp(c->what, "1025 bytes") == 0) {
			memset(text, 'k', KEY_MAX_LEN + 1);
			len = KEY_MAX_LEN + 1;
		} else {
			for (i = 0; i < KEYRING_MAX + 1; i++)
				len += (size_t)snprintf(text + len, 40,
				    "key-number-%02d-of-17-0123456789ab\n", i);
		}
		text[len] = '\0';
		t = text;
	}
	memset(&ring, 0, sizeof(ring));
	lh_err_clear(&err);
	ck_assert_msg(keyring_parse(&ring, t, strlen(t), &err) < 0,
	    "%s: accepted", c->what);
	ck_assert_msg(err.reason[0] != '\0', "%s: no reason", c->what);
	ck_assert_msg(strchr(err.reason, '\n') == NULL, "%s: reason \"%s\"",
	    c->what, err.reason);
	if (c->secret != NULL)
		ck_assert_msg(strstr(err.reason, c->secret) == NULL,
		    "%s: the reason \"%s\" shows the key", c->what, err.reason);
	ck_assert_uint_eq(ring.n, 0);
	keyring_clear(&ring);
	free(text);
}
END_TEST

/* A short key's line says how to make a good one (issue 15, item 6). */
START_TEST(short_key_advice)
{
	const char *t = "# site key\n0123456789abcdef0123456789abcde\n";
	struct keyring ring;
	struct lh_err err;

	memset(&ring, 0, sizeof(ring));
	lh_err_clear(&err);
	ck_assert_int_eq(keyring_parse(&ring, t, strlen(t), &err), -EINVAL);
	ck_assert_msg(strstr(err.reason, "line 2: key is 31 bytes") != NULL &&
	        strstr(err.reason, "openssl rand -base64 32") != NULL,
	    "reason \"%s\"", err.reason);
}
END_TEST

/* ---- keyfile_load on real files ----------------------------------- */

static char tmpdir[64];

static void
tmp_setup(void)
{
	(void)snprintf(tmpdir, sizeof(tmpdir), "/tmp/lh_keyfile.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static int
rm_cb(const char *path, const struct stat *sb, int type, struct FTW *f)
{
	(void)sb;
	(void)type;
	(void)f;
	return remove(path);
}

static void
tmp_teardown(void)
{
	(void)nftw(tmpdir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
}

/* Write text to a new file in tmpdir with the given mode. */
static const char *
write_key(const char *name, const char *text, mode_t mode)
{
	static char path[128];
	FILE *f;

	(void)snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
	return path;
}

START_TEST(load_ok)
{
	static const mode_t modes[] = {0600, 0400};
	struct keyring ring;
	struct lh_err err;
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *path = write_key("key",
		    "# secret\n" K_NEW "\n" K_OLD "\n", modes[i]);

		memset(&ring, 0, sizeof(ring));
		lh_err_clear(&err);
		ck_assert_msg(keyfile_load(path, &ring, &err) == 0,
		    "mode %04o: %s", (unsigned)modes[i], err.reason);
		ck_assert_uint_eq(ring.n, 2);
		assert_key(&ring, 0, K_NEW, ID_NEW);
		assert_key(&ring, 1, K_OLD, ID_OLD);
		keyring_clear(&ring);
		ck_assert_int_eq(unlink(path), 0);
	}
}
END_TEST

static const mode_t bad_modes[] = {0640, 0604, 0620, 0602, 0660, 0644, 0666,
    0610, 0601, 0700 | 0007};

START_TEST(load_bad_mode)
{
	mode_t mode = bad_modes[_i];
	const char *path = write_key("key", K_HORSE "\n", mode);
	struct keyring ring;
	struct lh_err err;

	memset(&ring, 0, sizeof(ring));
	lh_err_clear(&err);
	ck_assert_msg(keyfile_load(path, &ring, &err) == -EPERM,
	    "mode %04o not refused with -EPERM", (unsigned)mode);
	ck_assert_msg(strstr(err.reason, path) != NULL,
	    "mode %04o: reason \"%s\" does not name %s", (unsigned)mode,
	    err.reason, path);
	ck_assert_msg(strlen(err.reason) > strlen(path) + 2,
	    "mode %04o: reason \"%s\" says nothing", (unsigned)mode,
	    err.reason);
	ck_assert_msg(strchr(err.reason, '\n') == NULL,
	    "mode %04o: reason has a newline", (unsigned)mode);
	ck_assert_msg(strstr(err.reason, K_HORSE) == NULL,
	    "the reason shows the key");
	ck_assert_uint_eq(ring.n, 0);
}
END_TEST

START_TEST(load_missing)
{
	char path[128];
	struct keyring ring;
	struct lh_err err;

	(void)snprintf(path, sizeof(path), "%s/no-such-key", tmpdir);
	memset(&ring, 0, sizeof(ring));
	lh_err_clear(&err);
	ck_assert_int_eq(keyfile_load(path, &ring, &err), -ENOENT);
	ck_assert_msg(strstr(err.reason, path) != NULL,
	    "reason \"%s\" does not name the file", err.reason);
	ck_assert_uint_eq(ring.n, 0);
}
END_TEST

START_TEST(load_bad_content)
{
	const char *path = write_key("key", "too-short\n", 0600);
	struct keyring ring;
	struct lh_err err;

	memset(&ring, 0, sizeof(ring));
	lh_err_clear(&err);
	ck_assert_int_lt(keyfile_load(path, &ring, &err), 0);
	ck_assert_msg(strstr(err.reason, path) != NULL,
	    "reason \"%s\" does not name the file", err.reason);
	ck_assert_uint_eq(ring.n, 0);

	/* A directory is not a key file. */
	lh_err_clear(&err);
	ck_assert_int_lt(keyfile_load(tmpdir, &ring, &err), 0);
	ck_assert(err.reason[0] != '\0');
	ck_assert_uint_eq(ring.n, 0);
}
END_TEST

START_TEST(load_too_big)
{
	char *text = malloc(KEYFILE_MAX_LEN + 2);
	const char *path;
	struct keyring ring;
	struct lh_err err;

	ck_assert_ptr_nonnull(text);
	/* A valid key followed by comments, one byte over the limit. */
	memset(text, '#', KEYFILE_MAX_LEN + 1);
	memcpy(text, K_HORSE "\n", sizeof(K_HORSE));
	text[KEYFILE_MAX_LEN + 1] = '\0';
	path = write_key("big", text, 0600);
	memset(&ring, 0, sizeof(ring));
	lh_err_clear(&err);
	ck_assert_int_lt(keyfile_load(path, &ring, &err), 0);
	ck_assert(err.reason[0] != '\0');
	ck_assert_uint_eq(ring.n, 0);
	free(text);
}
END_TEST

START_TEST(load_other_owner)
{
	const char *path = write_key("key", K_HORSE "\n", 0600);
	struct keyring ring;
	struct lh_err err;

	if (geteuid() != 0) {
		(void)printf("load_other_owner: not root, skipped\n");
		return;
	}
	ck_assert_int_eq(chown(path, 65534, 65534), 0);
	memset(&ring, 0, sizeof(ring));
	lh_err_clear(&err);
	ck_assert_int_eq(keyfile_load(path, &ring, &err), -EPERM);
	ck_assert_msg(strstr(err.reason, path) != NULL,
	    "reason \"%s\" does not name the file", err.reason);
	ck_assert_uint_eq(ring.n, 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("keyfile");
	TCase *tc = tcase_create("parse");
	TCase *tf = tcase_create("files");

	tcase_add_test(tc, key_ids);
	tcase_add_loop_test(tc, parse_good, 0,
	    sizeof(parse_oks) / sizeof(parse_oks[0]));
	tcase_add_test(tc, parse_limits);
	tcase_add_test(tc, short_key_advice);
	tcase_add_loop_test(tc, parse_rejects, 0,
	    sizeof(parse_bads) / sizeof(parse_bads[0]));
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(tf, tmp_setup, tmp_teardown);
	tcase_add_test(tf, load_ok);
	tcase_add_loop_test(tf, load_bad_mode, 0,
	    sizeof(bad_modes) / sizeof(bad_modes[0]));
	tcase_add_test(tf, load_missing);
	tcase_add_test(tf, load_bad_content);
	tcase_add_test(tf, load_too_big);
	tcase_add_test(tf, load_other_owner);
	suite_add_tcase(s, tf);
	return tu_run(s);
}
