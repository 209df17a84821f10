#!/usr/bin/env bash
# The aggregator end to end, into a real gmond: the simulator
# (tests/sim/lustresim.py, scenario aggregator-site.json) renders a site on
# the wall clock every second, one lharvestd gatherer per simulated server
# sweeps it every 2 s and sends to one lharvestd aggregator, which spoofs
# every client's rates into a private gmond (tests/ganglia/gmond.sh).
# While it runs: an exports/clear, a single export reset, a target
# failover, a gatherer SIGKILLed and restarted, the aggregator SIGKILLed
# and restarted on its state_dir (with a gatherer killed meanwhile, so
# that a batch already counted comes again to the new aggregator), a late
# gatherer (SIGSTOPped past the deadline) and garbage connections.
# gmond's XML, polled every second (aggregator_check.py poll), must never
# show a negative value nor one above the true rate + 0.5%, and must be
# within 0.5% of the simulator's ground truth for every host and metric in
# every quiet sample.  Also checked: the hosts and metrics gmond shows
# (units, group, spoofed IP), the multi-rail host as the sum of its NIDs,
# the totals host as the sum over hosts, the aggregator's sweep lines
# (-v), its ledger (resends after restarts acknowledged as counted), the
# garbage connections each dropped with a line naming the peer, clean
# exits on SIGTERM, and logs without unexpected complaints.  Everything on
# 127.0.0.1; about 130 s.
#
#   bash it_aggregator.sh BUILD/daemon/lharvestd      (LH_SRCDIR = source tree)
#
# Environment: LH_AGG_KEEP=DIR (copy every file of a failed run there).
#
# How the truth is known.  Every client of the scenario has constant,
# distinct rates (small RPCs, thousands of ops/s, so the simulator's
# one-RPC rounding is far below 0.5% of a 2 s sweep).  The true rate of a
# (filesystem, NID) is what the simulator wrote over the whole run divided
# by the time it wrote it over: per target, the truth.jsonl delta of that
# target's file between the snapshot times printed in it (on a busy
# machine the simulator renders a step's files well after the step's
# time, and by a different amount each step; the snapshot times say when).
# The rates being constant (checked over 20-step windows), the true
# maximum is the true rate.  Clears, resets and failovers do not change
# what a client does, only what the files show: around them a rate may
# only be low.
#
# Fault windows.  Each fault is recorded as LABEL START END in faults.txt
# (START before it is caused, END once it is over: the event applied, the
# process back and reporting).  A sample of gmond's XML is "quiet" when it
# is outside [START - 0.2 s, END + 3 intervals + deadline + 1 s] of every
# fault: 0.5% is required there.  The bounds (>= 0, <= true maximum +
# 0.5%) hold everywhere.  The garbage connections are recorded but not a
# fault: the values must stay exact through them.
#
# Events are queued (`lustresim.py event` without --now: --now is refused
# while `run` holds the tree) or, for the clear, written to the target's
# exports/clear as an administrator would; either applies at the next
# simulator step: counters are integrated to the step time, then zeroed.
# What a client did between the gatherer's last read and that step is in
# the truth but in no file: the sweep after a clear or reset is low.
set -uo pipefail
bin=$1
. "$(dirname "$0")/dumplib.sh"
# shellcheck source=agglib.sh
. "$(dirname "$0")/agglib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
sim=(python3 "$src/tests/sim/lustresim.py")
chk=(python3 "$src/tests/integration/aggregator_check.py")
gm=$src/tests/ganglia/gmond.sh
scenario=$src/tests/sim/scenarios/aggregator-site.json
command -v gmond >/dev/null || { echo "no gmond: apt-get install ganglia-monitor"; exit 1; }
# libconfuse memory libganglia cannot free (see docs/ganglia.md); only
# matters in the sanitizer build.
. "$src/tests/ganglia/sanitizer.sh"

