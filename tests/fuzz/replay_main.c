/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Without libFuzzer (gcc, sanitizer builds): run a fuzz target over every
 * file of the given corpus directories once, so the corpus is replayed
 * under ASan+UBSan in every test run.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		(void)fprintf(stderr, "%s: cannot read\n", path);
		if (f != NULL)
			(void)fclose(f);
		return -1;
	}
	buf = malloc((size_t)n + 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		(void)fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		(void)fclose(f);
		return -1;
	}
	(void)fclose(f);
	(void)LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned long files = 0;
	int i, rc = 0;

	for (i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		char path[4096];

		if (d == NULL) {
			rc = replay_file(argv[i]) < 0 ? 1 : rc;
			files++;
			continue;
		}
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			(void)snprintf(path, sizeof(path), "%s/%s", argv[i],
			    de->d_name);
			if (replay_file(path) < 0)
				rc = 1;
			files++;
		}
		(void)closedir(d);
	}
	(void)printf("replayed %lu inputs\n", files);
	return files == 0 ? 1 : rc;
}
