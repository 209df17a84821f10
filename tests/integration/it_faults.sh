#!/usr/bin/env bash
# Fault injection, end to end, with real processes (issue 15): the
# simulator's site (aggregator-site.json: mds1, oss1, oss2), a gatherer per
# server, an aggregator spoofing into a real gmond.  The aggregator and
# gatherer oss1 keep their state_dir on small tmpfs mounts of a mount
# namespace the test makes; oss1 reaches the aggregator through a proxy
# that can cut the network (tests/tools/cutproxy.py).  Injected, one
# after the other:
#   - SIGKILL of a gatherer at random points of a sweep (three times);
#   - SIGKILL of the aggregator at a random point of a sweep;
#   - a network cut of oss1 for 5 intervals, restored without restarting
#     anything;
#   - the aggregator's state_dir full (ENOSPC), then freed;
#   - the aggregator's state_dir read-only (every write fails with EROFS),
#     then writable;
#   - oss1's state_dir full, then freed;
#   - a flood of idle connections past max_connections;
#   - the aggregator's wall clock stepped an hour forward, then back
#     (through the test hook LH_TEST_CLOCK_OFFSET_FILE).
# Then: every daemon still running; nothing Lustre counted lost or
# counted twice (the aggregator's per-filesystem deltas over all its runs
# equal the simulator's counters exactly); no value gmond showed negative
# or above the true rate (+0.5%), and quiet samples within 0.5%; each
# fault named in the logs.  Everything on 127.0.0.1.  About 150 s.
#
#   bash it_faults.sh BUILD/daemon/lharvestd     (LH_SRCDIR = source tree)
#
# Environment: LH_FAULTS_KEEP=DIR (copy the files of a failed run there),
# LH_FAULTS_SEED (the random points; default: $RANDOM, printed).
set -uo pipefail
bin=$(realpath "$1")
. "$(dirname "$0")/dumplib.sh"
# shellcheck source=agglib.sh
. "$(dirname "$0")/agglib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
sim=(python3 "$src/tests/sim/lustresim.py")
chk=(python3 "$src/tests/integration/aggregator_check.py")
gm=$src/tests/ganglia/gmond.sh
scenario=$src/tests/sim/scenarios/aggregator-site.json
command -v gmond >/dev/null || { echo "no gmond: apt-get install ganglia-monitor"; exit 1; }
if ! command -v unshare >/dev/null || ! command -v nsenter >/dev/null; then
	echo "no unshare/nsenter: apt-get install util-linux"
	exit 1
fi
# shellcheck source=../ganglia/sanitizer.sh
. "$src/tests/ganglia/sanitizer.sh"

seed=${LH_FAULTS_SEED:-$RANDOM}
RANDOM=$seed
echo "# seed $seed (LH_FAULTS_SEED=$seed repeats these random points)"
interval=2
deadline=0.5
servers=(mds1 oss1 oss2)
R=$tmp/sim
faults=$tmp/faults.txt
t_start=$EPOCHREALTIME
declare -A gpid=()
agg_pid=
agg_runs=0
ns_pid=
proxy_pid=

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
	if [ -n "${LH_FAULTS_KEEP:-}" ] && [ "$failed" -gt 0 ]; then
		mkdir -p "$LH_FAULTS_KEEP" && cp -r "$tmp"/. "$LH_FAULTS_KEEP"/ &&
			echo "# files of this run kept in $LH_FAULTS_KEEP"
	fi
	rm -rf "$tmp"
}

abort() {
	t_fail "$@" "--- aggregator (last lines)" "$(tail -n 8 "$tmp"/agg*.log 2>/dev/null)"
	t_summary
	exit 1
}

# in_ns CMD...: CMD in the test's mount namespace (it sees the tmpfs mounts).
# (The daemons are started with nsenter itself, not through this function,
# so that $! is their PID: nsenter execs them.)
in_ns() { nsenter -t "$ns_pid" -m -- "$@"; }

