/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lhclient's command line, and the records it sends: read from a records
 * file or generated (lhclient.c says what the tool does).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "lhclient.h"
#include "msg.h"
#include "nid.h"

static _Noreturn void
usage(void)
{
	(void)fprintf(stderr,
	    "usage: lhclient -c HOST:PORT -k KEYFILE -n NAME "
	    "[--records FILE | --clients N]\n"
	    "  [--sweeps N] [--sweep-id ID] [--batch N] [--interval S]\n"
	    "  [--delay S (before each SWEEP)]\n"
	    "  [--clock-offset S] [--timeout S] [--max-frame N] "
	    "[--write-capture FILE]\n"
	    "  [--read-capture FILE] [--pipeline (every SWEEP, then the ACKs)]\n"
	    "  [--no-bye] [--print-sent] [--role N] [--rename-fs OLD=NEW]\n"
	    "  [--bad-mac | --replay | --oversize | --idle | --idle-open |\n"
	    "   --garbage | --wrong-version | --half-frame | --version-1 |\n"
	    "   --send-ack | --slow]\n");
	exit(2);
}

static uint64_t
num(const char *opt, const char *s, uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v > max)
		die("%s %s: not a number up to %" PRIu64, opt, s, max);
	return v;
}

/* One numeric option (ch, its argument arg) into c; false if ch is
 * another. */
static bool
parse_number_opt(struct lhc *c, int ch, const char *arg)
{
	switch (ch) {
	case 'C':
		c->clients = (unsigned)num("--clients", arg, 1000000);
		return true;
	case 'S':
		c->sweeps = (unsigned)num("--sweeps", arg, 100000);
		return true;
	case 'I':
		c->sweep_id = num("--sweep-id", arg, UINT64_MAX);
		return true;
	case 'B':
		c->first_batch = num("--batch", arg, UINT64_MAX);
		return true;
	case 'i':
		c->interval = (uint32_t)num("--interval", arg, 3600);
		return true;
	case 'D':
		c->delay = (unsigned)num("--delay", arg, 3600);
		return true;
	case 'O':
		if (arg[0] == '-')
			c->clock_offset =
			    -(int64_t)num("--clock-offset", arg + 1, 86400);
		else
			c->clock_offset =
			    (int64_t)num("--clock-offset", arg, 86400);
		return true;
	case 'T':
		c->timeout = (unsigned)num("--timeout", arg, 3600);
		return true;
	case 'M':
		c->max_frame =
		    (size_t)num("--max-frame", arg, (uint64_t)FRAME_MAX_LIMIT);
		return true;
	case 'o':
		c->role = (uint8_t)num("--role", arg, 255);
		return true;
	default:
		return false;
	}
}

/* Any other option (ch, its argument arg) into c; usage() if unknown. */
static void
parse_other_opt(struct lhc *c, int ch, char *arg)
{
	const char *eq;

	switch (ch) {
	case 'c':
		c->connect = arg;
		break;
	case 'k':
		c->keyfile = arg;
		break;
	case 'n':
		c->name = arg;
		break;
	case 'r':
		c->records = arg;
		break;
	case 'w':
		c->capture = arg;
		break;
	case 'R':
		c->rcapture = arg;
		break;
	case 'b':
		c->no_bye = true;
		break;
	case 'P':
		c->pipeline = true;
		break;
	case 'p':
		c->print_sent = true;
		break;
	case 'F':
		eq = strchr(arg, '=');
		if (eq == NULL || strlen(eq + 1) != (size_t)(eq - arg))
			die("--rename-fs %s: want OLD=NEW, same length", arg);
		c->rename_fs = arg;
		break;
	default:
		if (ch >= 1000 && ch <= 1000 + LHC_LAST) {
			c->mode = (enum lhc_mode)(ch - 1000);
			break;
		}
		usage();
	}
}

