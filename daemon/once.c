/* SPDX-License-Identifier: BSD-2-Clause */
/* One read of every export of this server, printed as JSON lines. */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "config.h"
#include "err.h"
#include "iocount.h"
#include "json.h"
#include "log.h"
#include "lustre_tree.h"
#include "once.h"
#include "statsparse.h"

/* Export stats files are 0.2-2.5 KB; a file larger than this is not one. */
#define ONCE_FILE_MAX ((size_t)64 * 1024)

struct once_rec {
	char fs[LTREE_FS_MAX];
	char nid[LTREE_NID_MAX];
	struct iocount io;
	bool peer; /* a server-to-server export: never printed */
};

struct once_ctx {
	struct once_rec *recs;
	size_t n, cap;
	char *buf;
	struct lstats *st;
};

static struct once_rec *
once_add(struct once_ctx *c)
{
	struct once_rec *r;

	r = array_grow(c->recs, &c->cap, c->n, sizeof(*r));
	if (r == NULL)
		return NULL;
	c->recs = r;
	r = &c->recs[c->n++];
	memset(r, 0, sizeof(*r));
	return r;
}

static int
once_export(struct once_ctx *c, struct ltree_target *tg, const char *nid)
{
	char path[LTREE_NID_MAX + 16];
	struct once_rec *r;
	enum ltree_peer peer;
	struct lh_err err;
	size_t len;
	int rc;

	(void)snprintf(path, sizeof(path), "%s/uuid", nid);
	rc = ltree_read_at(tg->exports_fd, path, &tg->open_flags, c->buf,
	    ONCE_FILE_MAX, &len);
	if (rc < 0 && ltree_gone(rc))
		return 0;
	peer = rc == 0 ? ltree_classify_uuid(c->buf, len) : LTREE_PEER_STALE;

	(void)snprintf(path, sizeof(path), "%s/stats", nid);
	rc = ltree_read_at(tg->exports_fd, path, &tg->open_flags, c->buf,
	    ONCE_FILE_MAX, &len);
	if (rc < 0) {
		if (!ltree_gone(rc))
			log_warnx("%s/%s: %s, skipping", tg->path, path,
			    rc == -EFBIG ? "larger than 64 KiB" :
			                   strerror(-rc));
		return 0;
	}
	rc = lstats_parse(c->st, c->buf, len, 0, &err);
	if (rc < 0) {
		log_warnx("%s/%s: %s, skipping", tg->path, path, err.reason);
		return 0;
	}
	if (c->st->nskipped > 0)
		log_debug("%s/%s: line %u: %u unknown lines ignored", tg->path,
		    path, c->st->first_skipped, c->st->nskipped);
	r = once_add(c);
	if (r == NULL)
		return -ENOMEM;
	memcpy(r->fs, tg->fs, sizeof(r->fs));
	(void)snprintf(r->nid, sizeof(r->nid), "%s", nid);
	r->peer = peer == LTREE_PEER_SERVER;
	iocount_from_stats(&r->io, c->st, tg->kind);
	return 0;
}

static int
once_target(struct once_ctx *c, struct ltree_target *tg)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	fd = openat(tg->exports_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		log_warn("%s", tg->path);
		if (fd >= 0)
			(void)close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		/* exports/ also holds the regular file "clear". */
		if (de->d_name[0] == '.' || ltree_nid_is_local(de->d_name) ||
		    strlen(de->d_name) >= LTREE_NID_MAX ||
		    !ltree_is_dir_entry(dirfd(d), de))
			continue;
		rc = once_export(c, tg, de->d_name);
		if (rc < 0)
			break;
	}
	(void)closedir(d);
	return rc;
}

static int
rec_cmp(const void *a, const void *b)
{
	const struct once_rec *x = a, *y = b;
	int r = strcmp(x->fs, y->fs);

	return r != 0 ? r : strcmp(x->nid, y->nid);
}

static void
print_rec(FILE *out, const char *fs, const char *nid, const struct iocount *io)
{
	(void)fputs("{\"fs\":", out);
	json_str(out, fs);
	(void)fputs(",\"nid\":", out);
	json_str(out, nid);
	(void)fprintf(out,
	    ",\"read_bytes\":%" PRIu64 ",\"write_bytes\":%" PRIu64
	    ",\"read_ops\":%" PRIu64 ",\"write_ops\":%" PRIu64
	    ",\"oss_ops\":%" PRIu64 ",\"mds_ops\":%" PRIu64 "}\n",
	    io->read_bytes, io->write_bytes, io->read_ops, io->write_ops,
	    io->oss_ops, io->mds_ops);
}

/* Sum the records of each (fs, nid); a NID that is a server peer on any
 * target of that filesystem is left out everywhere, including where its
 * directory is stale (an empty uuid says nothing). */
static void
print_all(struct once_ctx *c, FILE *out)
{
	size_t i = 0, j;

	if (c->n == 0)
		return;
	qsort(c->recs, c->n, sizeof(*c->recs), rec_cmp);
	while (i < c->n) {
		struct iocount sum;
		bool peer = false;

		memset(&sum, 0, sizeof(sum));
		for (j = i; j < c->n && rec_cmp(&c->recs[i], &c->recs[j]) == 0;
		     j++) {
			peer = peer || c->recs[j].peer;
			iocount_add(&sum, &c->recs[j].io);
		}
		if (!peer)
			print_rec(out, c->recs[i].fs, c->recs[i].nid, &sum);
		i = j;
	}
}

int
once_run(const struct lh_config *cfg, FILE *out)
{
	struct once_ctx c;
	struct ltree t;
	struct lh_err err;
	size_t i, used = 0;
	int rc, status = 1;

	memset(&c, 0, sizeof(c));
	memset(&t, 0, sizeof(t));
	c.buf = malloc(ONCE_FILE_MAX);
	c.st = malloc(sizeof(*c.st));
	if (c.buf == NULL || c.st == NULL) {
		log_warnx("out of memory");
		goto out;
	}
	rc = ltree_discover(&t, cfg->lustre_root, &err);
	if (rc < 0) {
		log_warnx("%s", err.reason);
		goto out;
	}
	for (i = 0; i < t.ntargets; i++) {
		if (!config_wants_fs(cfg, t.targets[i].fs))
			continue;
		used++;
		log_debug("%s: reading", t.targets[i].path);
		if (once_target(&c, &t.targets[i]) < 0) {
			log_warnx("out of memory");
			goto out;
		}
	}
	if (used == 0) {
		log_info("no Lustre target found under %s%s", cfg->lustre_root,
		    cfg->nfilesystems > 0 ? " for the configured filesystems" :
		                            "");
		status = 0;
		goto out;
	}
	print_all(&c, out);
	status = fflush(out) == 0 ? 0 : 1;
out:
	ltree_free(&t);
	free(c.recs);
	free(c.buf);
	free(c.st);
	return status;
}
