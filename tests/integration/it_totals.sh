#!/usr/bin/env bash
# The per-host counters (state_dir/totals, issue 17) across restarts of
# the aggregator: the simulator's site (aggregator-site.json: mds1, oss1,
# oss2), a gatherer per server, one aggregator, on 127.0.0.1.  The
# aggregator is stopped with SIGTERM and started again, then SIGKILLed at
# a random point of a sweep and started again.  Then, the simulator
# stopped and everything delivered, the counters file (read with
# tests/tools/lhtotals) must equal exactly, per (host, filesystem) and per
# filesystem, in every counter and metadata op, what the simulator wrote
# since the gatherers' baseline: a restart is neither a reset nor a
# count twice.  A save that fails is one line, the old file removed, and
# one line when it works again.  Last, a ledger entry set behind the
# file's mark is raised to it at the next start, in one line, and a
# damaged file is set aside.  About 50 s.
#
#   bash it_totals.sh BUILD/daemon/lharvestd     (LH_SRCDIR = source tree)
#
# Environment: LH_TOTALS_KEEP=DIR (copy the files of a failed run there),
# LH_TOTALS_SEED (the SIGKILL's point in the sweep; default $RANDOM).
set -uo pipefail
bin=$(realpath "$1")
. "$(dirname "$0")/dumplib.sh"
# shellcheck source=agglib.sh
. "$(dirname "$0")/agglib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
sim=(python3 "$src/tests/sim/lustresim.py")
chk=(python3 "$src/tests/integration/totals_check.py")
scenario=$src/tests/sim/scenarios/aggregator-site.json
lhtotals=$bindir/lhtotals
[ -x "$lhtotals" ] || { echo "no $lhtotals"; exit 1; }
# shellcheck source=../ganglia/sanitizer.sh
. "$src/tests/ganglia/sanitizer.sh"

seed=${LH_TOTALS_SEED:-$RANDOM}
RANDOM=$seed
echo "# seed $seed (LH_TOTALS_SEED=$seed repeats the SIGKILL's point)"
interval=2
deadline=0.5
servers=(mds1 oss1 oss2)
R=$tmp/sim
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
	if [ -n "${LH_TOTALS_KEEP:-}" ] && [ "$failed" -gt 0 ]; then
		mkdir -p "$LH_TOTALS_KEEP" && cp -r "$tmp"/. "$LH_TOTALS_KEEP"/ &&
			echo "# files of this run kept in $LH_TOTALS_KEEP"
	fi
	rm -rf "$tmp"
}

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
	wait_grep "$tmp/agg$agg_runs.log" 'every [0-9]+ s, listening on 127\.0\.0\.1:[0-9]+' 10 ||
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

# The simulator's step 0, on the wall clock; paused there until every
# gatherer has taken its baseline.
"${sim[@]}" run --root "$R" --scenario "$scenario" --clock wall --period 1 \
	--align --steps 1 --quiet >>"$tmp/sim.log" 2>&1 ||
	abort "the simulator wrote step 0" "$(tail "$tmp/sim.log")"
cp "$R/truth-latest.json" "$tmp/baseline.json"

