/* SPDX-License-Identifier: BSD-2-Clause */
/* NID -> Ganglia host: the hosts map file and the rewrite rules. */
#include <sys/stat.h>

#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "hindex.h"
#include "hostmap.h"
#include "nid.h"

#define HM_GROUPS   10   /* the whole match and \1..\9 */
#define HM_WORK_MAX 1024 /* a name between two rules */
#define HM_RAW_MAX  255  /* a name before the rules (a DNS name's limit) */
#define HM_QUOTE    32   /* characters of input quoted in a reason */
#define HM_KEY_MAX  (NID_STR_MAX + NID_NET_MAX)
#define HM_IP_MAX   INET6_ADDRSTRLEN

/* Characters that printable ASCII allows but Ganglia cannot carry: gmond
 * writes host names into XML attributes unescaped, gmetad makes them RRD
 * directory names, and a spoofed host is sent as "ip:name". */
#define HM_NAME_UNSAFE "\"&'<>/:"

enum hm_kind {
	HM_IP = 1,  /* an address, on every LNet */
	HM_NID = 2, /* one NID */
};

struct hm_entry {
	uint64_t hash;
	uint32_t key;  /* offset in pool: canonical address or NID */
	uint32_t host; /* offset in pool: the final name */
	uint8_t kind;
};

struct hm_key {
	uint64_t hash;
	const char *s;
	uint8_t kind;
};

struct hm_rule {
	regex_t re;
	char *repl; /* & \1..\9 \& \\, checked when the rule was added */
	bool global;
};

struct hostmap {
	struct hm_rule rules[HOSTMAP_RULES_MAX];
	size_t nrules;
	struct hm_entry *ent;
	size_t n, cap;
	char *pool; /* the strings of ent, NUL-terminated */
	size_t plen, pcap;
	struct hindex index; /* over ent, by (kind, key) */
	struct hostmap_stats stats;
	bool loaded;
};

int
hostmap_new(struct hostmap **ret)
{
	struct hostmap *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return -ENOMEM;
	hindex_init(&m->index);
	*ret = m;
	return 0;
}

/* Forget the entries (after a failed load), keep the rules. */
static void
entries_free(struct hostmap *m)
{
	free(m->ent);
	free(m->pool);
	hindex_free(&m->index);
	m->ent = NULL;
	m->pool = NULL;
	m->n = m->cap = m->plen = m->pcap = 0;
	memset(&m->stats, 0, sizeof(m->stats));
}

void
hostmap_free(struct hostmap *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->nrules; i++) {
		regfree(&m->rules[i].re);
		free(m->rules[i].repl);
	}
	entries_free(m);
	free(m);
}

size_t
hostmap_count(const struct hostmap *m)
{
	return m->n;
}

void
hostmap_stats(const struct hostmap *m, struct hostmap_stats *ret)
{
	*ret = m->stats;
}

/* s made fit to quote in a reason: at most HM_QUOTE characters, anything
 * not printable shown as '?', so a hostile file cannot forge log lines. */
static const char *
quote(const char *s, size_t n, char *buf, size_t size)
{
	size_t i, k = n < HM_QUOTE ? n : HM_QUOTE;

	if (k + 4 > size)
		k = size - 4;
	for (i = 0; i < k; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[i] = (char)(c >= 0x20 && c < 0x7f ? c : '?');
	}
	if (k < n) {
		memcpy(buf + k, "...", 3);
		k += 3;
	}
	buf[k] = '\0';
	return buf;
}

/* ---- names and rewrite rules --------------------------------------- */

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
static const char *
name_make(const struct hostmap *m, const char *in, char *out)
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

/*
 * glibc's regcomp() copies a repeated subexpression once per repetition
 * ("x{3}" is "xxx", "x+" is "xx*") and then computes, for every node, the
 * nodes it reaches without consuming input.  Both explode: 20 characters
 * of "a++++..." take a gigabyte, and "((a?)+){500}" takes 15 seconds,
 * which would stall the aggregator at start-up.  So before regcomp() a
 * rule's regex is refused when it stacks two repetition operators (POSIX
 * leaves "a+*" undefined anyway), repeats with + or {} something that can
 * match nothing (x* or {0,n} say the same), or makes more than
 * HM_RE_COST_MAX copies.  Optional copies cost more than that: "x{0,n}"
 * becomes n nested "(x...)?" whose closures are computed for every node,
 * so memory grows with the square of the optional copies ("i{18,4474}"
 * took 154 MB, "(i{0,255}){0,39}" 66 MB, found by the PTR-name fuzzer);
 * so they are counted apart (every copy a ?, *, + or the range of {m,n}
 * makes optional, multiplied out through nesting) and at most
 * HM_RE_OPTIONAL_MAX are allowed (1,000 optional copies take under 10 MB).
 * Back-references are refused too: POSIX ERE has none, and glibc's, which
 * backtrack, take seconds on a 77-character name with
 * "(.*)(.*)(.*)(.*)(.*)\5\4\3\2\1x".
 */
