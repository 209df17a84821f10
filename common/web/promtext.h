/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A page in the Prometheus text exposition format (version 0.0.4, what
 * `promtool check metrics` checks), written into a buffer that grows:
 * a family's "# HELP" and "# TYPE" lines, then its samples,
 * "name{label="value",...} value".  Label values are escaped (\\, \" and
 * \n), HELP text too (\\ and \n); integers and floats are formatted
 * without printf on the hot path, since the aggregator writes a page of
 * half a million samples once a sweep (docs/performance.md).
 *
 * Writing never fails halfway in a way the caller must check at every
 * call: out of memory marks the page failed, later writes do nothing,
 * and promtext_take() says so once at the end.  Pure: no I/O.
 */
#ifndef LH_PROMTEXT_H
#define LH_PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROMTEXT_U64_MAX    20 /* digits of 2^64 - 1 */
#define PROMTEXT_DOUBLE_MAX 32 /* "-1.2345678901234567e-308", "+Inf" */

struct promtext {
	char *buf;
	size_t len, cap;
	bool failed; /* out of memory: the page is lost */
};

void promtext_init(struct promtext *p);
void promtext_free(struct promtext *p);

/* Forget what was written, keep the storage (the next page). */
void promtext_clear(struct promtext *p);

/* Room for n more bytes.  Returns 0, or -ENOMEM (p failed). */
int promtext_reserve(struct promtext *p, size_t n);

/* The page, NUL-terminated (not counted in *ret_len), now the caller's
 * to free(); p is empty again.  NULL when p failed (or is empty and
 * cannot get one byte). */
char *promtext_take(struct promtext *p, size_t *ret_len);

/* n bytes of s as they are. */
void promtext_raw(struct promtext *p, const char *s, size_t n);
void promtext_str(struct promtext *p, const char *s);

/* "# HELP name help\n# TYPE name type\n"; type is "counter", "gauge",
 * "untyped" (help escaped). */
void promtext_family(struct promtext *p, const char *name, const char *type,
    const char *help);

/* v as a label value's contents (between the quotes), escaped. */
void promtext_label_value(struct promtext *p, const char *v);

/* "{k0="v0",k1="v1"}" for n labels (nothing when n is 0). */
void promtext_labels(struct promtext *p, const char *const *keys,
    const char *const *values, size_t n);

/* One sample: name, the labels as promtext_labels() wrote them (labels
 * of llen bytes; "" or NULL with 0 for none), ' ', the value, '\n'. */
void promtext_sample_u64(struct promtext *p, const char *name, size_t nlen,
    const char *labels, size_t llen, uint64_t v);
void promtext_sample_double(struct promtext *p, const char *name, size_t nlen,
    const char *labels, size_t llen, double v);

/* A sample with labels given as pairs: the slow, convenient way for the
 * few samples of a health section. */
void promtext_gauge(struct promtext *p, const char *name,
    const char *const *keys, const char *const *values, size_t n, double v);

/* v in decimal into out (no NUL); returns the length. */
size_t promtext_fmt_u64(char out[PROMTEXT_U64_MAX], uint64_t v);

/* v as Prometheus reads it back exactly: an integer when it is one (below
 * 2^53), else the shortest of %.15g..%.17g that parses back to v; "NaN",
 * "+Inf", "-Inf".  No NUL; returns the length. */
size_t promtext_fmt_double(char out[PROMTEXT_DOUBLE_MAX], double v);

/* Whether s is a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or label
 * name ([a-zA-Z_][a-zA-Z0-9_]*, not starting "__"). */
bool promtext_name_ok(const char *s);
bool promtext_label_name_ok(const char *s);

#endif
