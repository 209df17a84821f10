/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: any bytes as a hosts map file.  When the input starts
 * with 's', its first line is a rewrite rule first (real hosts files start
 * with an address or a comment, so the seeds stay realistic).  A refused
 * rule or file must say why and keep nothing; a loaded file must find
 * every address it lists, and hand out only valid host names.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hostmap.h"

/* As long as a rule may be: hostmap_add_rewrite() must refuse, before
 * regcomp() sees them, the regexes that would take glibc gigabytes or
 * seconds. */
#define FUZZ_RULE_MAX HOSTMAP_RULE_MAX

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

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

/* Every line's address of a loaded text must map to a valid name. */
static void
check_lines(const struct hostmap *m, const char *p, const char *end)
{
	char nid[256], out[HOSTMAP_NAME_MAX + 1];

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl != NULL ? nl : end, *hash, *a, *h;
		size_t alen, hlen;

		hash = memchr(p, '#', (size_t)(le - p));
		if (hash != NULL)
			le = hash;
		while (p < le && blank(*p))
			p++;
		for (a = p; p < le && !blank(*p); p++)
			;
		alen = (size_t)(p - a);
		while (p < le && blank(*p))
			p++;
		for (h = p; p < le && !blank(*p); p++)
			;
		hlen = (size_t)(p - h);
		p = nl != NULL ? nl + 1 : end;
		if (alen == 0)
			continue;
		if (alen + 6 > sizeof(nid) || hlen >= sizeof(nid))
			abort(); /* a loaded line has bounded fields */
		memcpy(nid, a, alen);
		if (memchr(a, '@', alen) != NULL)
			nid[alen] = '\0';
		else
			memcpy(nid + alen, "@tcp3", 6);
		if (hostmap_lookup(m, nid, out, sizeof(out)) != 0)
			abort();
		check_name(out);

		/* The host field as if DNS had said it. */
		memcpy(nid, h, hlen);
		nid[hlen] = '\0';
		switch (hostmap_rewrite(m, nid, out, sizeof(out))) {
		case 0:
			check_name(out);
			break;
		case -EINVAL:
			break;
		default:
			abort();
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hostmap *m = NULL;
	struct hostmap_stats st;
	struct lh_err err;
	char *buf = malloc(size > 0 ? size : 1);
	const char *text;
	size_t len = size;

	if (buf == NULL || hostmap_new(&m) < 0) {
		free(buf);
		return 0;
	}
	memcpy(buf, data, size);
	text = buf;
	if (size > 0 && buf[0] == 's') {
		const char *nl = memchr(buf, '\n', size);
		size_t rlen = nl != NULL ? (size_t)(nl - buf) : size;
		char rule[FUZZ_RULE_MAX + 1];

		if (rlen <= FUZZ_RULE_MAX && memchr(buf, '\0', rlen) == NULL) {
			memcpy(rule, buf, rlen);
			rule[rlen] = '\0';
			lh_err_clear(&err);
			if (hostmap_add_rewrite(m, rule, &err) < 0 &&
			    err.reason[0] == '\0')
				abort();
		}
		text = nl != NULL ? nl + 1 : buf + size;
		len = size - (size_t)(text - buf);
	}
	lh_err_clear(&err);
	if (hostmap_load_text(m, text, len, &err) == 0) {
		hostmap_stats(m, &st);
		if (st.ip_entries + st.nid_entries != hostmap_count(m) ||
		    st.conflicts > st.duplicates ||
		    (st.duplicates > 0) != (st.first_duplicate_line > 0))
			abort();
		check_lines(m, text, text + len);
	} else if (err.reason[0] == '\0' || err.line == 0 ||
	    strncmp(err.reason, "line ", 5) != 0 || hostmap_count(m) != 0) {
		abort(); /* every failure must say where and why, and keep
		            nothing */
	}
	hostmap_free(m);
	free(buf);
	return 0;
}