interval=2
deadline=0.7
hs_timeout=3
servers=(mds1 oss1 oss2)
R=$tmp/sim
faults=$tmp/faults.txt
t_start=$EPOCHREALTIME
declare -A gpid=()
agg_pid=
agg_runs=0

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	"$gm" stop "$tmp/gmond" >/dev/null 2>&1
	if [ -n "${LH_AGG_KEEP:-}" ] && [ "$failed" -gt 0 ]; then
		mkdir -p "$LH_AGG_KEEP" && cp -r "$tmp"/. "$LH_AGG_KEEP"/ &&
			echo "# files of this run kept in $LH_AGG_KEEP"
	fi
	rm -rf "$tmp"
}

# abort NAME DETAIL...: a failure after which the run cannot go on.
abort() {
	t_fail "$@" "--- aggregator (last lines)" "$(tail -n 8 "$tmp"/agg*.log 2>/dev/null)"
	t_summary
	exit 1
}

agg_start() {
	agg_runs=$((agg_runs + 1))
	echo "== aggregator run $agg_runs at $EPOCHREALTIME" >>"$tmp/agg$agg_runs.log"
	"$bin" -d -v -f "$tmp/agg.conf" >>"$tmp/agg.out" 2> >(stamp >>"$tmp/agg$agg_runs.log") &
	agg_pid=$!
	pids+=("$agg_pid")
	wait_grep "$tmp/agg$agg_runs.log" 'listening on 127\.0\.0\.1:[0-9]+' 10 ||
		abort "aggregator run $agg_runs started" "$(cat "$tmp/agg$agg_runs.log")"
}

g_start() { # NAME
	local n=$1
	echo "== started at $EPOCHREALTIME" >>"$tmp/g-$n.log"
	"$bin" -d -v -f "$tmp/$n.conf" >>"$tmp/g-$n.out" 2> >(stamp >>"$tmp/g-$n.log") &
	gpid[$n]=$!
	pids+=("$!")
}

# ------------------------------------------------------------------ setup

if "${chk[@]}" --self-test >"$tmp/selftest.out" 2>&1; then
	t_pass "aggregator_check.py --self-test"
else
	t_fail "aggregator_check.py --self-test" "$(grep -v '^ok' "$tmp/selftest.out")"
fi

# The simulator, on the wall clock, a step every second on the second.
"${sim[@]}" run --root "$R" --scenario "$scenario" --clock wall --period 1 \
	--align --steps 0 --quiet >>"$tmp/sim.log" 2>&1 &
sim_pid=$!
pids+=("$sim_pid")
wait_grep "$R/truth.jsonl" '"step": 0' 10 || abort "the simulator wrote its first step" "$(tail "$tmp/sim.log")"

# gmond, on free ports.
for ((i = 0; i < 20; i++)); do
	u=$((20000 + RANDOM % 30000))
	if "$gm" start "$tmp/gmond" "$u" $((u + 1)) >/dev/null 2>"$tmp/gmond-start.err"; then
		gm_udp=$u
		gm_tcp=$((u + 1))
		break
	fi
done
[ -n "${gm_tcp:-}" ] || abort "gmond started" "$(cat "$tmp/gmond-start.err")"
"${chk[@]}" poll --port "$gm_tcp" --out "$tmp/samples.jsonl" &
poll_pid=$!
pids+=("$poll_pid")

make_keys "$tmp/keys" "it-aggregator-key-0123456789abcdef"
cat >"$tmp/hosts" <<'EOF'
# it_aggregator.sh: every client of aggregator-site.json
10.1.0.1	node01
10.1.0.2	node02
10.1.0.3	node03	node03.cluster.test
10.1.0.4	node04
10.1.0.5	node05		# multi-rail: o2ib ...
10.2.0.5	node05		# ... and o2ib2
10.2.0.6	node06
192.168.1.7	node07
12@gni		node09		# no IP: only the full NID names it
EOF
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' \
	"$gm_udp" >"$tmp/send.conf"
