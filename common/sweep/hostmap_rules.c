/* SPDX-License-Identifier: BSD-2-Clause */
/* The hosts map's names and rewrite rules: what a Ganglia host name may
 * be, parsing "s/REGEX/REPLACEMENT/FLAGS", and applying the rules. */
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hostmap.h"
#include "hostmap_int.h"

/* Why s cannot be a Ganglia host name, or NULL if it can. */
static const char *
name_bad(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0)
		return "empty host name";
	if (n > HOSTMAP_NAME_MAX)
		return "host name longer than 63 characters";
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= ' ' || c >= 0x7f)
			return "host name with a blank or a byte not "
			       "printable ASCII";
		if (strchr(HM_NAME_UNSAFE, c) != NULL)
			return "host name with one of \" & ' < > / : "
			       "(Ganglia cannot carry them)";
	}
	return NULL;
}

/* A bounded string being built: over is set, and the text stops
 * growing, when it would not fit. */
struct hm_buf {
	char *p;
	size_t len, size;
	bool over;
};

static void
buf_put(struct hm_buf *b, const char *s, size_t n)
{
	if (b->over || n >= b->size - b->len) {
		b->over = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
buf_put_match(struct hm_buf *b, const char *s, const regmatch_t *pm)
{
	/* An optional group that took no part in the match is empty. */
	if (pm->rm_so >= 0 && pm->rm_eo >= pm->rm_so)
		buf_put(b, s + pm->rm_so, (size_t)(pm->rm_eo - pm->rm_so));
}

/* The replacement for one match of r in s. */
static void
repl_expand(struct hm_buf *b, const struct hm_rule *r, const char *s,
    const regmatch_t *pm)
{
	const char *p;

	for (p = r->repl; *p != '\0'; p++) {
		if (*p == '&') {
			buf_put_match(b, s, &pm[0]);
		} else if (*p == '\\') {
			p++; /* the rule was checked: an escape has its char */
			if (*p >= '1' && *p <= '9')
				buf_put_match(b, s, &pm[*p - '0']);
			else
				buf_put(b, p, 1);
		} else {
			buf_put(b, p, 1);
		}
	}
}

/* One rule on in, into out.  The first match, or with "g" every match
 * as sed finds them (an empty match right after a match does not count).
 * Returns 0 or -ENAMETOOLONG. */
static int
rule_apply(const struct hm_rule *r, const char *in, char *out, size_t size)
{
	struct hm_buf b = {out, 0, size, false};
	regmatch_t pm[HM_GROUPS];
	const char *s = in;
	bool after_match = false;
	int eflags = 0;

	out[0] = '\0';
	while (regexec(&r->re, s, HM_GROUPS, pm, eflags) == 0) {
		size_t so = (size_t)pm[0].rm_so, eo = (size_t)pm[0].rm_eo;

		/* Later searches start mid-string: '^' must not match. */
		eflags = REG_NOTBOL;
		if (eo == 0 && after_match) {
			if (*s == '\0')
				break;
			buf_put(&b, s, 1);
			s++;
			after_match = false;
			continue;
		}
		buf_put(&b, s, so);
		repl_expand(&b, r, s, pm);
		if (eo > so) {
			s += eo;
			after_match = true;
		} else if (s[eo] == '\0') {
			s += eo;
			break;
		} else {
			/* Step over one character, or an empty match would
			 * be found at the same place forever. */
			buf_put(&b, s + eo, 1);
			s += eo + 1;
			after_match = false;
		}
		if (!r->global)
			break;
	}
	buf_put(&b, s, strlen(s));
	return b.over ? -ENAMETOOLONG : 0;
}

/* in through every rule into out (HM_WORK_MAX bytes), then checked.
 * Returns why the result is no host name, or NULL. */
const char *
hm_name_make(const struct hostmap *m, const char *in, char *out)
{
	char tmp[HM_WORK_MAX];
	size_t i, n = strlen(in);

	if (n >= HM_WORK_MAX)
		return "host name too long";
	memcpy(out, in, n + 1);
	for (i = 0; i < m->nrules; i++) {
		if (rule_apply(&m->rules[i], out, tmp, sizeof(tmp)) < 0)
			return "host name too long after rewriting";
		memcpy(out, tmp, strlen(tmp) + 1);
	}
	return name_bad(out);
}

/* ERE's special characters: a delimiter escaped in the regex part must
 * stay escaped to mean itself. */
#define HM_ERE_SPECIAL ".[]()*+?{}|^$"

/*
 * The rule's part from *pp to the next d not escaped, into out (at least
 * strlen(*pp) + 1 bytes: the copy never grows).  "\d" becomes a literal d;
 * other escapes are kept for regcomp() or the replacement.  Returns 0, or
 * -1 when no d ends the part.
 */
static int
rule_part(const char **pp, char d, bool regex, char *out)
{
	const char *p = *pp;
	size_t n = 0;

	for (; *p != '\0' && *p != d; p++) {
		if (*p == '\\' && p[1] == d) {
			p++;
			if ((regex && strchr(HM_ERE_SPECIAL, d) != NULL) ||
			    (!regex && d == '&'))
				out[n++] = '\\';
		} else if (*p == '\\' && p[1] != '\0') {
			out[n++] = *p++;
		}
		out[n++] = *p;
	}
	if (*p != d)
		return -1;
	out[n] = '\0';
	*pp = p + 1;
	return 0;
}

/* The replacement's escapes: \1..\9 within the regex's groups, \&, \\. */
static int
repl_check(const char *repl, size_t ngroups, struct lh_err *err)
{
	const char *p;

	for (p = repl; *p != '\0'; p++) {
		if (*p != '\\')
			continue;
		p++;
		if (*p >= '1' && *p <= '9') {
			if ((size_t)(*p - '0') > ngroups)
				return lh_err_set(err, 0, -EINVAL,
				    "rewrite rule: \\%c but the regex has %zu "
				    "group%s",
				    *p, ngroups, ngroups == 1 ? "" : "s");
		} else if (*p != '&' && *p != '\\') {
			return lh_err_set(err, 0, -EINVAL,
			    "rewrite rule: unknown escape in the replacement "
			    "(\\1-\\9, \\&, \\\\ and \\ before the delimiter "
			    "are known)");
		}
	}
	return 0;
}

static bool
delim_ok(char c)
{
	unsigned char u = (unsigned char)c;

	/* Punctuation, like sed, less the backslash (it escapes). */
	return u > ' ' && u < 0x7f && c != '\\' && !(c >= '0' && c <= '9') &&
	    !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z');
}

/* The FLAGS of a rule, from p: "i" and "g", each at most once. */
static int
rule_flags(const char *p, bool *icase, bool *global, struct lh_err *err)
{
	for (; *p != '\0'; p++) {
		if (*p == 'i' && !*icase) {
			*icase = true;
		} else if (*p == 'g' && !*global) {
			*global = true;
		} else {
			char q[8];

			return lh_err_set(err, 0, -EINVAL,
			    "rewrite rule: unknown or repeated flag '%s' (i and "
			    "g are known)",
			    hm_quote(p, 1, q, sizeof(q)));
		}
	}
	return 0;
}

/* r made from its parsed parts: the regex checked for cost, compiled,
 * and the replacement checked against its groups. */
static int
rule_compile(struct hm_rule *r, const char *re, const char *repl, bool icase,
    struct lh_err *err)
{
	const char *why;
	int rc;

	why = hm_re_check(re);
	if (why != NULL)
		return lh_err_set(err, 0, -EINVAL, "rewrite rule: regex: %s",
		    why);
	rc = regcomp(&r->re, re, REG_EXTENDED | (icase ? REG_ICASE : 0));
	if (rc != 0) {
		char msg[LH_ERR_REASON_MAX / 2];

		(void)regerror(rc, &r->re, msg, sizeof(msg));
		return lh_err_set(err, 0, -EINVAL,
		    "rewrite rule: bad regex: %s", msg);
	}
	rc = repl_check(repl, r->re.re_nsub, err);
	if (rc < 0)
		goto out_regfree;
	r->repl = strdup(repl);
	if (r->repl == NULL) {
		rc = lh_err_set(err, 0, -ENOMEM, "out of memory");
		goto out_regfree;
	}
	return 0;
out_regfree:
	regfree(&r->re);
	return rc;
}

int
hostmap_add_rewrite(struct hostmap *m, const char *rule, struct lh_err *err)
{
	struct hm_rule *r;
	char re[HOSTMAP_RULE_MAX + 1], repl[HOSTMAP_RULE_MAX + 1];
	const char *p;
	bool icase = false, global = false;
	char d;
	int rc;

	if (m->loaded)
		return lh_err_set(err, 0, -EBUSY,
		    "rewrite rules must come before the hosts map file");
	if (m->nrules == HOSTMAP_RULES_MAX)
		return lh_err_set(err, 0, -EINVAL, "more than %d rewrite rules",
		    HOSTMAP_RULES_MAX);
	if (strlen(rule) > HOSTMAP_RULE_MAX)
		return lh_err_set(err, 0, -EINVAL,
		    "rewrite rule longer than %d characters", HOSTMAP_RULE_MAX);
	if (rule[0] != 's')
		return lh_err_set(err, 0, -EINVAL,
		    "rewrite rule must read s/REGEX/REPLACEMENT/[FLAGS]");
	r = &m->rules[m->nrules];
	d = rule[1];
	if (!delim_ok(d))
		return lh_err_set(err, 0, -EINVAL,
		    "rewrite rule: the delimiter after 's' must be a "
		    "punctuation character other than \\");
	p = rule + 2;
	if (rule_part(&p, d, true, re) < 0 || rule_part(&p, d, false, repl) < 0)
		return lh_err_set(err, 0, -EINVAL,
		    "rewrite rule: unterminated, needs three '%c'", d);
	if (re[0] == '\0')
		return lh_err_set(err, 0, -EINVAL, "rewrite rule: empty regex");
	rc = rule_flags(p, &icase, &global, err);
	if (rc < 0)
		return rc;
	rc = rule_compile(r, re, repl, icase, err);
	if (rc < 0)
		return rc;
	r->global = global;
	m->nrules++;
	return 0;
}

int
hostmap_rewrite(const struct hostmap *m, const char *name, char *out,
    size_t size)
{
	char in[HM_RAW_MAX + 1], work[HM_WORK_MAX];
	size_t n = strnlen(name, HM_RAW_MAX + 2);

	/* DNS gives absolute names; Ganglia wants "node1.example.com". */
	if (n > 0 && name[n - 1] == '.')
		n--;
	if (n > HM_RAW_MAX)
		return -EINVAL;
	memcpy(in, name, n);
	in[n] = '\0';
	if (hm_name_make(m, in, work) != NULL)
		return -EINVAL;
	if (strlen(work) >= size)
		return -ENAMETOOLONG;
	memcpy(out, work, strlen(work) + 1);
	return 0;
}
