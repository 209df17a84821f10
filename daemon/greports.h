/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lharvestd --ganglia-reports DIR -f FILE: write the ganglia-web report
 * definitions of FILE's filesystems into DIR (gmetric/greport.h builds
 * them; docs/ganglia.md, "Dashboards in ganglia-web", says where they
 * go).
 */
#ifndef LH_GREPORTS_H
#define LH_GREPORTS_H

#include <stdio.h>

/*
 * Load the configuration at config_path and write, into the existing
 * directory dir, each file atomically (a temporary file renamed over
 * it): one line on out per file written ("wrote DIR/NAME"), one on errs
 * per file that could not be ("DIR/NAME: reason") or for a configuration
 * that cannot be used.  Returns the exit status: 0 when every file was
 * written, else 1.
 */
int
greports_run(const char *dir, const char *config_path, FILE *out, FILE *errs);

#endif
