/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sink's packets (sink_xdr.h).  libganglia takes char * everywhere
 * but its XDR encoders only read: the strings handed to them are the
 * entry's own or local arrays.
 */
#include <errno.h>
#include <string.h>

#include <ganglia.h>

#include "gapi.h"
#include "gcache.h"
#include "sink_fmt.h"
#include "sink_xdr.h"

_Static_assert(SINKXDR_MAX == GANGLIA_MAX_MESSAGE_LEN,
    "the packet buffer is libganglia's");
_Static_assert(SINKXDR_VALUE_MAX >= 4 + SINKFMT_MAX, "room for a value string");

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

/*
 * e's packets built once by libganglia's encoders: the metadata packet,
 * and the value packet with an empty value string, whose last 4 bytes are
 * that string's length (0).  Everything before them is the same for
 * every value of e: the prefix sinkxdr_value() copies.
 */
int
sinkxdr_build(const struct sinkxdr *x, struct gcache_entry *e)
{
	char meta[SINKXDR_MAX], value[SINKXDR_MAX], empty[] = "", fmt[] = "%s";
	Ganglia_value_msg m;
	Ganglia_gmetric_string *g = &m.Ganglia_value_msg_u.gstr;
	size_t mlen, vlen;

	mlen = sinkxdr_meta(x, e, meta);
	memset(&m, 0, sizeof(m));
	m.id = gmetric_string;
	g->metric_id.host = e->key;
	g->metric_id.name = e->key + e->metric_off;
	g->metric_id.spoof = TRUE;
	g->fmt = fmt;
	g->str = empty;
	vlen = encode(x, value, NULL, &m);
	/* Room after the prefix for the longest value text. */
	if (mlen == 0 || vlen < 4 || vlen + SINKXDR_VALUE_MAX > SINKXDR_MAX ||
	    memcmp(value + vlen - 4, "\0\0\0\0", 4) != 0)
		return -EMSGSIZE;
	return gcache_set_packets(e, meta, mlen, value, vlen - 4);
}

size_t
sinkxdr_value(const struct gcache_entry *e, char *buf)
{
	size_t plen = e->pkt_prefix_len, n;
	char *text = buf + plen + 4;

	if (e->pkt == NULL)
		return 0;
	memcpy(buf, e->pkt + e->pkt_meta_len, plen);
	n = sinkfmt_value(text, e->value);
	/* An XDR string: its length (big-endian), the bytes, zeros up to
	 * a multiple of 4. */
	buf[plen] = 0;
	buf[plen + 1] = 0;
	buf[plen + 2] = 0;
	buf[plen + 3] = (char)n;
	while (n % 4 != 0)
		text[n++] = '\0';
	return plen + 4 + n;
}
