/* SPDX-License-Identifier: BSD-2-Clause */
/* The Prometheus text format writer (promtext.h): the buffer, families,
 * labels and samples.  Number formatting is in promtext_num.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "promtext.h"

void
promtext_init(struct promtext *p)
{
	memset(p, 0, sizeof(*p));
}

void
promtext_free(struct promtext *p)
{
	free(p->buf);
	promtext_init(p);
}

void
promtext_clear(struct promtext *p)
{
	p->len = 0;
	p->failed = false;
}

int
promtext_reserve(struct promtext *p, size_t n)
{
	char *b;

	if (p->failed)
		return -ENOMEM;
	if (p->cap - p->len > n)
		return 0; /* one byte kept for promtext_take()'s NUL */
	if (p->len > SIZE_MAX - n - 1 ||
	    (b = array_reserve(p->buf, &p->cap, p->len + n + 1, 1)) == NULL) {
		p->failed = true;
		return -ENOMEM;
	}
	p->buf = b;
	return 0;
}

char *
promtext_take(struct promtext *p, size_t *ret_len)
{
	char *b;

	*ret_len = 0;
	if (promtext_reserve(p, 0) < 0) {
		promtext_free(p);
		return NULL;
	}
	b = p->buf;
	b[p->len] = '\0';
	*ret_len = p->len;
	promtext_init(p);
	return b;
}

void
promtext_raw(struct promtext *p, const char *s, size_t n)
{
	if (promtext_reserve(p, n) < 0)
		return;
	memcpy(p->buf + p->len, s, n);
	p->len += n;
}

void
promtext_str(struct promtext *p, const char *s)
{
	promtext_raw(p, s, strlen(s));
}

/* s with the characters of special replaced by their escapes: a label
 * value escapes '\\', '"' and '\n'; HELP text '\\' and '\n'. */
static void
put_escaped(struct promtext *p, const char *s, const char *special)
{
	while (*s != '\0') {
		size_t run = strcspn(s, special);

		promtext_raw(p, s, run);
		s += run;
		if (*s == '\0')
			break;
		promtext_raw(p,
		    *s == '\n'    ? "\\n" :
		        *s == '"' ? "\\\"" :
		                    "\\\\",
		    2);
		s++;
	}
}

void
promtext_family(struct promtext *p, const char *name, const char *type,
    const char *help)
{
	promtext_raw(p, "# HELP ", 7);
	promtext_str(p, name);
	promtext_raw(p, " ", 1);
	put_escaped(p, help, "\\\n");
	promtext_raw(p, "\n# TYPE ", 8);
	promtext_str(p, name);
	promtext_raw(p, " ", 1);
	promtext_str(p, type);
	promtext_raw(p, "\n", 1);
}

void
promtext_label_value(struct promtext *p, const char *v)
{
	put_escaped(p, v, "\\\"\n");
}

void
promtext_labels(struct promtext *p, const char *const *keys,
    const char *const *values, size_t n)
{
	size_t i;

	if (n == 0)
		return;
	promtext_raw(p, "{", 1);
	for (i = 0; i < n; i++) {
		if (i > 0)
			promtext_raw(p, ",", 1);
		promtext_str(p, keys[i]);
		promtext_raw(p, "=\"", 2);
		promtext_label_value(p, values[i]);
		promtext_raw(p, "\"", 1);
	}
	promtext_raw(p, "}", 1);
}

/* name labels ' ' value '\n', with one reservation for the lot. */
static void
put_sample(struct promtext *p, const char *name, size_t nlen,
    const char *labels, size_t llen, const char *val, size_t vlen)
{
	char *o;

	if (promtext_reserve(p, nlen + llen + vlen + 2) < 0)
		return;
	o = p->buf + p->len;
	memcpy(o, name, nlen);
	o += nlen;
	if (llen > 0) /* labels may be NULL then */
		memcpy(o, labels, llen);
	o += llen;
	*o++ = ' ';
	memcpy(o, val, vlen);
	o += vlen;
	*o++ = '\n';
	p->len = (size_t)(o - p->buf);
}

void
promtext_sample_u64(struct promtext *p, const char *name, size_t nlen,
    const char *labels, size_t llen, uint64_t v)
{
	char num[PROMTEXT_U64_MAX] = {0};

	put_sample(p, name, nlen, labels, llen, num, promtext_fmt_u64(num, v));
}

void
promtext_sample_double(struct promtext *p, const char *name, size_t nlen,
    const char *labels, size_t llen, double v)
{
	char num[PROMTEXT_DOUBLE_MAX] = {0};

	put_sample(p, name, nlen, labels, llen, num,
	    promtext_fmt_double(num, v));
}

void
promtext_gauge(struct promtext *p, const char *name, const char *const *keys,
    const char *const *values, size_t n, double v)
{
	char num[PROMTEXT_DOUBLE_MAX] = {0};

	promtext_str(p, name);
	promtext_labels(p, keys, values, n);
	promtext_raw(p, " ", 1);
	promtext_raw(p, num, promtext_fmt_double(num, v));
	promtext_raw(p, "\n", 1);
}

static bool
name_char(char c, bool first, bool colon)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    (colon && c == ':') || (!first && c >= '0' && c <= '9');
}

static bool
name_ok(const char *s, bool colon)
{
	size_t i;

	if (s[0] == '\0')
		return false;
	for (i = 0; s[i] != '\0'; i++) {
		if (!name_char(s[i], i == 0, colon))
			return false;
	}
	return true;
}

bool
promtext_name_ok(const char *s)
{
	return name_ok(s, true);
}

bool
promtext_label_name_ok(const char *s)
{
	return name_ok(s, false) && strncmp(s, "__", 2) != 0;
}
