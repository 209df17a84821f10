#!/usr/bin/env bash
# A real aggregator's listener against strangers and slow peers (issue 15,
# findings 1, 2 and 15; docs/reliability.md):
#  - HELLO headers announcing 16 MiB from peers with no key are dropped
#    at once, and 24 of them leave the aggregator's RSS low;
#  - 200 connections at once from one address all get their CHALLENGE
#    with the default limits, and with a small accept burst (delayed, not
#    refused);
#  - a byte a second after the handshake is dropped at the frame deadline;
#  - a flood of 2,000 idle connections, past max_unauthenticated and
#    max_connections, does not stop a real gatherer (lhclient) from
#    getting its ACK;
#  - the allow list refuses 127.0.0.2; max_per_source refuses a third
#    connection from an address whose two are past their HELLO;
#  - under a descriptor limit of 200, max_connections is lowered;
#  - a second connection under a name is refused while the first carried
#    a frame within the interval, and takes the name over after that;
#  - lines about strangers are rate-limited: one of a kind a period, then
#    one line with the count.
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
flood=(python3 "$src/tests/tools/lhflood.py")
export LSAN_OPTIONS="suppressions=$src/tests/ganglia/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"

make_keys "$tmp/keys" "it-flood-key-0123456789abcdef01234"
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = 9\n}\n' >"$tmp/send.conf"
cat >"$tmp/recs" <<'EOR'
scratch 10.1.2.3@o2ib 1000 2000 1 2 3 0
EOR

# start NAME EXTRA-CONFIG: an aggregator on 127.0.0.1:0; sets addr[NAME].
declare -A addr=() pid=()
held=()
start() {
	install -d -m 700 "$tmp/state-$1"
	cat >"$tmp/$1.conf" <<-EOF
		role = "aggregator"
		http { listen = "127.0.0.1:0" }
		interval = ${ivl:-2}
		listen = "127.0.0.1:0"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-$1"
		name = "$1"
		dns = no
		gmond_conf = "$tmp/send.conf"
		read_timeout = 30
		$2
	EOF
	# $nofile: run under that descriptor limit (soft and hard).
	(
		[ -z "${nofile:-}" ] || ulimit -n "$nofile"
		exec "$bin" -d -f "$tmp/$1.conf"
	) 2>"$tmp/$1.log" &
	pid[$1]=$!
	pids+=("$!")
	wait_grep "$tmp/$1.log" 'listening on' 10 ||
		{ cat "$tmp/$1.log"; echo "aggregator $1 did not start"; exit 1; }
	addr[$1]=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/$1.log" | head -n 1)
}
# field FILE KEY: the number after KEY in lhflood's result line.
field() { sed -n "s/.*\\b$2 \\([0-9.]*\\).*/\\1/p" "$1"; }

# --- Default admission limits, short timeouts. ---
# An interval of 4 s: the second connection of the name test reaches its
# HELLO well within it even on a busy machine.
ivl=4 start a 'handshake_timeout = 5
frame_timeout = 2'

# Rate-limited lines first, so that their period's summary is due by the
# end: 30 HTTP requests, one full line and one count.
"${flood[@]}" garbage "${addr[a]}" 30 >"$tmp/garbage.out"
t_check "garbage: all 30 closed" grep -q '^closed 30 of 30' "$tmp/garbage.out"
t_garbage=$EPOCHREALTIME

# 1. HELLO headers of 16 MiB with key id 0: dropped before buffering.
"${flood[@]}" bighello "${addr[a]}" 24 --pid "${pid[a]}" --bytes $((4 << 20)) \
	--timeout 5 >"$tmp/big.out"
before=$(field "$tmp/big.out" rss_before_kb)
peak=$(field "$tmp/big.out" rss_peak_kb)
t_check "big HELLO: all 24 connections dropped" grep -q '^closed 24 of 24' "$tmp/big.out"
if [ -n "$peak" ] && [ $((peak - before)) -lt 8192 ]; then
	t_pass "big HELLO: RSS grew by less than 8 MiB ($before -> $peak kB)"
else
	t_fail "big HELLO: RSS grew by less than 8 MiB" "$(cat "$tmp/big.out")"
