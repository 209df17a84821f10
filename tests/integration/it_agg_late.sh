#!/usr/bin/env bash
# A late batch makes no spike (issue 15, item 13), through real processes:
# lhclient, as a gatherer late past the deadline, sends its late batch and
# its next one on time back to back; both land in one sweep of a real
# aggregator, which spoofs into a real gmond.  Each batch is a steady
# 1000 B/s over its own 2 s: gmond must show 1000, not 2000, and the
# deltas of both are counted.  The two batches are acknowledged in order.
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
gm=$src/tests/ganglia/gmond.sh
command -v gmond >/dev/null || { echo "no gmond: apt-get install ganglia-monitor"; exit 1; }
# shellcheck source=../ganglia/sanitizer.sh
. "$src/tests/ganglia/sanitizer.sh"
agg_pid=''
trap 'kill "$agg_pid" 2>/dev/null; wait 2>/dev/null; "$gm" stop "$tmp/gmond" >/dev/null; cleanup' EXIT

for ((i = 0; i < 20; i++)); do
	u=$((20000 + RANDOM % 30000))
	if "$gm" start "$tmp/gmond" "$u" $((u + 1)) >/dev/null 2>"$tmp/gmond.err"; then
		gm_udp=$u
		gm_tcp=$((u + 1))
		break
	fi
done
[ -n "${gm_tcp:-}" ] || { cat "$tmp/gmond.err"; echo "gmond did not start"; exit 1; }

make_keys "$tmp/keys" "it-agg-late-key-0123456789abcdef0123"
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' \
	"$gm_udp" >"$tmp/send.conf"
printf '10.1.0.1\tnode01\n' >"$tmp/hosts"
mkdir -m 700 "$tmp/state"
interval=2
cat >"$tmp/agg.conf" <<EOC
role = "aggregator"
http { listen = "127.0.0.1:0" }
interval = $interval
deadline = 0.5
listen = "127.0.0.1:0"
secret_file = "$tmp/keys"
state_dir = "$tmp/state"
name = "agg"
hosts_file = "$tmp/hosts"
dns = no
gmond_conf = "$tmp/send.conf"
EOC
"$bin" -d -v -f "$tmp/agg.conf" 2>"$tmp/agg.log" &
agg_pid=$!
wait_grep "$tmp/agg.log" 'listening on' 10 || { cat "$tmp/agg.log"; exit 1; }
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/agg.log" | head -n 1)

# 2000 bytes over the default span (the interval): 1000 B/s.
printf 'scratch 10.1.0.1@o2ib 2000 0 0 0 0 0\n' >"$tmp/recs"
now_us() {
	local t=$EPOCHREALTIME
	echo $((${t%.*} * 1000000 + 10#${t#*.}))
}
# 0.8 s after a boundary X: sweep X (the window before X) closed at its
# deadline, X + 0.5 s; a batch for it is late and goes into the open sweep,
# X + 2, with the next batch, for X + 2, on time.  A busy machine may delay
# the send past that sweep's close: then again.
for ((tries = 1; tries <= 3; tries++)); do
	i=$((interval * 1000000))
	target=$((($(now_us) - 800000) / i * i + i + 800000))
	d=$((target - $(now_us)))
	[ "$d" -gt 0 ] && sleep "$((d / 1000000)).$(printf '%06d' $((d % 1000000)))"
	x=$(((target - 800000) / 1000000))
	n=$(wc -l <"$tmp/agg.log")
	timeout 30 "$bindir/lhclient" -c "$addr" -k "$tmp/keys" -n oss1 \
		--records "$tmp/recs" --interval "$interval" \
		--sweep-id "$x" --sweeps 2 --batch $((tries * 10)) \
		--pipeline >"$tmp/client.out" 2>&1 ||
		{ t_fail "both batches acknowledged" "$(cat "$tmp/client.out")"; break; }
	# One sweep, X + 2, holding both (the first counted as late).
	if tail -n +$((n + 1)) "$tmp/agg.log" |
		grep -qE "lharvestd: sweep $((x + interval)): 2 gatherers \(1 late\)"; then
		break
	fi
	sleep 3 # what this try sent leaves gmond's current values
done
t_check "both batches acknowledged, in order" \
	grep -qzE "SWEEP acked seq 2 batch [0-9]+0
SWEEP acked seq 3 batch [0-9]+1" "$tmp/client.out"
t_check "both in one sweep" test "$tries" -le 3
t_check "the deltas of both are counted" \
	grep -qE "lharvestd: sweep $((x + interval)): fs scratch: 1 clients, read_bytes 4000 " "$tmp/agg.log"
got() { "$gm" xml "$gm_tcp" --values | awk '$1 == "node01" && $2 == "scratch_read_bytes" {printf "%.2f\n", $3}'; }
v=''
for ((i = 0; i < 50; i++)); do
	v=$(got)
	[ -n "$v" ] && break
	sleep 0.1
done
if [ "$v" = "1000.00" ]; then
	t_pass "gmond shows 1000 B/s, no spike"
else
	t_fail "gmond shows 1000 B/s, no spike" "got '$v'" "$(grep -E 'sweep [0-9]+: (1 gatherers|fs)' "$tmp/agg.log" | tail -n 4)"
fi
t_summary