void
parse_args(struct lhc *c, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"connect", required_argument, NULL, 'c'},
	    {"records", required_argument, NULL, 'r'},
	    {"clients", required_argument, NULL, 'C'},
	    {"sweeps", required_argument, NULL, 'S'},
	    {"sweep-id", required_argument, NULL, 'I'},
	    {"batch", required_argument, NULL, 'B'},
	    {"interval", required_argument, NULL, 'i'},
	    {"delay", required_argument, NULL, 'D'},
	    {"clock-offset", required_argument, NULL, 'O'},
	    {"timeout", required_argument, NULL, 'T'},
	    {"max-frame", required_argument, NULL, 'M'},
	    {"write-capture", required_argument, NULL, 'w'},
	    {"read-capture", required_argument, NULL, 'R'},
	    {"no-bye", no_argument, NULL, 'b'},
	    {"print-sent", no_argument, NULL, 'p'},
	    {"pipeline", no_argument, NULL, 'P'},
	    {"bad-mac", no_argument, NULL, 1000 + LHC_BAD_MAC},
	    {"replay", no_argument, NULL, 1000 + LHC_REPLAY},
	    {"oversize", no_argument, NULL, 1000 + LHC_OVERSIZE},
	    {"idle", no_argument, NULL, 1000 + LHC_IDLE},
	    {"idle-open", no_argument, NULL, 1000 + LHC_IDLE_OPEN},
	    {"garbage", no_argument, NULL, 1000 + LHC_GARBAGE},
	    {"wrong-version", no_argument, NULL, 1000 + LHC_WRONG_VERSION},
	    {"half-frame", no_argument, NULL, 1000 + LHC_HALF_FRAME},
	    {"version-1", no_argument, NULL, 1000 + LHC_VERSION_1},
	    {"send-ack", no_argument, NULL, 1000 + LHC_SEND_ACK},
	    {"role", required_argument, NULL, 'o'},
	    {"rename-fs", required_argument, NULL, 'F'},
	    {"slow", no_argument, NULL, 1000 + LHC_SLOW},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	c->sweeps = 1;
	c->sweep_id = 1700000020;
	c->first_batch = 1;
	c->interval = 10;
	c->timeout = LHC_TIMEOUT_DEFAULT;
	c->max_frame = (size_t)FRAME_MAX_DEFAULT;
	c->role = MSG_ROLE_GATHERER;
	while ((ch = getopt_long(argc, argv, "c:k:n:", longopts, NULL)) != -1)
		if (!parse_number_opt(c, ch, optarg))
			parse_other_opt(c, ch, optarg);
	if (optind != argc || c->connect == NULL || c->keyfile == NULL ||
	    c->name == NULL || (c->records != NULL && c->clients != 0))
		usage();
}

uint16_t
fs_index(struct lhc *c, const char *fs)
{
	for (uint16_t i = 0; i < c->nfs; i++)
		if (strcmp(c->fs[i], fs) == 0)
			return i;
	if (c->nfs == MSG_SWEEP_FS_MAX)
		die("more than %d filesystems", MSG_SWEEP_FS_MAX);
	(void)snprintf(c->fs[c->nfs], MSG_FS_MAX, "%s", fs);
	return c->nfs++;
}

static struct lhc_rec *
rec_add(struct lhc *c)
{
	struct lhc_rec *r;

	if ((c->nrecs & (c->nrecs - 1)) == 0) { /* 0, 1, 2, 4, ...: grow */
		size_t cap = c->nrecs == 0 ? 16 : c->nrecs * 2;

		r = realloc(c->recs, cap * sizeof(*r));
		if (r == NULL)
			die("out of memory");
		c->recs = r;
	}
	r = &c->recs[c->nrecs++];
	memset(r, 0, sizeof(*r));
	r->span_us = c->interval * 1000000u;
	return r;
}

void
records_load(struct lhc *c)
{
	char line[LHC_LINE_MAX];
	unsigned lineno = 0;
	FILE *f = fopen(c->records, "r");

	if (f == NULL)
		die("%s: %s", c->records, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		char *fld[10], *save = NULL, *tok;
		uint64_t v[7];
		int n = 0;
		struct lhc_rec *r;

		lineno++;
		for (tok = strtok_r(line, " \t\r\n", &save);
		     tok != NULL && n < 10;
		     tok = strtok_r(NULL, " \t\r\n", &save))
			fld[n++] = tok;
		if (n == 0 || fld[0][0] == '#')
			continue;
		if (n < 8 || n > 9)
			die("%s:%u: want FS NID 6 counters [SPAN_US]",
			    c->records, lineno);
		for (int i = 2; i < n; i++)
			v[i - 2] = num("counter", fld[i], UINT64_MAX);
		if (strlen(fld[0]) >= MSG_FS_MAX ||
		    strlen(fld[1]) >= NID_STR_MAX)
			die("%s:%u: name too long", c->records, lineno);
		(void)fs_index(c, fld[0]);
		r = rec_add(c);
		(void)snprintf(r->fs, sizeof(r->fs), "%s", fld[0]);
		(void)snprintf(r->nid, sizeof(r->nid), "%s", fld[1]);
		r->d.read_bytes = v[0];
		r->d.write_bytes = v[1];
		r->d.read_ops = v[2];
		r->d.write_ops = v[3];
		r->d.oss_ops = v[4];
		r->d.mds_ops = v[5];
		if (n == 9) {
			if (v[6] > UINT32_MAX)
				die("%s:%u: span too long", c->records, lineno);
			r->span_us = v[6];
		}
	}
	(void)fclose(f);
}

/* N clients 10.<i/65536>.<i/256%256>.<i%256>@o2ib with counters from i. */
void
records_generate(struct lhc *c)
{
	(void)fs_index(c, "scratch");
	for (unsigned i = 0; i < c->clients; i++) {
		struct lhc_rec *r = rec_add(c);
		uint64_t k = i + 1;

		(void)snprintf(r->fs, sizeof(r->fs), "scratch");
		(void)snprintf(r->nid, sizeof(r->nid), "10.%u.%u.%u@o2ib",
		    (i >> 16) & 255, (i >> 8) & 255, i & 255);
		r->d.read_bytes = k * 1048576;
		r->d.write_bytes = k * 4096;
		r->d.read_ops = k;
		r->d.write_ops = 2 * k;
		r->d.oss_ops = 3 * k + 3;
		r->d.mds_ops = k % 7;
	}
}