#define HM_RE_COST_MAX     10000
#define HM_RE_OPTIONAL_MAX 1000
#define HM_RE_DEPTH        32 /* nested groups */

struct hm_re_level {
	uint64_t sum;      /* copies in the group so far (every branch) */
	uint64_t last;     /* copies of its last piece */
	uint64_t opt_sum;  /* optional copies in the group so far */
	uint64_t last_opt; /* optional copies in its last piece */
	bool have_last;    /* a piece to repeat */
	bool last_quant;   /* the last thing read was a repetition */
	bool last_empty;   /* the last piece can match nothing */
	bool before_empty; /* the branch before the last piece can */
	bool branch_empty; /* the branch so far can */
	bool any_empty;    /* an earlier branch can */
};

/* The multiplier of the interval at p ("{2}", "{1,5}", "{3,}"), its end
 * into *ret_end, whether it allows 0 into *ret_zero and how many of its
 * copies are optional into *ret_opt; 0 when p is no interval (regcomp()
 * then decides). */
static uint64_t
re_interval(const char *p, const char **ret_end, bool *ret_zero,
    uint64_t *ret_opt)
{
	uint64_t lo = 0, hi = 0;
	bool comma = false, hi_digits = false;

	for (p++; *p >= '0' && *p <= '9'; p++)
		lo = lo < 100000 ? lo * 10 + (uint64_t)(*p - '0') : lo;
	if (*p == ',') {
		comma = true;
		for (p++; *p >= '0' && *p <= '9'; p++, hi_digits = true)
			hi = hi < 100000 ? hi * 10 + (uint64_t)(*p - '0') : hi;
	}
	if (*p != '}')
		return 0;
	*ret_end = p;
	*ret_zero = lo == 0;
	*ret_opt = 0;
	if (!comma)
		return lo > 0 ? lo : 1;
	if (!hi_digits) {
		*ret_opt = 1;
		return lo + 1; /* "{3,}" is three copies and a star */
	}
	*ret_opt = hi > lo ? hi - lo : 0;
	return hi > 0 ? hi : 1;
}

/* The end of the bracket expression starting at p ("[]a]", "[[:alpha:]]"). */
static const char *
re_bracket(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	for (; *p != '\0' && *p != ']'; p++) {
		if (*p == '[' && (p[1] == ':' || p[1] == '=' || p[1] == '.')) {
			const char *e = strchr(p + 2, p[1]);

			while (e != NULL && e[1] != ']')
				e = strchr(e + 1, p[1]);
			if (e == NULL)
				return p + strlen(p) - 1;
			p = e + 1;
		}
	}
	return *p == '\0' ? p - 1 : p;
}

static void
re_level_init(struct hm_re_level *t)
{
	memset(t, 0, sizeof(*t));
	t->branch_empty = true;
	t->before_empty = true;
}

/* Add a piece of cost copies, opt of them optional, which can match
 * nothing or not. */
static void
re_piece(struct hm_re_level *t, uint64_t cost, uint64_t opt, bool empty)
{
	t->before_empty = t->branch_empty;
	t->branch_empty = t->branch_empty && empty;
	t->last = cost;
	t->sum += cost;
	t->last_opt = opt;
	t->opt_sum += opt;
	t->have_last = true;
	t->last_quant = false;
	t->last_empty = empty;
}

/* Repeat the last piece mult times, opt of the copies optional; it can
 * match nothing if empty. */
