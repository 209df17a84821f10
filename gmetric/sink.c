/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Ganglia sink (see sink.h): the only file that includes ganglia.h.
 *
 * The call sequence per value is ganglia's own gmetric.c for --spoof
 * (Ganglia_metric_create, Ganglia_metric_set, Ganglia_metadata_add of
 * SPOOF_HOST "ip:host" and GROUP), except that Ganglia_metric_send, which
 * always sends metadata and value, is replaced by Ganglia_metadata_send
 * when metadata is due and Ganglia_value_send for the value.  libganglia
 * takes char * everywhere but only reads (it copies into APR pools): the
 * strings handed to it are the cache's own or local arrays.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ganglia.h>

#include "gapi.h"
#include "gcache.h"
#include "sink.h"

#define GSINK_CONF_MAX     1048576 /* a gmond.conf is a few KB */
#define GSINK_OUT_MAX      4096    /* what the check child prints */
#define GSINK_CHANNELS_MAX 256
#define GSINK_SOCKS_MAX    1024
#define GSINK_NS           1000000000ULL

struct gsink {
	struct gapi api;   /* libganglia, opened for the first sink */
	Ganglia_pool pool; /* owns the channels' sockets */
	Ganglia_udp_send_channels channels;
	struct gcache cache;
	struct gsink_opts o;
	char group[GSINK_GROUP_MAX + 1];
	char chan_desc[GSINK_CHANNELS_MAX];
	double tokens, burst;
	uint64_t tokens_ns;
	uint64_t last_expire_ns, expire_every_ns;
	uint64_t values, metadata, send_errors, rejected, forced;
};

void
gsink_opts_default(struct gsink_opts *o)
{
	o->group = "lustre";
	o->tmax = 60;
	o->dmax = 600;
	o->metadata_interval = 60;
	o->pace = 15000;
	o->max_entries = 1048576;
	o->check_timeout_ms = 10000;
}

/*
 * A private copy of gmond.conf, so that the child and this process parse
 * the same bytes even if the file is being edited meanwhile: a memfd,
 * named by a /proc/self/fd path (which the child inherits).  Returns the
 * memfd (>= 0) and its path, or a negative errno.  Files it includes are
 * read where they are, by both.
 */
