/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lharvest top: the busiest hosts, live, like top(1).  ncurses, no
 * colours and no mouse (usable over ssh, in 80 columns).  It asks
 * /v1/status every second and fetches /v1/hosts again when a sweep has
 * closed since, or when a key changed the view.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <curses.h>
#include <jansson.h>

#include "lharvest.h"

#define TOP_FS_MAX   32
#define TOP_NAME_MAX 64

static const char top_usage[] =
    "usage: lharvest top\n"
    "  a live table of the hosts, busiest first, refreshed each sweep\n"
    "  keys: r read, w write, o OSS ops, m MDS ops, h host name (the\n"
    "        sort); f the next filesystem (or all); q quit\n";

/* The sort keys, and the API's names for them. */
static const struct {
	int key;
	const char *sort;
	const char *label;
} sorts[] = {
    {'r', "read", "read"},
    {'w', "write", "write"},
    {'o', "oss_ops", "OSS ops"},
    {'m', "mds_ops", "MDS ops"},
    {'h', "host", "host"},
};

struct top {
	struct lhc *c;
	size_t sort;                        /* index into sorts */
	char fs[TOP_NAME_MAX];              /* "": every filesystem */
	char fss[TOP_FS_MAX][TOP_NAME_MAX]; /* the filesystems seen */
	size_t nfs;
	double sweep;          /* the last sweep the table shows */
	bool stale;            /* the table must be fetched again */
	json_t *status;        /* the last /v1/status data (NULL: none yet) */
	json_t *hosts;         /* the last /v1/hosts data */
	char err[LHC_ERR_MAX]; /* why the last request failed; "": it did not */
};

/* The filesystems /v1/status lists. */
static void
take_filesystems(struct top *t)
{
	const json_t *list = json_object_get(t->status, "filesystems"), *e;
	size_t i;

	t->nfs = 0;
	for (i = 0; (e = json_array_get(list, i)) != NULL; i++) {
		if (t->nfs == TOP_FS_MAX || !json_is_string(e))
			break;
		(void)snprintf(t->fss[t->nfs++], TOP_NAME_MAX, "%s",
		    json_string_value(e));
	}
}

static void
fetch_hosts(struct top *t)
{
	char path[512], *esc = NULL;
	int rows = LINES - 3 > 0 ? LINES - 3 : 1;
	json_t *d;

	if (t->fs[0] != '\0' &&
	    (esc = curl_easy_escape(NULL, t->fs, 0)) == NULL)
		return;
	(void)snprintf(path, sizeof(path), "/v1/hosts?sort=%s&limit=%d%s%s",
	    sorts[t->sort].sort, rows, esc ? "&fs=" : "", esc ? esc : "");
	curl_free(esc);
	if (lhc_get(t->c, path, &d, t->err, sizeof(t->err)) < 0)
		return;
	t->err[0] = '\0';
	json_decref(t->hosts);
	t->hosts = d;
	t->stale = false;
}

/* Ask the daemon for what changed. */
static void
poll_daemon(struct top *t)
{
	json_t *d;
	double sweep;

	if (lhc_get(t->c, "/v1/status", &d, t->err, sizeof(t->err)) < 0)
		return;
	t->err[0] = '\0';
	json_decref(t->status);
	t->status = d;
	take_filesystems(t);
	sweep = lhj_num(json_object_get(d, "last_sweep"), "id");
	if (sweep != t->sweep || t->stale || t->hosts == NULL) {
		t->sweep = sweep;
		fetch_hosts(t);
	}
}

