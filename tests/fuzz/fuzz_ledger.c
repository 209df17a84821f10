/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: any bytes as a ledger file (common/proto/ledger.c), read
 * the way the aggregator reads it (from a file, through ledger_lookup), and as
 * a file name of the ledger's directory.  A file either gives the number
 * ledger_parse() gives, which written back reads the same, or is held
 * with a reason; a held entry is never written over.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "ledger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The directory the entry is written to, made once per process and
 * removed at its exit. */
static char dir[64];

static void
remove_dir(void)
{
	(void)rmdir(dir);
}

static const char *
fuzz_dir(void)
{
	if (dir[0] == '\0') {
		(void)snprintf(dir, sizeof(dir), "/tmp/lh-fuzz-ledger-XXXXXX");
		if (mkdtemp(dir) == NULL || atexit(remove_dir) != 0)
			abort();
	}
	return dir;
}

static void
put_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t)size) ||
	    close(fd) < 0)
		abort();
}

static void
check_name(const uint8_t *data, size_t size)
{
	char file[300], name[64];
	size_t i;

	if (size >= sizeof(file))
		return;
	memcpy(file, data, size);
	file[size] = '\0';
	if (ledger_file_sender(file, name, sizeof(name)) < 0)
		return;
	/* A sender's name: its hex is the file name, lower case. */
	for (i = 0; name[i] != '\0'; i++) {
		char hex[3];

		(void)snprintf(hex, sizeof(hex), "%02x",
		    (unsigned char)name[i]);
		if (memcmp(file + 2 * i, hex, 2) != 0)
			abort();
	}
	if (strcmp(file + 2 * i, ".batch") != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = fuzz_dir();
	char path[128], text[32];
	struct ledger *l;
	struct lh_err err;
	uint64_t parsed = 0, v = 0, again = 0;
	int prc, rc;

	check_name(data, size);
	prc = ledger_parse((const char *)data, size, &parsed);
	if (prc == 0) {
		int n = snprintf(text, sizeof(text), "%llu\n",
		    (unsigned long long)parsed);

		if (ledger_parse(text, (size_t)n, &again) < 0 ||
		    again != parsed)
			abort();
	}
	(void)snprintf(path, sizeof(path), "%s/6f737331.batch", d);
	put_file(path, data, size);
	if (ledger_new(&l, d) < 0)
		return 0;
	lh_err_clear(&err);
	rc = ledger_lookup(l, "oss1", &v, &err);
	if (size == 0 ? rc == 0 : (rc == 0) != (prc == 0 && v == parsed))
		abort();
	if (rc < 0 && err.reason[0] == '\0')
		abort(); /* every refusal says why */
	if (rc < 0 && ledger_set(l, "oss1", 1, NULL) != -EBADMSG)
		abort(); /* held: never written over */
	if (rc == 0 && ledger_set(l, "oss1", v + 1, NULL) < 0 &&
	    v != UINT64_MAX)
		abort();
	ledger_free(l);
	(void)unlink(path);
	return 0;
}