static const char *
re_repeat(struct hm_re_level *t, uint64_t mult, uint64_t opt, bool empty)
{
	uint64_t last_opt;

	if (!t->have_last)
		return NULL; /* regcomp() takes it literally or refuses it */
	if (t->last_quant)
		return "two repetition operators in a row";
	if (mult > 1 && t->last_empty)
		return "+ or {} repeats what can match nothing (use * or {0,n})";
	if (mult > 1 && t->last > HM_RE_COST_MAX / mult)
		return "too complex";
	/* Both factors are bounded by HM_RE_COST_MAX here: no overflow. */
	last_opt = t->last_opt * mult + t->last * opt;
	if (t->opt_sum - t->last_opt + last_opt > HM_RE_OPTIONAL_MAX)
		return "too complex (too many optional copies: "
		       "?, *, + and {m,n} nested or with a wide range)";
	t->opt_sum += last_opt - t->last_opt;
	t->last_opt = last_opt;
	t->sum += t->last * (mult - 1);
	t->last *= mult;
	t->last_empty = t->last_empty || empty;
	t->branch_empty = t->before_empty && t->last_empty;
	t->last_quant = true;
	return t->sum > HM_RE_COST_MAX ? "too complex" : NULL;
}

/* Why regcomp() must not see re (see above), or NULL. */
static const char *
re_check(const char *re)
{
	struct hm_re_level lv[HM_RE_DEPTH + 1];
	const char *p, *end, *why = NULL;
	size_t depth = 0;
	uint64_t mult, opt = 0;
	bool empty;

	re_level_init(&lv[0]);
	for (p = re; *p != '\0' && why == NULL; p++) {
		struct hm_re_level *t = &lv[depth];

		switch (*p) {
		case '(':
			if (depth == HM_RE_DEPTH)
				return "groups nested too deep";
			re_level_init(&lv[++depth]);
			break;
		case ')':
			if (depth == 0) {
				re_piece(t, 1, 0,
				    false); /* regcomp() decides */
				break;
			}
			empty = t->any_empty || t->branch_empty;
			mult = t->sum > 0 ? t->sum : 1;
			opt = t->opt_sum;
			re_piece(&lv[--depth], mult, opt, empty);
			break;
		case '|':
			t->any_empty = t->any_empty || t->branch_empty;
			t->branch_empty = t->before_empty = true;
			t->have_last = t->last_quant = false;
			break;
		case '*':
		case '?':
			why = re_repeat(t, 1, 1, true);
			break;
		case '+':
			why = re_repeat(t, 2, 1, false);
			break;
		case '{':
			end = p;
			empty = false;
			mult = re_interval(p, &end, &empty, &opt);
			if (mult == 0) {
				re_piece(t, 1, 0, false);
				break;
			}
			why = re_repeat(t, mult, opt, empty);
			p = end;
			break;
		case '^':
		case '$':
			re_piece(t, 1, 0,
			    true); /* anchors match no character */
			break;
		case '[':
			p = re_bracket(p);
			re_piece(t, 1, 0, false);
			break;
		case '\\':
			if (p[1] >= '1' && p[1] <= '9')
				return "back-references are not ERE";
			if (p[1] != '\0')
				p++;
			re_piece(t, 1, 0, false);
			break;
		default:
			re_piece(t, 1, 0, false);
			break;
		}
	}
	return why;
}

static bool
delim_ok(char c)
{
	unsigned char u = (unsigned char)c;

	/* Punctuation, like sed, less the backslash (it escapes). */
	return u > ' ' && u < 0x7f && c != '\\' && !(c >= '0' && c <= '9') &&
	    !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z');
}

int
hostmap_add_rewrite(struct hostmap *m, const char *rule, struct lh_err *err)
{
	struct hm_rule *r;
	char re[HOSTMAP_RULE_MAX + 1], repl[HOSTMAP_RULE_MAX + 1];
	const char *p, *why;
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
	for (; *p != '\0'; p++) {
		if (*p == 'i' && !icase) {
			icase = true;
		} else if (*p == 'g' && !global) {
			global = true;
		} else {
			char q[8];

			return lh_err_set(err, 0, -EINVAL,
			    "rewrite rule: unknown or repeated flag '%s' (i and "
			    "g are known)",
			    quote(p, 1, q, sizeof(q)));
		}
	}
	why = re_check(re);
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
	r->global = global;
	m->nrules++;
	return 0;
out_regfree:
	regfree(&r->re);
	return rc;
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
	if (name_make(m, in, work) != NULL)
		return -EINVAL;
	if (strlen(work) >= size)
		return -ENAMETOOLONG;
	memcpy(out, work, strlen(work) + 1);
	return 0;
}

/* ---- addresses and the index --------------------------------------- */

/* The canonical text of an IPv4 or IPv6 address into buf (HM_IP_MAX
 * bytes), so that every way of writing one IPv6 address compares equal. */