mkdir -m 700 "$tmp/agg-state"
agg_conf() { # LISTEN
	cat >"$tmp/agg.conf" <<-EOF
		role = "aggregator"
		http { listen = "127.0.0.1:0" }
		interval = $interval
		listen = "$1"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/agg-state"
		name = "agg"
		deadline = $deadline
		hosts_file = "$tmp/hosts"
		dns = no
		gmond_conf = "$tmp/send.conf"
		handshake_timeout = $hs_timeout
		metadata_ops = { "all" }
		filesystem "scratch" { metric_prefix = "vu_short" }
	EOF
}
agg_conf 127.0.0.1:0
t0=$EPOCHREALTIME
agg_start
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/agg1.log" | head -n 1)
agg_conf "$addr" # restarts listen where the gatherers look
for n in "${servers[@]}"; do
	mkdir -m 700 "$tmp/state-$n"
	cat >"$tmp/$n.conf" <<-EOF
		role = "gatherer"
		interval = $interval
		lustre_root = "$R/$n"
		server = "$addr"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-$n"
		name = "$n"
	EOF
	g_start "$n"
done
# The start-up: every gatherer's first sweep is a baseline (zeros); it is
# over with the first sweep after it that has all three.
# (13: the (filesystem, NID) pairs of aggregator-site.json.)
if ! { wait_sweep "$tmp/agg1.log" '3 gatherers' 20 &&
	wait_sweep "$tmp/agg1.log" '3 gatherers \(0 late\), 13 clients' 10; }; then
	abort "the aggregator closed a sweep with every gatherer" "$(grep 'sweep' "$tmp/agg1.log" | tail -n 5)"
fi
fault startup "$t0"
t_pass "the aggregator closed a sweep with all 3 gatherers and 13 clients"
sleep 12

# ----------------------------------------------------------------- faults

# exports/clear, written as an administrator would (the simulator applies
# it at its next step).
n=$(nevents)
t1=$EPOCHREALTIME
echo 1 >"$R/oss1/proc/fs/lustre/obdfilter/scratch-OST0000/exports/clear"
wait_lines "$R/events.jsonl" "$n" 5 || abort "the simulator applied the write to exports/clear"
fault clear-scratch-OST0000 "$t1"
sleep 11

ev reset_export-scratch-OST0002 reset_export --target scratch-OST0002 --nid 10.1.0.3@o2ib
sleep 11

ev failover-scratch-OST0001 failover --target scratch-OST0001 --from oss1 --to oss2
sleep 11

# A gatherer killed 50 ms into a sweep (most likely with its batch in
# flight), back 5 s later.
at_boundary 50
t1=$EPOCHREALTIME
{
	kill -KILL "${gpid[oss2]}"
	wait "${gpid[oss2]}"
} 2>/dev/null # (and no "Killed" notice)
forget "${gpid[oss2]}"
echo "== SIGKILL at $EPOCHREALTIME" >>"$tmp/g-oss2.log"
sleep 5
n=$(grep -c 'gatherer oss2 (.*): connected' "$tmp/agg1.log")
g_start oss2
for ((i = 0; i < 100; i++)); do
	[ "$(grep -c 'gatherer oss2 (.*): connected' "$tmp/agg1.log")" -gt "$n" ] && break
	sleep 0.1
done
wait_sweep "$tmp/agg1.log" '3 gatherers' 10 || abort "the restarted gatherer reported again"
fault gatherer-kill-oss2 "$t1"
sleep 11

