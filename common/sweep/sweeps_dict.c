/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The aggregator's dictionary of clients (sweeps.h, sweeps_int.h): every
 * (filesystem, NID) named lately by a small id.  A SWEEP names its
 * clients in groups of one filesystem, network and NID kind, and numbered
 * NIDs (IPv4, gni, ...) by their address: a group is looked up once per
 * group of a SWEEP, a client by (group, address), two numbers, so that a
 * million records a sweep are summed without printing or hashing their
 * NIDs' text.  Text addresses (IPv6, unknown forms) are keyed by it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "hindex.h"
#include "nid.h"
#include "sweeps.h"
#include "sweeps_int.h"

struct group_key {
	const char *fs;
	const char *net;
	uint8_t kind;
};

/* A client's key: its group and address, or its text. */
struct client_key {
	uint32_t group;
	uint32_t addr;
	const char *nid; /* text addresses, else NULL */
};

static uint64_t
group_hash_of(const char *fs, const char *net, uint8_t kind)
{
	return id_hash((uint32_t)hindex_hash_pair(fs, net) + kind);
}

static uint64_t
group_hash(const void *ctx, uint32_t idx)
{
	const struct sw_group *g = &((const struct sw_groups *)ctx)->v[idx];

	return group_hash_of(g->fs, g->net, g->kind);
}

static bool
group_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct sw_group *g = &((const struct sw_groups *)ctx)->v[idx];
	const struct group_key *k = key;

	return g->kind == k->kind && strcmp(g->net, k->net) == 0 &&
	    strcmp(g->fs, k->fs) == 0;
}

int
sw_group_get(struct sweeps *s, const char *fs, const char *net, uint8_t kind,
    uint32_t *ret)
{
	struct group_key k = {fs, net, kind};
	struct sw_groups *gs = &s->groups;
	uint64_t h = group_hash_of(fs, net, kind);
	struct sw_group *g;
	uint32_t i;

	i = hindex_find(&gs->index, h, group_match, gs, &k);
	if (i != HINDEX_NONE) {
		*ret = i;
		return 0;
	}
	if (gs->n >= HINDEX_NONE - 1 || strlen(fs) >= sizeof(g->fs) ||
	    strlen(net) >= sizeof(g->net))
		return -ENOMEM;
	g = array_grow(gs->v, &gs->cap, gs->n, sizeof(*gs->v));
	if (g == NULL)
		return -ENOMEM;
	gs->v = g;
	g = &gs->v[gs->n];
	memcpy(g->fs, fs, strlen(fs) + 1);
	memcpy(g->net, net, strlen(net) + 1);
	g->kind = kind;
	if (hindex_add(&gs->index, h, (uint32_t)gs->n, group_hash, gs) < 0)
		return -ENOMEM;
	*ret = (uint32_t)gs->n++;
	return 0;
}

void
sw_groups_free(struct sw_groups *g)
{
	free(g->v);
	hindex_free(&g->index);
	memset(g, 0, sizeof(*g));
}

int
sw_groups_compact(const struct sweeps *s, struct sw_client *v, size_t n,
    struct sw_groups *ret)
{
	const struct sw_groups *old = &s->groups;
	uint32_t *map;
	size_t i, k = 0;

	memset(ret, 0, sizeof(*ret));
	hindex_init(&ret->index);
	map = malloc((old->n > 0 ? old->n : 1) * sizeof(*map));
	if (map == NULL)
		return -ENOMEM;
	for (i = 0; i < old->n; i++)
		map[i] = HINDEX_NONE;
	for (i = 0; i < n; i++) {
		if (map[v[i].group] == HINDEX_NONE)
			map[v[i].group] = (uint32_t)k++;
	}
	ret->v = malloc((k > 0 ? k : 1) * sizeof(*ret->v));
	if (ret->v == NULL) {
		free(map);
		return -ENOMEM;
	}
	ret->cap = k > 0 ? k : 1;
	for (i = 0; i < old->n; i++) {
		if (map[i] != HINDEX_NONE)
			ret->v[map[i]] = old->v[i];
	}
	ret->n = k;
	if (hindex_rebuild(&ret->index, k, group_hash, ret) < 0) {
		sw_groups_free(ret);
		free(map);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		v[i].group = map[v[i].group];
	free(map);
	return 0;
}

/* The hash of (group, addr), or of group and a text address. */
static uint64_t
key_hash(uint32_t group, uint32_t addr, const char *nid)
{
	uint64_t x = ((uint64_t)group << 32 | addr) * 0x9e3779b97f4a7c15ULL;

	x ^= x >> 32;
	return nid != NULL ? hindex_hash_str(x, nid) : x;
}

uint64_t
sw_client_hash(const struct sw_client *c)
{
	return key_hash(c->group, c->addr, c->text ? c->nid : NULL);
}

static uint64_t
client_hash(const void *ctx, uint32_t idx)
{
	const struct sweeps *s = ctx;

	return sw_client_hash(&s->clients[idx]);
}

static bool
client_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct sw_client *c = &((const struct sweeps *)ctx)->clients[idx];
	const struct client_key *k = key;