static bool
ip_canon(const char *s, char *buf)
{
	unsigned char a[16];

	if (inet_pton(AF_INET, s, a) == 1)
		return inet_ntop(AF_INET, a, buf, HM_IP_MAX) != NULL;
	if (inet_pton(AF_INET6, s, a) == 1)
		return inet_ntop(AF_INET6, a, buf, HM_IP_MAX) != NULL;
	return false;
}

/*
 * The keys of nid: into nkey (HM_KEY_MAX bytes) "addr@net" with the
 * address canonical when it is an IP and the net as nid_net() gives it
 * (o2ib0 is o2ib); into ipkey (HM_IP_MAX bytes) the canonical address, or
 * "" when it is no IP (gni, kfi...).  Returns 0 or -EINVAL.
 */
static int
nid_keys(const char *nid, char *nkey, char *ipkey)
{
	const char *at = strrchr(nid, '@');
	char addr[NID_STR_MAX], net[NID_NET_MAX];
	size_t alen;
	int n;

	if (at == NULL || at == nid)
		return -EINVAL;
	alen = (size_t)(at - nid);
	if (alen >= sizeof(addr) || nid_net(nid, net, sizeof(net)) < 0)
		return -EINVAL;
	memcpy(addr, nid, alen);
	addr[alen] = '\0';
	if (!ip_canon(addr, ipkey))
		ipkey[0] = '\0';
	n = snprintf(nkey, HM_KEY_MAX, "%s@%s", ipkey[0] != '\0' ? ipkey : addr,
	    net);
	if (n < 0 || n >= HM_KEY_MAX)
		return -EINVAL;
	return 0;
}

static uint64_t
key_hash(uint8_t kind, const char *s)
{
	return hindex_hash_str(HINDEX_SEED ^ kind, s);
}

static uint64_t
entry_hash(const void *ctx, uint32_t idx)
{
	const struct hostmap *m = ctx;

	return m->ent[idx].hash;
}

static bool
entry_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct hostmap *m = ctx;
	const struct hm_entry *e = &m->ent[idx];
	const struct hm_key *k = key;

	return e->hash == k->hash && e->kind == k->kind &&
	    strcmp(m->pool + e->key, k->s) == 0;
}

static const struct hm_entry *
entry_find(const struct hostmap *m, uint8_t kind, const char *key)
{
	struct hm_key k = {key_hash(kind, key), key, kind};
	uint32_t i;

	i = hindex_find(&m->index, k.hash, entry_match, m, &k);
	return i == HINDEX_NONE ? NULL : &m->ent[i];
}

int
hostmap_lookup(const struct hostmap *m, const char *nid, char *out, size_t size)
{
	char nkey[HM_KEY_MAX], ipkey[HM_IP_MAX];
	const struct hm_entry *e;
	const char *host;

	if (nid_keys(nid, nkey, ipkey) < 0)
		return -EINVAL;
	e = entry_find(m, HM_NID, nkey);
	if (e == NULL && ipkey[0] != '\0')
		e = entry_find(m, HM_IP, ipkey);
	if (e == NULL)
		return -ENOENT;
	host = m->pool + e->host;
	if (strlen(host) >= size)
		return -ENAMETOOLONG;
	memcpy(out, host, strlen(host) + 1);
	return 0;
}

/* ---- loading ------------------------------------------------------- */

static int
pool_add(struct hostmap *m, const char *s, uint32_t *ret)
{
	size_t n = strlen(s) + 1;

	/* Offsets are 32 bits: HOSTMAP_ENTRIES_MAX entries of at most
	 * HM_KEY_MAX + HOSTMAP_NAME_MAX + 2 bytes stay far below that. */
	if (n > UINT32_MAX - m->plen)
		return -ENOMEM;
	if (m->plen + n > m->pcap) {
		size_t cap = m->pcap == 0 ? 4096 : m->pcap;
		char *p;

		while (cap < m->plen + n)
			cap *= 2;
		p = realloc(m->pool, cap);
		if (p == NULL)
			return -ENOMEM;
		m->pool = p;
		m->pcap = cap;
	}
	memcpy(m->pool + m->plen, s, n);
	*ret = (uint32_t)m->plen;
	m->plen += n;
	return 0;
}