agg_start() {
	agg_runs=$((agg_runs + 1))
	echo "== aggregator run $agg_runs at $EPOCHREALTIME" >>"$tmp/agg$agg_runs.log"
	LH_TEST_CLOCK_OFFSET_FILE=$tmp/clock-offset \
		nsenter -t "$ns_pid" -m -- "$bin" -d -v -f "$tmp/agg.conf" >>"$tmp/agg.out" 2> >(stamp >>"$tmp/agg$agg_runs.log") &
	agg_pid=$!
	pids+=("$agg_pid")
	wait_grep "$tmp/agg$agg_runs.log" 'listening on 127\.0\.0\.1:[0-9]+' 10 ||
		abort "aggregator run $agg_runs started" "$(cat "$tmp/agg$agg_runs.log")"
}

g_start() { # NAME
	local n=$1
	echo "== started at $EPOCHREALTIME" >>"$tmp/g-$n.log"
	nsenter -t "$ns_pid" -m -- "$bin" -d -v -f "$tmp/$n.conf" >>"$tmp/g-$n.out" 2> >(stamp >>"$tmp/g-$n.log") &
	gpid[$n]=$!
	pids+=("$!")
}

kill9() { # PID: SIGKILL, quietly
	{
		kill -KILL "$1"
		wait "$1"
	} 2>/dev/null
	forget "$1"
}

# alive WHAT PID: a test that the process is still running.
alive() {
	if kill -0 "$2" 2>/dev/null; then
		t_pass "$1 still running"
	else
		t_fail "$1 still running"
	fi
}

# ledger_lines NAME N REASON: after line N of the aggregator's log, its
# ledger said REASON in one line, then that it was written again in one:
# a full or read-only state_dir is two lines, not one per sweep.
ledger_lines() {
	local got
	got=$(tail -n +$(($2 + 1)) "$tmp/agg$agg_runs.log" | grep 'lharvestd: ledger: ')
	if [ "$(wc -l <<<"$got")" -eq 2 ] && head -n 1 <<<"$got" | grep -q "$3" &&
		tail -n 1 <<<"$got" | grep -q 'ledger: written again after [0-9]* failed writes'; then
		t_pass "$1"
	else
		t_fail "$1" "$got"
	fi
}

# ms_into_sweep: a random point of a sweep, in ms after its boundary.
rand_ms() { echo $((RANDOM % (interval * 1000))); }

# fill DIR: fill the tmpfs at DIR (in the namespace) to the last byte.
fill() { in_ns sh -c "cat /dev/zero >'$1/filler' 2>/dev/null; true"; }
unfill() { in_ns rm -f "$1/filler"; }

# ------------------------------------------------------------------ setup

# A mount namespace that outlives the daemons (they are killed and
# restarted in it): a process holds it.
unshare -m --propagation private sleep 100000 &
ns_pid=$!
pids+=("$ns_pid")
for ((i = 0; i < 50; i++)); do
	[ "$(readlink "/proc/$ns_pid/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] && break
	sleep 0.1
done
mkdir -m 700 "$tmp/agg-state" "$tmp/state-oss1"
echo 0 >"$tmp/clock-offset"
in_ns mount -t tmpfs -o size=1m,mode=0700 lh-agg "$tmp/agg-state" ||
	abort "a tmpfs for the aggregator's state_dir"
in_ns mount -t tmpfs -o size=8m,mode=0700 lh-oss1 "$tmp/state-oss1" ||
	abort "a tmpfs for oss1's state_dir"

# The simulator's step 0, on the wall clock; it is paused there until
# every gatherer has taken its baseline.
"${sim[@]}" run --root "$R" --scenario "$scenario" --clock wall --period 1 \
	--align --steps 1 --quiet >>"$tmp/sim.log" 2>&1 ||
	abort "the simulator wrote step 0" "$(tail "$tmp/sim.log")"
