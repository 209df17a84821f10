/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gmond.conf checked in a child process before the sink opens it
 * (sink_conf.c says why).  Internal to gmetric/.
 */
#ifndef LH_SINK_CONF_H
#define LH_SINK_CONF_H

#include <stddef.h>

struct gapi;
struct lh_err;

/*
 * A private copy of the file at path (a memfd, so the child and this
 * process parse the same bytes even while it is edited), named by a
 * /proc/self/fd path in ret_path.  Returns the memfd (>= 0; the caller
 * closes it), or a negative errno with err's reason.
 */
int sinkconf_snapshot(const char *path, char *ret_path, size_t size,
    struct lh_err *err);

/*
 * Have a child let libganglia parse libpath and open its channels.
 * Returns 0 and the channels "ip:port[,ip:port...]" in chans, or a
 * negative errno with err's reason (-ETIMEDOUT after timeout_ms).
 */
int sinkconf_check(const struct gapi *api, char *libpath, unsigned timeout_ms,
    char *chans, size_t size, struct lh_err *err);

#endif
