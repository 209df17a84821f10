/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the hosts map (hostmap.h), shared by its files: hostmap.c (the
 * map, its index and lookups), hostmap_rules.c (names and rewrite rules),
 * hostmap_recost.c (what a rule's regex may cost regcomp()) and
 * hostmap_file.c (loading the hosts file).  Not for other modules.
 */
#ifndef LH_HOSTMAP_INT_H
#define LH_HOSTMAP_INT_H

#include <arpa/inet.h>

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* s made fit to quote in a reason: at most HM_QUOTE characters, anything
 * not printable shown as '?', so a hostile file cannot forge log lines. */
const char *hm_quote(const char *s, size_t n, char *buf, size_t size);

/* Forget the entries (after a failed load), keep the rules. */
void hm_entries_free(struct hostmap *m);

/* The canonical text of an IPv4 or IPv6 address into buf (HM_IP_MAX
 * bytes), so that every way of writing one IPv6 address compares equal. */
bool hm_ip_canon(const char *s, char *buf);

/* The keys of nid (see hostmap.c).  Returns 0 or -EINVAL. */
int hm_nid_keys(const char *nid, char *nkey, char *ipkey);

/* The entry of (kind, key), or NULL. */
const struct hm_entry *
hm_entry_find(const struct hostmap *m, uint8_t kind, const char *key);

/* Add an entry (key and host copied).  Returns 0 or -ENOMEM. */
int hm_entry_add(struct hostmap *m, uint8_t kind, const char *key,
    const char *host);

/* in through every rule into out (HM_WORK_MAX bytes), then checked.
 * Returns why the result is no host name, or NULL. */
const char *hm_name_make(const struct hostmap *m, const char *in, char *out);

/* Why regcomp() must not see re (hostmap_recost.c), or NULL. */
const char *hm_re_check(const char *re);

#endif
