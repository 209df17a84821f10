/* SPDX-License-Identifier: BSD-2-Clause */
/* JSON output of the JSON-lines modes (--once, lharvest-dump --listen). */
#ifndef LH_JSON_H
#define LH_JSON_H

#include <stdio.h>

/* s as a JSON string: quotes, backslashes and control characters escaped;
 * other bytes as they are (NID directory names are taken verbatim). */
void json_str(FILE *out, const char *s);

#endif