# The aggregator killed right after it closed a sweep (its ledger written,
# its ACKs sent), back 3 s later on the same state_dir and port.  Gatherer
# oss1 is killed too while the aggregator is down: the state it saved at
# that sweep still has the batch in flight (the ACK came after the save),
# so after its restart it sends that batch again, to the new aggregator,
# which must know from its ledger that it was counted.
at_boundary 0
t1=$EPOCHREALTIME
wait_sweep "$tmp/agg1.log" '3 gatherers \(0 late\)' 5 || abort "a sweep closed before the aggregator's SIGKILL"
{
	kill -KILL "$agg_pid"
	wait "$agg_pid"
} 2>/dev/null
forget "$agg_pid"
echo "== SIGKILL at $EPOCHREALTIME" >>"$tmp/agg1.log"
sleep 0.3
{
	kill -KILL "${gpid[oss1]}"
	wait "${gpid[oss1]}"
} 2>/dev/null
forget "${gpid[oss1]}"
echo "== SIGKILL at $EPOCHREALTIME" >>"$tmp/g-oss1.log"
sleep 2.7
agg_start
sleep 0.5
g_start oss1
# The gatherers come back with their backoff (1 s doubling, +-50%).
wait_sweep "$tmp/agg2.log" '3 gatherers' 30 || abort "every gatherer reported to the restarted aggregator" \
	"$(grep -E 'connected|sweep' "$tmp/agg2.log" | tail -n 8)"
fault aggregator-kill+oss1-kill "$t1"
sleep 11

# A late gatherer: mds1 stopped 150 ms after a boundary for 1.5 intervals:
# the sweep it then makes reaches the aggregator after that sweep's
# deadline and is folded into the next one.
at_boundary 150
t1=$EPOCHREALTIME
kill -STOP "${gpid[mds1]}"
sleep $((interval * 3 / 2))
kill -CONT "${gpid[mds1]}"
fault late-mds1 "$t1"
sleep 11

# Garbage: a port scan, junk, a 2 GiB frame header, a HELLO with an unknown
# key and a random MAC, half a header, an idle connection.  Not a fault:
# every value must stay exact through it.
t1=$EPOCHREALTIME
"${chk[@]}" garbage --addr "$addr" --idle-max $((hs_timeout * 3)) >"$tmp/garbage.jsonl" 2>"$tmp/garbage.err"
fault garbage "$t1" 0
sleep 9

# ------------------------------------------------------------------- stop

if kill -0 "$agg_pid" 2>/dev/null; then
	t_pass "the aggregator is still running after the garbage"
else
	t_fail "the aggregator is still running after the garbage" "$(tail -n 5 "$tmp/agg2.log")"
fi
"$gm" xml "$gm_tcp" >"$tmp/gmond-final.xml"
t1=$EPOCHREALTIME
"$gm" xml "$gm_tcp" --host node05 >"$tmp/node05.txt"
bad=()
for n in "${servers[@]}"; do
	term "${gpid[$n]}" "gatherer $n" || bad+=("$term_msg")
