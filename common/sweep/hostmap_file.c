/* SPDX-License-Identifier: BSD-2-Clause */
/* Loading a hosts map: /etc/hosts syntax from text or a file, each name
 * rewritten and checked, duplicates counted, reasons per line. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "err.h"
#include "hostmap.h"
#include "hostmap_int.h"
#include "nid.h"

/* The error of line: "name:line: why" for a file, else "line N: why". */
static int line_err(struct lh_err *err, const char *name, unsigned line,
    int code, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
line_err(struct lh_err *err, const char *name, unsigned line, int code,
    const char *fmt, ...)
{
	char why[LH_ERR_REASON_MAX];
	va_list ap;

	if (err == NULL)
		return code;
	va_start(ap, fmt);
	(void)vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (name != NULL)
		return lh_err_set(err, line, code, "%s:%u: %s", name, line,
		    why);
	return lh_err_set(err, line, code, "line %u: %s", line, why);
}

/* LND names: a letter, then letters and digits ("o2ib2", "tcp", "gni"). */
static bool
net_ok(const char *net)
{
	const char *p;

	if (!((*net >= 'a' && *net <= 'z') || (*net >= 'A' && *net <= 'Z')))
		return false;
	for (p = net + 1; *p != '\0'; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		        (*p >= '0' && *p <= '9')))
			return false;
	}
	return true;
}

/* The key of a file's address field: a full NID, or an IP address. */
static int
addr_key(const char *addr, uint8_t *ret_kind, char *key)
{
	const char *at = strchr(addr, '@');
	char ipkey[HM_IP_MAX];
	const char *p;

	if (at == NULL) {
		if (!hm_ip_canon(addr, key))
			return -EINVAL;
		*ret_kind = HM_IP;
		return 0;
	}
	if (at == addr || strchr(at + 1, '@') != NULL || !net_ok(at + 1))
		return -EINVAL;
	for (p = addr; p < at; p++) {
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			return -EINVAL;
	}
	if (hm_nid_keys(addr, key, ipkey) < 0)
		return -EINVAL;
	*ret_kind = HM_NID;
	return 0;
}

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The next field of [*pp, end): its start and length (0 at the end). */
static const char *
next_field(const char **pp, const char *end, size_t *ret_len)
{
	const char *p = *pp, *f;

	while (p < end && is_blank(*p))
		p++;
	f = p;
	while (p < end && !is_blank(*p))
		p++;
	*ret_len = (size_t)(p - f);
	*pp = p;
	return f;
}

/* A line's host name field rewritten and checked into host (HM_WORK_MAX
 * bytes).  Returns 0, or -EINVAL with the line's reason. */
static int
load_name(const struct hostmap *m, const char *name, unsigned lineno,
    const char *h, size_t hlen, char *host, struct lh_err *err)
{
	char raw[HM_RAW_MAX + 1], q[HM_QUOTE + 4];
	const char *why;

	if (hlen == 0)
		return line_err(err, name, lineno, -EINVAL,
		    "no host name after the address");
	if (hlen > HM_RAW_MAX)
		return line_err(err, name, lineno, -EINVAL,
		    "host name longer than %d characters", HOSTMAP_NAME_MAX);
	memcpy(raw, h, hlen);
	raw[hlen] = '\0';
	why = hm_name_make(m, raw, host);
	/* Show what the rules made of a refused name: the rule is the
	 * likelier culprit than the file. */
	if (why != NULL && strcmp(raw, host) != 0) {
		char q2[HM_QUOTE + 4];

		return line_err(err, name, lineno, -EINVAL,
		    "\"%s\" rewritten to \"%s\": %s",
		    hm_quote(raw, hlen, q, sizeof(q)),
		    hm_quote(host, strlen(host), q2, sizeof(q2)), why);
	}
	if (why != NULL)
		return line_err(err, name, lineno, -EINVAL, "\"%s\": %s",
		    hm_quote(raw, hlen, q, sizeof(q)), why);
	return 0;
}

/* One line's address and name fields: add the entry, or count it as a
 * duplicate. */