fi
t_check "big HELLO: the line says why" \
	grep -qE 'peer \? 127\.0\.0\.1:[0-9]+: a 16777216-byte frame before the handshake, above the largest HELLO \(37600 bytes\), dropping connection' "$tmp/a.log"

# 2. 200 gatherers at once from one address, default limits.
"${flood[@]}" connect "${addr[a]}" 200 >"$tmp/c200.out"
t_check "200 at once: all challenged (defaults)" \
	grep -q '^challenged 200 closed 0 of 200' "$tmp/c200.out"

# 3. A byte a second after the handshake: dropped at frame_timeout.
t0=$EPOCHREALTIME
timeout 30 "$client" -c "${addr[a]}" -k "$tmp/keys" -n oss-slow \
	--records "$tmp/recs" --slow >"$tmp/slow.out" 2>&1
st=$?
t1=$EPOCHREALTIME
t_check "slow peer: closed by the listener" \
	test "$st" -eq 0 -a -n "$(grep 'slow: closed by the listener' "$tmp/slow.out")"
wait_grep "$tmp/a.log" 'peer oss-slow .*frame not complete 2 s after its first byte' 5
t_check "slow peer: one line at the frame deadline" \
	test "$(grep -c 'peer oss-slow .*: frame not complete 2 s after its first byte .*, dropping connection$' "$tmp/a.log")" -eq 1
el=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", b - a }')
t_check "slow peer: dropped well before read_timeout (${el} s)" test "$el" -lt 10

# 4. Name takeover.  oss-x holds a connection (HELLO, then silence).
"$client" -c "${addr[a]}" -k "$tmp/keys" -n oss-x --records "$tmp/recs" \
	--idle-open --timeout 20 >"$tmp/x1.out" 2>&1 &
x1=$!
pids+=("$x1")
wait_grep "$tmp/x1.out" 'HELLO acked' 10
t_x1=$EPOCHREALTIME
timeout 20 "$client" -c "${addr[a]}" -k "$tmp/keys" -n oss-x \
	--records "$tmp/recs" >"$tmp/x2.out" 2>&1
st=$?
t_check "name in use, active within the interval: refused" test "$st" -ne 0
a2=$(client_addr "$tmp/x2.out")
a1=$(client_addr "$tmp/x1.out")
t_check "name in use: one line naming both" \
	test "$(grep -c "peer oss-x $a2: refused: name already connected from $a1, which carried a frame .* ago, dropping connection" "$tmp/a.log")" -eq 1
# Past one interval (4 s) of silence the older connection is presumed dead.
sleep_s=$(awk -v a="$t_x1" -v b="$EPOCHREALTIME" 'BEGIN { d = a + 4.5 - b; printf "%.2f", (d > 0 ? d : 0) }')
sleep "$sleep_s"
timeout 20 "$client" -c "${addr[a]}" -k "$tmp/keys" -n oss-x \
	--records "$tmp/recs" >"$tmp/x3.out" 2>&1
t_check "name silent for an interval: the new connection takes it" \
	grep -q 'SWEEP acked' "$tmp/x3.out"
wait "$x1"
st=$?
t_check "name taken over: the older connection is closed" \
	test "$st" -eq 0 -a -n "$(grep 'idle-open: closed by the listener' "$tmp/x1.out")"
a3=$(client_addr "$tmp/x3.out")
t_check "name taken over: one line" \
	test "$(grep -c "peer oss-x $a1: no frame for .* s, replaced by a new connection from $a3, dropping connection" "$tmp/a.log")" -eq 1

# 5. The rate-limited lines of the garbage: one full, one count.
wait_grep "$tmp/a.log" 'listener .*: 29 more connections dropped: not the lharvestd protocol in the last 10 s' 15
t_check "garbage: one line naming a peer" \
	test "$(grep -c 'not the lharvestd protocol (bad magic' "$tmp/a.log")" -eq 1
t_check "garbage: one line counting the other 29" \
	grep -q 'listener 127\.0\.0\.1:[0-9]*: 29 more connections dropped: not the lharvestd protocol in the last 10 s$' "$tmp/a.log"
