/* SPDX-License-Identifier: BSD-2-Clause */
/* NID -> Ganglia host: the map itself, its index by address, and lookups.
 * The rewrite rules are in hostmap_rules.c, the file in hostmap_file.c. */
#include <arpa/inet.h>

#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "hindex.h"
#include "hostmap.h"
#include "hostmap_int.h"
#include "nid.h"

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
void
hm_entries_free(struct hostmap *m)
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
	hm_entries_free(m);
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
const char *
hm_quote(const char *s, size_t n, char *buf, size_t size)
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

/* ---- addresses and the index --------------------------------------- */

/* The canonical text of an IPv4 or IPv6 address into buf (HM_IP_MAX
 * bytes), so that every way of writing one IPv6 address compares equal. */
bool
hm_ip_canon(const char *s, char *buf)
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
int
hm_nid_keys(const char *nid, char *nkey, char *ipkey)
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
	if (!hm_ip_canon(addr, ipkey))
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

const struct hm_entry *
hm_entry_find(const struct hostmap *m, uint8_t kind, const char *key)
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

	if (hm_nid_keys(nid, nkey, ipkey) < 0)
		return -EINVAL;
	e = hm_entry_find(m, HM_NID, nkey);
	if (e == NULL && ipkey[0] != '\0')
		e = hm_entry_find(m, HM_IP, ipkey);
	if (e == NULL)
		return -ENOENT;
	host = m->pool + e->host;
	if (strlen(host) >= size)
		return -ENAMETOOLONG;
	memcpy(out, host, strlen(host) + 1);
	return 0;
}

/* ---- entries ------------------------------------------------------- */

static int
pool_add(struct hostmap *m, const char *s, uint32_t *ret)
{
	size_t n = strlen(s) + 1;

	/* Offsets are 32 bits: HOSTMAP_ENTRIES_MAX entries of at most
	 * HM_KEY_MAX + HOSTMAP_NAME_MAX + 2 bytes stay far below that. */
	if (n > UINT32_MAX - m->plen)
		return -ENOMEM;
	if (m->plen + n > m->pcap) {
		/* A page at first; a 64-byte array doubles to it. */
		size_t need = m->plen + n < 4096 ? 4096 : m->plen + n;
		char *p = array_reserve(m->pool, &m->pcap, need, 1);

		if (p == NULL)
			return -ENOMEM;
		m->pool = p;
	}
	memcpy(m->pool + m->plen, s, n);
	*ret = (uint32_t)m->plen;
	m->plen += n;
	return 0;
}

int
hm_entry_add(struct hostmap *m, uint8_t kind, const char *key, const char *host)
{
	struct hm_entry *e;
	int rc;

	if (m->ent == NULL || m->n == m->cap) {
		e = array_grow(m->ent, &m->cap, m->n, sizeof(*e));
		if (e == NULL)
			return -ENOMEM;
		m->ent = e;
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
