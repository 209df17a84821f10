/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gatherer_networks (issue 15, item 2): "NAME NET [NET...]", a sender's
 * name first, then the networks it may connect from; checked as it is
 * parsed, then turned into struct lh_bind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cfgint.h"
#include "cidr.h"
#include "err.h"

/* One binding being read, and the room its networks have. */
struct bind_parse {
	struct lh_bind b;
	size_t cap;
};

void
cfgbind_clear(struct lh_bind *b)
{
	free(b->name);
	free(b->nets);
	memset(b, 0, sizeof(*b));
}

/* The first token: the name. */
static int
bind_name(struct lh_bind *b, const char *v, const char *p, size_t len,
    struct lh_err *err)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '!' || p[i] > '~')
			len = 0;
	}
	if (len == 0 || len > 63)
		return lh_err_set(err, 0, -EINVAL,
		    "gatherer_networks: '%s': a name of 1-63 printable "
		    "characters first",
		    v);
	b->name = strndup(p, len);
	return b->name == NULL ? -ENOMEM : 0;
}

static int
bind_token(struct bind_parse *bp, const char *v, const char *p, size_t len,
    struct lh_err *err)
{
	struct lh_bind *b = &bp->b;
	char tok[CIDR_STR_MAX];
	struct cidr *n;
	struct lh_err e;

	if (b->name == NULL)
		return bind_name(b, v, p, len, err);
	if (b->nnets == CONFIG_BIND_NETS_MAX)
		return lh_err_set(err, 0, -EINVAL,
		    "gatherer_networks: '%s': more than %d networks", v,
		    CONFIG_BIND_NETS_MAX);
	if (len >= sizeof(tok))
		return lh_err_set(err, 0, -EINVAL,
		    "gatherer_networks: '%s': '%.*s' is not a network", v,
		    (int)len, p);
	memcpy(tok, p, len);
	tok[len] = '\0';
	n = array_grow(b->nets, &bp->cap, b->nnets, sizeof(*n));
	if (n == NULL)
		return -ENOMEM;
	b->nets = n;
	if (cidr_parse(tok, &b->nets[b->nnets], &e) < 0)
		return lh_err_set(err, 0, -EINVAL,
		    "gatherer_networks: '%s': %s", v, e.reason);
	b->nnets++;
	return 0;
}

static int
bind_parse(const char *v, struct lh_bind *ret, struct lh_err *err)
{
	struct bind_parse bp;
	const char *p = v;
	int rc = 0;

	memset(&bp, 0, sizeof(bp));
	while (rc == 0) {
		size_t len;

		p += strspn(p, " \t");
		if (*p == '\0')
			break;
		len = strcspn(p, " \t");
		rc = bind_token(&bp, v, p, len, err);
		p += len;
	}
	if (rc == 0 && bp.b.nnets == 0)
		rc = lh_err_set(err, 0, -EINVAL,
		    "gatherer_networks: '%s': a name, then the networks it "
		    "may connect from",
		    v);
	if (rc < 0) {
		cfgbind_clear(&bp.b);
		return rc == -ENOMEM ? lh_err_set(err, 0, rc, "out of memory") :
		                       rc;
	}
	*ret = bp.b;
	return 0;
}

/* Whether entry i names a name one of the entries before it names. */
static bool
bind_named_before(cfg_opt_t *opt, unsigned i, const char *name)
{
	bool twice = false;

	for (unsigned j = 0; j < i && !twice; j++) {
		struct lh_bind o;

		if (bind_parse(cfg_opt_getnstr(opt, j), &o, NULL) == 0) {
			twice = strcmp(o.name, name) == 0;
			cfgbind_clear(&o);
		}
	}
	return twice;
}

int
cfgcheck_binds(cfg_t *cfg, cfg_opt_t *opt)
{
	unsigned i;

	for (i = 0; i < cfg_opt_size(opt); i++) {
		struct lh_bind b;
		struct lh_err e;
		bool twice;

		if (bind_parse(cfg_opt_getnstr(opt, i), &b, &e) < 0) {
			cfg_error(cfg, "%s", e.reason);
			return -1;
		}
		twice = bind_named_before(opt, i, b.name);
		if (twice)
			cfg_error(cfg, "gatherer_networks: '%s' named twice",
			    b.name);
		cfgbind_clear(&b);
		if (twice)
			return -1;
	}
	return 0;
}

int
cfgfill_binds(struct lh_config *c, cfg_t *cfg, struct lh_err *err)
{
	unsigned i, n = cfg_size(cfg, "gatherer_networks");

	if (n == 0)
		return 0;
	c->binds = calloc(n, sizeof(*c->binds));
	if (c->binds == NULL)
		return lh_err_set(err, 0, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		int rc = bind_parse(cfg_getnstr(cfg, "gatherer_networks", i),
		    &c->binds[i], err);

		if (rc < 0)
			return rc; /* cfgcheck_binds saw it first */
		c->nbinds++;
	}
	return 0;
}