done
if [ ${#bad[@]} -eq 0 ]; then
	t_pass "every gatherer exited 0 within 5 s of SIGTERM"
else
	t_fail "every gatherer exited 0 within 5 s of SIGTERM" "${bad[@]}"
fi
if term "$agg_pid" aggregator; then
	t_pass "the aggregator exited 0 within 5 s of SIGTERM"
else
	t_fail "the aggregator exited 0 within 5 s of SIGTERM" "$term_msg"
fi
fault shutdown "$t1"
kill -TERM "$sim_pid"
wait "$sim_pid"
forget "$sim_pid"
sleep 1.5 # the poller's last samples
kill -TERM "$poll_pid"
wait "$poll_pid"
forget "$poll_pid"

# ------------------------------------------------------------------ check

"${chk[@]}" check --truth "$R/truth.jsonl" --hosts "$tmp/hosts" \
	--samples "$tmp/samples.jsonl" --faults "$faults" \
	--agg-log "$tmp/agg1.log" --agg-log "$tmp/agg2.log" \
	--gatherer-log mds1="$tmp/g-mds1.log" --gatherer-log oss1="$tmp/g-oss1.log" \
	--gatherer-log oss2="$tmp/g-oss2.log" \
	--prefix scratch=vu_short --interval "$interval" --deadline "$deadline" \
	--metadata-ops all --from "$t0" >"$tmp/check.out" 2>&1
replay "$tmp/check.out"

# Every garbage connection was dropped, in one line naming its address or,
# past the first of its kind in 10 s, counted in one "N more connections"
# line of the listener (issue 15: strangers' lines are rate-limited).
bad=()
counted=0
while IFS= read -r line; do
	kind=$(sed -n 's/.*"kind": "\([a-z]*\)".*/\1/p' <<<"$line")
	local_addr=$(sed -n 's/.*"local": "\([0-9.:]*\)".*/\1/p' <<<"$line")
	closed=$(sed -n 's/.*"closed_after": \([0-9.]*\|null\).*/\1/p' <<<"$line")
	if [ -z "$local_addr" ]; then
		bad+=("$kind: no connection: $line")
		continue
	fi
	got=$(grep -F "peer ? $local_addr: " "$tmp/agg2.log" | grep -c 'dropping connection')
	[ "$got" -le 1 ] || bad+=("$kind from $local_addr: $got 'dropping connection' lines")
	[ "$got" -eq 1 ] || counted=$((counted + 1))
	case $kind in
	scan | midframe) ;;
	idle)
		# shellcheck disable=SC2016
		awk -v c="$closed" -v h="$hs_timeout" 'BEGIN { exit !(c != "null" && c >= h - 0.5 && c <= h + 1.5) }' ||
			bad+=("idle: closed after $closed s, want the handshake timeout ($hs_timeout s)") ;;
	*) [ "$closed" != null ] || bad+=("$kind: the aggregator did not close the connection") ;;
	esac
done <"$tmp/garbage.jsonl"
more=$(sed -n 's/.*: listener [0-9.:]*: \([0-9]*\) more connections .*/\1/p' "$tmp/agg2.log" |
	awk '{ n += $1 } END { print n + 0 }')
