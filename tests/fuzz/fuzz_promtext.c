/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target: the Prometheus text writer's escaping.  The input,
 * cut at its first NUL, is a label value and a HELP text; the page
 * written must be three lines (HELP, TYPE, the sample), and reading the
 * label value's escapes back must give the input again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "promtext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The quoted label value starting at s (after its '"'), unescaped into
 * out; returns where it ends (its closing '"'), or NULL. */
static const char *
unescape(const char *s, char *out)
{
	for (; *s != '"'; s++) {
		if (*s == '\0' || *s == '\n')
			return NULL;
		if (*s != '\\') {
			*out++ = *s;
			continue;
		}
		s++;
		if (*s == 'n')
			*out++ = '\n';
		else if (*s == '\\' || *s == '"')
			*out++ = *s;
		else
			return NULL;
	}
	*out = '\0';
	return s;
}

static void
check(const char *page, size_t n, const char *v)
{
	const char *sample, *end;
	char *back = malloc(n + 1);
	size_t lines = 0;

	if (back == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		lines += page[i] == '\n';
	if (lines != 3 || page[n - 1] != '\n')
		abort();
	sample = strstr(page, "\nm{l=\"");
	if (sample == NULL || strchr(sample + 1, '\n') != page + n - 1)
		abort();
	end = unescape(sample + 6, back);
	if (end == NULL || strcmp(back, v) != 0 || strcmp(end, "\"} 1\n") != 0)
		abort();
	free(back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const k[] = {"l"};
	char *s = malloc(size + 1), *page;
	const char *v[1];
	struct promtext p;
	size_t n;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	v[0] = s;
	promtext_init(&p);
	promtext_family(&p, "m", "gauge", s);
	promtext_gauge(&p, "m", k, v, 1, 1);
	page = promtext_take(&p, &n);
	if (page != NULL)
		check(page, n, s);
	free(page);
	free(s);
	return 0;
}
