/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libconfuse file -> struct lh_config, with line-precise errors: the
 * keys are declared in cfgkeys.c, checked in cfgcheck.c, and copied into
 * the struct by cfgfill.c; this file runs the steps and owns the result.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfgint.h"
#include "cidr.h"
#include "config.h"
#include "err.h"

static void free_list(char **v, size_t n);

/* The parse, its libconfuse result turned into an errno and a reason. */
static int
parse(cfg_t *cfg, const char *path, struct lh_err *err, char ***ret_notes,
    size_t *ret_nnotes)
{
	int rc = cfgkeys_parse(cfg, path, err, ret_notes, ret_nnotes);
	int e = errno != 0 ? errno : ENOENT;

	switch (rc) {
	case CFG_SUCCESS:
		return 0;
	case CFG_FILE_ERROR:
		return lh_err_set(err, 0, -e, "%s: %s", path, strerror(e));
	default:
		if (err->reason[0] == '\0')
			(void)lh_err_set(err, 0, -EINVAL, "%s: parse error",
			    path);
		return -EINVAL;
	}
}

int
config_load(const char *path, struct lh_config **ret, struct lh_err *err)
{
	struct lh_config *c = NULL;
	struct lh_err local;
	char **notes = NULL;
	size_t nnotes = 0;
	cfg_t *cfg;
	int rc;

	if (err == NULL)
		err = &local;
	lh_err_clear(err);
	cfg = cfgkeys_init();
	if (cfg == NULL)
		return lh_err_set(err, 0, -ENOMEM, "%s: out of memory", path);
	rc = parse(cfg, path, err, &notes, &nnotes);
	if (rc < 0)
		goto out;
	c = calloc(1, sizeof(*c));
	if (c == NULL || (c->path = strdup(path)) == NULL) {
		rc = lh_err_set(err, 0, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	c->deprecations = notes;
	c->ndeprecations = nnotes;
	notes = NULL;
	nnotes = 0;
	rc = cfgfill_config(c, cfg, err);
	if (rc < 0)
		goto out;
	if (c->role == LH_ROLE_GATHERER && c->server_host == NULL) {
		/* Not fatal for --once, which never connects: the caller
		 * decides (see daemon/main.c). */
		c->server_port = CONFIG_DEFAULT_PORT;
	}
	*ret = c;
	c = NULL;
out:
	free_list(notes, nnotes);
	config_free(c);
	cfg_free(cfg);
	return rc;
}

static void
free_list(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
config_free(struct lh_config *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->nfilesystems; i++)
		free(c->filesystems[i]);
	free(c->filesystems);
	free_list(c->dns_servers, c->ndns_servers);
	free_list(c->rewrites, c->nrewrites);
	free_list(c->gatherers, c->ngatherers);
	for (i = 0; i < c->nprefixes; i++) {
		free(c->prefixes[i].fs);
		free(c->prefixes[i].prefix);
	}
	free(c->prefixes);
	for (i = 0; i < c->nroutes; i++) {
		free(c->routes[i].name);
		free_list(c->routes[i].networks, c->routes[i].nnetworks);
		free(c->routes[i].host);
	}
	free(c->routes);
	free(c->allow);
	for (i = 0; i < c->nbinds; i++)
		cfgbind_clear(&c->binds[i]);
	free(c->binds);
	free(c->listen_host);
	free(c->gmond_conf);
	free(c->hosts_file);
	free(c->totals_host);
	free(c->path);
	free(c->lustre_root);
	free(c->server_host);
	free(c->secret_file);
	free(c->state_dir);
	free(c->name);
	free(c->user);
	free_list(c->prom_filesystems, c->nprom_filesystems);
	free_list(c->deprecations, c->ndeprecations);
	cfghttp_free(c);
	free(c);
}

unsigned
config_read_timeout(const struct lh_config *c)
{
	unsigned t = c->interval * 3;

	if (c->read_timeout != 0)
		return c->read_timeout;
	return t > 120 ? t : 120;
}

bool
config_wants_fs(const struct lh_config *c, const char *fs)
{
	size_t i;

	if (c->nfilesystems == 0)
		return true;
	for (i = 0; i < c->nfilesystems; i++) {
		if (strcmp(c->filesystems[i], fs) == 0)
			return true;
	}
	return false;
}

bool
config_prom_wants_fs(const struct lh_config *c, const char *fs)
{
	size_t i;

	if (c->nprom_filesystems == 0)
		return true;
	for (i = 0; i < c->nprom_filesystems; i++) {
		if (strcmp(c->prom_filesystems[i], fs) == 0)
			return true;
	}
	return false;
}

const char *
config_role_name(enum lh_role role)
{
	switch (role) {
	case LH_ROLE_GATHERER:
		return "gatherer";
	case LH_ROLE_AGGREGATOR:
		return "aggregator";
	case LH_ROLE_RELAY:
		return "relay";
	}
	return "?";
}

const char *
config_metric_prefix(const struct lh_config *cfg, const char *fs)
{
	size_t i;

	for (i = 0; i < cfg->nprefixes; i++) {
		if (strcmp(cfg->prefixes[i].fs, fs) == 0)
			return cfg->prefixes[i].prefix;
	}
	return fs;
}
