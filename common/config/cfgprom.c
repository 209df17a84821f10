/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The prometheus { } section: which per-host families the /metrics page
 * shows, of which filesystems, how many series at most, and which
 * metadata operations one by one (docs/api.md section 2).
 */
#include <errno.h>
#include <string.h>

#include "cfgint.h"
#include "err.h"
#include "mdops.h"

static const struct {
	const char *name;
	unsigned bits;
} families[] = {
    {"bytes", CONFIG_PROM_BYTES},
    {"ops", CONFIG_PROM_OPS},
    {"oss_ops", CONFIG_PROM_OSS_OPS},
    {"mds_ops", CONFIG_PROM_MDS_OPS},
    {"all", CONFIG_PROM_ALL},
};

/* The bits of a family name, or 0. */
static unsigned
family_bits(const char *v)
{
	size_t i;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		if (strcmp(families[i].name, v) == 0)
			return families[i].bits;
	}
	return 0;
}

int
cfgcheck_prom_families(cfg_t *cfg, cfg_opt_t *opt)
{
	unsigned i;

	for (i = 0; i < cfg_opt_size(opt); i++) {
		const char *v = cfg_opt_getnstr(opt, i);

		if (family_bits(v) == 0) {
			cfg_error(cfg,
			    "families: '%s' is not one of bytes, ops, oss_ops, "
			    "mds_ops, all",
			    v);
			return -1;
		}
	}
	return 0;
}

/* families: every one unless the section lists them ({} is none). */
static unsigned
fill_families(cfg_t *sec)
{
	cfg_opt_t *o = sec != NULL ? cfg_getopt(sec, "families") : NULL;
	unsigned i, bits = 0;

	if (o == NULL || (o->flags & CFGF_MODIFIED) == 0)
		return CONFIG_PROM_ALL;
	for (i = 0; i < cfg_opt_size(o); i++)
		bits |= family_bits(cfg_opt_getnstr(o, i));
	return bits;
}

int
cfgfill_prom(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	cfg_t *sec = cfg_size(cfg, "prometheus") > 0 ?
	    cfg_getsec(cfg, "prometheus") :
	    NULL;
	unsigned i;

	c->prom_families = fill_families(sec);
	c->prom_max_series = CONFIG_DEFAULT_PROM_MAX_SERIES;
	if (sec == NULL)
		return 0;
	c->prom_max_series = (unsigned long)cfg_getint(sec, "max_series");
	for (i = 0; i < cfg_size(sec, "metadata_ops"); i++) {
		int k = mdops_lookup(cfg_getnstr(sec, "metadata_ops", i));

		c->prom_metadata_ops |=
		    k >= 0 ? (uint32_t)1 << k : ((uint32_t)1 << MDOPS_N) - 1;
	}
	if (cfgfill_list(sec, "filesystems", &c->prom_filesystems,
	        &c->nprom_filesystems) < 0)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	return 0;
}
