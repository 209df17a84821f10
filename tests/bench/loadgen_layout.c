/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_loadgen's layout (loadgen.c says what the generator does): which
 * gatherer serves which filesystems, the pool of client NIDs and hosts,
 * the setup files, the SWEEP payloads of every sweep and the rates the
 * aggregator must then show.
 */
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen.h"
#include "msg.h"
#include "wire.h"

/* Clients per filesystem of one gatherer. */
static unsigned
per_fs(const struct loadgen *lg)
{
	return lg->nclients / lg->fs_per_gat;
}

unsigned
npool(const struct loadgen *lg)
{
	return lg->nfs * per_fs(lg);
}

/* Gatherers per group, and whether gatherer g is its group's MDS. */
unsigned
per_group(const struct loadgen *lg)
{
	return lg->ngat / (lg->nfs / lg->fs_per_gat);
}

bool
is_mds(const struct loadgen *lg, unsigned g)
{
	return g % per_group(lg) == 0;
}

/* The filesystem index of gatherer g's k-th filesystem. */
unsigned
gat_fs(const struct loadgen *lg, unsigned g, unsigned k)
{
	return g / per_group(lg) * lg->fs_per_gat + k;
}

void
layout_check(struct loadgen *lg)
{
	static const char *const names[] = {"scratch", "home", "project",
	    "work", "archive", "data", "fast", "tmp"};
	unsigned f;

	if (lg->nfs % lg->fs_per_gat != 0 ||
	    lg->nclients % lg->fs_per_gat != 0 ||
	    lg->ngat % (lg->nfs / lg->fs_per_gat) != 0 || per_group(lg) < 2)
		die("layout: filesystems %% fs-per-gatherer, clients %% "
		    "fs-per-gatherer and gatherers %% groups must be 0, with "
		    "at least 2 gatherers per group");
	if ((uint64_t)npool(lg) > 0xfe000000u - LG_POOL_BASE)
		die("layout: too many clients");
	for (f = 0; f < lg->nfs; f++) {
		if (f < sizeof(names) / sizeof(names[0]))
			(void)snprintf(lg->fsname[f], MSG_FS_MAX, "%s",
			    names[f]);
		else
			(void)snprintf(lg->fsname[f], MSG_FS_MAX, "fs%u", f);
	}
}

static void
pool_ip(unsigned i, char *buf, size_t size)
{
	uint32_t ip = LG_POOL_BASE + i;

	(void)snprintf(buf, size, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff,
	    (ip >> 8) & 0xff, ip & 0xff);
}

static void
pool_host(unsigned i, char *buf, size_t size)
{
	(void)snprintf(buf, size, "cn%05u", i + 1);
}

void
make_pool(struct loadgen *lg)
{
	char ip[16]; /* a dotted quad */
	unsigned i, n = npool(lg);

	lg->nids = calloc(n, sizeof(*lg->nids));
	lg->expect = calloc(n, sizeof(*lg->expect));
	if (lg->nids == NULL || lg->expect == NULL)
		die("out of memory");
	for (i = 0; i < n; i++) {
		pool_ip(i, ip, sizeof(ip));
		(void)snprintf(lg->nids[i], LG_NID_MAX, "%.15s@o2ib", ip);
	}
}

void
gat_name(const struct loadgen *lg, unsigned g, char *buf, size_t size)
{
	(void)snprintf(buf, size, "%s%03u", lg->prefix, g);
}

void
write_setup(struct loadgen *lg, const char *dir)
{
	char path[4096], ip[LG_NID_MAX], host[LG_HOST_MAX], name[MSG_NAME_MAX];
	unsigned i;
	FILE *f;

	(void)snprintf(path, sizeof(path), "%s/hosts", dir);
	f = fopen(path, "w");
	if (f == NULL)
		die("%s: %s", path, strerror(errno));
	(void)fprintf(f, "# bench_loadgen's client pool: %u hosts\n",
	    npool(lg));
	for (i = 0; i < npool(lg); i++) {
		pool_ip(i, ip, sizeof(ip));
		pool_host(i, host, sizeof(host));
		(void)fprintf(f, "%s %s\n", ip, host);
	}
	if (fclose(f) != 0)
		die("%s: %s", path, strerror(errno));
	(void)snprintf(path, sizeof(path), "%s/gatherers", dir);
	f = fopen(path, "w");
	if (f == NULL)
		die("%s: %s", path, strerror(errno));
	(void)fputs("gatherers = {", f);
	for (i = 0; i < lg->ngat; i++) {
		gat_name(lg, i, name, sizeof(name));
		(void)fprintf(f, "%s\"%s\"", i > 0 ? ", " : " ", name);
	}
	(void)fputs(" }\n", f);
	if (fclose(f) != 0)
		die("%s: %s", path, strerror(errno));
}

/*
 * Gatherer g's record of its k-th filesystem's j-th client in sweep s.
 * Deltas are non-zero and grow with s; the default span differs by
 * gatherer and sweep; every 10th record has a span of its own (an export
 * read a little later), every 50th an OSS record's write_bytes its own
 * counter span (the client's targets were read at different times).
 */
