/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The --ganglia-reports command: the configuration's filesystems, their
 * metric prefixes and the totals host, turned into files by
 * gmetric/greport.c.  Every file is written to a temporary name in DIR and
 * renamed over the old one, so that ganglia-web, which reads graph.d on
 * every graph, never reads half a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "config.h"
#include "err.h"
#include "greport.h"
#include "greports.h"

/* Where the lines go, and whether one failed. */
struct greports_ctx {
	const char *dir;
	FILE *out, *errs;
	int status;
};

/* Write len bytes of buf to path through a temporary file in the same
 * directory.  Returns 0 or a negative errno. */
static int
file_replace(const char *path, const char *buf, size_t len)
{
	char tmp[PATH_MAX];
	size_t off = 0;
	int fd, rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	/* mkstemp() makes it 0600; ganglia-web runs as another user. */
	if (fchmod(fd, 0644) < 0)
		rc = -errno;
	while (rc == 0 && off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0)
		(void)unlink(tmp);
	return rc;
}

/* j (taken) as text ending in a newline, or NULL. */
static char *
json_text(json_t *j, size_t *ret_len)
{
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	char *nl;
	size_t len;

	json_decref(j);
	if (text == NULL)
		return NULL;
	len = strlen(text);
	nl = realloc(text, len + 2);
	if (nl == NULL) {
		free(text);
		return NULL;
	}
	nl[len] = '\n';
	nl[len + 1] = '\0';
	*ret_len = len + 1;
	return nl;
}

/* Write j (taken; NULL: out of memory) as DIR/name, with its line. */
static void
ctx_write(struct greports_ctx *c, const char *name, json_t *j)
{
	char path[PATH_MAX];
	char *text = NULL;
	size_t len = 0;
	int rc = 0;

	if (snprintf(path, sizeof(path), "%s/%s", c->dir, name) >=
	    (int)sizeof(path))
		rc = -ENAMETOOLONG;
	if (j != NULL)
		text = json_text(j, &len);
	if (rc == 0 && text == NULL)
		rc = -ENOMEM;
	if (rc == 0)
		rc = file_replace(path, text, len);
	free(text);
	if (rc < 0) {
		(void)fprintf(c->errs, "%s/%s: %s\n", c->dir, name,
		    strerror(-rc));
		c->status = 1;
		return;
	}
	(void)fprintf(c->out, "wrote %s\n", path);
}

/* The view of one filesystem's totals. */
static void
ctx_view(struct greports_ctx *c, const struct greport_fs *fs,
    const char *totals_host)
{
	char name[GREPORT_NAME_MAX], file[GREPORT_NAME_MAX + 16];
	json_t *j = NULL;
	int rc;

	(void)greport_view_name(name, sizeof(name), fs->prefix);
	(void)snprintf(file, sizeof(file), "view_%s.json", name);
	rc = greport_view(&j, fs, totals_host);
	if (rc < 0 && rc != -ENOMEM) {
		(void)fprintf(c->errs, "%s/%s: %s\n", c->dir, file,
		    strerror(-rc));
		c->status = 1;
		return;
	}
	ctx_write(c, file, j);
}

/* The reports of one filesystem; their names are appended to names. */
static void
ctx_fs(struct greports_ctx *c, const struct greport_fs *fs,
    const char *totals_host, json_t *names)
{
	char name[GREPORT_NAME_MAX], file[GREPORT_NAME_MAX + 16];

	for (unsigned k = 0; k < GREPORT_NKINDS; k++) {
		json_t *j = NULL;
		int rc = greport_build(&j, fs, (enum greport_kind)k);

		if (rc == -ENOENT)
			continue;
		(void)greport_name(name, sizeof(name), fs->prefix,
		    (enum greport_kind)k);
		(void)snprintf(file, sizeof(file), "%s.json", name);
		if (rc < 0) {
			(void)fprintf(c->errs, "%s/%s: %s\n", c->dir, file,
			    strerror(-rc));
			c->status = 1;
			continue;
		}
		(void)json_array_append_new(names, json_string(name));
		ctx_write(c, file, j);
	}
	ctx_view(c, fs, totals_host);
}