el=$(awk -v a="$t_garbage" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a }')
echo "# (the count came ${el} s after the garbage)"

# --- Tight limits: small accept burst, few unauthenticated, allow list. ---
start b 'handshake_timeout = 30
max_connections = 300
max_unauthenticated = 64
accept_rate = 1000
accept_burst = 10
allow = { "127.0.0.1/32", "::1" }'

# 6. The allow list.
"${flood[@]}" connect "${addr[b]}" 1 --source 127.0.0.2 >"$tmp/allow.out"
t_check "allow list: 127.0.0.2 closed without a CHALLENGE" \
	grep -q '^challenged 0 closed 1 of 1' "$tmp/allow.out"
t_check "allow list: one line" \
	grep -qE 'peer \? 127\.0\.0\.2:[0-9]+: not in the allow list, dropping connection' "$tmp/b.log"

# 7. 200 at once through a burst of 10 at 1000 a second: delayed, all in.
"${flood[@]}" connect "${addr[b]}" 200 >"$tmp/b200.out"
t_check "200 at once, burst 10: all challenged" \
	grep -q '^challenged 200 closed 0 of 200' "$tmp/b200.out"
el=$(field "$tmp/b200.out" elapsed)
t_check "200 at once, burst 10: accepts spread over >= 0.15 s ($el s)" \
	awk -v e="$el" 'BEGIN { exit !(e >= 0.15) }'
t_check "200 at once: none refused" \
	test "$(grep -c 'max_connections open' "$tmp/b.log")" -eq 0

# 8. 2,000 idle connections, then a real gatherer.
"${flood[@]}" idle "${addr[b]}" 2000 --hold 20 >"$tmp/idle.out" &
idle=$!
pids+=("$idle")
wait_grep "$tmp/idle.out" '^opened' 20
t_check "idle flood: 2000 connections opened" grep -q '^opened 2000 of 2000' "$tmp/idle.out"
timeout 30 "$client" -c "${addr[b]}" -k "$tmp/keys" -n oss-real \
	--records "$tmp/recs" --timeout 25 >"$tmp/real.out" 2>&1
t_check "idle flood: the gatherer gets the ACK of its SWEEP" \
	grep -q 'SWEEP acked' "$tmp/real.out"
kill "$idle" 2>/dev/null
wait "$idle" 2>/dev/null
n=$(grep -c 'oldest connection without a HELLO, for a newer one, dropping connection' "$tmp/b.log")
t_check "idle flood: evictions logged rate-limited ($n full lines)" test "$n" -le 2

# --- Per-source cap; a descriptor limit below max_connections. ---
nofile=200 start c 'max_per_source = 2'
t_check "descriptor limit 200: max_connections lowered, one line" \
	grep -q 'listen 127\.0\.0\.1:0: max_connections 1024 lowered to 136, all the descriptor limit (RLIMIT_NOFILE) leaves room for: raise LimitNOFILE' "$tmp/c.log"
for i in 1 2; do
	"$client" -c "${addr[c]}" -k "$tmp/keys" -n "oss-c$i" --records "$tmp/recs" \
		--idle-open --timeout 20 >"$tmp/c$i.out" 2>&1 &
	held[i]=$!
	pids+=("$!")
	wait_grep "$tmp/c$i.out" 'HELLO acked' 10
done
"${flood[@]}" connect "${addr[c]}" 1 >"$tmp/c3.out"
t_check "max_per_source 2, both past their HELLO: a third is refused" \
	grep -q '^challenged 0 closed 1 of 1' "$tmp/c3.out"
t_check "max_per_source: one line" \
	grep -qE 'peer \? 127\.0\.0\.1:[0-9]+: max_per_source connections from this address past their HELLO, dropping connection' "$tmp/c.log"
"${flood[@]}" connect "${addr[c]}" 1 --source 127.0.0.2 >"$tmp/c4.out"
t_check "max_per_source: another address is let in" \
	grep -q '^challenged 1 closed 0 of 1' "$tmp/c4.out"
kill "${held[1]}" "${held[2]}" 2>/dev/null
t_check "aggregators still running" kill -0 "${pid[a]}" "${pid[b]}" "${pid[c]}"

t_summary
