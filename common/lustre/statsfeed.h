/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The messages between the gatherer and its privileged stats reader
 * (daemon/reader.c) over a socketpair.  The gatherer asks for the targets
 * under lustre_root, for one target's export files, or for the uuid and
 * stats files of some NIDs of a target; the reader answers with a stream
 * of records (a target, or one NID's file bytes) closed by an end record,
 * so that a sweep costs one round trip per target, not one per file.
 *
 * Every message is a be32 length, then that many bytes, the first of which
 * is the type.  Both ends are the same binary, but the fields are encoded
 * one by one all the same, and each end takes what the other sends as
 * untrusted: the reader runs as root, the gatherer faces the network.
 */
#ifndef LH_STATSFEED_H
#define LH_STATSFEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lustre_tree.h"

struct lh_err;
struct rbuf;
struct wbuf;

/* A file larger than this is not a Lustre stats file (the gatherer's own
 * limit); a message holds two of them, and a request at most this much. */
#define SFEED_FILE_MAX ((size_t)64 * 1024)
#define SFEED_REQ_MAX  ((size_t)64 * 1024)
#define SFEED_MSG_MAX  (2 * SFEED_FILE_MAX + LTREE_PATH_MAX + 512)

enum sfeed_type {
	/* gatherer -> reader */
	SFEED_REQ_TARGETS = 1, /* discover the targets again */
	SFEED_REQ_EXPORTS = 2, /* one target's NID directories */
	SFEED_REQ_NIDS = 3,    /* uuid and stats of named NIDs */
	/* reader -> gatherer */
	SFEED_TARGET = 16,
	SFEED_EXPORT = 17,
	SFEED_END = 18,
};

struct sfeed_req {
	enum sfeed_type type;
	uint32_t target;     /* EXPORTS, NIDS: index in the last TARGETS */
	bool with_uuid;      /* EXPORTS: each uuid file too */
	const uint8_t *nids; /* NIDS: the names, see sfeed_next_nid() */
	size_t nids_len;
};

struct sfeed_target {
	char name[LTREE_TARGET_MAX];
	char fs[LTREE_FS_MAX];
	enum lh_target_kind kind;
	uint64_t dev, ino; /* of its exports/ */
	char path[LTREE_PATH_MAX];
};

/* One NID directory; the bytes are borrowed from the message. */
struct sfeed_export {
	char nid[LTREE_NID_MAX];
	uint64_t ino; /* of the NID directory, 0 if unknown */
	int stats_rc; /* 0, or the negative errno of reading it */
	const char *stats;
	size_t stats_len;
	bool has_uuid;
	int uuid_rc;
	const char *uuid;
	size_t uuid_len;
};

struct sfeed_rec {
	enum sfeed_type type;
	struct sfeed_target target; /* TARGET */
	struct sfeed_export exp;    /* EXPORT */
	int end_rc; /* END: 0, or the negative errno that cut the answer */
};

/* True for a NID directory name the reader may be asked to open: one
 * path component, not "." or "..", shorter than LTREE_NID_MAX. */
bool sfeed_nid_ok(const char *nid);

/*
 * Writers append one whole message (length included) to w; a NIDS request
 * is begun, given names, and ended.  They return 0 or wbuf_status().
 */
int sfeed_put_req(struct wbuf *w, enum sfeed_type type, uint32_t target,
    bool with_uuid);
/* Begin a NIDS request; *ret_off is for sfeed_end_nids(). */
int sfeed_begin_nids(struct wbuf *w, uint32_t target, size_t *ret_off);
int sfeed_add_nid(struct wbuf *w, const char *nid);
int sfeed_end_nids(struct wbuf *w, size_t off);
int sfeed_put_target(struct wbuf *w, const struct sfeed_target *t);
int sfeed_put_export(struct wbuf *w, const struct sfeed_export *e);
int sfeed_put_end(struct wbuf *w, int rc);

/*
 * The length of the message at the start of p (avail bytes): 0 and
 * *ret_len (the body's, header excluded) once its header is there,
 * -EAGAIN before that, -EBADMSG for a length out of bounds.
 */
int sfeed_msg_len(const uint8_t *p, size_t avail, size_t *ret_len);

/* Decode a request body (the gatherer's message), or a reply body (the
 * reader's).  Return 0, or -EBADMSG with err's reason. */
int sfeed_decode_req(const uint8_t *p, size_t len, struct sfeed_req *ret,
    struct lh_err *err);
int sfeed_decode_rec(const uint8_t *p, size_t len, struct sfeed_rec *ret,
    struct lh_err *err);

/* The next name of a NIDS request (r is set on req->nids): 0 and the name
 * in out, 1 at the end, -EBADMSG for a name that is not sfeed_nid_ok(). */
int sfeed_next_nid(struct rbuf *r, char *out, size_t size);

#endif
