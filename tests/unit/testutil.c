/* SPDX-License-Identifier: BSD-2-Clause */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

char *
tu_read_file(const char *path, size_t *ret_len)
{
	size_t cap = 4096, len = 0, n;
	char *buf = malloc(cap + 1);
	FILE *f = fopen(path, "rb");

	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_ptr_nonnull(buf);
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			ck_assert_ptr_nonnull(buf);
		}
	}
	(void)fclose(f);
	buf[len] = '\0';
	*ret_len = len;
	return buf;
}

const char *
tu_fixture(const char *rel)
{
	static char path[4096];

	(void)snprintf(path, sizeof(path), "%s/%s", LH_FIXTURE_DIR, rel);
	return path;
}

int
tu_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
