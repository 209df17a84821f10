#!/usr/bin/env bash
# Reverse DNS (daemon/resolver.c, docs/dns.md), driven by lhresolve against
# tests/tools/dnsstub.py on 127.0.0.1.  No test here ever asks the
# machine's own resolver: lhresolve gets --server 127.0.0.1:PORT (the stub)
# or --disable, and refuses to run without one of them.
# Usage: bash it_resolver.sh BIN (BIN: the lharvestd binary; lhresolve is
# next to it).
set -uo pipefail
bin=$1
bindir=$(cd "$(dirname "$bin")" && pwd)
src=${LH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
res=$bindir/lhresolve
stub=$src/tests/tools/dnsstub.py
[ -x "$res" ] || { echo "no $res"; exit 1; }
[ -f "$stub" ] || { echo "no $stub"; exit 1; }

# tmp, pids, cleanup and the t_* reporting of the other tests.
. "$(dirname "$0")/dumplib.sh"

# start_stub NAME ARGS...: the stub on 127.0.0.1:0 serving $tmp/map;
# sets stub_pid and stub_port; counts go to $tmp/NAME.counts.
start_stub() {
	local name=$1 i
	shift
	python3 "$stub" --map "$tmp/map" --counts "$tmp/$name.counts" "$@" \
		>"$tmp/$name.stub" 2>"$tmp/$name.stuberr" &
	stub_pid=$!
	pids+=("$stub_pid")
	for ((i = 0; i < 100; i++)); do
		stub_port=$(sed -n 's/^port //p' "$tmp/$name.stub" 2>/dev/null)
		[ -n "$stub_port" ] && return 0
		sleep 0.1
	done
	cat "$tmp/$name.stuberr"
	echo "dnsstub did not start"
	exit 1
}

# stop_stub NAME: SIGTERM; the stub writes $tmp/NAME.counts as it exits.
stop_stub() {
	kill -TERM "$stub_pid" 2>/dev/null
	wait "$stub_pid" 2>/dev/null
	[ -f "$tmp/$1.counts" ] || echo "total -1" >"$tmp/$1.counts"
}

# count NAME KEY: a value of the stub's counts (0 if absent).
count() {
	awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }' "$tmp/$1.counts"
}

# rstat NAME KEY: a counter lhresolve printed ("stat KEY VALUE").
rstat() {
	awk -v k="$2" '$1 == "stat" && $2 == k { v = $3 } END { print v + 0 }' \
		"$tmp/$1.out"
}

# run NAME ARGS...: lhresolve against the stub (at most 120 s); stdout in
# $tmp/NAME.out, stderr in $tmp/NAME.err.
run() {
	local name=$1
	shift
	timeout 120 "$res" --server "127.0.0.1:$stub_port" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
}

# answers NAME ROUND: the "addr name" lines of one round, sorted.
answers() {
	awk -v r="$2" '$1 == "round" { cur = $2; next }
		$1 != "stat" && cur == r { print $1, $2 }' "$tmp/$1.out" | sort
}

# expect NAME ROUND "addr name"...: the round answered exactly these.
expect() {
	local name=$1 round=$2
	shift 2
	printf '%s\n' "$@" | sort >"$tmp/want"
	answers "$name" "$round" >"$tmp/got"
	diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"
}

# Sanitizer builds: any report fails the test.
clean_stderr() {
	! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error' "$tmp/$1.err"
}

cat >"$tmp/map" <<'EOF'
# address name [ttl]
192.0.2.1 host1.example
192.0.2.2 host2.example. 30
192.0.2.3 -
192.0.2.10 short.example 1
192.0.2.11 long.example 3600
2001:db8::1 v6host.example
2001:db8:0:1::a:b v6other.example
EOF

# 1. Names, IPv6, NXDOMAIN, NODATA; the second round comes from the caches.
start_stub basic
run basic --rounds 2 --gap-ms 100 --eager 192.0.2.1 192.0.2.2 192.0.2.3 \
	192.0.2.99 2001:db8::1 2001:db8:0:1::a:b