static int
snapshot_conf(const char *path, char *ret_path, size_t size, struct lh_err *err)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	size_t got = 0;
	int fd, mfd = -1, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return lh_err_set(err, 0, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = lh_err_set(err, 0, -errno, "%s", strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > GSINK_CONF_MAX) {
		rc = lh_err_set(err, 0, -EINVAL,
		    "not a regular file of at most %d bytes", GSINK_CONF_MAX);
		goto out_close;
	}
	buf = malloc(GSINK_CONF_MAX);
	if (buf == NULL) {
		rc = lh_err_set(err, 0, -ENOMEM, "out of memory");
		goto out_close;
	}
	while (got < GSINK_CONF_MAX &&
	    (n = read(fd, buf + got, GSINK_CONF_MAX - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = lh_err_set(err, 0, -errno, "%s", strerror(errno));
			goto out_free;
		}
		got += (size_t)n;
	}
	mfd = memfd_create("gmond.conf", MFD_CLOEXEC);
	if (mfd < 0) {
		rc = lh_err_set(err, 0, -errno, "memfd_create: %s",
		    strerror(errno));
		goto out_free;
	}
	if (got > 0 && write(mfd, buf, got) != (ssize_t)got) {
		rc = lh_err_set(err, 0, -EIO, "cannot copy it to a memfd");
		(void)close(mfd);
		goto out_free;
	}
	(void)snprintf(ret_path, size, "/proc/self/fd/%d", mfd);
	rc = mfd;
out_free:
	free(buf);
out_close:
	(void)close(fd);
	return rc;
}

/* The socket descriptors open now, into fds (at most max). */
static size_t
list_sockets(int *fds, size_t max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	struct stat st;
	size_t n = 0;

	if (d == NULL)
		return 0;
	while (n < max && (de = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (end == de->d_name || *end != '\0' || fd < 0 || fd > 65535 ||
		    fstat((int)fd, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		fds[n++] = (int)fd;
	}
	(void)closedir(d);
	return n;
}

static bool
in_list(const int *fds, size_t n, int fd)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (fds[i] == fd)
			return true;
	}
	return false;
}

/* Print "channel ip:port" for each socket that was not open before. */
static void
print_channels(const int *before, size_t nbefore)
{
	int after[GSINK_SOCKS_MAX] = {0};
	size_t n, i;

	n = list_sockets(after, GSINK_SOCKS_MAX);
	for (i = 0; i < n; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		char ip[INET6_ADDRSTRLEN] = "?";
		unsigned port = 0;

		memset(&ss, 0, sizeof(ss));
		if (in_list(before, nbefore, after[i]) ||
		    getpeername(after[i], (struct sockaddr *)&ss, &len) < 0)
			continue;
		if (ss.ss_family == AF_INET) {
			const struct sockaddr_in *a = (const void *)&ss;

			(void)inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
			port = ntohs(a->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			const struct sockaddr_in6 *a = (const void *)&ss;

			(void)inet_ntop(AF_INET6, &a->sin6_addr, ip,
			    sizeof(ip));
			port = ntohs(a->sin6_port);
		}
		(void)dprintf(STDOUT_FILENO, "channel %s:%u\n", ip, port);
	}
}

/*
 * The child: let libganglia parse the file and open its channels, exactly
 * as the parent will.  libganglia prints its reason and ends the process
 * (status 1) on any problem; success is _Exit(0) (no atexit handlers, no
 * stdio flush of buffers inherited from the parent).
 */
_Noreturn static void
check_child(const struct gapi *api, int out_fd, char *libpath)
{
	int before[GSINK_SOCKS_MAX] = {0};
	size_t nbefore;
	Ganglia_pool pool;
	Ganglia_gmond_config cfg;
	Ganglia_udp_send_channels ch;

	if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0)
		_Exit(3);
	pool = api->pool_create(NULL);
	if (pool == NULL) {
		(void)dprintf(STDERR_FILENO, "cannot create an APR pool\n");
		_Exit(3);
	}
	cfg = api->gmond_config_create(libpath, 0);
	nbefore = list_sockets(before, GSINK_SOCKS_MAX);
	ch = api->udp_send_channels_create(pool, cfg);
	if (ch == NULL) {
		(void)dprintf(STDERR_FILENO, "no udp_send_channel\n");
		_Exit(2);
	}
	print_channels(before, nbefore);
	_Exit(0);
}

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Read the child's output until EOF or the deadline; NUL-terminated. */
static bool
read_child(int fd, char *out, size_t size, unsigned timeout_ms)
{
	uint64_t deadline = mono_ms() + timeout_ms;
	size_t got = 0;

	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		uint64_t now = mono_ms();
		ssize_t n;
		int rc;

		if (now >= deadline)
			break;
		rc = poll(&pfd, 1, (int)(deadline - now));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			break;
		if (got + 1 < size) {
			n = read(fd, out + got, size - 1 - got);
		} else {
			char scratch[256];

			n = read(fd, scratch, sizeof(scratch)); /* discard */
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			out[got] = '\0';
			return n == 0;
		}
		if (got + 1 < size)
			got += (size_t)n;
	}
	out[got] = '\0';
	return false;
}

/* libganglia's and libconfuse's message, made one line about the file:
 * the first line that is not a channel, the memfd path replaced. */
static void
child_reason(const char *out, const char *libpath, int status,
    struct lh_err *err)
{
	char line[LH_ERR_REASON_MAX];
	const char *p = out, *nl;
	size_t lp = strlen(libpath), n;

	while (*p != '\0') {
		nl = strchr(p, '\n');
		n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		if (n > 0 && strncmp(p, "channel ", 8) != 0)
			break;
		p += n + (nl != NULL ? 1 : 0);
	}
	nl = strchr(p, '\n');
	n = nl != NULL ? (size_t)(nl - p) : strlen(p);
	if (n == 0) {
		if (WIFSIGNALED(status))
			(void)lh_err_set(err, 0, -EINVAL,
			    "libganglia's check died of signal %d",
			    WTERMSIG(status));
		else
			(void)lh_err_set(err, 0, -EINVAL,
			    "libganglia refused it (exit status %d)",
			    WEXITSTATUS(status));
		return;
	}
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	memcpy(line, p, n);
	line[n] = '\0';
	/* libconfuse: "PATH:LINE: reason" */
	if (strncmp(line, libpath, lp) == 0 && line[lp] == ':') {
		(void)lh_err_set(err, 0, -EINVAL, "line %s", line + lp + 1);
	} else {
		(void)lh_err_set(err, 0, -EINVAL, "%s", line);
	}
	/* libganglia ends with " Exiting." (and a path we made up). */
	n = strlen(err->reason);
	while (n > 0 &&
	    (err->reason[n - 1] == ' ' || err->reason[n - 1] == '.' ||
	        err->reason[n - 1] == '\r'))
		err->reason[--n] = '\0';
	if (n >= 8 && strcmp(err->reason + n - 8, " Exiting") == 0) {
		err->reason[n - 8] = '\0';
		n -= 8;
		while (n > 0 && err->reason[n - 1] == '.')
			err->reason[--n] = '\0';
	}
}

/* Keep the "channel ip:port" lines, comma-separated. */
static void
channel_list(const char *out, char *buf, size_t size)
{
	const char *p = out;
	size_t used = 0;

	buf[0] = '\0';
	while ((p = strstr(p, "channel ")) != NULL) {
		size_t n;
		int w;

		p += 8;
		n = strcspn(p, "\n");
		w = snprintf(buf + used, size - used, "%s%.*s",
		    used > 0 ? "," : "", (int)n, p);
		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
		p += n;
	}
}

/* Run check_child(); 0 and the channel list, or an error with reason. */
static int
check_conf(const struct gapi *api, char *libpath, unsigned timeout_ms,
    char *chans, size_t size, struct lh_err *err)
{
	char out[GSINK_OUT_MAX];
	int fds[2], status = 0;
	bool eof;
	pid_t pid, w;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return lh_err_set(err, 0, -errno, "pipe: %s", strerror(errno));
	/* libganglia ending the child flushes stdio: nothing of ours
	 * may be waiting in a buffer then. */
	(void)fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		(void)close(fds[0]);
		(void)close(fds[1]);
		return lh_err_set(err, 0, -e, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		(void)close(fds[0]);
		check_child(api, fds[1], libpath);
	}
	(void)close(fds[1]);
	eof = read_child(fds[0], out, sizeof(out), timeout_ms);
	(void)close(fds[0]);
	if (!eof)
		(void)kill(pid, SIGKILL); /* our own child, still running */
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return lh_err_set(err, 0, -ECHILD,
		    "lost the checking child (SIGCHLD ignored or reaped "
		    "elsewhere)");
	if (!eof)
		return lh_err_set(err, 0, -ETIMEDOUT,
		    "libganglia's check took more than %u ms "
		    "(a channel host that does not resolve?)",
		    timeout_ms);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		channel_list(out, chans, size);
		return 0;
	}
	child_reason(out, libpath, status, err);
	return -EINVAL;
}

