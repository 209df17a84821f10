/* SPDX-License-Identifier: BSD-2-Clause */
/* Human units for lharvest (binary prefixes for bytes, k/M for counts). */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "lharvest.h"

static void
scaled(char *buf, size_t size, double v, const char *const *unit, size_t nunit,
    double step, const char *suffix)
{
	size_t u = 0;

	if (!(v > 0) || !isfinite(v))
		v = 0;
	while (v >= step && u + 1 < nunit) {
		v /= step;
		u++;
	}
	if (u == 0)
		(void)snprintf(buf, size, "%.0f%s%s", v, unit[0], suffix);
	else
		(void)snprintf(buf, size, "%.*f%s%s",
		    v < 10      ? 2 :
		        v < 100 ? 1 :
		                  0,
		    v, unit[u], suffix);
}

void
units_rate(char *buf, size_t size, double bytes_per_s)
{
	static const char *const u[] = {" B", " KiB", " MiB", " GiB", " TiB"};

	scaled(buf, size, bytes_per_s, u, sizeof(u) / sizeof(u[0]), 1024, "/s");
}

void
units_bytes(char *buf, size_t size, double bytes)
{
	static const char *const u[] = {" B", " KiB", " MiB", " GiB", " TiB",
	    " PiB", " EiB"};

	scaled(buf, size, bytes, u, sizeof(u) / sizeof(u[0]), 1024, "");
}

void
units_count(char *buf, size_t size, double n)
{
	static const char *const u[] = {"", "k", "M", "G", "T", "P"};

	scaled(buf, size, n, u, sizeof(u) / sizeof(u[0]), 1000, "");
}

void
units_time(char *buf, size_t size, double t)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (t <= 0 || localtime_r(&s, &tm) == NULL) {
		(void)snprintf(buf, size, "-");
		return;
	}
	(void)strftime(buf, size, "%H:%M:%S", &tm);
}