rc=$?
stop_stub basic
t_check "basic: lhresolve exits 0" test "$rc" -eq 0
for r in 1 2; do
	if expect basic $r "192.0.2.1 host1.example" "192.0.2.2 host2.example" \
		"192.0.2.3 -" "192.0.2.99 -" "2001:db8::1 v6host.example" \
		"2001:db8:0:1::a:b v6other.example"; then
		t_pass "basic: round $r answers (PTR, IPv6, NODATA, NXDOMAIN)"
	else
		t_fail "basic: round $r answers" "$(cat "$tmp/diff")"
	fi
done
t_check "basic: one query per address, none in round 2" \
	test "$(count basic total)" -eq 6
t_check "basic: each address asked once" \
	test "$(count basic 2001:db8:0:1::a:b)" -eq 1 -a \
	"$(count basic 192.0.2.99)" -eq 1
t_check "basic: both rounds from the positive cache (8 hits)" \
	test "$(rstat basic hits)" -eq 8
t_check "basic: and the negative cache (4 negative hits)" \
	test "$(rstat basic negative_hits)" -eq 4
t_check "basic: NXDOMAIN and NODATA counted" \
	test "$(rstat basic nxdomain)" -eq 1 -a "$(rstat basic nodata)" -eq 1
t_check "basic: the failures are logged" \
	grep -q 'reverse DNS for 192.0.2.99: name does not exist' \
	"$tmp/basic.err"
t_check "basic: nothing left in flight" test "$(rstat basic inflight)" -eq 0
t_check "basic: sanitizer-clean" clean_stderr basic

# 2. The negative TTL (1 s): asked again only once it expired.  Rounds at
#    0, 0.3 s (cached) and 1.8 s (expired).
start_stub neg
run neg --rounds 3 --gap-ms 300,1500 --negative-ttl 1 --eager \
	192.0.2.99 192.0.2.3
rc=$?
stop_stub neg
t_check "negative TTL: lhresolve exits 0" test "$rc" -eq 0
t_check "negative TTL: no name in any round" \
	test "$(grep -c -- ' -$' "$tmp/neg.out")" -eq 6
t_check "negative TTL: two queries per address (once cached, once expired)" \
	test "$(count neg 192.0.2.99)" -eq 2 -a "$(count neg 192.0.2.3)" -eq 2
t_check "negative TTL: every answer from the negative cache (3 each)" \
	test "$(rstat neg negative_hits)" -eq 6

# 3. Positive TTLs: the record's (1 s) and our cap (--positive-ttl 1 on a
#    3600 s record) expire; a 30 s record does not.  An expired name is
#    still answered at once while it is renewed.
start_stub pos
run pos --rounds 2 --gap-ms 1500 --positive-ttl 2 --eager \
	192.0.2.10 192.0.2.11 192.0.2.1
rc=$?
stop_stub pos
start_stub cap
run cap --rounds 2 --gap-ms 1500 --positive-ttl 1 --eager 192.0.2.11
stop_stub cap
t_check "positive TTL: lhresolve exits 0" test "$rc" -eq 0
if expect pos 2 "192.0.2.10 short.example" "192.0.2.11 long.example" \
	"192.0.2.1 host1.example"; then
	t_pass "positive TTL: round 2 answers"
else
	t_fail "positive TTL: round 2 answers" "$(cat "$tmp/diff")"
fi
t_check "positive TTL: a 1 s record is asked again after 1.5 s" \
	test "$(count pos 192.0.2.10)" -eq 2
t_check "positive TTL: a 3600 s record is cached for the 2 s cap" \
	test "$(count pos 192.0.2.11)" -eq 1
t_check "positive TTL: the cap (1 s) shortens a 3600 s record" \
	test "$(count cap 192.0.2.11)" -eq 2
t_check "positive TTL: the expired name answered while renewed" \
	test "$(rstat pos stale_hits)" -ge 1