/* The (host, metric) table and the token bucket, from s->o. */
static void
init_cache_and_pace(struct gsink *s)
{
	const struct gsink_opts *o = &s->o;
	struct gcache_opts co;
	uint64_t forget;

	/* Forget a pair when gmond will have (dmax); with dmax 0 only to
	 * bound memory. */
	forget = o->dmax > 0 ? o->dmax : 3600;
	if (o->dmax == 0 && forget < 4ULL * o->metadata_interval)
		forget = 4ULL * o->metadata_interval;
	co.meta_interval_ns = (uint64_t)o->metadata_interval * GSINK_NS;
	co.forget_ns = forget * GSINK_NS;
	co.max_entries = o->max_entries;
	gcache_init(&s->cache, &co);
	s->expire_every_ns = forget * GSINK_NS / 4;
	if (s->expire_every_ns > 60 * GSINK_NS)
		s->expire_every_ns = 60 * GSINK_NS;
	/* A burst of 10 ms worth, so a timer firing late loses no pace. */
	s->burst = o->pace / 100.0;
	if (s->burst < 16)
		s->burst = 16;
	s->tokens = s->burst;
}

/* The reason as the one line to log: "gmond_conf PATH: REASON". */
static int
conf_error(struct lh_err *err, const char *path, int rc)
{
	char reason[LH_ERR_REASON_MAX];

	if (err == NULL)
		return rc;
	memcpy(reason, err->reason, sizeof(reason));
	return lh_err_set(err, 0, rc, "gmond_conf %s: %s", path, reason);
}