make_keys "$tmp/keys" "it-totals-key-0123456789abcdef0123456789"
cat >"$tmp/hosts" <<'EOF2'
10.1.0.1	node01
10.1.0.2	node02
10.1.0.3	node03
10.1.0.4	node04
10.1.0.5	node05
10.2.0.5	node05
10.2.0.6	node06
192.168.1.7	node07
12@gni		node09
EOF2
mkdir -m 700 "$tmp/agg-state"
agg_conf() { # LISTEN
	cat >"$tmp/agg.conf" <<-EOF2
		role = "aggregator"
		interval = $interval
		listen = "$1"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/agg-state"
		name = "agg"
		deadline = $deadline
		hosts_file = "$tmp/hosts"
		dns = no
		# No gmond: the counters are what is tested.
		gmond_conf = "$tmp/no-gmond.conf"
		# The HTTP listener on a port of the kernel's choice: the default
		# one may be taken (ctest runs tests side by side).
		http {
		  listen = "127.0.0.1:0"
		}
	EOF2
}
agg_conf 127.0.0.1:0
agg_start
addr=$(grep -v " http: " "$tmp/agg1.log" | sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' | head -n 1)
agg_conf "$addr" # a restart listens where the gatherers look
t_check "the first start begins the counters at zero, in one line" \
	grep -qE "lharvestd: $tmp/agg-state/totals: none; the counters begin at zero" "$tmp/agg1.log"

for n in "${servers[@]}"; do
	mkdir -m 700 "$tmp/state-$n"
	cat >"$tmp/$n.conf" <<-EOF2
		role = "gatherer"
		interval = $interval
		lustre_root = "$R/$n"
		server = "$addr"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-$n"
		name = "$n"
	EOF2
	g_start "$n"
done
wait_sweep "$tmp/agg1.log" '3 gatherers' 20 || abort "the aggregator closed a sweep with its 3 gatherers"
"${sim[@]}" run --root "$R" --steps 0 --quiet >>"$tmp/sim.log" 2>&1 &
sim_pid=$!
pids+=("$sim_pid")
wait_sweep "$tmp/agg1.log" '3 gatherers \(0 late\), 13 clients' 20 ||
	abort "the aggregator closed a sweep with 13 clients" "$(grep sweep "$tmp/agg1.log" | tail -n 4)"
sleep 4

# ------------------------------------------------------------- restarts

# SIGTERM: the open sweep closed with what arrived, counters and ledger
# saved; started again 1 s later.
if term "$agg_pid" aggregator; then
	t_pass "the aggregator exited 0 on SIGTERM"
else
	t_fail "the aggregator exited 0 on SIGTERM" "$term_msg"
fi
"$lhtotals" "$tmp/agg-state/totals" >"$tmp/totals-term.json" 2>"$tmp/lhtotals.err" ||
	abort "the counters file is there after SIGTERM" "$(cat "$tmp/lhtotals.err")"
sleep 1
agg_start
t_check "the restart loads the counters, in one line" \
	grep -qE "lharvestd: $tmp/agg-state/totals: [0-9]+ \(host, filesystem\) counters since sweep [0-9]+$" "$tmp/agg2.log"
wait_sweep "$tmp/agg2.log" '3 gatherers \(0 late\)' 30 ||
	abort "every gatherer reported to the restarted aggregator" "$(grep -E 'connected|sweep' "$tmp/agg2.log" | tail -n 8)"
sleep 3

# A save that fails (a directory where its temporary goes): one line, the
# old file removed (a restart would begin at zero, not from an older
# value); then one line when it is written again, with every count.
n=$(wc -l <"$tmp/agg2.log")
mkdir "$tmp/agg-state/totals.tmp"
wait_grep "$tmp/agg2.log" "totals: .*totals\.tmp: Is a directory; removed, so that a restart begins the counters at zero" 10
t_check "a failed save is one line, and the old file is removed" \
	test "$(tail -n +$((n + 1)) "$tmp/agg2.log" | grep -c 'removed, so that a restart')" -eq 1 -a ! -e "$tmp/agg-state/totals"
wait_sweep "$tmp/agg2.log" '3 gatherers' 10
rmdir "$tmp/agg-state/totals.tmp"
wait_grep "$tmp/agg2.log" "totals: written again after [0-9]+ failed saves" 10
t_check "one line when it is written again, and the file is back" \
	test "$(grep -c 'totals: written again' "$tmp/agg2.log")" -eq 1 -a -e "$tmp/agg-state/totals"

# SIGKILL at a random point of a sweep, started again 1 s later.
ms=$((RANDOM % (interval * 1000)))
at_boundary "$ms"
{
	kill -KILL "$agg_pid"
	wait "$agg_pid"
} 2>/dev/null
forget "$agg_pid"
echo "== SIGKILL at $EPOCHREALTIME ($ms ms into the sweep)" >>"$tmp/agg2.log"
sleep 1
agg_start
wait_sweep "$tmp/agg3.log" '3 gatherers \(0 late\)' 30 ||
	abort "every gatherer reported after the SIGKILL" "$(grep -E 'connected|sweep' "$tmp/agg3.log" | tail -n 8)"
sleep 3

# ------------------------------------------------------------------- stop

# The simulator stops; the last deltas go through, then the daemons stop.
kill -TERM "$sim_pid"
wait "$sim_pid"
forget "$sim_pid"
drained "$tmp/agg3.log" 3 30 || echo "# the aggregator closed fewer than 3 sweeps in 30 s"
bad=()
for n in "${servers[@]}"; do
	term "${gpid[$n]}" "gatherer $n" || bad+=("$term_msg")
done
term "$agg_pid" aggregator || bad+=("$term_msg")
if [ ${#bad[@]} -eq 0 ]; then
	t_pass "every daemon exited 0 on SIGTERM"
else
	t_fail "every daemon exited 0 on SIGTERM" "${bad[@]}"
fi

# ------------------------------------------------------------------ check

if "$lhtotals" "$tmp/agg-state/totals" >"$tmp/totals.json" 2>"$tmp/lhtotals.err"; then
	"${chk[@]}" --baseline "$tmp/baseline.json" --final "$R/truth-latest.json" \
		--hosts "$tmp/hosts" --totals "$tmp/totals.json" >"$tmp/check.out" 2>&1
	replay "$tmp/check.out"
else
	t_fail "lhtotals reads the counters file" "$(cat "$tmp/lhtotals.err")"
fi

# A ledger entry behind the file's mark (a ledger restored from an older
# backup, say): raised to the mark at the start, in one line, so that
# the batches already counted are duplicates if they come again.
ledger=$tmp/agg-state/ledger/$(printf 'oss1' | od -An -tx1 | tr -d ' \n').batch
mark=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["marks"]["oss1"])' "$tmp/totals.json" 2>/dev/null)
if [ -n "$mark" ] && [ "$(cat "$ledger" 2>/dev/null)" = "$mark" ]; then
	t_pass "oss1's ledger entry is the counters' mark ($mark)"
else
	t_fail "oss1's ledger entry is the counters' mark" "mark '$mark', ledger '$(cat "$ledger" 2>&1)'"
fi
if [ -n "$mark" ]; then
	printf '%s\n' $((mark - 3)) >"$ledger"
	agg_start
	wait_grep "$tmp/agg$agg_runs.log" "totals: oss1: ledger raised" 10
	got=$(grep -E 'ledger raised' "$tmp/agg$agg_runs.log")
	if [ "$(wc -l <<<"$got")" -eq 1 ] &&
		grep -qE "lharvestd: $tmp/agg-state/totals: oss1: ledger raised from batch $((mark - 3)) to $mark, the batches already in the counters$" <<<"$got"; then
		t_pass "a ledger behind the counters is raised at the start, in one line"
	else
		t_fail "a ledger behind the counters is raised at the start, in one line" "$got"
	fi
	t_check "the ledger file holds the mark again" test "$(cat "$ledger")" = "$mark"
	term "$agg_pid" aggregator || t_fail "the aggregator exited 0 on SIGTERM" "$term_msg"
fi

# A damaged file: set aside byte for byte, one line, the counters begin
# at zero.
printf 'garbage' >"$tmp/agg-state/totals"
agg_start
wait_grep "$tmp/agg$agg_runs.log" "totals: damaged: .*; set aside as .*totals\.bad\.[0-9]+, the counters begin at zero" 10
aside=$(find "$tmp/agg-state" -maxdepth 1 -name 'totals.bad.*' | head -n 1)
if [ -n "$aside" ] && [ "$(cat "$aside")" = garbage ] &&
	grep -qE "lharvestd: $tmp/agg-state/totals: damaged: .*; set aside as $aside, the counters begin at zero$" "$tmp/agg$agg_runs.log"; then
	t_pass "a damaged file is set aside byte for byte, in one line"
else
	t_fail "a damaged file is set aside byte for byte, in one line" "$(grep totals "$tmp/agg$agg_runs.log")"
fi
term "$agg_pid" aggregator || t_fail "the aggregator exited 0 on SIGTERM" "$term_msg"
t_summary
