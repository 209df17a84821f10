/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: any bytes as a configuration file.  libconfuse reads
 * files, so the input goes through a memfd; every failure must come with
 * a "file:line: reason" (or "file: reason") text, every success with
 * values inside their documented ranges.
 */
#include <sys/mman.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lh_config *c = NULL;
	struct lh_err err;
	char path[64];
	int fd;

	fd = memfd_create("lh-fuzz-config", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size > 0 && write(fd, data, size) != (ssize_t)size) {
		(void)close(fd);
		return 0;
	}
	(void)snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (config_load(path, &c, &err) == 0) {
		if (c->interval < 1 || c->interval > 3600 ||
		    c->max_frame < 4096 || c->lustre_root[0] != '/' ||
		    c->name[0] == '\0')
			abort();
		(void)config_wants_fs(c, "scratch");
		(void)config_read_timeout(c);
		config_free(c);
	} else if (c != NULL || strncmp(err.reason, path, strlen(path)) != 0) {
		abort(); /* every failure names the file, and keeps nothing */
	}
	(void)close(fd);
	return 0;
}
