/* SPDX-License-Identifier: BSD-2-Clause */
/* lharvest: an answer's envelope taken apart (pure, for the fuzz target
 * tests/fuzz/fuzz_envelope.c: the bytes come from the network). */
#include <stdio.h>

#include <jansson.h>

#include "lharvest.h"

int
lhc_envelope(const char *body, size_t n, json_t **ret_data, char *msg,
    size_t msgsize)
{
	json_t *env = json_loadb(body, n, 0, NULL);
	const json_t *ok = json_object_get(env, "success");
	const json_t *m = json_object_get(env, "message");
	int ret = -1;

	if (!json_is_boolean(ok) || !json_is_string(m)) {
		ret = -2;
		goto out;
	}
	(void)snprintf(msg, msgsize, "%s", json_string_value(m));
	if (!json_is_true(ok))
		goto out;
	*ret_data = json_incref(json_object_get(env, "data"));
	if (*ret_data == NULL)
		*ret_data = json_null();
	ret = 0;
out:
	json_decref(env);
	return ret;
}
