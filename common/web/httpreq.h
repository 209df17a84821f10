/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A request target ("/v1/hosts?fs=scratch&sort=write&limit=20") made into
 * a path of decoded segments and a list of decoded query parameters, with
 * limits, refusing what no honest client sends: a path that is not
 * absolute, "." or ".." segments, percent-encoded NUL, '/' or control
 * characters, a malformed escape, too many segments or parameters, a
 * parameter given twice.  Pure (no allocation: everything lives in the
 * struct), so the fuzz target (tests/fuzz/fuzz_httpreq.c) runs it alone.
 */
#ifndef LH_HTTPREQ_H
#define LH_HTTPREQ_H

#include <stddef.h>

#define HTTPREQ_TARGET_MAX 2048 /* bytes of the whole target */
#define HTTPREQ_SEG_MAX    8    /* path segments */
#define HTTPREQ_PARAM_MAX  16   /* query parameters */

struct lh_err;

struct httpreq_param {
	const char *key;   /* decoded, never empty */
	const char *value; /* decoded; "" for "?key" or "?key=" */
};

struct httpreq {
	/* "/v1/hosts/node1" as seg[] = {"v1", "hosts", "node1"}; "/" has
	 * none.  A trailing '/' is ignored. */
	const char *seg[HTTPREQ_SEG_MAX];
	size_t nseg;
	char path[HTTPREQ_TARGET_MAX + 1]; /* normalised: "/v1/hosts/node1" */
	struct httpreq_param param[HTTPREQ_PARAM_MAX];
	size_t nparam;
	char buf[HTTPREQ_TARGET_MAX + 1]; /* the decoded strings */
};

/* Parse target (n bytes, no NUL needed).  Returns 0, or -EINVAL with err
 * saying why in a few words (for a 400's message). */
int httpreq_parse(const char *target, size_t n, struct httpreq *ret,
    struct lh_err *err);

/* The value of key, or NULL when it was not given. */
const char *httpreq_param(const struct httpreq *r, const char *key);

/* The parameters not in known (NULL-terminated): the first one, or NULL.
 * A handler refuses it with a 400 rather than ignore a typo. */
const char *httpreq_unknown(const struct httpreq *r, const char *const *known);

#endif
