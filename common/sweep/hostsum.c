/* SPDX-License-Identifier: BSD-2-Clause */
/* Per-host sums of a closed sweep (hostsum.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "hostsum.h"
#include "nid.h"

struct host_key {
	const char *host;
	const char *fs;
};

static uint64_t
row_hash(const void *ctx, uint32_t idx)
{
	const struct hostsum *s = ctx;

	return hindex_hash_pair(s->rows[idx].host, s->rows[idx].fs);
}

static bool
row_match(const void *ctx, uint32_t idx, const void *key)
{
	const struct hostsum *s = ctx;
	const struct host_key *k = key;

	return strcmp(s->rows[idx].host, k->host) == 0 &&
	    strcmp(s->rows[idx].fs, k->fs) == 0;
}

void
hostsum_init(struct hostsum *s)
{
	memset(s, 0, sizeof(*s));
	hindex_init(&s->index);
}

void
hostsum_free(struct hostsum *s)
{
	hindex_free(&s->index);
	free(s->rows);
	s->rows = NULL;
	s->n = s->cap = 0;
}

void
hostsum_clear(struct hostsum *s)
{
	s->n = 0;
	hindex_clear(&s->index);
}

static struct hostsum_row *
row_get(struct hostsum *s, const char *host, const char *fs)
{
	struct host_key k = {host, fs};
	uint64_t h = hindex_hash_pair(host, fs);
	struct hostsum_row *e, *v;
	uint32_t i;

	i = hindex_find(&s->index, h, row_match, s, &k);
	if (i != HINDEX_NONE)
		return &s->rows[i];
	if (s->n == s->cap) {
		v = array_grow(s->rows, &s->cap, s->n, sizeof(*v));
		if (v == NULL)
			return NULL;
		s->rows = v;
	}
	e = &s->rows[s->n];
	memset(e, 0, sizeof(*e));
	(void)snprintf(e->host, sizeof(e->host), "%s", host);
	(void)snprintf(e->fs, sizeof(e->fs), "%s", fs);
	if (hindex_add(&s->index, h, (uint32_t)s->n, row_hash, s) < 0)
		return NULL;
	s->n++;
	return e;
}

int
hostsum_add(struct hostsum *s, const char *host, const struct nid_parts *p,
    const struct sweeps_client *c)
{
	struct hostsum_row *e = row_get(s, host, c->fs);
	unsigned i;

	if (e == NULL)
		return -ENOMEM;
	if (p->kind == NID_KIND_IPV4 && strlen(p->addr) < HOSTSUM_IP_MAX &&
	    (e->ip[0] == '\0' || p->num < e->ipnum)) {
		memcpy(e->ip, p->addr, strlen(p->addr) + 1);
		e->ipnum = p->num;
	}
	for (i = 0; i < SWEEPS_NCOUNTERS; i++)
		e->rate[i] += c->rate[i];
	iocount_add(&e->d, &c->d);
	if (c->ops == NULL)
		return 0;
	for (i = 0; i < MDOPS_N; i++)
		e->oprate[i] += c->ops->rate[i];
	mdops_add(&e->dops, &c->ops->d);
	return 0;
}

static int
by_host(const void *x, const void *y)
{
	const struct hostsum_row *const *p = x, *const *q = y;

	return strcmp((*p)->host, (*q)->host);
}

int
hostsum_finish(struct hostsum *s)
{
	struct hostsum_row **v;
	size_t i, j, k;

	if (s->n < 2)
		return 0;
	v = malloc(s->n * sizeof(struct hostsum_row *));
	if (v == NULL)
		return -ENOMEM;
	for (i = 0; i < s->n; i++)
		v[i] = &s->rows[i];
	qsort(v, s->n, sizeof(struct hostsum_row *), by_host);
	for (i = 0; i < s->n; i = j) {
		const struct hostsum_row *best = NULL;

		for (j = i; j < s->n && strcmp(v[j]->host, v[i]->host) == 0;
		     j++) {
			if (v[j]->ip[0] != '\0' &&
			    (best == NULL || v[j]->ipnum < best->ipnum))
				best = v[j];
		}
		for (k = i; k < j && best != NULL; k++) {
			memcpy(v[k]->ip, best->ip, sizeof(best->ip));
			v[k]->ipnum = best->ipnum;
		}
	}
	free(v);
	return 0;
}

const char *
hostsum_spoof_ip(const struct hostsum_row *r)
{
	return r->ip[0] != '\0' ? r->ip : r->host;
}