# 4. A dropped answer times out (1 s, one attempt) without holding up the
#    others, and the timeout is cached as a failure.
start_stub drop --drop 192.0.2.50 --delay 192.0.2.2=0.3
run drop --rounds 2 --gap-ms 100 --timeout 1 --attempts 1 --eager \
	--timing 192.0.2.50 192.0.2.1 192.0.2.2 2001:db8::1
rc=$?
stop_stub drop
t_check "timeout: lhresolve exits 0" test "$rc" -eq 0
late=$(awk '$1 == "round" { r = $2 } r == 1 && $1 != "192.0.2.50" &&
	$1 != "round" && $3 > 700 { print }' "$tmp/drop.out")
if [ -z "$late" ] && grep -qE '^192\.0\.2\.1 host1\.example [0-9]+$' \
	"$tmp/drop.out"; then
	t_pass "timeout: the others answered while it was outstanding"
else
	t_fail "timeout: the others answered while it was outstanding" \
		"$late" "$(cat "$tmp/drop.out")"
fi
# shellcheck disable=SC2016 # awk programs, run through t_check
t_check "timeout: the delayed answer came after its delay" \
	awk '$1 == "192.0.2.2" && $3 >= 250 { ok = 1 } END { exit !ok }' \
	"$tmp/drop.out"
# shellcheck disable=SC2016 # awk programs, run through t_check
t_check "timeout: the dropped one is no name, after about 1 s" \
	awk '$1 == "192.0.2.50" && $2 == "-" && $3 >= 900 && $3 < 3000 \
		{ ok = 1 } END { exit !ok }' "$tmp/drop.out"
t_check "timeout: counted and cached (one query)" \
	test "$(rstat drop timeouts)" -eq 1 -a \
	"$(count drop 192.0.2.50)" -eq 1
t_check "timeout: logged" \
	grep -q 'reverse DNS for 192.0.2.50: request timed out' "$tmp/drop.err"

# 5. dns = no: no name, and not one query.
start_stub off
run off --disable 192.0.2.1 2001:db8::1
rc=$?
stop_stub off
if [ $rc -eq 0 ] && expect off 1 "192.0.2.1 -" "2001:db8::1 -"; then
	t_pass "disabled: every lookup is no name"
else
	t_fail "disabled: every lookup is no name" "$(cat "$tmp/off.out")"
fi
t_check "disabled: the stub saw no query" test "$(count off total)" -eq 0
t_check "disabled: counted as disabled" test "$(rstat off disabled)" -eq 2

# 6. 2000 addresses, each answered after 20 ms, at most 50 in flight,
#    asked again every 20 ms sweep (not on completion) like the
#    aggregator: all answered, each queried once, never more than 50 at
#    once (seen from both ends).
python3 - "$tmp" <<'EOF'
import sys
tmp = sys.argv[1]
with open(f"{tmp}/map", "a") as m, open(f"{tmp}/many", "w") as a, \
        open(f"{tmp}/many.want", "w") as w:
    for i in range(2000):
        addr = f"10.77.{i // 250}.{i % 250 + 1}"
        m.write(f"{addr} c{i}.many.example\n")
        a.write(addr + "\n")
        w.write(f"{addr} c{i}.many.example\n")
EOF
start_stub many --delay-all 0.02
run many --max-inflight 50 --period-ms 20 -f "$tmp/many"
rc=$?
stop_stub many
t_check "many: lhresolve exits 0" test "$rc" -eq 0
answers many 1 >"$tmp/many.got"
if sort "$tmp/many.want" | diff -q - "$tmp/many.got" >/dev/null; then
	t_pass "many: all 2000 answered"
else
	t_fail "many: all 2000 answered" \
		"$(sort "$tmp/many.want" | diff - "$tmp/many.got" | head -5)"
fi
t_check "many: 2000 queries, one each" test "$(count many total)" -eq 2000
t_check "many: at most 50 in flight (resolver)" \
	test "$(rstat many inflight_peak)" -le 50
t_check "many: at most 50 held at the stub, and more than one" \
	test "$(count many peak_pending)" -le 50 -a \
	"$(count many peak_pending)" -gt 1
t_check "many: lookups over the limit deferred" \
	test "$(rstat many deferred)" -gt 0

# 7. The cache bound: 10 entries for 30 addresses over two rounds; the
#    least recently used go, so the second round asks again.
head -30 "$tmp/many" >"$tmp/lru"
start_stub lru
run lru --max-entries 10 --rounds 2 --gap-ms 50 --eager -f "$tmp/lru"
rc=$?
stop_stub lru
t_check "cache bound: lhresolve exits 0 with every answer" \
	test "$rc" -eq 0 -a "$(grep -c 'many\.example$' "$tmp/lru.out")" -eq 60
t_check "cache bound: at most 10 entries, the rest evicted" \
	test "$(rstat lru entries)" -le 10 -a "$(rstat lru evictions)" -ge 50
t_check "cache bound: evicted names asked again" \
	test "$(count lru total)" -eq 60

# 8. Failures are visible but rate limited: 20 unknown addresses make at
#    most 5 lines, and one line counting the others.
seq 1 20 | sed 's/^/198.51.100./' >"$tmp/unknown"
start_stub quiet
run quiet --eager -f "$tmp/unknown"
rc=$?
stop_stub quiet
t_check "rate limit: all 20 answered no name" \
	test "$rc" -eq 0 -a "$(grep -c -- ' -$' "$tmp/quiet.out")" -eq 20
t_check "rate limit: at most 5 failure lines" \
	test "$(grep -c 'reverse DNS for' "$tmp/quiet.err")" -eq 5
t_check "rate limit: the others counted in one line" \
	grep -q 'reverse DNS: 15 more failures not logged' "$tmp/quiet.err"

# 9. Freed with queries in flight (evdns fails them with
#    DNS_ERR_SHUTDOWN): clean exit, nothing leaked (sanitizer build).
start_stub shut --drop 192.0.2.1 --delay 192.0.2.2=5
run shut --quit-after-ms 300 --timeout 5 192.0.2.1 192.0.2.2 2001:db8::1
rc=$?
stop_stub shut
t_check "shutdown: clean exit with 2 queries in flight" \
	test "$rc" -eq 0 -a "$(rstat shut inflight)" -eq 2
t_check "shutdown: sanitizer-clean" clean_stderr shut

# 10. Freed with evdns's own probe in flight: the dropped query fails the
#     only server at 2 s, evdns probes it 10 s later ("google.com" A,
#     dropped too), the resolver is freed 1 s into the probe.
start_stub probe --drop 192.0.2.50 --drop-other
run probe --timeout 2 --attempts 1 --eager --rounds 2 --gap-ms 60000 \
	--quit-after-ms 13000 192.0.2.1 192.0.2.50
rc=$?
stop_stub probe
t_check "probe: clean exit with the probe in flight" \
	test "$rc" -eq 0 -a "$(count probe other)" -ge 1
t_check "probe: sanitizer-clean" clean_stderr probe

# 11. Refusals: a server that is not an address; no server at all (the
#     test rule: never the system resolver by accident).
if "$res" --server not-an-address 192.0.2.1 >"$tmp/bad.out" \
	2>"$tmp/bad.err"; then
	t_fail "a name server that is not an address is refused"
else
	t_check "a name server that is not an address is refused" \
		grep -q 'not an address or address:port' "$tmp/bad.err"
fi
if "$res" 192.0.2.1 >"$tmp/none.out" 2>"$tmp/none.err"; then
	t_fail "lhresolve refuses to use the system resolver implicitly"
else
	t_pass "lhresolve refuses to use the system resolver implicitly"
fi

for f in "$tmp"/*.err; do
	if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error' "$f"; then
		t_fail "sanitizer report in $(basename "$f")" "$(head -20 "$f")"
	fi
done

t_summary
