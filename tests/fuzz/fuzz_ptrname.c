/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: a name from a PTR record through the rewrite rules
 * (hostmap_rewrite(), what the aggregator does with every reverse-DNS
 * answer).  Input: lines starting with 's' are rewrite rules (at most
 * four), the rest is the name as DNS gave it, any bytes.  With no rule
 * line, two rules of the kind sites use are applied.  A name either
 * comes out as a valid Ganglia host name, the same every time, or is
 * refused with out untouched; nothing crashes or overruns.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hostmap.h"

#define FUZZ_RULES    4
#define FUZZ_NAME_MAX 1024

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > HOSTMAP_NAME_MAX)
		abort();
	for (i = 0; i < n; i++) {
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f ||
		    strchr("\"&'<>/:", s[i]) != NULL)
			abort();
	}
}

/* Rule lines off the front of the input; returns how many were added, or
 * -1 if one was refused (a refused rule is the hosts map's fuzzer's
 * business: nothing more to do here). */
static int
add_rules(struct hostmap *m, const uint8_t **p, const uint8_t *end)
{
	char rule[HOSTMAP_RULE_MAX + 1];
	struct lh_err err;
	int n = 0;

	while (n < FUZZ_RULES && *p < end && **p == 's') {
		const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
		size_t len = (size_t)((nl != NULL ? nl : end) - *p);

		if (len > HOSTMAP_RULE_MAX || memchr(*p, '\0', len) != NULL)
			return -1;
		memcpy(rule, *p, len);
		rule[len] = '\0';
		*p = nl != NULL ? nl + 1 : end;
		if (hostmap_add_rewrite(m, rule, &err) < 0) {
			if (err.reason[0] == '\0')
				abort(); /* a refusal always says why */
			return -1;
		}
		n++;
	}
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	char name[FUZZ_NAME_MAX + 1];
	char out[HOSTMAP_NAME_MAX + 1], again[HOSTMAP_NAME_MAX + 1];
	struct hostmap *m;
	struct lh_err err;
	size_t len;
	int n, rc;

	if (hostmap_new(&m) < 0)
		return 0;
	n = add_rules(m, &p, end);
	if (n == 0 &&
	    (hostmap_add_rewrite(m, "s/\\.cluster\\.example\\.org$//i", &err) <
	            0 ||
	        hostmap_add_rewrite(m, "s/-(ib|opa)[0-9]*$//", &err) < 0))
		abort(); /* the built-in rules are valid */
	len = (size_t)(end - p);
	if (n < 0 || len > FUZZ_NAME_MAX) {
		hostmap_free(m);
		return 0;
	}
	/* DNS names are C strings by the time the resolver sees them. */
	memcpy(name, p, len);
	name[len] = '\0';
	memset(out, 0x5a, sizeof(out));
	rc = hostmap_rewrite(m, name, out, sizeof(out));
	if (rc == 0) {
		check_name(out);
		if (hostmap_rewrite(m, name, again, sizeof(again)) != 0 ||
		    strcmp(out, again) != 0)
			abort(); /* the same name, the same host */
		/* A buffer one byte short of the name is refused, untouched. */
		memset(again, 0x5a, sizeof(again));
		if (hostmap_rewrite(m, name, again, strlen(out)) !=
		        -ENAMETOOLONG ||
		    (unsigned char)again[0] != 0x5a)
			abort();
	} else if (rc == -EINVAL || rc == -ENAMETOOLONG) {
		for (size_t i = 0; i < sizeof(out); i++)
			if ((unsigned char)out[i] != 0x5a)
				abort(); /* out untouched on failure */
	} else {
		abort();
	}
	hostmap_free(m);
	return 0;
}
