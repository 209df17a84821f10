/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Splitter for what "lctl get_param PATTERN" prints: a sequence of blocks,
 * each "param=" followed by the value on the next lines, or, for a short
 * one-line value, "param=value" on one line (lustre_cfg.c read_param()).
 * Empty files print nothing at all.  Used to read captures and to test the
 * stats parser on real lctl output; the daemon reads the files directly.
 */
#ifndef LH_LCTLOUT_H
#define LH_LCTLOUT_H

#include <stddef.h>

struct lh_err;

struct lctl_block {
	const char *param; /* e.g. obdfilter.fs-OST0000.exports.0@lo.stats */
	size_t param_len;
	const char *value;   /* starts after '=', may be empty */
	size_t value_len;    /* ends where the next block starts */
	unsigned line;       /* 1-based line of the "param=" line */
	unsigned value_line; /* line the value starts on */
};

/*
 * Next block of buf[0..len) at or after *pos (start with *pos = 0 and
 * *lineno = 0).  Returns 1 and fills ret, 0 at the end, or -EBADMSG when
 * text comes before the first "param=" line.
 */
int lctlout_next(const char *buf, size_t len, size_t *pos, unsigned *lineno,
    struct lctl_block *ret, struct lh_err *err);

#endif
