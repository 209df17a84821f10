/* SPDX-License-Identifier: BSD-2-Clause */
/* Growth by doubling: one more element (array_grow), room for many at
 * once (array_reserve), the sizing rule alone (array_capacity), and the
 * overflow refusals that keep a caller's array intact. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "testutil.h"

START_TEST(grow_doubles_and_keeps_contents)
{
	uint32_t *v = NULL;
	size_t cap = 0, n;

	for (n = 0; n < 1000; n++) {
		uint32_t *g = array_grow(v, &cap, n, sizeof(*v));

		ck_assert_ptr_nonnull(g);
		v = g;
		v[n] = (uint32_t)n * 7;
	}
	ck_assert_uint_eq(cap, 1024); /* 64, 128, ..., 1024 */
	for (n = 0; n < 1000; n++)
		ck_assert_uint_eq(v[n], n * 7);
	/* Not full: the same array, the same capacity. */
	ck_assert_ptr_eq(array_grow(v, &cap, 1000, sizeof(*v)), v);
	ck_assert_uint_eq(cap, 1024);
	free(v);
}
END_TEST

START_TEST(capacity_rule)
{
	ck_assert_uint_eq(array_capacity(0, 0), 64);
	ck_assert_uint_eq(array_capacity(0, 64), 64);
	ck_assert_uint_eq(array_capacity(0, 65), 128);
	ck_assert_uint_eq(array_capacity(256, 5000), 8192);
	ck_assert_uint_eq(array_capacity(16, 3), 16);
	/* Doubling past SIZE_MAX: exactly what was asked for. */
	ck_assert_uint_eq(array_capacity(SIZE_MAX / 2 + 1, SIZE_MAX), SIZE_MAX);
}
END_TEST

START_TEST(reserve_grows_to_need)
{
	char *b = NULL, *r;
	size_t cap = 0;

	b = array_reserve(b, &cap, 10, 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(cap, 64);
	memcpy(b, "lharvestd", 10);
	/* Enough room: untouched. */
	ck_assert_ptr_eq(array_reserve(b, &cap, 64, 1), b);
	ck_assert_uint_eq(cap, 64);
	/* Many bytes at once: several doublings in one call. */
	r = array_reserve(b, &cap, 4097, 1);
	ck_assert_ptr_nonnull(r);
	b = r;
	ck_assert_uint_eq(cap, 8192);
	ck_assert_str_eq(b, "lharvestd");
	free(b);
}
END_TEST

START_TEST(overflow_refused_array_kept)
{
	uint64_t *v = NULL, *r;
	size_t cap = 0;

	v = array_reserve(v, &cap, 3, sizeof(*v));
	ck_assert_ptr_nonnull(v);
	v[2] = 42;
	r = array_reserve(v, &cap, SIZE_MAX / 4, sizeof(*v));
	ck_assert_ptr_null(r);
	ck_assert_uint_eq(cap, 64);
	r = array_resize(v, &cap, SIZE_MAX / 2, sizeof(*v));
	ck_assert_ptr_null(r);
	ck_assert_uint_eq(cap, 64);
	ck_assert_ptr_null(array_resize(v, &cap, 8, 0));
	ck_assert_uint_eq(v[2], 42);
	/* Exact resizing, down as well as up. */
	r = array_resize(v, &cap, 3, sizeof(*v));
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(cap, 3);
	ck_assert_uint_eq(r[2], 42);
	free(r);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("array");
	TCase *tc = tcase_create("array");

	tcase_add_test(tc, grow_doubles_and_keeps_contents);
	tcase_add_test(tc, capacity_rule);
	tcase_add_test(tc, reserve_grows_to_need);
	tcase_add_test(tc, overflow_refused_array_kept);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
