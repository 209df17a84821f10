/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lines of a request's head, judged one by one as they arrive
 * (daemon/httpd_head.c), before libevent's parser sees them: what it
 * would refuse with a page of its own is refused here, so that the
 * listener answers in its JSON envelope.  Pure, for the fuzz target
 * (tests/fuzz/fuzz_httphead.c).
 */
#ifndef LH_HTTPHEAD_H
#define LH_HTTPHEAD_H

#include <stdbool.h>
#include <stddef.h>

/* The request line b[0..n) (without its line end): 0 for "GET" or
 * "HEAD" SP target SP "HTTP/1.0" or "HTTP/1.1"; 405 for another method
 * (1 to 16 of A-Z) in such a line; 400 for anything else. */
int httphead_request_line(const char *b, size_t n);

/* A header line b[0..n) (not empty, without its line end): "name:
 * value", or a continuation (leading blank) when it is not the first;
 * no control character but a tab. */
bool httphead_header_line(const char *b, size_t n, bool first);

#endif
