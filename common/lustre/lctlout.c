/* SPDX-License-Identifier: BSD-2-Clause */
/* Split "lctl get_param" output into (param, value) blocks. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "err.h"
#include "lctlout.h"

/* A block starts with a parameter name (no blanks, at least one dot, and
 * colons where a NID is IPv6) followed by '='.  Stats, uuid and job_stats
 * values never contain '=' before a blank, so this cannot match inside a
 * value. */
static bool
is_param_line(const char *p, const char *end, const char **ret_eq)
{
	bool dot = false;
	const char *q;

	for (q = p; q < end; q++) {
		if (*q == '=') {
			if (q == p || !dot)
				return false;
			*ret_eq = q;
			return true;
		}
		if (*q == ' ' || *q == '\t')
			return false;
		if (*q == '.')
			dot = true;
	}
	return false;
}

static bool
is_blank(const char *p, const char *end)
{
	for (; p < end; p++) {
		if (*p != ' ' && *p != '\t' && *p != '\r')
			return false;
	}
	return true;
}

static const char *
line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl != NULL ? nl : end;
}

int
lctlout_next(const char *buf, size_t len, size_t *pos, unsigned *lineno,
    struct lctl_block *ret, struct lh_err *err)
{
	const char *end = buf + len, *p = buf + *pos, *eq, *le, *vstart;
	unsigned ln = *lineno;

	/* Find the next param line; only blank lines may come before it. */
	for (;;) {
		if (p >= end)
			return 0;
		le = line_end(p, end);
		ln++;
		if (is_param_line(p, le, &eq))
			break;
		if (!is_blank(p, le))
			return lh_err_set(err, ln, -EBADMSG,
			    "line %u: value text before any 'param=' line", ln);
		p = le + 1;
	}
	ret->param = p;
	ret->param_len = (size_t)(eq - p);
	ret->line = ln;
	if (eq + 1 < le) {
		vstart = eq + 1; /* short value printed inline */
		ret->value_line = ln;
	} else {
		vstart = le < end ? le + 1 : end;
		ret->value_line = ln + 1;
	}
	/* The value runs until the next param line or the end. */
	p = le < end ? le + 1 : end;
	while (p < end) {
		const char *e2 = line_end(p, end);

		if (is_param_line(p, e2, &eq))
			break;
		ln++;
		p = e2 < end ? e2 + 1 : end;
	}
	ret->value = vstart;
	ret->value_len = (size_t)(p - vstart);
	*pos = (size_t)(p - buf);
	*lineno = ln;
	return 1;
}