cp "$R/truth-latest.json" "$tmp/baseline.json"

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
pids+=("$!")
poll_pid=$!

make_keys "$tmp/keys" "it-faults-key-0123456789abcdef0123456789"
cat >"$tmp/hosts" <<'EOF'
10.1.0.1	node01
10.1.0.2	node02
10.1.0.3	node03
10.1.0.4	node04
10.1.0.5	node05
10.2.0.5	node05
10.2.0.6	node06
192.168.1.7	node07
12@gni		node09
EOF
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' \
	"$gm_udp" >"$tmp/send.conf"
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
		handshake_timeout = 3
		max_connections = 64
	EOF
}
agg_conf 127.0.0.1:0
agg_start
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/agg1.log" | head -n 1)
agg_conf "$addr" # a restart listens where the gatherers look

python3 "$src/tests/tools/cutproxy.py" --target "$addr" >"$tmp/proxy.out" 2>&1 &
proxy_pid=$!
pids+=("$proxy_pid")
wait_grep "$tmp/proxy.out" 'listening on' 10 || abort "the proxy started" "$(cat "$tmp/proxy.out")"
paddr=$(sed -n 's/^listening on //p' "$tmp/proxy.out")

for n in "${servers[@]}"; do
	to=$addr
	[ "$n" = oss1 ] && to=$paddr
	[ -d "$tmp/state-$n" ] || mkdir -m 700 "$tmp/state-$n"
	cat >"$tmp/$n.conf" <<-EOF
		role = "gatherer"
		interval = $interval
		lustre_root = "$R/$n"
		server = "$to"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-$n"
		name = "$n"
	EOF
	g_start "$n"
done
wait_sweep "$tmp/agg1.log" '3 gatherers' 20 || abort "the aggregator closed a sweep with its 3 gatherers"
"${sim[@]}" run --root "$R" --steps 0 --quiet >>"$tmp/sim.log" 2>&1 &
sim_pid=$!
pids+=("$sim_pid")
wait_sweep "$tmp/agg1.log" '3 gatherers \(0 late\), 13 clients' 20 ||
	abort "the aggregator closed a sweep with 13 clients" "$(grep sweep "$tmp/agg1.log" | tail -n 4)"
fault startup "$t_start"
sleep 6

# ----------------------------------------------------------------- faults

# A gatherer SIGKILLed at three random points of a sweep, back 1-3 s later.
for k in 1 2 3; do
	n=${servers[$((RANDOM % 3))]}
	ms=$(rand_ms)
	at_boundary "$ms"
	t1=$EPOCHREALTIME
	kill9 "${gpid[$n]}"
	echo "== SIGKILL at $EPOCHREALTIME ($ms ms into the sweep)" >>"$tmp/g-$n.log"
	sleep "$((1 + RANDOM % 3))"
	g_start "$n"
	wait_sweep "$tmp/agg$agg_runs.log" '3 gatherers \(0 late\)' 20 ||
		abort "gatherer $n reported again after its SIGKILL"
	fault "kill9-gatherer-$n-$k" "$t1"
	sleep 9
done

# The aggregator SIGKILLed at a random point of a sweep, back 2 s later.
ms=$(rand_ms)
at_boundary "$ms"
t1=$EPOCHREALTIME
kill9 "$agg_pid"
echo "== SIGKILL at $EPOCHREALTIME ($ms ms into the sweep)" >>"$tmp/agg$agg_runs.log"
sleep 2
agg_start
wait_sweep "$tmp/agg$agg_runs.log" '3 gatherers \(0 late\)' 30 ||
	abort "every gatherer reported to the restarted aggregator" "$(grep -E 'connected|sweep' "$tmp/agg$agg_runs.log" | tail -n 8)"
fault aggregator-kill "$t1"
sleep 9