/* A sink with the options o, checked, and nothing open yet; NULL with
 * *rc and err set when o is unusable or memory short. */
static struct gsink *
sink_new(const struct gsink_opts *o, int *rc, struct lh_err *err)
{
	struct gsink *s;

	if (o->group == NULL || strlen(o->group) > GSINK_GROUP_MAX ||
	    (o->group[0] != '\0' && !gcache_metric_ok(o->group))) {
		*rc = lh_err_set(err, 0, -EINVAL,
		    "group must be 0-%d of [A-Za-z0-9_.-]", GSINK_GROUP_MAX);
		return NULL;
	}
	if (o->max_entries == 0 || o->max_entries > UINT32_MAX / 2) {
		*rc = lh_err_set(err, 0, -EINVAL, "bad max_entries");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		*rc = lh_err_set(err, 0, -ENOMEM, "out of memory");
		return NULL;
	}
	s->o = *o;
	(void)snprintf(s->group, sizeof(s->group), "%s", o->group);
	s->o.group = s->group;
	return s;
}

int
gsink_open(const char *gmond_conf, const struct gsink_opts *o,
    struct gsink **ret, struct lh_err *err)
{
	char libpath[64];
	struct gsink_opts def;
	struct gsink *s;
	Ganglia_gmond_config cfg;
	int mfd, rc;

	lh_err_clear(err);
	if (o == NULL) {
		gsink_opts_default(&def);
		o = &def;
	}
	s = sink_new(o, &rc, err);
	if (s == NULL)
		return rc;
	rc = gapi_load(&s->api, gapi_soname, err);
	if (rc < 0)
		goto out_free;
	mfd = snapshot_conf(gmond_conf, libpath, sizeof(libpath), err);
	if (mfd < 0) {
		rc = mfd;
		goto out_free;
	}
	rc = check_conf(&s->api, libpath, o->check_timeout_ms, s->chan_desc,
	    sizeof(s->chan_desc), err);
	if (rc < 0)
		goto out_memfd;

	/* The child built exactly this from the same bytes: libganglia will
	 * not end this process now, short of a name that stopped resolving
	 * within the last milliseconds or running out of descriptors. */
	s->pool = s->api.pool_create(NULL);
	if (s->pool == NULL) {
		rc = lh_err_set(err, 0, -ENOMEM, "cannot create an APR pool");
		goto out_memfd;
	}
	cfg = s->api.gmond_config_create(libpath, 0);
	s->channels = s->api.udp_send_channels_create(s->pool, cfg);
	if (s->channels == NULL) {
		rc = lh_err_set(err, 0, -EINVAL, "no udp_send_channel");
		goto out_pool;
	}
	(void)close(mfd);
	init_cache_and_pace(s);
	*ret = s;
	return 0;

out_pool:
	s->api.pool_destroy(s->pool);
out_memfd:
	(void)close(mfd);
out_free:
	free(s);
	return conf_error(err, gmond_conf, rc);
}

/* The value as gmond will show it: two decimals, as the legacy tool. */
static void
format_value(char *buf, size_t size, double v)
{
	if (fabs(v) < 0.005)
		(void)snprintf(buf, size, "0.00"); /* never "-0.00" */
	else if (fabs(v) < 1e15)
		(void)snprintf(buf, size, "%.2f", v);
	else
		(void)snprintf(buf, size, "%.6e", v);
}

/* Send e's value, preceded by its metadata when meta; returns what
 * happened to the metadata, and counts. */
