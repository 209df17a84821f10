/* SPDX-License-Identifier: BSD-2-Clause */
/* The stage of the one-pass SWEEP decoder (msg.h, msg_sweep_stage()):
 * the records kept in binary form, in arrays the caller reuses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "msg.h"
#include "msg_int.h"

void
msg_stage_clear(struct msg_stage *st)
{
	st->ngroups = 0;
	st->nrecs = 0;
	st->ncspans = 0;
	st->nops = 0;
	st->ntext = 0;
}

void
msg_stage_free(struct msg_stage *st)
{
	free(st->groups);
	free(st->recs);
	free(st->cspans);
	free(st->ops);
	free(st->text);
	memset(st, 0, sizeof(*st));
}

int
msg_stage_group(struct msg_stage *st, uint64_t fs, const struct nid_parts *np,
    bool dropped, uint64_t nrec)
{
	struct msg_sgroup *g;
	void *v;

	/* Room is made record by record, not for the count the group
	 * claims: a SWEEP cut short keeps no more than it holds. */
	if (st->nrecs + nrec > UINT32_MAX)
		return -ENOMEM;
	v = array_grow(st->groups, &st->gcap, st->ngroups, sizeof(*st->groups));
	if (v == NULL)
		return -ENOMEM;
	st->groups = v;
	g = &st->groups[st->ngroups++];
	g->fs = (uint16_t)fs;
	g->kind = (uint8_t)np->kind;
	g->dropped = dropped;
	memcpy(g->net, np->net, sizeof(g->net));
	g->first = (uint32_t)st->nrecs;
	g->n = 0;
	return 0;
}

/* The NID text of a text address into st->text; *ret its offset. */
static int
keep_text(struct msg_stage *st, const char *nid, uint32_t *ret)
{
	size_t len = strlen(nid) + 1;
	char *v;

	if (st->ntext + len > UINT32_MAX)
		return -ENOMEM;
	v = array_reserve(st->text, &st->tcap, st->ntext + len, 1);
	if (v == NULL)
		return -ENOMEM;
	st->text = v;
	memcpy(st->text + st->ntext, nid, len);
	*ret = (uint32_t)st->ntext;
	st->ntext += len;
	return 0;
}

int
msg_stage_rec_add(struct msg_stage *st, const struct nid_parts *np,
    const struct msg_rec *rec)
{
	struct msg_sgroup *g = &st->groups[st->ngroups - 1];
	struct msg_srec *r;

	if (st->nrecs == st->rcap) {
		void *v = array_grow(st->recs, &st->rcap, st->nrecs,
		    sizeof(*st->recs));

		if (v == NULL)
			return -ENOMEM;
		st->recs = v;
	}
	r = &st->recs[st->nrecs];
	if (np->kind == NID_KIND_STRING) {
		if (keep_text(st, rec->nid, &r->addr) < 0)
			return -ENOMEM;
	} else {
		r->addr = np->num;
	}
	r->cspan = 0;
	if (rec->has_cspan) {
		void *v = array_grow(st->cspans, &st->cscap, st->ncspans,
		    sizeof(*st->cspans));

		if (v == NULL)
			return -ENOMEM;
		st->cspans = v;
		memcpy(st->cspans[st->ncspans++], rec->cspan_us,
		    sizeof(rec->cspan_us));
		r->cspan = (uint32_t)st->ncspans;
	}
	r->ops = 0;
	/* struct iocount's order (iocount_to_array(), without a call). */
	r->d[0] = rec->d.read_bytes;
	r->d[1] = rec->d.write_bytes;
	r->d[2] = rec->d.read_ops;
	r->d[3] = rec->d.write_ops;
	r->d[4] = rec->d.oss_ops;
	r->d[5] = rec->d.mds_ops;
	r->span_us = rec->span_us;
	st->nrecs++;
	g->n++;
	return 0;
}

int
msg_stage_ops(struct msg_stage *st, struct msg_sweep *h, uint64_t idx,
    const struct mdops *ops, uint64_t opsum)
{
	const struct msg_sgroup *g = st->groups;
	size_t lo = 0, hi = st->ngroups;
	struct msg_srec *r = &st->recs[idx];
	void *v;

	/* The group holding record idx: the last that starts at or before
	 * it (groups are never empty). */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (g[mid].first <= idx)
			lo = mid;
		else
			hi = mid;
	}
	if (g[lo].dropped)
		return 0;
	/* The operations are part of mds_ops: counts above it would show
	 * rates above it.  The record keeps its counters. */
	if (opsum > r->d[MSG_NCOUNTERS - 1]) {
		h->nops_dropped++;
		return 0;
	}
	v = array_grow(st->ops, &st->opcap, st->nops, sizeof(*st->ops));
	if (v == NULL)
		return -ENOMEM;
	st->ops = v;
	st->ops[st->nops++] = *ops;
	r->ops = (uint32_t)st->nops;
	return 0;
}

void
msg_stage_rec(const struct msg_stage *st, const struct msg_sgroup *g, size_t i,
    struct msg_rec *ret, char *nid, struct mdops *ops)
{
	const struct msg_srec *r = &st->recs[i];
	unsigned c;

	memset(ret, 0, sizeof(*ret));
	ret->fs = g->fs;
	if (g->kind == NID_KIND_STRING) {
		memcpy(nid, st->text + r->addr, strlen(st->text + r->addr) + 1);
	} else {
		struct nid_parts np;

		memset(&np, 0, sizeof(np));
		np.kind = (enum nid_kind)g->kind;
		np.num = r->addr;
		memcpy(np.net, g->net, sizeof(np.net));
		(void)nid_format(&np, nid, NID_STR_MAX);
	}
	ret->nid = nid;
	iocount_from_array(&ret->d, r->d);
	ret->span_us = r->span_us;
	ret->has_cspan = r->cspan != 0;
	for (c = 0; c < MSG_NCOUNTERS; c++)
		ret->cspan_us[c] =
		    ret->has_cspan ? st->cspans[r->cspan - 1][c] : r->span_us;
	ret->ops = NULL;
	if (r->ops != 0) {
		*ops = st->ops[r->ops - 1];
		ret->ops = ops;
	}
}
