# shellcheck shell=bash
# Helpers of the integration tests that run daemons on the wall clock
# against a running simulator (it_aggregator.sh, it_relay.sh).  Sourced
# after dumplib.sh; they use its $tmp and pids, and the caller's
# $interval, $faults, $t_start, $R (the simulator's root), sim (its
# command) and abort().
# shellcheck disable=SC2154 # those are set by the caller, after sourcing

now_us() {
	local t=$EPOCHREALTIME
	echo $((${t%.*} * 1000000 + 10#${t#*.}))
}

sleep_until_us() {
	local d=$(($1 - $(now_us)))
	[ "$d" -gt 0 ] && sleep "$((d / 1000000)).$(printf '%06d' $((d % 1000000)))"
	return 0
}

# at_boundary MS: sleep until MS milliseconds after the next sweep boundary.
at_boundary() {
	local i=$((interval * 1000000))
	sleep_until_us $((($(now_us) / i + 1) * i + $1 * 1000))
}

# stamp: every line of stdin, prefixed with the time it was read.
stamp() {
	local l
	while IFS= read -r l; do
		printf '%s %s\n' "$EPOCHREALTIME" "$l"
	done
}

# fault LABEL START [EXCLUDE]: record a fault window ending now.
fault() {
	echo "$1 $2 $EPOCHREALTIME ${3:-1}" >>"$faults"
	awk -v a="$t_start" -v b="$2" -v c="$EPOCHREALTIME" -v l="$1" \
		'BEGIN { printf "# %6.1f - %6.1f s: %s\n", b - a, c - a, l }' >>"$tmp/timeline"
}

wait_lines() { # FILE N SECONDS: until FILE has more than N lines
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[ "$(wc -l 2>/dev/null <"$1" || echo 0)" -gt "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

nevents() { wc -l 2>/dev/null <"$R/events.jsonl" || echo 0; }

# ev LABEL TYPE ARGS...: queue a simulator event; the fault ends once the
# simulator applied it.
ev() {
	local label=$1 t0=$EPOCHREALTIME n
	shift
	n=$(nevents)
	"${sim[@]}" event --root "$R" "$@" >>"$tmp/sim-events.log" 2>&1 ||
		abort "simulator event $*" "$(tail -n 3 "$tmp/sim-events.log")"
	wait_lines "$R/events.jsonl" "$n" 5 || abort "the simulator applied $*"
	fault "$label" "$t0"
}

# forget PID: a process that is gone (waited for) is never signalled again.
forget() {
	local p keep=()
	for p in "${pids[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	pids=("${keep[@]}")
}

# term PID WHAT: SIGTERM; true if it exited 0 within 5 s (term_msg says).
term() {
	local p=$1 i rc
	kill -TERM "$p" 2>/dev/null || { term_msg="$2 was not running"; return 1; }
	for ((i = 0; i < 50; i++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$p" 2>/dev/null; then
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		forget "$p"
		term_msg="$2 still running 5 s after SIGTERM"
		return 1
	fi
	wait "$p"
	rc=$?
	forget "$p"
	# shellcheck disable=SC2034 # term()'s answer, read by the caller
	term_msg="$2 exited with status $rc after SIGTERM"
	[ "$rc" -eq 0 ]
}

# wait_sweep LOG PATTERN SECONDS: a sweep line matching PATTERN after now.
wait_sweep() {
	local n
	n=$(wc -l <"$1")
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		tail -n +$((n + 1)) "$1" | grep -E "lharvestd: sweep [0-9]+: $2" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# drained LOG COUNT SECONDS: until LOG has COUNT more sweep lines (any
# number of gatherers) than now: after the simulator stopped, the last
# deltas have gone through once the aggregator closed a few more sweeps.
# At most SECONDS; what then went missing the totals show.
drained() {
	local n i
	n=$(wc -l <"$1")
	for ((i = 0; i < $3 * 10; i++)); do
		[ "$(tail -n +$((n + 1)) "$1" | grep -cE 'lharvestd: sweep [0-9]+: [0-9]+ gatherers')" -ge "$2" ] &&
			return 0
		sleep 0.1
	done
	return 1
}

replay() { # the checker's ok/FAIL lines through t_pass/t_fail
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
		*) det+=("$line") ;;
		esac
	done <"$1"
	[ -n "$name" ] && t_fail "$name" "${det[@]}"
	return 0
}

