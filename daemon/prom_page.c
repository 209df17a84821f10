/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The counters of the Prometheus page (prom_int.h): each filesystem's
 * totals, and each (host, filesystem)'s counters since they began, as
 * _total counters.  Written once per closed sweep for every scrape until
 * the next, so it is the part that must be fast at 20,000 hosts x 4
 * filesystems: each row's labels are escaped once, then every family is
 * a run of name + labels + number (docs/performance.md).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "hosttotals.h"
#include "iocount.h"
#include "mdops.h"
#include "prom_int.h"
#include "promtext.h"

/* The six counters of struct iocount, in its order (IOCOUNT_N). */
static const struct {
	const char *host, *fs; /* family names */
	unsigned bit;          /* CONFIG_PROM_* of the per-host family */
	const char *help;
} fams[IOCOUNT_N] = {
    {"lustre_client_read_bytes_total", "lustre_fs_read_bytes_total",
        CONFIG_PROM_BYTES, "Bytes read from the filesystem's OSTs and MDTs"},
    {"lustre_client_write_bytes_total", "lustre_fs_write_bytes_total",
        CONFIG_PROM_BYTES, "Bytes written to the filesystem's OSTs and MDTs"},
    {"lustre_client_read_ops_total", "lustre_fs_read_ops_total",
        CONFIG_PROM_OPS, "Bulk read RPCs (read_bytes samples)"},
    {"lustre_client_write_ops_total", "lustre_fs_write_ops_total",
        CONFIG_PROM_OPS, "Bulk write RPCs (write_bytes samples)"},
    {"lustre_client_oss_ops_total", "lustre_fs_oss_ops_total",
        CONFIG_PROM_OSS_OPS, "Requests to the OSSs (every OST counter)"},
    {"lustre_client_mds_ops_total", "lustre_fs_mds_ops_total",
        CONFIG_PROM_MDS_OPS, "Requests to the MDSs (every MDT counter)"},
};

#define HOST_HELP_TAIL                                                         \
	", per client host, summed over its NIDs, since the counters began "   \
	"(exact sweep deltas; steps once per sweep)"
#define FS_HELP_TAIL                                                           \
	", per filesystem, over all its clients, since the counters began"

/* A row chosen for the page, and where its escaped labels are. */
struct shown {
	const struct hosttotals_row *r;
	size_t off, len; /* in the labels buffer: {host="..",fs=".."} */
};

static void
family(struct promtext *p, const char *name, const char *help, const char *tail)
{
	char text[256];

	(void)snprintf(text, sizeof(text), "%s%s", help, tail);
	promtext_family(p, name, "counter", text);
}

static size_t
popcount32(uint32_t v)
{
	size_t n = 0;

	for (; v != 0; v &= v - 1)
		n++;
	return n;
}

/* Per-host series of one row under cfg. */
static size_t
row_series(const struct lh_config *cfg)
{
	size_t i, n = 0;

	for (i = 0; i < IOCOUNT_N; i++)
		n += (cfg->prom_families & fams[i].bit) != 0;
	return n + popcount32(cfg->prom_metadata_ops);
}

/* Each filesystem's six counters, clients, and chosen metadata ops. */
static void
put_fs(struct promtext *p, const struct lh_config *cfg,
    const struct prom_counters *c)
{
	static const char *const key[] = {"fs", "op"};
	size_t i, j, k;

	for (k = 0; k < IOCOUNT_N; k++) {
		family(p, fams[k].fs, fams[k].help, FS_HELP_TAIL);
		for (i = 0; i < c->nfss; i++) {
			const struct hosttotals_fs *f = &c->fss[i];
			uint64_t v[IOCOUNT_N];
			const char *val[] = {f->fs};

			if (!config_prom_wants_fs(cfg, f->fs))
				continue;
			iocount_to_array(&f->total, v);
			promtext_str(p, fams[k].fs);
			promtext_labels(p, key, val, 1);
			promtext_sample_u64(p, "", 0, "", 0, v[k]);
		}
	}
	promtext_family(p, "lustre_fs_clients", "gauge",
	    "Client NIDs of the filesystem in the last sweep");
	for (i = 0; i < c->nfss; i++) {
		if (config_prom_wants_fs(cfg, c->fss[i].fs)) {
			const char *val[] = {c->fss[i].fs};

			promtext_gauge(p, "lustre_fs_clients", key, val, 1,
			    (double)c->fss[i].clients);
		}
	}
	if (cfg->prom_metadata_ops == 0)
		return;
	family(p, "lustre_fs_metadata_ops_total",
	    "Metadata requests by operation", FS_HELP_TAIL);
	for (j = 0; j < MDOPS_N; j++) {
		if ((cfg->prom_metadata_ops >> j & 1) == 0)
			continue;
		for (i = 0; i < c->nfss; i++) {
			const char *val[] = {c->fss[i].fs,
			    mdops_name((unsigned)j)};

			if (!config_prom_wants_fs(cfg, c->fss[i].fs))
				continue;
			promtext_str(p, "lustre_fs_metadata_ops_total");
			promtext_labels(p, key, val, 2);
			promtext_sample_u64(p, "", 0, "", 0,
			    c->fss[i].op_total[j]);
		}
	}
}

