/* SPDX-License-Identifier: BSD-2-Clause */
/* Numbers for the Prometheus text format (promtext.h): integers two
 * digits at a time (a page has half a million of them), floats exactly
 * as Prometheus parses them back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "promtext.h"

static const char digits2[] = "00010203040506070809"
                              "10111213141516171819"
                              "20212223242526272829"
                              "30313233343536373839"
                              "40414243444546474849"
                              "50515253545556575859"
                              "60616263646566676869"
                              "70717273747576777879"
                              "80818283848586878889"
                              "90919293949596979899";

size_t
promtext_fmt_u64(char out[PROMTEXT_U64_MAX], uint64_t v)
{
	char tmp[PROMTEXT_U64_MAX];
	size_t i = sizeof(tmp), n;

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		tmp[--i] = digits2[d + 1];
		tmp[--i] = digits2[d];
	}
	if (v >= 10) {
		tmp[--i] = digits2[v * 2 + 1];
		tmp[--i] = digits2[v * 2];
	} else {
		tmp[--i] = (char)('0' + v);
	}
	n = sizeof(tmp) - i;
	memcpy(out, tmp + i, n);
	return n;
}

/* The shortest %.Ng (15 to 17 digits) that strtod() reads back as v. */
static size_t
fmt_shortest(char out[PROMTEXT_DOUBLE_MAX], double v)
{
	char buf[PROMTEXT_DOUBLE_MAX + 8];
	int prec, n = 0;

	for (prec = 15; prec <= 17; prec++) {
		n = snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (n > 0 && strtod(buf, NULL) == v)
			break;
	}
	if (n <= 0 || (size_t)n > PROMTEXT_DOUBLE_MAX)
		return 0; /* cannot happen: %.17g of a double fits */
	memcpy(out, buf, (size_t)n);
	return (size_t)n;
}

/* w without its NUL (the number formats have none). */
static size_t
put_word(char *out, const char *w)
{
	size_t n;

	for (n = 0; w[n] != '\0'; n++)
		out[n] = w[n];
	return n;
}

size_t
promtext_fmt_double(char out[PROMTEXT_DOUBLE_MAX], double v)
{
	if (isnan(v))
		return put_word(out, "NaN");
	if (isinf(v))
		return put_word(out, v > 0 ? "+Inf" : "-Inf");
	/* 2^53: every integer below it is exact in a double. */
	if (fabs(v) < 9007199254740992.0 && v == floor(v)) {
		if (v >= 0)
			return promtext_fmt_u64(out, (uint64_t)v);
		out[0] = '-';
		return 1 + promtext_fmt_u64(out + 1, (uint64_t)-v);
	}
	return fmt_shortest(out, v);
}