static int
entry_add(struct hostmap *m, uint8_t kind, const char *key, const char *host)
{
	struct hm_entry *e;
	int rc;

	if (m->ent == NULL || m->n == m->cap) {
		size_t cap = m->cap == 0 ? 256 : m->cap * 2;

		e = realloc(m->ent, cap * sizeof(*e));
		if (e == NULL)
			return -ENOMEM;
		m->ent = e;
		m->cap = cap;
	}
	e = &m->ent[m->n];
	e->kind = kind;
	e->hash = key_hash(kind, key);
	if ((rc = pool_add(m, key, &e->key)) < 0 ||
	    (rc = pool_add(m, host, &e->host)) < 0 ||
	    (rc = hindex_add(&m->index, e->hash, (uint32_t)m->n, entry_hash,
	         m)) < 0)
		return rc;
	m->n++;
	return 0;
}

/* The error of line: "name:line: why" for a file, else "line N: why". */
static int line_err(struct lh_err *err, const char *name, unsigned line,
    int code, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
line_err(struct lh_err *err, const char *name, unsigned line, int code,
    const char *fmt, ...)
{
	char why[LH_ERR_REASON_MAX];
	va_list ap;

	if (err == NULL)
		return code;
	va_start(ap, fmt);
	(void)vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (name != NULL)
		return lh_err_set(err, line, code, "%s:%u: %s", name, line,
		    why);
	return lh_err_set(err, line, code, "line %u: %s", line, why);
}

/* LND names: a letter, then letters and digits ("o2ib2", "tcp", "gni"). */
static bool
net_ok(const char *net)
{
	const char *p;

	if (!((*net >= 'a' && *net <= 'z') || (*net >= 'A' && *net <= 'Z')))
		return false;
	for (p = net + 1; *p != '\0'; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		        (*p >= '0' && *p <= '9')))
			return false;
	}
	return true;
}

/* The key of a file's address field: a full NID, or an IP address. */
static int
addr_key(const char *addr, uint8_t *ret_kind, char *key)
{
	const char *at = strchr(addr, '@');
	char ipkey[HM_IP_MAX];
	const char *p;

	if (at == NULL) {
		if (!ip_canon(addr, key))
			return -EINVAL;
		*ret_kind = HM_IP;
		return 0;
	}
	if (at == addr || strchr(at + 1, '@') != NULL || !net_ok(at + 1))
		return -EINVAL;
	for (p = addr; p < at; p++) {
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			return -EINVAL;
	}
	if (nid_keys(addr, key, ipkey) < 0)
		return -EINVAL;
	*ret_kind = HM_NID;
	return 0;
}

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The next field of [*pp, end): its start and length (0 at the end). */
static const char *
next_field(const char **pp, const char *end, size_t *ret_len)
{
	const char *p = *pp, *f;

	while (p < end && is_blank(*p))
		p++;
	f = p;
	while (p < end && !is_blank(*p))
		p++;
	*ret_len = (size_t)(p - f);
	*pp = p;
	return f;
}

/* One line's address and name fields: add the entry, or count it as a
 * duplicate. */
static int
load_entry(struct hostmap *m, const char *name, unsigned lineno, const char *a,
    size_t alen, const char *h, size_t hlen, struct lh_err *err)
{
	char addr[NID_STR_MAX], key[HM_KEY_MAX], raw[HM_RAW_MAX + 1];
	char host[HM_WORK_MAX], q[HM_QUOTE + 4];
	const struct hm_entry *e;
	const char *why;
	uint8_t kind = 0;
	int rc;

	if (alen >= sizeof(addr))
		return line_err(err, name, lineno, -EINVAL,
		    "address \"%s\" longer than %d characters",
		    quote(a, alen, q, sizeof(q)), NID_STR_MAX - 1);
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	if (addr_key(addr, &kind, key) < 0)
		return line_err(err, name, lineno, -EINVAL,
		    "\"%s\" is neither an IP address nor a NID (addr@net)",
		    quote(a, alen, q, sizeof(q)));
	if (hlen == 0)
		return line_err(err, name, lineno, -EINVAL,
		    "no host name after the address");
	if (hlen > HM_RAW_MAX)
		return line_err(err, name, lineno, -EINVAL,
		    "host name longer than %d characters", HOSTMAP_NAME_MAX);
	memcpy(raw, h, hlen);
	raw[hlen] = '\0';
	why = name_make(m, raw, host);
	/* Show what the rules made of a refused name: the rule is the
	 * likelier culprit than the file. */
	if (why != NULL && strcmp(raw, host) != 0) {
		char q2[HM_QUOTE + 4];

		return line_err(err, name, lineno, -EINVAL,
		    "\"%s\" rewritten to \"%s\": %s",
		    quote(raw, hlen, q, sizeof(q)),
		    quote(host, strlen(host), q2, sizeof(q2)), why);
	}
	if (why != NULL)
		return line_err(err, name, lineno, -EINVAL, "\"%s\": %s",
		    quote(raw, hlen, q, sizeof(q)), why);

	e = entry_find(m, kind, key);
	if (e != NULL) {
		/* The first wins, as in /etc/hosts; the caller logs the
		 * count once rather than a line per duplicate. */
		m->stats.duplicates++;
		if (strcmp(m->pool + e->host, host) != 0)
			m->stats.conflicts++;
		if (m->stats.first_duplicate_line == 0)
			m->stats.first_duplicate_line = lineno;
		return 0;
	}
	if (m->n == HOSTMAP_ENTRIES_MAX)
		return line_err(err, name, lineno, -EINVAL,
		    "more than %zu addresses", HOSTMAP_ENTRIES_MAX);
	rc = entry_add(m, kind, key, host);
	if (rc < 0)
		return line_err(err, name, lineno, rc, "out of memory");
	if (kind == HM_IP)
		m->stats.ip_entries++;
	else
		m->stats.nid_entries++;
	return 0;
}

