/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the per-host counters (hosttotals.h): the table and its string
 * interner, shared by the table (hosttotals.c), the interner
 * (hosttotals_str.c) and the file (hosttotals_file.c).
 */
#ifndef LH_HOSTTOTALS_INT_H
#define LH_HOSTTOTALS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "hindex.h"
#include "hosttotals.h"
#include "msg.h"

/* Host and filesystem names, each kept once, at an address that never
 * moves (rows point at them for the table's life): appended to blocks
 * that are never reallocated, found again through a hash index. */
struct ht_strs {
	char **blocks;
	size_t nblocks, blockcap;
	size_t used;    /* bytes used in the last block */
	const char **v; /* every string, in the order interned */
	size_t n, cap;
	struct hindex index;
};

void ht_strs_init(struct ht_strs *s);
void ht_strs_free(struct ht_strs *s);

/* The interned copy of str, or NULL (not interned). */
const char *
ht_strs_find(const struct ht_strs *s, const char *str, uint32_t *ret_idx);

/* The interned copy of str (made if needed), or NULL: out of memory. */
const char *ht_strs_add(struct ht_strs *s, const char *str);

struct ht_mark {
	char sender[MSG_NAME_MAX];
	uint64_t batch;
};

struct hosttotals {
	size_t max_rows; /* 0: no cap */
	struct ht_strs strs;
	struct hosttotals_row *rows;
	size_t n, cap;
	struct hindex index; /* rows by (host, fs) */
	struct hosttotals_fs *fss;
	size_t nfs, fscap;
	struct ht_mark *marks;
	size_t nmarks, markcap;
	struct hindex markindex;
	uint64_t *refused; /* hashes of the (host, fs) refused by the cap */
	size_t nrefused, refusedcap;
	struct hindex refusedindex;
	uint64_t last_sweep;
};

/* The row of (host, fs), interned names: made (zeros) when new, without
 * looking at the cap.  NULL: out of memory. */
struct hosttotals_row *
ht_row_get(struct hosttotals *t, const char *host, const char *fs);

/* The totals of fs, an interned name: made when new.  NULL: out of
 * memory. */
struct hosttotals_fs *ht_fs_get(struct hosttotals *t, const char *fs);

/* Empty t (a load starts from nothing): its cap stays. */
void ht_clear(struct hosttotals *t);

#endif