	return c->addr == k->addr && c->group == k->group &&
	    (k->nid == NULL || strcmp(c->nid, k->nid) == 0);
}

/* A new client's entry: its key, and its text for the close. */
static void
client_fill(const struct sweeps *s, struct sw_client *c,
    const struct client_key *k)
{
	const struct sw_group *g = &s->groups.v[k->group];
	size_t i;

	memset(c, 0, sizeof(*c));
	c->group = k->group;
	c->addr = k->addr;
	c->text = k->nid != NULL;
	for (i = 0; i < NRING; i++)
		c->hint[i] = HINDEX_NONE;
	memcpy(c->fs, g->fs, sizeof(c->fs));
	if (k->nid != NULL) {
		(void)snprintf(c->nid, sizeof(c->nid), "%s", k->nid);
	} else {
		struct nid_parts np;

		memset(&np, 0, sizeof(np));
		np.kind = (enum nid_kind)g->kind;
		np.num = k->addr;
		memcpy(np.net, g->net, sizeof(np.net));
		/* At most 47 bytes: a dotted quad, '@' and a network. */
		(void)nid_format(&np, c->nid, sizeof(c->nid));
	}
}

int
sw_client_key_get(struct sweeps *s, uint32_t group, uint32_t addr,
    const char *nid, uint32_t *ret)
{
	struct client_key k = {group, nid != NULL ? 0 : addr, nid};
	uint64_t h = key_hash(k.group, k.addr, nid);
	struct sw_client *c;
	uint32_t i;

	i = hindex_find(&s->cindex, h, client_match, s, &k);
	if (i != HINDEX_NONE) {
		*ret = i;
		return 0;
	}
	if (s->nclients >= HINDEX_NONE - 1)
		return -ENOMEM;
	c = array_grow(s->clients, &s->ccap, s->nclients, sizeof(*s->clients));
	if (c == NULL)
		return -ENOMEM;
	s->clients = c;
	client_fill(s, &s->clients[s->nclients], &k);
	if (hindex_add(&s->cindex, h, (uint32_t)s->nclients, client_hash, s) <
	    0)
		return -ENOMEM;
	*ret = (uint32_t)s->nclients++;
	return 0;
}

int
sw_client_get(struct sweeps *s, const char *fs, const char *nid, uint32_t *ret)
{
	struct nid_parts np;
	uint32_t group;
	int rc;

	/* As the decoder hands it out: canonical, so split and printed
	 * again it is the same text, and a text address splits as one. */
	if (nid_split(nid, &np) < 0)
		return -EINVAL;
	np.net[nid_net_canon_len(np.net, strlen(np.net))] = '\0';
	rc = sw_group_get(s, fs, np.net, (uint8_t)np.kind, &group);
	if (rc < 0)
		return rc;
	if (np.kind == NID_KIND_STRING)
		return sw_client_key_get(s, group, 0, nid, ret);
	return sw_client_key_get(s, group, np.num, NULL, ret);
}

static uint64_t
acc_hash(const void *ctx, uint32_t idx)
{
	const struct sw_sweep *w = ctx;

	return id_hash(w->acc[idx].client);
}

static bool
acc_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct sw_sweep *w = ctx;

	return w->acc[idx].client == *(const uint32_t *)key;
}

struct sw_acc *
sw_acc_get(struct sw_sweep *w, uint32_t client)
{
	struct sw_acc *a;
	uint32_t i;

	i = hindex_find(&w->index, id_hash(client), acc_match, w, &client);
	if (i != HINDEX_NONE)
		return &w->acc[i];
	a = array_grow(w->acc, &w->cap, w->n, sizeof(*w->acc));
	if (a == NULL)
		return NULL;
	w->acc = a;
	a = &w->acc[w->n];
	memset(a, 0, sizeof(*a));
	a->client = client;
	if (hindex_add(&w->index, id_hash(client), (uint32_t)w->n, acc_hash,
	        w) < 0)
		return NULL;
	w->n++;
	return a;
}

struct sw_acc *
sw_acc_hinted(struct sweeps *s, struct sw_sweep *w, uint32_t client)
{
	uint32_t *hint = &s->clients[client].hint[w->id / s->interval % NRING];
	struct sw_acc *a;

	/* A sweep holds one sum per client: an entry of w naming it is its
	 * sums, however old the hint (a sweep closed since, a shift). */
	if (*hint < w->n && w->acc[*hint].client == client)
		return &w->acc[*hint];
	a = sw_acc_get(w, client);
	if (a != NULL)
		*hint = (uint32_t)(a - w->acc);
	return a;
}
