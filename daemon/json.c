/* SPDX-License-Identifier: BSD-2-Clause */
/* JSON string output. */
#include "json.h"

void
json_str(FILE *out, const char *s)
{
	(void)fputc('"', out);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			(void)fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			(void)fprintf(out, "\\u%04x", ch);
		else
			(void)fputc(ch, out);
	}
	(void)fputc('"', out);
}
