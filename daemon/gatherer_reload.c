/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SIGHUP in the gatherer: the configuration file again.  Anything wrong
 * with it (syntax, values, the key file, a key that needs a restart) is
 * one line, and the running configuration stays.  Otherwise it applies
 * at once: a new key file for the next handshake, a new aggregator, name
 * or limits with a new connection (sender_conf_equal(); what is not
 * acknowledged goes there), and targets a new lustre_root or filesystems
 * list adds start with a baseline.  The interval, like the aggregator's,
 * needs a restart: the batches numbered and the state saved belong to
 * sweeps of the running one.
 */
#include <errno.h>
#include <string.h>

#include "config.h"
#include "err.h"
#include "gatherer_int.h"
#include "gstate.h"
#include "log.h"
#include "sender.h"

/* Why cfg cannot replace the running configuration, or NULL. */
static const char *
reload_refusal(const struct gatherer *g, const struct lh_config *cfg)
{
	const struct lh_config *old = g->cfg;

	if (cfg->role != LH_ROLE_GATHERER)
		return "role: a change needs a restart";
	if (cfg->server_host == NULL || cfg->server_host[0] == '\0')
		return "the gatherer needs server = \"host[:port]\"";
	if (strcmp(cfg->state_dir, old->state_dir) != 0)
		return "state_dir: a change needs a restart";
	if (cfg->interval != old->interval)
		return "interval: a change needs a restart";
	if (g->rd.fd >= 0 && strcmp(cfg->lustre_root, old->lustre_root) != 0)
		return "lustre_root: a change needs a restart while the stats "
		       "reader reads the tree";
	return NULL;
}

/*
 * The key file of cfg into *ring.  A key file root keeps to itself was
 * read at start, as root: the user we became cannot read it again, and
 * *ret_keep says to keep the key read then (one line).  Returns 0, or -1
 * after one line: the reload is refused.
 */
static int
reload_key(const struct gatherer *g, const struct lh_config *cfg,
    struct keyring *ring, bool *ret_keep)
{
	struct lh_err err;
	int rc;

	memset(ring, 0, sizeof(*ring));
	rc = keyfile_load(cfg->secret_file, ring, &err);
	*ret_keep = rc == -EACCES && g->ps.dropped;
	if (*ret_keep) {
		log_warnx("%s; keeping the key read at start (give the file to "
		          "%s for a new key to apply without a restart)",
		    err.reason, g->ps.user);
	} else if (rc < 0) {
		log_warnx("%s; keeping the running configuration", err.reason);
		return -1;
	}
	return 0;
}

void
gatherer_reload(void *arg)
{
	struct gatherer *g = arg;
	struct lh_config *cfg, *old = g->cfg;
	struct keyring ring;
	struct lh_err err;
	const char *why;
	uint64_t scope;
	bool reconnect, keep_key;

	if (config_load(old->path, &cfg, &err) < 0) {
		log_warnx("%s; keeping the running configuration", err.reason);
		return;
	}
	why = reload_refusal(g, cfg);
	if (why != NULL) {
		log_warnx("%s: %s; keeping the running configuration",
		    cfg->path, why);
		config_free(cfg);
		return;
	}
	if (reload_key(g, cfg, &ring, &keep_key) < 0) {
		config_free(cfg);
		return;
	}
	/* From here on the new configuration is taken. */
	if (!keep_key) {
		keyring_clear(&g->ring);
		g->ring = ring; /* the sender's pointer stays valid */
	}
	/* A sender the last attempt could not make is made again too. */
	reconnect = g->up.snd == NULL || !sender_conf_equal(old, cfg);
	scope =
	    gstate_scope(cfg->lustre_root, cfg->filesystems, cfg->nfilesystems);
	if (scope != g->scope) {
		g->scope = scope;
		g->table.new_targets_are_old = true;
	}
	g->cfg = cfg;
	if (reconnect && gatherer_connect(g) < 0)
		log_warnx("cannot connect to the aggregator");
	log_info("configuration reloaded from %s%s", cfg->path,
	    reconnect ? ": connecting to the aggregator again" : "");
	config_free(old);
}