/* True when prefix is already among the first n of fss. */
static bool
prefix_seen(const struct greport_fs *fss, size_t n, const char *prefix)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(fss[i].prefix, prefix) == 0)
			return true;
	}
	return false;
}

/* The filesystems cfg names (filesystems, then the filesystem sections
 * it wants), once per metric prefix, into fss (room for all).  Returns
 * how many. */
static size_t
config_fss(const struct lh_config *cfg, struct greport_fs *fss)
{
	size_t n = 0;

	for (size_t i = 0; i < cfg->nfilesystems + cfg->nprefixes; i++) {
		const char *fs = i < cfg->nfilesystems ?
		    cfg->filesystems[i] :
		    cfg->prefixes[i - cfg->nfilesystems].fs;
		const char *prefix = config_metric_prefix(cfg, fs);

		if (!config_wants_fs(cfg, fs) || prefix_seen(fss, n, prefix))
			continue;
		fss[n].prefix = prefix;
		fss[n].extra_metrics = cfg->extra_metrics;
		fss[n].metadata_ops = cfg->metadata_ops;
		n++;
	}
	return n;
}

/* Every file of cfg's filesystems fss[0..n). */
static void
ctx_all(struct greports_ctx *c, const struct lh_config *cfg,
    const struct greport_fs *fss, size_t n)
{
	json_t *names = json_array(), *def = NULL;
	const char **list;
	size_t nnames;

	if (names == NULL) {
		ctx_write(c, "default.json.example", NULL);
		return;
	}
	for (size_t i = 0; i < n; i++)
		ctx_fs(c, &fss[i], cfg->totals_host, names);
	nnames = json_array_size(names);
	list = calloc(nnames + 1, sizeof(*list));
	if (list != NULL) {
		for (size_t i = 0; i < nnames; i++)
			list[i] = json_string_value(json_array_get(names, i));
		(void)greport_default(&def, list, nnames);
	}
	ctx_write(c, "default.json.example", def);
	free(list);
	json_decref(names);
}

int
greports_run(const char *dir, const char *config_path, FILE *out, FILE *errs)
{
	struct greports_ctx c = {dir, out, errs, 0};
	struct lh_config *cfg = NULL;
	struct greport_fs *fss;
	struct lh_err err;
	struct stat st;
	size_t n;
	int e = 0;

	if (config_load(config_path, &cfg, &err) < 0) {
		(void)fprintf(errs, "%s\n", err.reason);
		return 1;
	}
	if (cfg->role == LH_ROLE_GATHERER) {
		(void)fprintf(errs,
		    "%s: --ganglia-reports needs an aggregator's or a relay's "
		    "configuration, not a gatherer's\n",
		    cfg->path);
		config_free(cfg);
		return 1;
	}
	if (stat(dir, &st) < 0)
		e = errno;
	else if (!S_ISDIR(st.st_mode))
		e = ENOTDIR;
	if (e != 0) {
		(void)fprintf(errs, "%s: %s\n", dir, strerror(e));
		config_free(cfg);
		return 1;
	}
	fss = calloc(cfg->nfilesystems + cfg->nprefixes + 1, sizeof(*fss));
	n = fss != NULL ? config_fss(cfg, fss) : 0;
	if (fss == NULL)
		(void)fprintf(errs, "%s: out of memory\n", dir);
	else if (n == 0)
		(void)fprintf(errs,
		    "%s: no filesystem named (filesystems, or a filesystem "
		    "section): the metric names are not known\n",
		    cfg->path);
	else
		ctx_all(&c, cfg, fss, n);
	if (n == 0)
		c.status = 1;
	free(fss);
	config_free(cfg);
	return c.status;
}
