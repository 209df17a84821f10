/* SPDX-License-Identifier: BSD-2-Clause */
/* What -n checks beyond the file's syntax (check.h). */
#include <sys/stat.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "consumer.h"
#include "config.h"
#include "err.h"
#include "hostmap.h"
#include "httpd.h"
#include "keyfile.h"

int
check_path(const struct lh_config *cfg, FILE *out, const char *key,
    const char *path, bool dir)
{
	struct stat sb;

	if (stat(path, &sb) < 0) {
		if (errno == ENOENT) {
			(void)fprintf(out,
			    "%s: warning: %s %s: not there yet (%s)\n",
			    cfg->path, key, path, strerror(errno));
			return 0;
		}
		(void)fprintf(out, "%s: %s %s: %s\n", cfg->path, key, path,
		    strerror(errno));
		return -1;
	}
	if (dir ? !S_ISDIR(sb.st_mode) : !S_ISREG(sb.st_mode)) {
		(void)fprintf(out, "%s: %s %s: not a %s\n", cfg->path, key,
		    path, dir ? "directory" : "regular file");
		return -1;
	}
	return 1;
}

static int
check_secret(const struct lh_config *cfg, FILE *out)
{
	struct keyring ring;
	struct lh_err err;
	int rc = check_path(cfg, out, "secret_file", cfg->secret_file, false);

	if (rc <= 0)
		return rc;
	memset(&ring, 0, sizeof(ring));
	rc = keyfile_load(cfg->secret_file, &ring, &err);
	keyring_clear(&ring);
	if (rc < 0) {
		(void)fprintf(out, "%s: secret_file: %s\n", cfg->path,
		    err.reason);
		return -1;
	}
	return 0;
}

int
check_hosts(const struct lh_config *cfg, FILE *out)
{
	struct hostmap *m;
	struct lh_err err;
	size_t i;
	int rc = 0;

	if (hostmap_new(&m) < 0) {
		(void)fprintf(out, "lharvestd: out of memory\n");
		return -1;
	}
	for (i = 0; i < cfg->nrewrites && rc == 0; i++) {
		rc = hostmap_add_rewrite(m, cfg->rewrites[i], &err);
		if (rc < 0)
			(void)fprintf(out, "%s: rewrite '%s': %s\n", cfg->path,
			    cfg->rewrites[i], err.reason);
	}
	if (rc == 0 && cfg->hosts_file != NULL &&
	    check_path(cfg, out, "hosts_file", cfg->hosts_file, false) > 0) {
		rc = hostmap_load_file(m, cfg->hosts_file, &err);
		if (rc < 0)
			(void)fprintf(out, "%s\n", err.reason);
	}
	hostmap_free(m);
	return rc < 0 ? -1 : 0;
}

int
check_config(const struct lh_config *cfg, FILE *out,
    const struct consumer_kind *outs, size_t nouts)
{
	int bad = 0;
	size_t i;

	bad |= check_secret(cfg, out) < 0;
	bad |= check_path(cfg, out, "state_dir", cfg->state_dir, true) < 0;
	if (cfg->role == LH_ROLE_GATHERER)
		bad |= check_path(cfg, out, "lustre_root", cfg->lustre_root,
		           true) < 0;
	bad |= httpd_check(cfg, out) < 0;
	for (i = 0; i < nouts; i++) {
		if (outs[i].check != NULL)
			bad |= outs[i].check(cfg, out) < 0;
	}
	return bad ? 1 : 0;
}
