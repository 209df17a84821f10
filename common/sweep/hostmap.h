/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The aggregator's NID -> Ganglia host mapping, the part that needs no
 * network: an optional hosts map file in /etc/hosts syntax and sed-like
 * rewrite rules for every name (from the file, or from the reverse DNS
 * lookup the daemon does for IP NIDs the file does not know).
 *
 * An entry's address is either an IPv4/IPv6 address, which matches that
 * address on every LNet (10.1.2.3 matches 10.1.2.3@o2ib and 10.1.2.3@tcp5),
 * or a full NID (27@gni, 10.1.2.3@o2ib2), which matches only that NID.  A
 * full-NID entry wins over an IP entry; among entries of one kind the first
 * wins, like /etc/hosts.  docs/hostmap.md is the user's side of this.
 *
 * Building a map: hostmap_new(), the rules (hostmap_add_rewrite()), then at
 * most one hosts file.  The map is never changed afterwards: on reload the
 * caller builds a new one and swaps, so lookups need no locking and the
 * names in the map are final (rewritten and checked once, when loaded).
 */
#ifndef LH_HOSTMAP_H
#define LH_HOSTMAP_H

#include <stddef.h>

struct lh_err;
struct hostmap;

/* Ganglia host names: gmond keeps them in fixed buffers and spoofing
 * ("ip:name") limits them further; 63 is also a DNS label's limit. */
#define HOSTMAP_NAME_MAX    63
#define HOSTMAP_FILE_MAX    ((size_t)64 << 20) /* bytes of a hosts map file */
#define HOSTMAP_ENTRIES_MAX ((size_t)1 << 22)  /* addresses in one map */
#define HOSTMAP_RULES_MAX   32
#define HOSTMAP_RULE_MAX    1024 /* characters of one rule */

/* What a load found, for the caller's one log line. */
struct hostmap_stats {
	size_t ip_entries;  /* addresses matching on every LNet */
	size_t nid_entries; /* full NIDs */
	size_t duplicates;  /* lines ignored: address already mapped */
	size_t conflicts;   /* of those, lines naming a different host */
	unsigned first_duplicate_line; /* 0 if none */
};

/* An empty map with no rules.  Returns 0 or -ENOMEM. */
int hostmap_new(struct hostmap **ret);

/* Free m and everything in it; NULL is fine. */
void hostmap_free(struct hostmap *m);

/*
 * Add a rewrite rule, applied after those added before it to every name:
 * "s/REGEX/REPLACEMENT/FLAGS" with any punctuation character as the
 * delimiter (s|a|b|), POSIX extended regex, & and \1..\9 in the
 * replacement, \<delimiter> for a literal delimiter, and FLAGS a subset of
 * "i" (ignore case) and "g" (every match, not only the first).  Rules must
 * come before the hosts file (-EBUSY afterwards: the file's names are
 * rewritten as they are loaded).  Returns 0, -EINVAL (err says why),
 * -EBUSY or -ENOMEM.
 */
int
hostmap_add_rewrite(struct hostmap *m, const char *rule, struct lh_err *err);

/*
 * Load hosts map text: one entry per line, "address name [aliases...]",
 * fields separated by blanks, '#' to the end of the line a comment;
 * aliases are ignored.  Each name is rewritten, then must be 1 to
 * HOSTMAP_NAME_MAX printable ASCII characters with no blank and none of
 * " & ' < > / : (see hostmap_rewrite()).  Duplicates are counted, not
 * refused (hostmap_stats()).  On a map loaded before: -EBUSY.  Returns 0,
 * or -EINVAL/-ENOMEM with err "line N: reason" (err->line = N) and the map
 * left empty.
 */
int hostmap_load_text(struct hostmap *m, const char *text, size_t len,
    struct lh_err *err);

/* hostmap_load_text() on the file at path (at most HOSTMAP_FILE_MAX
 * bytes); err reads "path:N: reason" or "path: reason". */
int hostmap_load_file(struct hostmap *m, const char *path, struct lh_err *err);

/*
 * The host of nid ("10.1.2.3@o2ib") into out: the full-NID entry if there
 * is one, else the entry of its IP address.  Returns 0, -ENOENT (not in the
 * file: the caller tries reverse DNS on IP NIDs), -EINVAL (not a NID) or
 * -ENAMETOOLONG (out too small; HOSTMAP_NAME_MAX + 1 always fits).  out is
 * untouched on failure.
 */
int hostmap_lookup(const struct hostmap *m, const char *nid, char *out,
    size_t size);

/*
 * A name from DNS made a Ganglia host name: one trailing '.' dropped, the
 * rules applied, the result checked as for the file's names (the case is
 * kept).  Returns 0, -EINVAL (not a valid host name afterwards) or
 * -ENAMETOOLONG (out too small).  out is untouched on failure.
 */
int hostmap_rewrite(const struct hostmap *m, const char *name, char *out,
    size_t size);

/* Addresses mapped (IP and full-NID entries). */
size_t hostmap_count(const struct hostmap *m);

/* What the load found. */
void hostmap_stats(const struct hostmap *m, struct hostmap_stats *ret);

#endif
