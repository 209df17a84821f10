/* SPDX-License-Identifier: BSD-2-Clause */
/* Reason text for errors found in code that does not log. */
#include <stdarg.h>
#include <stdio.h>

#include "err.h"

void
lh_err_clear(struct lh_err *err)
{
	if (err == NULL)
		return;
	err->line = 0;
	err->reason[0] = '\0';
}

int
lh_err_set(struct lh_err *err, unsigned line, int code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return code;
	err->line = line;
	va_start(ap, fmt);
	(void)vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
	va_end(ap);
	return code;
}