/* hostmap_load_text(), with the file's name (or NULL) for the reasons. */
static int
load_text(struct hostmap *m, const char *text, size_t len, const char *name,
    struct lh_err *err)
{
	const char *p = text, *end = text + len;
	unsigned lineno = 0;
	int rc;

	if (m->loaded)
		return lh_err_set(err, 0, -EBUSY, "hosts map already loaded");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl != NULL ? nl : end, *s = p, *hash, *a, *h;
		size_t alen, hlen;

		lineno++;
		p = nl != NULL ? nl + 1 : end;
		if (memchr(s, '\0', (size_t)(le - s)) != NULL) {
			rc = line_err(err, name, lineno, -EINVAL, "NUL byte");
			goto fail;
		}
		/* '#' starts a comment anywhere, as glibc reads /etc/hosts. */
		hash = memchr(s, '#', (size_t)(le - s));
		if (hash != NULL)
			le = hash;
		a = next_field(&s, le, &alen);
		if (alen == 0)
			continue;
		h = next_field(&s, le, &hlen);
		rc = load_entry(m, name, lineno, a, alen, h, hlen, err);
		if (rc < 0)
			goto fail;
	}
	m->loaded = true;
	return 0;
fail:
	entries_free(m);
	return rc;
}

int
hostmap_load_text(struct hostmap *m, const char *text, size_t len,
    struct lh_err *err)
{
	return load_text(m, text, len, NULL, err);
}

int
hostmap_load_file(struct hostmap *m, const char *path, struct lh_err *err)
{
	char *buf = NULL, *nb;
	struct stat sb;
	size_t len = 0, cap;
	ssize_t n;
	int fd, rc, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return lh_err_set(err, 0, -e, "%s: %s", path, strerror(e));
	}
	if (fstat(fd, &sb) < 0) {
		e = errno;
		rc = lh_err_set(err, 0, -e, "%s: %s", path, strerror(e));
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		rc =
		    lh_err_set(err, 0, -EINVAL, "%s: not a regular file", path);
		goto out;
	}
	if ((uint64_t)sb.st_size > HOSTMAP_FILE_MAX) {
		rc = lh_err_set(err, 0, -EFBIG, "%s: larger than %zu bytes",
		    path, HOSTMAP_FILE_MAX);
		goto out;
	}
	/* Sized from fstat, but read to the end: the file may grow. */
	cap = (size_t)sb.st_size + 1;
	buf = malloc(cap);
	if (buf == NULL) {
		rc = lh_err_set(err, 0, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	while ((n = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)n;
		if (len > HOSTMAP_FILE_MAX) {
			rc = lh_err_set(err, 0, -EFBIG,
			    "%s: larger than %zu bytes", path,
			    HOSTMAP_FILE_MAX);
			goto out;
		}
		if (len == cap) {
			cap = cap * 2 > HOSTMAP_FILE_MAX + 1 ?
			    HOSTMAP_FILE_MAX + 1 :
			    cap * 2;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				rc = lh_err_set(err, 0, -ENOMEM,
				    "%s: out of memory", path);
				goto out;
			}
			buf = nb;
		}
	}
	if (n < 0) {
		e = errno;
		rc = lh_err_set(err, 0, -e, "%s: %s", path, strerror(e));
		goto out;
	}
	rc = load_text(m, buf, len, path, err);
out:
	free(buf);
	(void)close(fd);
	return rc;
}
