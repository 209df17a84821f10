/* SPDX-License-Identifier: BSD-2-Clause */
/* Opening libganglia at run time: the real one, a missing one, and a
 * library that is not libganglia. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "err.h"
#include "gapi.h"
#include "testutil.h"

START_TEST(loads_the_real_library)
{
	struct gapi api;
	struct lh_err err;

	memset(&api, 0, sizeof(api));
	ck_assert_msg(gapi_load(&api, gapi_soname, &err) == 0, "%s",
	    err.reason);
	ck_assert(api.pool_create != NULL);
	ck_assert(api.value_send != NULL);
	ck_assert(api.metric_destroy != NULL);
}
END_TEST

START_TEST(a_missing_library_says_so)
{
	struct gapi api;
	struct lh_err err;

	ck_assert_int_eq(gapi_load(&api, "libganglia-nowhere.so.0", &err),
	    -ENOENT);
	ck_assert_ptr_nonnull(strstr(err.reason,
	    "cannot load libganglia (libganglia-nowhere.so.0)"));
	ck_assert_ptr_nonnull(strstr(err.reason, "is libganglia1 installed?"));
}
END_TEST

START_TEST(another_library_is_refused)
{
	struct gapi api;
	struct lh_err err;

	ck_assert_int_eq(gapi_load(&api, "libc.so.6", &err), -ENOENT);
	ck_assert_str_eq(err.reason,
	    "libc.so.6 has no Ganglia_pool_create: "
	    "not a libganglia this version knows");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gapi");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, loads_the_real_library);
	tcase_add_test(tc, a_missing_library_says_so);
	tcase_add_test(tc, another_library_is_refused);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
