/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: any bytes as a request target (common/web/httpreq.c).
 * Accepted, it must be what httpreq.h promises: an absolute normalised
 * path of its segments, none empty, "." or "..", none holding '/' or a
 * control character; parameters with names, each name once, found by
 * httpreq_param().  Refused, it says why and leaves nothing behind. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "httpreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
clean(const char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	}
	return 1;
}

static void
check_path(const struct httpreq *r)
{
	char want[HTTPREQ_TARGET_MAX + 2];
	size_t i, n = 0;

	if (r->nseg > HTTPREQ_SEG_MAX || r->path[0] != '/')
		abort();
	want[n++] = '/';
	for (i = 0; i < r->nseg; i++) {
		const char *s = r->seg[i];
		size_t sl = strlen(s);

		if (sl == 0 || strchr(s, '/') != NULL || !clean(s) ||
		    strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
			abort();
		if (n + sl + 1 >= sizeof(want))
			abort();
		if (i > 0)
			want[n++] = '/';
		memcpy(want + n, s, sl);
		n += sl;
	}
	want[n] = '\0';
	if (strcmp(want, r->path) != 0)
		abort();
}

static void
check_params(const struct httpreq *r)
{
	size_t i, j;

	if (r->nparam > HTTPREQ_PARAM_MAX)
		abort();
	for (i = 0; i < r->nparam; i++) {
		if (r->param[i].key[0] == '\0' || !clean(r->param[i].key) ||
		    !clean(r->param[i].value) ||
		    httpreq_param(r, r->param[i].key) != r->param[i].value)
			abort();
		for (j = 0; j < i; j++) {
			if (strcmp(r->param[i].key, r->param[j].key) == 0)
				abort();
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct httpreq r;
	struct lh_err err;

	lh_err_clear(&err);
	if (httpreq_parse((const char *)data, size, &r, &err) != 0) {
		if (err.reason[0] == '\0' || r.nseg != 0 || r.nparam != 0)
			abort();
		return 0;
	}
	if (size > HTTPREQ_TARGET_MAX)
		abort();
	check_path(&r);
	check_params(&r);
	return 0;
}