static void
make_rec(const struct loadgen *lg, unsigned g, unsigned s, unsigned k,
    unsigned j, uint64_t span, struct msg_rec *r)
{
	unsigned f = gat_fs(lg, g, k), i;
	uint64_t base = 1 + (j * 7 + g * 13 + f * 5) % 97, grow = s + 1;

	memset(r, 0, sizeof(*r));
	r->fs = (uint16_t)k;
	r->nid = lg->nids[f * per_fs(lg) + j];
	r->span_us = j % 10 == 3 ? span + 500 + j % 1000 : span;
	if (is_mds(lg, g)) {
		r->d.mds_ops = (base + 5 * (uint64_t)s) * 10 + j % 3;
	} else {
		r->d.read_bytes =
		    (base * 65536 + 4096 * (uint64_t)(g % 16)) * grow;
		r->d.write_bytes = ((base + 31) % 97 + 1) * 32768 * grow;
		r->d.read_ops = r->d.read_bytes / 1048576 + 1;
		r->d.write_ops = r->d.write_bytes / 1048576 + 1;
		r->d.oss_ops = r->d.read_ops + r->d.write_ops + 2 + s % 3;
	}
	for (i = 0; i < MSG_NCOUNTERS; i++)
		r->cspan_us[i] = 0; /* the record's span */
	if (!is_mds(lg, g) && j % 50 == 7)
		r->cspan_us[1] = r->span_us - 1000;
}

/* Add a record to the expected rates, as the aggregator sums them. */
static void
expect_add(struct loadgen *lg, unsigned g, unsigned k, unsigned j,
    const struct msg_rec *r)
{
	unsigned f = gat_fs(lg, g, k), i;
	uint64_t v[IOCOUNT_N];
	double *e = lg->expect[f * per_fs(lg) + j];

	iocount_to_array(&r->d, v);
	for (i = 0; i < IOCOUNT_N; i++) {
		uint64_t span =
		    r->cspan_us[i] != 0 ? r->cspan_us[i] : r->span_us;

		if (v[i] != 0)
			e[i] += (double)v[i] * 1e6 / (double)span;
	}
}

static uint64_t
gat_span(const struct loadgen *lg, unsigned g, unsigned s)
{
	return (uint64_t)lg->interval * 1000000u + (g * 37 + s * 11) % 2000;
}

/* Encode every payload of every gatherer (sweep ids written in later). */
void
encode_all(struct loadgen *lg)
{
	unsigned g, s, k, j, pf = per_fs(lg);
	struct msg_rec *recs = calloc(lg->nclients, sizeof(*recs));

	if (recs == NULL)
		die("out of memory");
	for (g = 0; g < lg->ngat; g++) {
		struct lg_conn *c = &lg->conns[g];

		c->loads = calloc(lg->nsweeps, sizeof(*c->loads));
		if (c->loads == NULL)
			die("out of memory");
		for (s = 0; s < lg->nsweeps; s++) {
			struct msg_sweep h;
			uint64_t span = gat_span(lg, g, s);

			memset(&h, 0, sizeof(h));
			h.batch = lg->batch0 + s;
			h.span_us = span;
			h.nfs = (uint16_t)lg->fs_per_gat;
			for (k = 0; k < lg->fs_per_gat; k++)
				memcpy(h.fs[k], lg->fsname[gat_fs(lg, g, k)],
				    MSG_FS_MAX);
			for (k = 0; k < lg->fs_per_gat; k++) {
				for (j = 0; j < pf; j++) {
					struct msg_rec *r = &recs[k * pf + j];

					make_rec(lg, g, s, k, j, span, r);
					if (s + 1 == lg->nsweeps)
						expect_add(lg, g, k, j, r);
				}
			}
			wbuf_init(&c->loads[s], 0);
			if (msg_sweep_encode(&c->loads[s], &h, recs,
			        lg->nclients) < 0)
				die("cannot encode a SWEEP");
		}
	}
	free(recs);
}

void
write_expect(const struct loadgen *lg, const char *path)
{
	static const struct {
		const char *suffix;
		unsigned counter;
	} m[] = {{"read_bytes", 0}, {"write_bytes", 1}, {"oss_ops", 4},
	    {"mds_ops", 5}};
	double tot[LG_FS_MAX][IOCOUNT_N];
	char host[LG_HOST_MAX];
	unsigned i, f, k;
	FILE *fp = fopen(path, "w");

	if (fp == NULL)
		die("%s: %s", path, strerror(errno));
	memset(tot, 0, sizeof(tot));
	for (i = 0; i < npool(lg); i++) {
		f = i / per_fs(lg);
		pool_host(i, host, sizeof(host));
		for (k = 0; k < 4; k++)
			(void)fprintf(fp, "%s %s_%s %.6f\n", host,
			    lg->fsname[f], m[k].suffix,
			    lg->expect[i][m[k].counter]);
		for (k = 0; k < IOCOUNT_N; k++)
			tot[f][k] += lg->expect[i][k];
	}
	for (f = 0; f < lg->nfs; f++) {
		for (k = 0; k < 4; k++)
			(void)fprintf(fp, "%s %s_%s %.6f\n", LG_TOTALS_HOST,
			    lg->fsname[f], m[k].suffix, tot[f][m[k].counter]);
	}
	if (fclose(fp) != 0)
		die("%s: %s", path, strerror(errno));
}