static int
load_entry(struct hostmap *m, const char *name, unsigned lineno, const char *a,
    size_t alen, const char *h, size_t hlen, struct lh_err *err)
{
	char addr[NID_STR_MAX], key[HM_KEY_MAX], host[HM_WORK_MAX];
	char q[HM_QUOTE + 4];
	const struct hm_entry *e;
	uint8_t kind = 0;
	int rc;

	if (alen >= sizeof(addr))
		return line_err(err, name, lineno, -EINVAL,
		    "address \"%s\" longer than %d characters",
		    hm_quote(a, alen, q, sizeof(q)), NID_STR_MAX - 1);
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	if (addr_key(addr, &kind, key) < 0)
		return line_err(err, name, lineno, -EINVAL,
		    "\"%s\" is neither an IP address nor a NID (addr@net)",
		    hm_quote(a, alen, q, sizeof(q)));
	rc = load_name(m, name, lineno, h, hlen, host, err);
	if (rc < 0)
		return rc;
	e = hm_entry_find(m, kind, key);
	if (e != NULL) {
		/* The first wins, as in /etc/hosts; the caller logs the
		 * count once rather than a line per duplicate. */
		m->stats.duplicates++;
		if (strcmp(m->pool + e->host, host) != 0)
			m->stats.conflicts++;
		if (m->stats.first_duplicate_line == 0)
			m->stats.first_duplicate_line = lineno;
		return 0;
	}
	if (m->n == HOSTMAP_ENTRIES_MAX)
		return line_err(err, name, lineno, -EINVAL,
		    "more than %zu addresses", HOSTMAP_ENTRIES_MAX);
	rc = hm_entry_add(m, kind, key, host);
	if (rc < 0)
		return line_err(err, name, lineno, rc, "out of memory");
	if (kind == HM_IP)
		m->stats.ip_entries++;
	else
		m->stats.nid_entries++;
	return 0;
}

/* hostmap_load_text(), with the file's name (or NULL) for the reasons. */
static int
load_text(struct hostmap *m, const char *text, size_t len, const char *name,
    struct lh_err *err)
{
	const char *p = text, *end = text + len;
	unsigned lineno = 0;
	int rc;

	if (m->loaded)
		return lh_err_set(err, 0, -EBUSY, "hosts map already loaded");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl != NULL ? nl : end, *s = p, *hash, *a, *h;
		size_t alen, hlen;

		lineno++;
		p = nl != NULL ? nl + 1 : end;
		if (memchr(s, '\0', (size_t)(le - s)) != NULL) {
			rc = line_err(err, name, lineno, -EINVAL, "NUL byte");
			goto fail;
		}
		/* '#' starts a comment anywhere, as glibc reads /etc/hosts. */
		hash = memchr(s, '#', (size_t)(le - s));
		if (hash != NULL)
			le = hash;
		a = next_field(&s, le, &alen);
		if (alen == 0)
			continue;
		h = next_field(&s, le, &hlen);
		rc = load_entry(m, name, lineno, a, alen, h, hlen, err);
		if (rc < 0)
			goto fail;
	}
	m->loaded = true;
	return 0;
fail:
	hm_entries_free(m);
	return rc;
}

int
hostmap_load_text(struct hostmap *m, const char *text, size_t len,
    struct lh_err *err)
{
	return load_text(m, text, len, NULL, err);
}

/*
 * The rest of fd into *buf (cap bytes allocated, sized from fstat) and
 * *len, doubling up to HOSTMAP_FILE_MAX + 1 bytes: the file may grow
 * while it is read.  Returns 0 or -errno with err set; *buf is the
 * caller's to free either way.
 */
static int
read_all(int fd, const char *path, size_t cap, char **buf, size_t *len,
    struct lh_err *err)
{
	ssize_t n;
	char *nb;

	while ((n = read(fd, *buf + *len, cap - *len)) > 0) {
		*len += (size_t)n;
		if (*len > HOSTMAP_FILE_MAX)
			return lh_err_set(err, 0, -EFBIG,
			    "%s: larger than %zu bytes", path,
			    HOSTMAP_FILE_MAX);
		if (*len == cap) {
			size_t want = array_capacity(cap, cap + 1);

			if (want > HOSTMAP_FILE_MAX + 1)
				want = HOSTMAP_FILE_MAX + 1;
			nb = array_resize(*buf, &cap, want, 1);
			if (nb == NULL)
				return lh_err_set(err, 0, -ENOMEM,
				    "%s: out of memory", path);
			*buf = nb;
		}
	}
	if (n < 0) {
		int e = errno;

		return lh_err_set(err, 0, -e, "%s: %s", path, strerror(e));
	}
	return 0;
}

int
hostmap_load_file(struct hostmap *m, const char *path, struct lh_err *err)
{
	char *buf = NULL;
	struct stat sb;
	size_t len = 0, cap;
	int fd, rc, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return lh_err_set(err, 0, -e, "%s: %s", path, strerror(e));
	}
	if (fstat(fd, &sb) < 0) {
		e = errno;
		rc = lh_err_set(err, 0, -e, "%s: %s", path, strerror(e));
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		rc =
		    lh_err_set(err, 0, -EINVAL, "%s: not a regular file", path);
		goto out;
	}
	if ((uint64_t)sb.st_size > HOSTMAP_FILE_MAX) {
		rc = lh_err_set(err, 0, -EFBIG, "%s: larger than %zu bytes",
		    path, HOSTMAP_FILE_MAX);
		goto out;
	}
	/* Sized from fstat, but read to the end: the file may grow. */
	cap = (size_t)sb.st_size + 1;
	buf = malloc(cap);
	if (buf == NULL) {
		rc = lh_err_set(err, 0, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	rc = read_all(fd, path, cap, &buf, &len, err);
	if (rc == 0)
		rc = load_text(m, buf, len, path, err);
out:
	free(buf);
	(void)close(fd);
	return rc;
}
