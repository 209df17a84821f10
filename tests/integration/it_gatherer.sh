#!/usr/bin/env bash
# The gatherer end to end: one lharvestd gatherer per simulated server
# (tests/sim/lustresim.py) sends to one lharvest-dump --listen --state;
# through every Lustre event, two gatherer restarts and a receiver outage,
# the sum of everything delivered per (fs, client NID) must equal exactly
# what the simulator's ground truth says the client did since the
# gatherers' baseline.  Everything on 127.0.0.1.
#
#   bash it_gatherer.sh BUILD/daemon/lharvestd      (LH_SRCDIR = source tree)
#
# Environment: LH_GATHERER_VERSIONS (default "2.5 2.10 2.15.0 2.15 2.16
# 2.17"), LH_GATHERER_JOBS (versions run at once, default all: each one is
# mostly waiting for sweeps), LH_GATHERER_VERBOSE=1 (gatherers get -v),
# LH_GATHERER_KEEP=DIR (copy every version's files there).
#
# How it stays exact.  The simulator runs on its fake clock, stepped by
# hand (`run --steps 1`): its counters and truth are deterministic.  After
# every step the test waits until each running gatherer has delivered a
# sweep that started after the step's files were written (sweep id >=
# ceil(t) + 1, t the wall time after the step; wait_sweeps below): the
# gatherer has then read every increment the files show.  Every event is
# injected with `lustresim.py event --now` between steps, never at a step:
#
#  * --now does not advance any counter: it only zeroes (clear,
#    reset_export), removes (clear of stale dirs, unmount, failover),
#    creates (mount, client_appear, client_return after a clear) or
#    rewrites uuid files, at snapshot_time = last step + period/2.  The
#    truth only ever holds increments that a file showed up to its own
#    snapshot_time, so the files between two steps show exactly the truth.
#    An event AT a step (settle=True in lsim/engine.py) would first
#    integrate up to the step time and then zero or remove the file: up to
#    a period of increments would be in the truth but in no file a reader
#    could ever see.
#  * The one --now event that does count something is client_idle on
#    Lustre <= 2.11 (an OST `disconnect`, +1 oss_ops); the gatherers read
#    it (we wait for a sweep after each group of events) before a later
#    clear removes that stale dir.  No group both adds to and removes the
#    same export.
#  * After each group of events the test waits for a sweep too, so a
#    gatherer sees the zeroed files: before 2.15 (and in 2.15.0, whose
#    start_time is always 0) a reset is only visible as counters going
#    down, which they may not do by the next read if they were small (a
#    client that appeared a step earlier).  Two resets are on purpose not
#    seen as zeros: one on a target of oss2 while that gatherer is killed,
#    one on mds1 while it is stopped (SIGSTOP).  Both are on busy exports
#    with 30 days of history, replaced by seconds of I/O: every active
#    counter goes down, so they are exact too.
#  * client_return after a clear recreates the removed NID dirs from zero
#    (a new export: its whole value counts) and its other dirs continue
#    (no reset): both are exact.
#  * A peer NID that loses its last connection (the MDT's lwp dir of an
#    OSS left without a target of that fs by a failover) stays as a stale
#    dir with an empty uuid and no counters: gatherers may report it, with
#    zeros; the checker allows NIDs outside the truth only with all-zero
#    sums.  Only OSTs move, so no peer with counters (an OST's MDT OSP)
#    ever becomes stale.
#  * Apart from the reset on oss2, nothing but steps (more I/O) happens
#    while a gatherer is down or the receiver is away.
set -uo pipefail
bin=$1
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
sim=(python3 "$src/tests/sim/lustresim.py")
checker=(python3 "$src/tests/integration/gatherer_check.py")
scenario=$src/tests/sim/scenarios/gatherer-site.json
read -r -a versions <<<"${LH_GATHERER_VERSIONS:-2.5 2.10 2.15.0 2.15 2.16 2.17}"
jobs=${LH_GATHERER_JOBS:-${#versions[@]}}
servers=(mds1 oss1 oss2)
gflags=()
[ "${LH_GATHERER_VERBOSE:-0}" = 1 ] && gflags=(-v)
t_start=$EPOCHREALTIME

# Clients of gatherer-site.json that the events use.
W=10.1.0.1@o2ib    # writer x20: > 4 GiB per step
RD=10.1.0.2@o2ib   # reader
MT=10.2.0.1@o2ib2  # meta
CK=10.2.0.2@o2ib2  # checkpoint: goes idle, then returns
AB=10.1.0.10@o2ib  # "absent" until client_appear
G1=12@gni          # mixed x3: goes idle for good
NEW1=10.1.0.20@o2ib # not in the scenario: client_appear --profile
NEW2=40@gni

# Every version runs in a background subshell that writes its "ok - " /
# "FAIL - " lines (detail lines indented) to $tmp/<v>/results; the main
# shell replays them through t_pass/t_fail.  cleanup() (dumplib's EXIT
# trap) also ends every process a version started, by the pids it listed.
vpids=()
cleanup() {
	local p f
	for p in "${vpids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${vpids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	for f in "$tmp"/*/pids; do
		[ -f "$f" ] || continue
		while read -r p; do
			kill -KILL "$p" 2>/dev/null || true
		done <"$f"
	done
	rm -rf "$tmp"
}

# ---------------------------------------------------------------- helpers
# These run inside a version's subshell: v, vdir, R, douts, gpid, running.

r_pass() { echo "ok - [$v] $1" >>"$vdir/results"; }
r_fail() {
	echo "FAIL - [$v] $1" >>"$vdir/results"
	shift
	local l
	for l in "$@"; do
		printf '%s\n' "$l" | sed 's/^/  /' >>"$vdir/results"
	done
}

# abort NAME DETAIL...: a failure after which this version cannot go on.
abort() {
	r_fail "$@" "$(logs_tail)"
	exit 1
}

logs_tail() {
	local n
	for n in "${servers[@]}"; do
		echo "--- gatherer $n (last lines)"
		tail -n 5 "$vdir/g-$n.err" 2>/dev/null
	done
	echo "--- receiver (last lines)"
	tail -n 5 "$vdir/d$ndump.err" 2>/dev/null
}

# now_us: wall clock in microseconds.
now_us() {
	local t=$EPOCHREALTIME
	echo $((${t%.*} * 1000000 + 10#${t#*.}))
}

# next_target: the first sweep id that certainly starts after now:
# ceil(now) + 1 (a second of margin for timer slack).
next_target() {
	local us
	us=$(now_us)
	echo $(((us + 999999) / 1000000 + 1))
}

# sleep_until_us US
sleep_until_us() {
	local d=$(($1 - $(now_us)))
	[ "$d" -gt 0 ] && sleep "$((d / 1000000)).$(printf '%06d' $((d % 1000000)))"
	return 0
}

# max_sweeps: "sender highest-sweep" over every receiver's output so far.
# A last line still being written may be cut; its numbers are smaller
# than the complete ones, so the maximum is not affected.
max_sweeps() {
	awk '{
		if (!match($0, /"sender":"[^"]*"/)) next
		s = substr($0, RSTART + 10, RLENGTH - 11)
		if (!match($0, /"sweep":[0-9]+/)) next
		w = substr($0, RSTART + 8, RLENGTH - 8) + 0
		if (!(s in m) || w > m[s]) m[s] = w
	} END { for (s in m) print s, m[s] }' "${douts[@]}" 2>/dev/null
}

# wait_sweeps TARGET SECONDS NAME...: until every NAME has a printed
# record of a sweep >= TARGET.  Fails at once if one of them died.
wait_sweeps() {
	local target=$1 secs=$2 n lag
	shift 2
	local deadline=$(($(now_us) + secs * 1000000))
	while :; do
		lag=$(max_sweeps | awk -v t="$target" -v names="$*" '
			{ m[$1] = $2 }
			END {
				k = split(names, a, " ")
				for (i = 1; i <= k; i++)
					if (!(a[i] in m) || m[a[i]] < t)
						printf "%s(%s) ", a[i], (a[i] in m) ? m[a[i]] : "none"
			}')
		[ -z "$lag" ] && return 0
		for n in "$@"; do
			if ! kill -0 "${gpid[$n]}" 2>/dev/null; then
				wait_msg="gatherer $n is not running"
				return 1
			fi
		done
		if [ "$(now_us)" -ge "$deadline" ]; then
			wait_msg="no sweep >= $target after ${secs} s from: ${lag}"
			return 1
		fi
		sleep 0.1
	done
}

# settle WHAT [SECONDS]: every running gatherer delivers a sweep that
# started after now; else the version is aborted.
settle() {
	local target
	target=$(next_target)
	wait_sweeps "$target" "${2:-20}" "${running[@]}" ||
		abort "gatherers delivered a sweep after $1" "$wait_msg"
}

step() { # WHAT: one simulator step, then settle
	"${sim[@]}" run --root "$R" --steps 1 --quiet >>"$vdir/sim.log" 2>&1 ||
		abort "simulator step ($1)" "$(tail -n 3 "$vdir/sim.log")"
	nsteps=$((nsteps + 1))
	[ "${2:-}" = nosettle ] || settle "step $nsteps ($1)"
}

ev() { # TYPE ARGS...: an event, applied at once between steps
	echo "== event $*" >>"$vdir/sim.log"
	"${sim[@]}" event --root "$R" "$@" --now >>"$vdir/sim.log" 2>&1 ||
		abort "simulator event $*" "$(tail -n 3 "$vdir/sim.log")"
}

g_start() { # NAME
	local n=$1
	"$bin" -d -f "$vdir/$n.conf" "${gflags[@]}" \
		>>"$vdir/g-$n.out" 2>>"$vdir/g-$n.err" &
	gpid[$n]=$!
	pids+=("$!")
	echo "$!" >>"$vdir/pids"
	echo "== started pid $! at $EPOCHREALTIME" >>"$vdir/g-$n.err"
}

# g_term NAME: SIGTERM; true if it exited with status 0 within 5 s.
g_term() {
	local n=$1 p=${gpid[$1]} i rc
	kill -TERM "$p" 2>/dev/null || return 1
	for ((i = 0; i < 50; i++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$p" 2>/dev/null; then
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		term_msg="gatherer $n still running 5 s after SIGTERM"
		return 1
	fi
	wait "$p"
	rc=$?
	term_msg="gatherer $n exited with status $rc after SIGTERM"
	[ "$rc" -eq 0 ]
}

g_kill() { # NAME
	kill -KILL "${gpid[$1]}" 2>/dev/null
	wait "${gpid[$1]}" 2>/dev/null
	echo "== SIGKILL at $EPOCHREALTIME" >>"$vdir/g-$1.err"
}

set_running() { running=("$@"); }

# ------------------------------------------------------------ one version

run_version() {
	v=$1
	vdir=$tmp/$v
	R=$vdir/sim
	nsteps=0
	ndump=1
	douts=()
	declare -gA gpid=()
	running=()
	pids=()
	trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done' EXIT
	trap 'exit 1' TERM
	local hdr=0 n addr t_kill t_back out_target major minor
	# enable_stats_header exists from 2.16.
	IFS=. read -r major minor _ <<<"$v"
	if [ "$major" -gt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -ge 16 ]; }; then
		hdr=1
	fi

	# Step 0, with the fake clock a minute behind the wall clock (the
	# files' times look real; the counters do not depend on it).
	"${sim[@]}" run --root "$R" --scenario "$scenario" --version "$v" \
		--start-time $((${EPOCHREALTIME%.*} - 60)) --steps 1 --quiet \
		>>"$vdir/sim.log" 2>&1 ||
		abort "simulator step 0" "$(tail -n 3 "$vdir/sim.log")"
	cp "$R/truth-latest.json" "$vdir/baseline.json"
	for n in "${servers[@]}"; do
		cp "$R/$n/expected-once.jsonl" "$vdir/once0-$n.jsonl"
	done

	make_keys "$vdir/keys" "it-gatherer-key-$v-0123456789abcdef"
	mkdir -m 700 "$vdir/dstate"
	start_dump "$v/d1" -k "$vdir/keys" --state "$vdir/dstate"
	echo "$dump_pid" >>"$vdir/pids"
	addr=$dump_addr
	douts=("$vdir/d1.out")
	for n in "${servers[@]}"; do
		mkdir -m 700 "$vdir/state-$n"
		cat >"$vdir/$n.conf" <<-EOF
			role = "gatherer"
			interval = 1
			lustre_root = "$R/$n"
			server = "$addr"
			secret_file = "$vdir/keys"
			state_dir = "$vdir/state-$n"
			name = "$n"
		EOF
		g_start "$n"
	done
	set_running "${servers[@]}"

	# The baseline: each gatherer's first sweep reads step 0.
	wait_sweeps 1 20 "${servers[@]}" ||
		abort "every gatherer delivered its baseline sweep" "$wait_msg"
	r_pass "every gatherer delivered its baseline sweep"

	step "I/O"
	# Clients: one goes idle (its uuid files empty; <= 2.11 counts a
	# disconnect), one in the scenario appears, two exports are reset.
	ev client_idle --nid "$CK"
	ev client_appear --nid "$AB"
	ev reset_export --target scratch-MDT0000 --nid "$MT"
	ev reset_export --target home-OST0001 --nid "$RD"
	[ "$hdr" = 1 ] && ev stats_header --value 0
	settle "client_idle, client_appear, reset_export"
	step "I/O"
	# Clears: the stale dirs (CK now, 10.1.0.9 since before step 0) go,
	# the others are zeroed; a NID new to the scenario appears.
	ev clear --target scratch-OST0000
	ev clear --target home-MDT0000
	ev client_appear --nid "$NEW1" --profile writer --fs scratch
	settle "clear, client_appear (new NID)"
	step "I/O"
	# CK returns: dirs removed by the clears come back from zero, the
	# others continue.  scratch-OST0000 moves to oss2: oss1 has no scratch
	# target left, so scratch-MDT0000's dir for oss1 is a stale peer.
	ev client_return --nid "$CK"
	ev failover --target scratch-OST0000 --from oss1 --to oss2
	settle "client_return, failover"
	step "I/O"
	# home-OST0001 leaves oss2 for a step (gap 1), then mounts on oss1.
	ev failover --target home-OST0001 --from oss2 --to oss1 --gap 1
	settle "failover --gap 1"
	step "failover remount"
	# A reset that mds1 never sees as zeros: it is stopped (SIGSTOP, 200 ms
	# after a sweep started) while the reset and the next step happen.
	sleep_until_us $(((($(now_us) / 1000000) + 1) * 1000000 + 200000))
	kill -STOP "${gpid[mds1]}"
	ev reset_export --target scratch-MDT0000 --nid "$RD"
	step "I/O right after a reset, mds1 stopped" nosettle
	kill -CONT "${gpid[mds1]}"
	settle "step $nsteps (I/O right after a reset)"
	ev unmount --target home-OST0000
	ev client_idle --nid "$G1"
	[ "$hdr" = 1 ] && ev stats_header --value 1
	settle "unmount, client_idle"
	step "I/O"
	ev mount --target home-OST0000 --server oss1
	ev client_appear --nid "$NEW2" --profile meta
	settle "mount, client_appear"
	step "I/O"

	# A gatherer stopped cleanly misses two steps.
	if g_term oss1; then
		r_pass "oss1 exited 0 within 5 s of SIGTERM"
	else
		r_fail "oss1 exited 0 within 5 s of SIGTERM" "$term_msg"
	fi
	set_running mds1 oss2
	step "I/O, oss1 down"
	step "I/O, oss1 down"
	g_start oss1
	set_running "${servers[@]}"
	step "I/O, oss1 back"
	# A gatherer killed in the middle of a sweep (10 ms after a boundary)
	# misses two steps.
	sleep_until_us $(((($(now_us) / 1000000) + 1) * 1000000 + 10000))
	g_kill oss2
	set_running mds1 oss1
	# A reset while oss2 is down: it finds 30 days of history replaced by
	# a few seconds of I/O.
	ev reset_export --target scratch-OST0001 --nid "$W"
	step "I/O, oss2 killed"
	step "I/O, oss2 killed"
	g_start oss2
	set_running "${servers[@]}"
	step "I/O, oss2 back"

	# The receiver is killed (10 ms after a boundary, so likely with a
	# batch in flight); three steps are swept meanwhile.
	sleep_until_us $(((($(now_us) / 1000000) + 1) * 1000000 + 10000))
	kill -KILL "$dump_pid"
	wait "$dump_pid" 2>/dev/null
	t_kill=$(($(now_us) / 1000000))
	for n in 1 2 3; do
		step "I/O, receiver down" nosettle
		out_target=$(next_target)
		sleep_until_us $((out_target * 1000000 + 500000))
	done
	ndump=2
	start_dump_on "$addr" "$v/d2" -k "$vdir/keys" --state "$vdir/dstate" ||
		abort "the receiver started again on $addr" \
			"$(cat "$vdir/d2.err")"
	echo "$dump_pid" >>"$vdir/pids"
	t_back=$(($(now_us) / 1000000))
	douts+=("$vdir/d2.out")
	# The sender retries with backoff (1 s doubling, +-50%): up to ~25 s.
	if wait_sweeps "$out_target" 45 "${servers[@]}"; then
		r_pass "every gatherer delivered what it swept while the receiver was down"
	else
		abort "every gatherer delivered what it swept while the receiver was down" \
			"$wait_msg"
	fi
	# Everything swept during the outage comes in one batch (plus the one
	# in flight at the kill, if the dump had not recorded it).
	local many
	many=$(awk -v a="$t_kill" -v b="$t_back" '
		match($0, /"sender":"[^"]*"/) {
			s = substr($0, RSTART + 10, RLENGTH - 11)
			match($0, /"sweep":[0-9]+/)
			w = substr($0, RSTART + 8, RLENGTH - 8) + 0
			match($0, /"batch":[0-9]+/)
			k = substr($0, RSTART + 8, RLENGTH - 8) + 0
			if (w >= a && w <= b && !((s, k) in seen)) {
				seen[s, k] = 1
				n[s]++
			}
		}
		END { for (s in n) if (n[s] > 2) printf "%s: %d batches ", s, n[s] }' \
		"$vdir/d2.out")
	if [ -z "$many" ]; then
		r_pass "the sweeps of the outage were coalesced"
	else
		r_fail "the sweeps of the outage were coalesced" \
			"batches of sweeps $t_kill..$t_back printed by the new receiver: $many"
	fi
	step "I/O after the outage"
	# The stale peer dir for oss1 and 10.1.0.9's last dirs go.
	ev clear --target scratch-MDT0000
	settle "clear of the MDT"
	step "last"

	# Every sweep is delivered; the truth after the last step is final.
	cp "$R/truth-latest.json" "$vdir/final.json"
	local bad=()
	for n in "${servers[@]}"; do
		g_term "$n" || bad+=("$term_msg")
	done
	if [ ${#bad[@]} -eq 0 ]; then
		r_pass "every gatherer exited 0 within 5 s of SIGTERM"
	else
		r_fail "every gatherer exited 0 within 5 s of SIGTERM" "${bad[@]}"
	fi
	stop_dump || r_fail "the receiver stopped on SIGTERM"

	local args=(--baseline "$vdir/baseline.json" --final "$vdir/final.json"
		--events "$R/events.jsonl")
	for f in "${douts[@]}"; do args+=(--dump "$f"); done
	for n in "${servers[@]}"; do
		args+=(--first-sweep "$n=$vdir/once0-$n.jsonl")
	done
	if "${checker[@]}" "${args[@]}" >"$vdir/check.out" 2>&1; then
		r_pass "every client's deltas add up to the truth exactly ($(tail -n 1 "$vdir/check.out"))"
	else
		r_fail "every client's deltas add up to the truth exactly" \
			"$(head -n 60 "$vdir/check.out")"
	fi

	# Logs: nothing but the receiver being away (daemon/sender.c says so
	# once per outage, then "connected again").  Besides "error" and
	# "warn", flag what STYLE.md's non-fatal lines and a gatherer's other
	# complaints say: a file skipped, lines ignored, state lost.
	local unreach="aggregator $addr: (Connection refused|Connection reset by peer|connection closed by the aggregator|Broken pipe|write failed|no ACK within the timeout|no handshake within the timeout), retrying$"
	# oss2 is SIGKILLed in the middle of a sweep: when that sweep's save
	# was writing a new base, the journal left behind names the old one,
	# and the restart says so (docs/reliability.md, section 18).
	local halfway="gatherer\.journal: follows an older gatherer\.state, ignored"
	bad=()
	for n in "${servers[@]}"; do
		local lines
		lines=$(grep -v '^== ' "$vdir/g-$n.err" |
			grep -iE 'error|warn|skipping|ignor|cannot|failed|out of memory|not sent|would lose|damaged|afresh|dropping|retrying' |
			grep -vE "$unreach" |
			grep -vE "$halfway")
		[ -z "$lines" ] || bad+=("gatherer $n:" "$(head -n 10 <<<"$lines")")
	done
	if [ ${#bad[@]} -eq 0 ]; then
		r_pass "the gatherers logged no error or warning"
	else
		r_fail "the gatherers logged no error or warning" "${bad[@]}"
	fi
	bad=()
	for n in "${servers[@]}"; do
		grep -qE "$unreach" "$vdir/g-$n.err" &&
			grep -qE "aggregator $addr: connected again" "$vdir/g-$n.err" ||
			bad+=("gatherer $n: $(grep -c "aggregator $addr" "$vdir/g-$n.err") lines about the aggregator")
	done
	if [ ${#bad[@]} -eq 0 ]; then
		r_pass "each gatherer said the receiver was unreachable, then back"
	else
		r_fail "each gatherer said the receiver was unreachable, then back" "${bad[@]}"
	fi
	# The receiver accepted every frame (a gatherer killed mid-frame or
	# before its HELLO is the only excuse for a dropped connection).
	local drops
	drops=$(cat "$vdir"/d*.err | grep 'dropping connection' |
		grep -vE 'connection closed (mid-frame|before HELLO)')
	if [ -z "$drops" ]; then
		r_pass "the receiver accepted every frame"
	else
		r_fail "the receiver accepted every frame" "$(head -n 10 <<<"$drops")"
	fi
	echo "done $((($(now_us) - ${t_v0%.*}${t_v0#*.}) / 1000)) ms" >"$vdir/done"
}

# ------------------------------------------------------------------ main

replay() { # FILE: results of one version through t_pass/t_fail
	local line name="" det=()
	while IFS= read -r line; do
		case $line in
		"ok - "* | "FAIL - "*)
			[ -n "$name" ] && t_fail "$name" "${det[@]}"
			name=""
			det=()
			if [ "${line#ok - }" != "$line" ]; then
				t_pass "${line#ok - }"
			else
				name=${line#FAIL - }
			fi
			;;
		"  "*) det+=("${line#  }") ;;
		"# "*) echo "$line" ;;
		esac
	done <"$1"
	[ -n "$name" ] && t_fail "$name" "${det[@]}"
	return 0
}

if "${checker[@]}" --self-test >"$tmp/selftest.out" 2>&1; then
	t_pass "gatherer_check.py --self-test"
else
	t_fail "gatherer_check.py --self-test" "$(grep -v '^ok' "$tmp/selftest.out")"
fi

running_jobs=0
for v in "${versions[@]}"; do
	mkdir -p "$tmp/$v"
	: >"$tmp/$v/results"
	(
		t_v0=$EPOCHREALTIME
		run_version "$v"
	) >"$tmp/$v/shell.log" 2>&1 &
	vpids+=("$!")
	running_jobs=$((running_jobs + 1))
	if [ "$running_jobs" -ge "$jobs" ]; then
		wait -n
		running_jobs=$((running_jobs - 1))
	fi
done
for p in "${vpids[@]}"; do
	wait "$p" 2>/dev/null
done

for v in "${versions[@]}"; do
	replay "$tmp/$v/results"
	if [ -f "$tmp/$v/done" ]; then
		echo "# [$v] $(cat "$tmp/$v/done")"
	elif ! grep -q '^FAIL' "$tmp/$v/results"; then
		t_fail "[$v] the run finished" "$(tail -n 20 "$tmp/$v/shell.log")"
	fi
	if [ -n "${LH_GATHERER_KEEP:-}" ]; then
		mkdir -p "$LH_GATHERER_KEEP"
		cp -r "$tmp/$v" "$LH_GATHERER_KEEP/"
	fi
done
t_end=$EPOCHREALTIME
echo "# total $(((${t_end%.*}${t_end#*.} - ${t_start%.*}${t_start#*.}) / 1000)) ms, ${#versions[@]} versions, $jobs at a time"
t_summary
