/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Admission arithmetic of the listener: token bucket, per-source key,
 * descriptor room.
 */
#include <sys/resource.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <string.h>

#include "clock.h"
#include "connlimit.h"

void
connlimit_bucket_init(struct connlimit_bucket *b, unsigned rate, unsigned burst,
    uint64_t now_ns)
{
	b->rate = rate > 0 ? rate : 1;
	b->burst = burst > 0 ? burst : 1;
	b->last_ns = now_ns;
	b->tokens = (double)b->burst;
}

static void
bucket_refill(struct connlimit_bucket *b, uint64_t now_ns)
{
	if (now_ns > b->last_ns) {
		b->tokens += (double)(now_ns - b->last_ns) * b->rate /
		    (double)CLOCK_NS_PER_S;
		if (b->tokens > (double)b->burst)
			b->tokens = (double)b->burst;
	}
	b->last_ns = now_ns;
}

void
connlimit_bucket_take(struct connlimit_bucket *b, uint64_t now_ns)
{
	bucket_refill(b, now_ns);
	b->tokens = b->tokens >= 1.0 ? b->tokens - 1.0 : 0.0;
}

uint64_t
connlimit_bucket_wait(struct connlimit_bucket *b, uint64_t now_ns)
{
	bucket_refill(b, now_ns);
	if (b->tokens >= 1.0)
		return 0;
	/* Round up: waking a little late costs nothing, early a timer. */
	return (uint64_t)((1.0 - b->tokens) * (double)CLOCK_NS_PER_S /
	           b->rate) +
	    1;
}

void
connlimit_src_of(const struct sockaddr *sa, struct connlimit_src *ret)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff,
	    0xff};

	memset(ret, 0, sizeof(*ret));
	ret->family = sa->sa_family;
	if (sa->sa_family == AF_INET) {
		memcpy(ret->addr,
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
		    4);
	} else if (sa->sa_family == AF_INET6) {
		const uint8_t *a =
		    ((const struct sockaddr_in6 *)(const void *)sa)
		        ->sin6_addr.s6_addr;

		/* An IPv4 peer on an IPv6 socket is the IPv4 address. */
		if (memcmp(a, mapped, sizeof(mapped)) == 0) {
			ret->family = AF_INET;
			memcpy(ret->addr, a + sizeof(mapped), 4);
		} else {
			memcpy(ret->addr, a, sizeof(ret->addr));
		}
	}
}

bool
connlimit_src_equal(const struct connlimit_src *a,
    const struct connlimit_src *b)
{
	/* The callers walk sys/queue.h lists, which cppcheck cannot see. */
	/* cppcheck-suppress ctuuninitvar */
	return a->family == b->family &&
	    memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

unsigned
connlimit_nofile(unsigned want)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)want + CONNLIMIT_FD_RESERVE;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return want;
	if (rl.rlim_cur < need) {
		struct rlimit up = rl;

		up.rlim_cur =
		    rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ?
		    need :
		    rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
	}
	if (rl.rlim_cur >= need)
		return want;
	if (rl.rlim_cur <= CONNLIMIT_FD_RESERVE + 1)
		return 1;
	return (unsigned)(rl.rlim_cur - CONNLIMIT_FD_RESERVE);
}
