/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How code that does not log (everything in common/) hands a human-readable
 * reason up to code that does.  A parser fills a struct lh_err and returns a
 * negative errno; the daemon prefixes the subject (file, peer, config line)
 * and logs one line.
 */
#ifndef LH_ERR_H
#define LH_ERR_H

#define LH_ERR_REASON_MAX 160

struct lh_err {
	unsigned line; /* 1-based line of the input, 0 = none */
	char reason[LH_ERR_REASON_MAX]; /* without subject or line prefix */
};

/* Clear err (NULL is fine). */
void lh_err_clear(struct lh_err *err);

/* Record a reason in err (NULL is fine) and return code, so that callers
 * can write "return lh_err_set(err, line, -EBADMSG, ...)". */
int lh_err_set(struct lh_err *err, unsigned line, int code, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

#endif