static enum gcache_meta
send_entry(struct gsink *s, struct gcache_entry *e, bool meta)
{
	char value[64], type[] = "float", spoof_key[] = SPOOF_HOST;
	enum gcache_meta res = GCACHE_META_NONE;
	Ganglia_metric gm;
	int nerr;

	gm = s->api.metric_create(s->pool);
	if (gm == NULL) {
		s->rejected++;
		return meta ? GCACHE_META_FAILED : GCACHE_META_NONE;
	}
	format_value(value, sizeof(value), e->value);
	if (s->api.metric_set(gm, e->key + e->metric_off, value, type,
	        e->key + e->units_off, GANGLIA_SLOPE_BOTH, s->o.tmax,
	        s->o.dmax) != 0) {
		/* 1-4: bad parameter, '"', type, not a number; gcache
		 * checked all of them. */
		s->rejected++;
		s->api.metric_destroy(gm);
		return meta ? GCACHE_META_FAILED : GCACHE_META_NONE;
	}
	s->api.metadata_add(gm, spoof_key, e->key);
	if (meta) {
		if (s->group[0] != '\0') {
			char group_key[] = "GROUP";

			s->api.metadata_add(gm, group_key, s->group);
		}
		nerr = s->api.metadata_send(gm, s->channels);
		s->metadata++;
		s->send_errors += (unsigned)nerr;
		res = nerr == 0 ? GCACHE_META_SENT : GCACHE_META_FAILED;
	}
	nerr = s->api.value_send(gm, s->channels);
	s->values++;
	s->send_errors += (unsigned)nerr;
	if (nerr != 0 && res == GCACHE_META_SENT)
		res = GCACHE_META_FAILED; /* gmond may have missed both */
	s->api.metric_destroy(gm);
	return res;
}

int
gsink_put(struct gsink *s, const char *spoof_ip, const char *host,
    const char *metric, const char *units, double value, uint64_t now_ns)
{
	char spoof[GCACHE_SPOOF_MAX + 1];
	int rc;

	rc = gcache_spoof(spoof, sizeof(spoof), spoof_ip, host);
	if (rc < 0)
		return rc;
	return gcache_put(&s->cache, spoof, metric, units, value, now_ns);
}

size_t
gsink_flush(struct gsink *s, uint64_t now_ns)
{
	struct gcache_entry *e;

	if (s->o.pace > 0 && now_ns > s->tokens_ns) {
		s->tokens += (double)(now_ns - s->tokens_ns) * s->o.pace / 1e9;
		if (s->tokens > s->burst)
			s->tokens = s->burst;
	}
	s->tokens_ns = now_ns;
	while ((e = gcache_head(&s->cache)) != NULL) {
		bool meta = gcache_meta_due(&s->cache, e, now_ns);
		double need = meta ? 2 : 1;
		uint64_t errs = s->send_errors;

		if (s->o.pace > 0 && s->tokens < need)
			break;
		gcache_pop(&s->cache, send_entry(s, e, meta), now_ns);
		if (s->o.pace > 0)
			s->tokens -= need;
		/* gmond down (or restarted): whatever it gets next may be
		 * values of metrics it no longer knows. */
		if (s->send_errors != errs &&
		    gcache_force_meta(&s->cache, now_ns))
			s->forced++;
	}
	if (gcache_pending(&s->cache) == 0 &&
	    now_ns - s->last_expire_ns >= s->expire_every_ns) {
		(void)gcache_expire(&s->cache, now_ns);
		s->last_expire_ns = now_ns;
	}
	return gcache_pending(&s->cache);
}

const char *
gsink_channels(const struct gsink *s)
{
	return s->chan_desc;
}

void
gsink_stats(const struct gsink *s, struct gsink_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->values = s->values;
	ret->metadata = s->metadata;
	ret->send_errors = s->send_errors;
	ret->coalesced = s->cache.coalesced;
	ret->refused = s->cache.refused;
	ret->rejected = s->rejected;
	ret->forgotten = s->cache.forgotten;
	ret->forced = s->forced;
	ret->entries = s->cache.n;
	ret->pending = gcache_pending(&s->cache);
}

void
gsink_close(struct gsink *s)
{
	if (s == NULL)
		return;
	gcache_free(&s->cache);
	/* Closes the channels' sockets; the parsed gmond.conf is libconfuse
	 * memory libganglia has no exported way to free. */
	s->api.pool_destroy(s->pool);
	free(s);
}