/* The rows shown, in order, with their labels escaped into lab.  Returns
 * how many, or -ENOMEM. */
static long
choose(const struct lh_config *cfg, const struct prom_counters *c,
    struct shown *out, struct promtext *lab, struct prom_page_stats *st)
{
	static const char *const key[] = {"host", "fs"};
	size_t per = row_series(cfg), i, n = 0;

	for (i = 0; i < c->nrows && per > 0; i++) {
		const struct hosttotals_row *r = &c->rows[i];
		const char *val[] = {r->host, r->fs};

		if (!config_prom_wants_fs(cfg, r->fs))
			continue;
		if (cfg->prom_max_series != 0 &&
		    st->series + per > cfg->prom_max_series) {
			st->dropped += per;
			continue;
		}
		out[n].r = r;
		out[n].off = lab->len;
		promtext_labels(lab, key, val, 2);
		out[n].len = lab->len - out[n].off;
		st->series += per;
		n++;
	}
	st->rows = n;
	return lab->failed ? -ENOMEM : (long)n;
}

/* One per-host family k over the rows shown. */
static void
put_host_family(struct promtext *p, size_t k, const struct shown *s, size_t n,
    const char *labels)
{
	size_t nlen = strlen(fams[k].host), i;

	family(p, fams[k].host, fams[k].help, HOST_HELP_TAIL);
	for (i = 0; i < n; i++) {
		uint64_t v[IOCOUNT_N];

		iocount_to_array(&s[i].r->total, v);
		promtext_sample_u64(p, fams[k].host, nlen, labels + s[i].off,
		    s[i].len, v[k]);
	}
}

/* The chosen metadata operations, a series per row and op. */
static void
put_host_ops(struct promtext *p, uint32_t ops, const struct shown *s, size_t n,
    const char *labels)
{
	static const char name[] = "lustre_client_metadata_ops_total";
	size_t i;
	unsigned j;

	family(p, name, "Metadata requests by operation", HOST_HELP_TAIL);
	for (j = 0; j < MDOPS_N; j++) {
		const char *op = mdops_name(j);

		if ((ops >> j & 1) == 0)
			continue;
		for (i = 0; i < n; i++) {
			/* {host="..",fs="..",op="open"} */
			promtext_raw(p, name, sizeof(name) - 1);
			promtext_raw(p, labels + s[i].off, s[i].len - 1);
			promtext_raw(p, ",op=\"", 5);
			promtext_str(p, op);
			promtext_sample_u64(p, "\"}", 2, "", 0,
			    s[i].r->op_total[j]);
		}
	}
}

int
prom_page_render(struct promtext *p, const struct lh_config *cfg,
    const struct prom_counters *c, struct prom_page_stats *ret)
{
	struct promtext lab;
	struct shown *s;
	long n;
	size_t k;

	memset(ret, 0, sizeof(*ret));
	ret->rows_refused = c->rows_refused;
	put_fs(p, cfg, c);
	s = calloc(c->nrows > 0 ? c->nrows : 1, sizeof(*s));
	if (s == NULL) {
		p->failed = true;
		return -ENOMEM;
	}
	promtext_init(&lab);
	n = choose(cfg, c, s, &lab, ret);
	/* The whole page at once: growing it by doubling would copy it. */
	if (n > 0)
		(void)promtext_reserve(p,
		    ret->series * (lab.len / (size_t)n + 56) + 4096);
	for (k = 0; k < IOCOUNT_N && n > 0; k++) {
		if (cfg->prom_families & fams[k].bit)
			put_host_family(p, k, s, (size_t)n, lab.buf);
	}
	if (n > 0 && cfg->prom_metadata_ops != 0)
		put_host_ops(p, cfg->prom_metadata_ops, s, (size_t)n, lab.buf);
	promtext_free(&lab);
	free(s);
	if (n < 0)
		p->failed = true;
	return p->failed ? -ENOMEM : 0;
}
