#!/usr/bin/env bash
# Wall-clock steps on the aggregator (issue 15, item 7), through the test
# hook LH_TEST_CLOCK_OFFSET_FILE (docs/reliability.md section 7): a file
# holding seconds added to the aggregator's wall clock, read at each use.
#  - a step forward of an hour is one line; sweeps go on closing once an
#    interval, labelled by the new clock (before: 1800 empty sweeps closed
#    in a burst);
#  - a step back of two hours is one line; sweeps go on closing (before:
#    none for two hours) and a gatherer's batches are still acknowledged;
#  - a gatherer whose clock differs is named with the difference.
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
# shellcheck source=../ganglia/sanitizer.sh
. "$src/tests/ganglia/sanitizer.sh"

make_keys "$tmp/keys" "it-agg-clock-key-0123456789abcdef0"
mkdir -m 700 "$tmp/state"
cat >"$tmp/agg.conf" <<EOC
role = "aggregator"
http { listen = "127.0.0.1:0" }
interval = 2
deadline = 0.5
listen = "127.0.0.1:0"
secret_file = "$tmp/keys"
state_dir = "$tmp/state"
name = "agg"
dns = no
# No gmond: what is tested here is counting and acknowledging.
gmond_conf = "$tmp/no-gmond.conf"
EOC
echo 0 >"$tmp/offset"
LH_TEST_CLOCK_OFFSET_FILE=$tmp/offset "$bin" -d -v -f "$tmp/agg.conf" 2>"$tmp/agg.log" &
agg=$!
pids+=("$agg")
wait_grep "$tmp/agg.log" 'listening on' 10 || { cat "$tmp/agg.log"; exit 1; }
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/agg.log" | head -n 1)
printf 'scratch 10.1.0.1@o2ib 2000 0 0 0 1 0\n' >"$tmp/recs"

lines() { wc -l <"$tmp/agg.log"; }
# sweeps N: the ids of the sweeps closed after line N.
sweeps() {
	tail -n +$(($1 + 1)) "$tmp/agg.log" |
		sed -n 's/.*lharvestd: sweep \([0-9]*\): [0-9]* gatherers.*/\1/p'
}
# wait_sweeps N K SECONDS: K sweeps closed after line N.
wait_sweeps() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[ "$(sweeps "$1" | wc -l)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# client OUT OFFSET ARGS...: lhclient, its clock OFFSET seconds off.
client() {
	local out=$1 off=$2 now
	shift 2
	now=$(date +%s)
	timeout 40 "$client" -c "$addr" -k "$tmp/keys" -n oss1 \
		--records "$tmp/recs" --interval 2 --sweep-id $((now / 2 * 2)) \
		--batch "$((now * 1000000))" --clock-offset "$off" "$@" >"$tmp/$out" 2>&1
}

t_check "sweeps close before any step" wait_sweeps 0 2 10

# A gatherer's clock 30 s ahead: named, with the difference.
if client c0 30; then
	t_pass "a skewed gatherer's batch is acknowledged"
else
	t_fail "a skewed gatherer's batch is acknowledged" "$(cat "$tmp/c0")"
fi
t_check "its clock skew is logged" \
	grep -qE 'gatherer oss1 \(127\.0\.0\.1:[0-9]+\): clock differs from ours by (29\.[5-9]|30\.[0-4]) s' "$tmp/agg.log"

# Forward an hour.
n=$(lines)
echo 3600 >"$tmp/offset"
t_check "a step forward is one line" \
	wait_grep "$tmp/agg.log" 'wall clock stepped forward by 36[0-9][0-9]\.[0-9]+ s: the open sweeps are relabelled by \+3600 s' 10
t0=$EPOCHREALTIME
t_check "a step forward: sweeps go on" wait_sweeps "$n" 3 10
k=$(sweeps "$n" | wc -l)
t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a + 4 }')
if [ "$k" -le $((t / 2 + 1)) ]; then
	t_pass "a step forward: no burst of empty sweeps ($k in about $t s)"
else
	t_fail "a step forward: no burst of empty sweeps ($k in about $t s)"
fi
last=$(sweeps "$n" | tail -n 1)
t_check "a step forward: sweeps labelled by the new clock" \
	test "$last" -ge $(($(date +%s) + 3600 - 6))
t_check "a step forward: one line" \
	test "$(grep -c 'wall clock stepped' "$tmp/agg.log")" -eq 1

# Back two hours: sweeps go on, and a gatherer on the true time is
# acknowledged (its batches are ahead of the aggregator's sweeps now).
n=$(lines)
echo -3600 >"$tmp/offset"
t_check "a step back is one line" \
	wait_grep "$tmp/agg.log" 'wall clock stepped back by 7[12][0-9][0-9]\.[0-9]+ s: the open sweeps are relabelled by -7200 s' 10
t_check "a step back: sweeps go on" wait_sweeps "$n" 3 10
last=$(sweeps "$n" | tail -n 1)
t_check "a step back: sweeps labelled by the new clock" \
	test "$last" -le $(($(date +%s) - 3600 + 4))
if client c1 0 --sweeps 2 --timeout 15; then
	t_pass "a step back: a gatherer's batches are acknowledged"
else
	t_fail "a step back: a gatherer's batches are acknowledged" "$(cat "$tmp/c1")"
fi
t_check "two steps, two lines" \
	test "$(grep -c 'wall clock stepped' "$tmp/agg.log")" -eq 2
t_check "the aggregator runs on" kill -0 "$agg"
t_summary