static void
draw_header(const struct top *t)
{
	const json_t *s = t->status;
	const json_t *g = json_object_get(s, "gatherers");
	char when[32];

	units_time(when, sizeof(when), t->sweep);
	mvprintw(0, 0,
	    "lharvest top: %s (%s)  sweep %s  hosts %.0f  "
	    "gatherers %.0f/%.0f",
	    lhj_str(s, "name"), lhj_str(s, "role"), when,
	    lhj_num(json_object_get(s, "totals"), "hosts"),
	    lhj_num(g, "connected"), lhj_num(g, "known"));
	clrtoeol();
	if (t->err[0] != '\0') {
		mvprintw(0, 0, "%s", t->err);
		clrtoeol();
	}
	mvprintw(1, 0,
	    "sort: %-8s fs: %-12s  keys: r w o m h sort, f fs, q "
	    "quit",
	    sorts[t->sort].label, t->fs[0] ? t->fs : "all");
	clrtoeol();
	attron(A_REVERSE);
	mvprintw(2, 0, "%-20s %-10s %11s %11s %10s %10s", "HOST", "FS",
	    "READ/s", "WRITE/s", "OSS OPS/s", "MDS OPS/s");
	clrtoeol();
	attroff(A_REVERSE);
}

static void
draw_rows(const struct top *t)
{
	const json_t *list = json_object_get(t->hosts, "hosts"), *e;
	size_t i;
	int y = 3;

	for (i = 0; (e = json_array_get(list, i)) != NULL; i++) {
		const json_t *r = json_object_get(e, "rate");
		char a[4][32];

		if (y >= LINES)
			break;
		units_rate(a[0], sizeof(a[0]), lhj_num(r, "read_bytes"));
		units_rate(a[1], sizeof(a[1]), lhj_num(r, "write_bytes"));
		units_count(a[2], sizeof(a[2]), lhj_num(r, "oss_ops"));
		units_count(a[3], sizeof(a[3]), lhj_num(r, "mds_ops"));
		mvprintw(y++, 0, "%-20.20s %-10.10s %11s %11s %10s %10s",
		    lhj_str(e, "host"), lhj_str(e, "fs"), a[0], a[1], a[2],
		    a[3]);
		clrtoeol();
	}
	move(y, 0);
	clrtobot();
}

/* The filesystem after the one shown ("" after the last: all). */
static void
next_fs(struct top *t)
{
	size_t i = 0;

	if (t->fs[0] != '\0') {
		while (i < t->nfs && strcmp(t->fss[i], t->fs) != 0)
			i++;
		i++;
	}
	if (i < t->nfs)
		(void)snprintf(t->fs, sizeof(t->fs), "%s", t->fss[i]);
	else
		t->fs[0] = '\0';
}

/* A key: false when it quits. */
static bool
key(struct top *t, int ch)
{
	if (ch == 'q' || ch == 'Q')
		return false;
	if (ch == 'f') {
		next_fs(t);
		t->stale = true;
	}
	for (size_t i = 0; i < sizeof(sorts) / sizeof(sorts[0]); i++) {
		if (ch == sorts[i].key) {
			t->sort = i;
			t->stale = true;
		}
	}
	if (ch == KEY_RESIZE)
		t->stale = true;
	return true;
}

static void
loop(struct top *t)
{
	int ch = ERR;

	do {
		if (ch == ERR || t->stale)
			poll_daemon(t);
		draw_header(t);
		draw_rows(t);
		refresh();
		ch = getch();
	} while (key(t, ch));
}

int
lharvest_top(struct lhc *c, int argc, char **argv)
{
	struct top t = {.c = c};
	int i = lharvest_opts(argc, argv, NULL, top_usage);

	if (i < 0 || i != argc) {
		if (i >= 0)
			(void)fputs(top_usage, stderr);
		return 2;
	}
	/* Say it plainly, before the screen is taken, when it cannot work. */
	if (lhc_get(c, "/v1/status", &t.status, t.err, sizeof(t.err)) < 0) {
		(void)fprintf(stderr, "lharvest: %s\n", t.err);
		return 1;
	}
	if (initscr() == NULL)
		return 1;
	(void)cbreak();
	(void)noecho();
	(void)keypad(stdscr, TRUE);
	(void)curs_set(0);
	timeout(1000);
	t.stale = true;
	loop(&t);
	(void)endwin();
	json_decref(t.status);
	json_decref(t.hosts);
	return 0;
}
