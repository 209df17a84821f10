/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sink's packets (sink_xdr.h).  libganglia takes char * everywhere
 * but its XDR encoders only read: the strings handed to them are the
 * entry's own or local arrays.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <ganglia.h>

#include "gapi.h"
#include "gcache.h"
#include "sink_xdr.h"

_Static_assert(SINKXDR_MAX == GANGLIA_MAX_MESSAGE_LEN,
    "the packet buffer is libganglia's");

/* Run one of libganglia's encoders over buf; the length, or 0. */
static size_t
encode(const struct sinkxdr *x, char *buf, Ganglia_metadata_msg *meta,
    Ganglia_value_msg *value)
{
	XDR xdr;
	bool_t ok;
	size_t len;

	x->api->xdrmem_create(&xdr, buf, SINKXDR_MAX, XDR_ENCODE);
	ok = meta != NULL ? x->api->xdr_metadata_msg(&xdr, meta) :
	                    x->api->xdr_value_msg(&xdr, value);
	len = ok ? (size_t)xdr_getpos(&xdr) : 0;
	if (xdr.x_ops != NULL && xdr.x_ops->x_destroy != NULL)
		xdr_destroy(&xdr);
	return len;
}

size_t
sinkxdr_meta(const struct sinkxdr *x, struct gcache_entry *e, char *buf)
{
	char type[] = "float", spoof_key[] = SPOOF_HOST, group_key[] = "GROUP";
	Ganglia_extra_data extra[2];
	Ganglia_metadata_msg m;
	Ganglia_metadatadef *d = &m.Ganglia_metadata_msg_u.gfull;

	memset(&m, 0, sizeof(m));
	m.id = gmetadata_full;
	d->metric_id.host = e->key;
	d->metric_id.name = e->key + e->metric_off;
	d->metric_id.spoof = TRUE;
	d->metric.type = type;
	d->metric.name = e->key + e->metric_off;
	d->metric.units = e->key + e->units_off;
	d->metric.slope = GANGLIA_SLOPE_BOTH;
	d->metric.tmax = x->tmax;
	d->metric.dmax = x->dmax;
	/* The extra data in the order it was added: SPOOF_HOST, GROUP. */
	extra[0].name = spoof_key;
	extra[0].data = e->key;
	extra[1].name = group_key;
	extra[1].data = x->group;
	d->metric.metadata.metadata_len = x->group[0] != '\0' ? 2 : 1;
	d->metric.metadata.metadata_val = extra;
	return encode(x, buf, &m, NULL);
}

/* The value as gmond will show it: two decimals, as the legacy tool. */
static void
format_value(char *buf, size_t size, double v)
{
	if (fabs(v) < 0.005)
		(void)snprintf(buf, size, "0.00"); /* never "-0.00" */
	else if (fabs(v) < 1e15)
		(void)snprintf(buf, size, "%.2f", v);
	else
		(void)snprintf(buf, size, "%.6e", v);
}

size_t
sinkxdr_value(const struct sinkxdr *x, struct gcache_entry *e, char *buf)
{
	char value[64], fmt[] = "%s";
	Ganglia_value_msg m;
	Ganglia_gmetric_string *g = &m.Ganglia_value_msg_u.gstr;

	memset(&m, 0, sizeof(m));
	format_value(value, sizeof(value), e->value);
	m.id = gmetric_string;
	g->metric_id.host = e->key;
	g->metric_id.name = e->key + e->metric_off;
	g->metric_id.spoof = TRUE;
	g->fmt = fmt;
	g->str = value;
	return encode(x, buf, NULL, &m);
}