[ "$more" -ge "$counted" ] || bad+=("$counted connections without a line, $more counted")
[ "$(wc -l <"$tmp/garbage.jsonl")" -eq 7 ] || bad+=("$(wc -l <"$tmp/garbage.jsonl") connections, want 7: $(cat "$tmp/garbage.err")")
if [ ${#bad[@]} -eq 0 ]; then
	t_pass "each garbage connection was dropped with one line naming its address"
else
	t_fail "each garbage connection was dropped with one line naming its address" "${bad[@]}" \
		"--- the aggregator's lines about peers:" "$(grep 'peer ' "$tmp/agg2.log" | tail -n 12)"
fi

# The aggregator's log: nothing but what the faults explain.
#  * the killed gatherer's connection ending without BYE, and the garbage
#    connections (checked above);
#  * "gatherer NAME: no sweep since ..." for the killed (oss2, oss1) and
#    the stopped (mds1) gatherers, and "reporting again";
# anything else that sounds like a problem is unexpected.
garbage_re=$(sed -n 's/.*"local": "\([0-9.:]*\)".*/\1/p' "$tmp/garbage.jsonl" | sed 's/\./\\./g' | paste -sd'|')
expected="(peer oss[12] |gatherer oss[12] \()127\.0\.0\.1:[0-9]+\)?: connection (reset|closed) without BYE$"
expected+="|gatherer (oss2|oss1|mds1): no sweep since [0-9]+ \([0-9.]+ s late\); its deltas go into the sweep they arrive for$"
[ -n "$garbage_re" ] && expected+="|peer \? ($garbage_re): .*dropping connection$"
expected+="|listener [0-9.:]+: [0-9]+ more connections .* in the last [0-9]+ s$"
lines=$(cat "$tmp"/agg[12].log | grep -v ' == ' | grep -vE 'lharvestd: sweep [0-9]+: [0-9]+ gatherers' |
	grep -iE 'error|warn|skipping|ignor|cannot|failed|out of memory|not sent|dropping|late|without|unmapped|differs|refused|damaged' |
	grep -vE "$expected")
if [ -z "$lines" ]; then
	t_pass "the aggregator logged nothing unexpected"
else
	t_fail "the aggregator logged nothing unexpected" "$(head -n 15 <<<"$lines")"
fi
for n in oss2 mds1; do
	if grep -qE "gatherer $n: no sweep since" "$tmp"/agg[12].log &&
		grep -qE "gatherer $n: reporting again" "$tmp"/agg[12].log; then
		t_pass "the aggregator named $n missing, then reporting again"
	else
		t_fail "the aggregator named $n missing, then reporting again" \
			"$(grep -hE "gatherer $n" "$tmp"/agg[12].log | tail -n 6)"
	fi
done

# The gatherers' logs: the aggregator's absence, once each, and its return.
unreach="aggregator $addr: (Connection refused|Connection reset by peer|connection closed by the aggregator|Broken pipe|write failed|no ACK within the timeout|no handshake within the timeout), retrying$"
bad=()
for n in "${servers[@]}"; do
	lines=$(grep -v ' == ' "$tmp/g-$n.log" |
		grep -iE 'error|warn|skipping|ignor|cannot|failed|out of memory|not sent|would lose|damaged|afresh|dropping|retrying|took' |
		grep -vE "$unreach")
	[ -z "$lines" ] || bad+=("gatherer $n:" "$(head -n 10 <<<"$lines")")
	# (oss1 was killed while the aggregator was away: its successor
	# simply connects.)
	[ "$n" = oss1 ] ||
		{ grep -qE "$unreach" "$tmp/g-$n.log" && grep -qE "aggregator $addr: connected again" "$tmp/g-$n.log"; } ||
		bad+=("gatherer $n did not say the aggregator was away, then back: $(grep -c "aggregator $addr" "$tmp/g-$n.log") lines about it")
done
if [ ${#bad[@]} -eq 0 ]; then
	t_pass "the gatherers logged only the aggregator's absence and return"
else
	t_fail "the gatherers logged only the aggregator's absence and return" "${bad[@]}"
fi

# The ledger: a resend after a restart is acknowledged as already counted,
# by the aggregator that counted it (oss2) and by the one restarted after
# it (oss1); and the ledger holds each gatherer's last acknowledged batch.
for n in oss2 oss1; do
	if sed -n '/== SIGKILL/,$p' "$tmp/g-$n.log" | grep 'acknowledged (the aggregator had it already)' >/dev/null; then
		t_pass "$n's resend after its SIGKILL was acknowledged as already counted"
	else
		t_fail "$n's resend after its SIGKILL was acknowledged as already counted" \
			"$(sed -n '/== SIGKILL/,$p' "$tmp/g-$n.log" | grep -E 'restored|batch|SIGKILL' | head -n 6)"
	fi
done
bad=()
for n in "${servers[@]}"; do
	f=$tmp/agg-state/ledger/$(printf %s "$n" | od -An -tx1 | tr -d ' \n').batch
	want=$(sed -n 's/.* batch \([0-9]*\) acknowledged.*/\1/p' "$tmp/g-$n.log" | tail -n 1)
	got=$(cat "$f" 2>/dev/null)
	[ -n "$want" ] && [ "$got" = "$want" ] || bad+=("$n: ledger ${got:-(no $f)}, last batch acknowledged ${want:-none}")
done
if [ ${#bad[@]} -eq 0 ]; then
	t_pass "the ledger holds every gatherer's last acknowledged batch"
else
	t_fail "the ledger holds every gatherer's last acknowledged batch" "${bad[@]}"
fi

cat "$tmp/timeline"
echo "# node05 in gmond at the end:"
sed 's/^/#   /' "$tmp/node05.txt"
t_end=$EPOCHREALTIME
echo "# total $(((${t_end%.*}${t_end#*.} - ${t_start%.*}${t_start#*.}) / 1000)) ms"
t_summary
