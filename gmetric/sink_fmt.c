/* SPDX-License-Identifier: BSD-2-Clause */
/* A value as the text sent to gmond (see sink_fmt.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sink_fmt.h"

/*
 * Below this, v * 100 is under 2^51: every half-integer near it is a
 * double, so rounding the product is rounding the exact v * 100 except
 * when the product lands on a half-integer (see round_cents()).
 */
#define SINKFMT_FAST_MAX 1e13

/*
 * a * 100 (a >= 0, below SINKFMT_FAST_MAX) rounded to an integer as printf
 * rounds the exact value: to nearest, ties to even.  The rounded product p
 * is on the same side of every half-integer as the exact one, unless p is
 * itself a half-integer; then fma() gives the exact product's error, whose
 * sign decides, and only an exact tie goes to even (rint()).
 */
static uint64_t
round_cents(double a)
{
	double p = a * 100.0, f = floor(p);

	if (p - f == 0.5) {
		double err = fma(a, 100.0, -p);

		if (err > 0)
			return (uint64_t)f + 1;
		if (err < 0)
			return (uint64_t)f;
	}
	return (uint64_t)rint(p);
}

size_t
sinkfmt_value(char *buf, double v)
{
	char tmp[SINKFMT_MAX];
	double a = fabs(v);
	uint64_t cents;
	size_t n = 0, i;

	if (a < 0.005) {
		memcpy(buf, "0.00", 5); /* never "-0.00" */
		return 4;
	}
	if (!(a < SINKFMT_FAST_MAX)) {
		int len =
		    snprintf(buf, SINKFMT_MAX, a < 1e15 ? "%.2f" : "%.6e", v);

		return len > 0 ? (size_t)len : 0;
	}
	cents = round_cents(a);
	/* The digits backwards into tmp: two decimals, '.', the rest. */
	tmp[n++] = (char)('0' + cents % 10);
	tmp[n++] = (char)('0' + cents / 10 % 10);
	tmp[n++] = '.';
	cents /= 100;
	do {
		tmp[n++] = (char)('0' + cents % 10);
		cents /= 10;
	} while (cents > 0);
	if (v < 0)
		tmp[n++] = '-';
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return n;
}
