/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gatherer's insides, shared by its files: gatherer.c (start, timer,
 * connection, stop), gatherer_sweep.c (reading the tree into deltas),
 * gatherer_state.c (state_dir: lock, load, save, batch numbering) and
 * gatherer_reload.c (SIGHUP).  Nothing else includes this: see
 * gatherer.h.
 */
#ifndef LH_GATHERER_INT_H
#define LH_GATHERER_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "gstate_journal.h"
#include "gtable.h"
#include "keyfile.h"
#include "loop.h"
#include "lustre_tree.h"
#include "privsep.h"
#include "ratelog.h"
#include "reader.h"
#include "uplink.h"

struct event;
struct event_base;
struct lh_config;
struct lstats;

/* Export stats files are 0.2-2.5 KB; a file larger than this is not one. */
#define GATHER_FILE_MAX ((size_t)64 * 1024)

/* Files read ahead of their counting (gatherer_sweep.c): up to this
 * many, while there is room for one more of GATHER_FILE_MAX. */
#define GATHER_AHEAD_FILES 96
#define GATHER_AHEAD_BYTES (2 * GATHER_FILE_MAX)

struct ahead_item {
	uint64_t ino;
	uint32_t nid;  /* offset in buf of the NID, NUL-terminated */
	uint32_t text; /* and of the text of its stats */
	uint32_t len;
	int rc; /* of the read: 0 or -errno */
};

struct gather_ahead {
	char *buf; /* GATHER_AHEAD_BYTES */
	size_t used;
	size_t n;
	struct ahead_item items[GATHER_AHEAD_FILES];
};

struct gatherer {
	struct lh_config *cfg; /* owned: replaced by a reload */
	struct event_base *base;
	struct event *tick;
	struct loop loop;
	struct keyring ring;
	struct uplink up; /* the outbox, and the connection to the aggregator */
	struct gtable table;
	struct ltree tree;
	char *buf;                 /* one file at a time (a uuid) */
	struct gather_ahead ahead; /* stats files read ahead */
	struct lstats *st;         /* a declined file's parse */
	char state_path[PATH_MAX];
	struct gstate_journal journal; /* the state's journal beside it */
	int lock_fd;
	uint64_t dups;    /* duplicate ACKs */
	uint64_t next_ns; /* the boundary the timer is set for */
	uint64_t dropped; /* outbox refusals already logged */
	uint64_t scope;   /* gstate_scope() of this configuration */
	/* One line when each of these starts and one when it ends, or
	 * (dup_rl) one a minute: ratelog.h. */
	struct ratelog dup_rl;     /* duplicate ACKs */
	struct ratelog troubled;   /* sweeps with unreadable files */
	struct ratelog no_targets; /* sweeps that found no target */
	struct ratelog save_rl;    /* state saves failing */
	struct ratelog slow;       /* sweeps overrunning the interval */
	struct ratelog splitting;  /* batches cut to fit max_frame */
	/* Privilege separation: who we became, and the stats reader when
	 * the tree needs root (rd.fd -1: the tree is read here). */
	struct privsep ps;
	struct reader_conn rd;
	bool failed; /* the reader is gone: stop, exit 1 */
};

/* gatherer_sweep.c */

/* Read every target at the boundary sweep_ns, count the deltas into the
 * outbox, save the state, and hand the batch to the sender. */
void gatherer_sweep(struct gatherer *g, uint64_t sweep_ns);
/* The targets, found here or by the stats reader.  Returns 0, or -EPIPE
 * when the reader is gone (logged); what else goes wrong is logged. */
int gatherer_discover(struct gatherer *g);

/* gatherer_state.c */

/* Hold state_dir for this process, and know where the state file is.
 * Returns 0 or -1 (logged). */
int gatherer_lock_state_dir(struct gatherer *g);
/* The saved state, or a fresh start when there is none.  Returns 0, or
 * -1 (logged): the gatherer does not start. */
int gatherer_load_state(struct gatherer *g);
/* Returns 0 or -1; says so once per run of failures. */
int gatherer_save_state(struct gatherer *g);
/* At a clean stop: the whole state saved as the base (the journal
 * emptied), so that the next start reads it exactly; then closed. */
void gatherer_stop_state(struct gatherer *g);
/* Number the pending batch, cut to fit max_frame: true when a batch was
 * numbered now. */
bool gatherer_seal_batch(struct gatherer *g);

/* gatherer.c */

/* Connect to the aggregator as g->cfg says (again, after a reload).
 * Returns 0, or a negative errno (logged). */
int gatherer_connect(struct gatherer *g);

/* gatherer_reload.c */

/* SIGHUP: loop_on_reload()'s callback, arg the gatherer. */
void gatherer_reload(void *arg);

#endif
