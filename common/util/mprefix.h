/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one rule for a metric name prefix (a filesystem section's
 * metric_prefix, or the fsname): the configuration checks it when the
 * file is read, gmetric/names.c before it builds a name.
 *
 * The limit follows from the longest name built from a prefix,
 * "<prefix>_mds_fallocate", and the longest metric name the Ganglia sink
 * takes (gmetric/gcache.h, GCACHE_METRIC_MAX): 48 + 14 = 62 <= 64.
 */
#ifndef LH_MPREFIX_H
#define LH_MPREFIX_H

#include <stdbool.h>

#define MPREFIX_MAX        48 /* characters */
#define MPREFIX_SUFFIX_MAX 14 /* "_mds_fallocate" */
#define MPREFIX_NAME_MAX   64 /* the sink's longest metric name */

_Static_assert(MPREFIX_MAX + MPREFIX_SUFFIX_MAX <= MPREFIX_NAME_MAX,
    "every metric name built from a prefix fits the sink");

/* The characters a prefix may hold, for messages: "A-Z a-z 0-9 _ - ." */
#define MPREFIX_CHARS_TEXT "A-Z a-z 0-9 _ - ."

/* True if prefix can start a metric name: 1-48 of [A-Za-z0-9_.-].  gmond
 * writes names into XML attributes unescaped, so quotes and the like
 * would break every consumer of its XML. */
bool mprefix_ok(const char *prefix);

#endif