# The network between oss1 and the aggregator cut for 5 intervals, then
# restored: no process restarted.
t1=$EPOCHREALTIME
kill -USR1 "$proxy_pid"
sleep $((interval * 5))
kill -USR2 "$proxy_pid"
wait_sweep "$tmp/agg$agg_runs.log" '3 gatherers \(0 late\)' 30 ||
	abort "oss1 reported again after the network came back" "$(grep -E 'oss1|sweep' "$tmp/agg$agg_runs.log" | tail -n 8)"
fault network-cut-oss1 "$t1"
alive "gatherer oss1 (network cut)" "${gpid[oss1]}"
sleep 9

# The aggregator's state_dir full for 3 intervals, then freed.
t1=$EPOCHREALTIME
nl=$(wc -l <"$tmp/agg$agg_runs.log")
fill "$tmp/agg-state"
sleep $((interval * 3))
unfill "$tmp/agg-state"
wait_sweep "$tmp/agg$agg_runs.log" '3 gatherers \(0 late\)' 20 || abort "sweeps after the aggregator's state_dir was freed"
fault agg-state-full "$t1"
alive "the aggregator (state_dir full)" "$agg_pid"
ledger_lines "the aggregator said once that its state_dir was full, once that it wrote again" \
	"$nl" 'No space left on device'
sleep 9

# The aggregator's state_dir read-only (every write fails) for 3
# intervals, then writable again.
t1=$EPOCHREALTIME
nl=$(wc -l <"$tmp/agg$agg_runs.log")
# (A read-only bind mount over it: a remount of the tmpfs itself is refused
# while the daemon holds its lock file open for writing.)
if ! in_ns mount --bind "$tmp/agg-state" "$tmp/agg-state" ||
	! in_ns mount -o remount,bind,ro "$tmp/agg-state"; then
	abort "mount the aggregator's state_dir read-only"
fi
sleep $((interval * 3))
in_ns umount -l "$tmp/agg-state" || abort "make the aggregator's state_dir writable again"
wait_sweep "$tmp/agg$agg_runs.log" '3 gatherers \(0 late\)' 20 || abort "sweeps after the aggregator's state_dir was writable again"
fault agg-state-readonly "$t1"
alive "the aggregator (state_dir read-only)" "$agg_pid"
ledger_lines "the aggregator said once that its state_dir was read-only, once that it wrote again" \
	"$nl" 'Read-only file system'
sleep 9

# Gatherer oss1's state_dir full for 3 intervals, then freed.
t1=$EPOCHREALTIME
nl=$(wc -l <"$tmp/g-oss1.log")
fill "$tmp/state-oss1"
sleep $((interval * 3))
unfill "$tmp/state-oss1"
wait_sweep "$tmp/agg$agg_runs.log" '3 gatherers \(0 late\)' 20 || abort "sweeps after oss1's state_dir was freed"
fault oss1-state-full "$t1"
alive "gatherer oss1 (state_dir full)" "${gpid[oss1]}"
got=$(tail -n +$((nl + 1)) "$tmp/g-oss1.log" | grep -E 'No space left on device|saved again|can be saved|state saved')
if grep -q 'No space left on device' <<<"$got" && [ "$(grep -c 'No space left on device' <<<"$got")" -eq 1 ]; then
	t_pass "gatherer oss1 said once that its state_dir was full"
else
	t_fail "gatherer oss1 said once that its state_dir was full" "$(tail -n +$((nl + 1)) "$tmp/g-oss1.log" | grep -v 'sweep [0-9]*:' | head -n 8)"
fi
sleep 9

# A flood of idle connections, three times max_connections, for 3
# intervals; the gatherers already connected go on.
t1=$EPOCHREALTIME
python3 - "$addr" 192 $((interval * 3)) >"$tmp/flood.out" 2>&1 <<'EOF'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
socks = []
for i in range(int(sys.argv[2])):
    try:
        socks.append(socket.create_connection((host, int(port)), timeout=2))
    except OSError as e:
        print("connect %d: %s" % (i, e))
time.sleep(float(sys.argv[3]))
print("opened %d" % len(socks))
EOF
wait_sweep "$tmp/agg$agg_runs.log" '3 gatherers \(0 late\)' 20 || abort "sweeps after the flood"
fault flood "$t1"
alive "the aggregator (connection flood)" "$agg_pid"
sleep 9

# The aggregator's wall clock stepped an hour forward for 4 intervals,
# then back (docs/reliability.md section 7: the test hook); the gatherers'
# clocks stay right.  One line per step; sweeps go on closing once an
# interval (no burst of empty ones forward, no stall back).
t1=$EPOCHREALTIME
nl=$(wc -l <"$tmp/agg$agg_runs.log")
echo 3600 >"$tmp/clock-offset"
sleep $((interval * 4))
echo 0 >"$tmp/clock-offset"
wait_sweep "$tmp/agg$agg_runs.log" '3 gatherers \(0 late\)' 20 || abort "sweeps after the clock stepped back"
echo "$t1 $EPOCHREALTIME" >>"$tmp/clock-steps"
fault clock-step "$t1"
alive "the aggregator (clock stepped both ways)" "$agg_pid"
got=$(tail -n +$((nl + 1)) "$tmp/agg$agg_runs.log")
nsw=$(grep -cE 'lharvestd: sweep [0-9]+: [0-9]+ gatherers' <<<"$got")
secs=$(awk -v a="$t1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a }')
if [ "$(grep -c 'wall clock stepped forward' <<<"$got")" -eq 1 ] &&
	[ "$(grep -c 'wall clock stepped back' <<<"$got")" -eq 1 ] &&
	[ "$nsw" -le $((secs / interval + 2)) ] && [ "$nsw" -ge $((secs / interval - 3)) ]; then
	t_pass "the aggregator said each clock step in one line and swept once an interval ($nsw sweeps in $secs s)"
else
	t_fail "the aggregator said each clock step in one line and swept once an interval ($nsw sweeps in $secs s)" \
		"$(grep -v 'lharvestd: sweep [0-9]*: \(fs\|Ganglia\|closing\)' <<<"$got" | head -n 12)"
fi
sleep 9

# ------------------------------------------------------------------- stop

for n in "${servers[@]}"; do alive "gatherer $n (at the end)" "${gpid[$n]}"; done
alive "the aggregator (at the end)" "$agg_pid"
# The simulator stops; the last deltas go through, then the daemons stop.
kill -TERM "$sim_pid"
wait "$sim_pid"
forget "$sim_pid"
t1=$EPOCHREALTIME
drained "$tmp/agg$agg_runs.log" 3 30 || echo "# the aggregator closed fewer than 3 sweeps in 30 s"
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
fault shutdown "$t1"
sleep 1.5
kill -TERM "$poll_pid"
wait "$poll_pid"
forget "$poll_pid"
cat "$tmp/timeline"

# ------------------------------------------------------------------ check

logs=()
for ((i = 1; i <= agg_runs; i++)); do logs+=(--agg-log "$tmp/agg$i.log"); done
"${chk[@]}" check --truth "$R/truth.jsonl" --hosts "$tmp/hosts" \
	--samples "$tmp/samples.jsonl" --faults "$faults" "${logs[@]}" \
	--clock-steps "$tmp/clock-steps" \
	--interval "$interval" --deadline "$deadline" --from "$t_start" >"$tmp/check.out" 2>&1
replay "$tmp/check.out"
{
	for fs in scratch home; do
		args=()
		for ((i = 1; i <= agg_runs; i++)); do args+=(--log "$tmp/agg$i.log"); done
		"${chk[@]}" totals --baseline "$tmp/baseline.json" --final "$R/truth-latest.json" \
			--fs "$fs" --label "aggregator ($agg_runs runs)" "${args[@]}"
	done
} >"$tmp/totals.out" 2>&1
replay "$tmp/totals.out"
t_summary
