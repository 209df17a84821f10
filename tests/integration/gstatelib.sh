# shellcheck shell=bash
# What the gatherer-state tests share (it_gatherer_state.sh,
# it_state_journal.sh, it_gatherer_runs.sh): gatherers of a simulated
# tree ($R) into one lharvest-dump (d1, started by the test), and the
# simulator's truth as the judge.  Source after dumplib.sh; it uses its
# $tmp, pids and $dump_addr (start_dump), and the caller's $bin.  The
# caller uses sim and gp.
# shellcheck disable=SC2154,SC2034 # shared with the caller, both ways

src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
sim=(python3 "$src/tests/sim/lustresim.py")
checker=(python3 "$src/tests/integration/gatherer_check.py")
R=$tmp/sim
declare -A gp=() # NAME -> the pid of its gatherer

gatherer_conf() { # gatherer_conf NAME: a configuration for server NAME
	cat >"$tmp/$1.conf" <<EOC
role = "gatherer"
interval = 1
lustre_root = "$R/$1"
server = "$dump_addr"
secret_file = "$tmp/keys"
state_dir = "$tmp/st-$1"
name = "$1"
EOC
}

start_g() { # start_g NAME [FLAG...]: a gatherer in the foreground, in the background
	local n=$1
	shift
	"$bin" -d "$@" -f "$tmp/$n.conf" 2>>"$tmp/g-$n.err" &
	gp[$n]=$!
	pids+=($!)
}

# most FIELD NAME: the highest FIELD (sweep, batch) of what NAME delivered
# so far, 0 if nothing.
most() {
	python3 - "$1" "$2" "$tmp"/d*.out <<'EOP'
import json, sys
field, sender, best = sys.argv[1], sys.argv[2], 0
for f in sys.argv[3:]:
    for line in open(f):
        if line.endswith("\n"):
            r = json.loads(line)
            if r["sender"] == sender:
                best = max(best, r[field])
print(best)
EOP
}
max_sweep() { most sweep "$1"; }
max_batch() { most batch "$1"; }

# wait_sweep NAME...: until each has delivered a sweep that started after
# now (at most 20 s).
wait_sweep() {
	local want=$(($(date +%s) + 1)) n i
	for n in "$@"; do
		for ((i = 0; i < 200; i++)); do
			[ "$(max_sweep "$n")" -ge "$want" ] && break
			sleep 0.1
		done
		[ "$(max_sweep "$n")" -ge "$want" ] || return 1
	done
}

# baseline_then_move NAME...: once each has delivered its baseline, the
# truth of that moment kept as $tmp/baseline.json, and the simulator
# stepping every 0.4 s on the wall clock in the background ($simpid).
# Without a baseline within wait_sweep's limit the test fails and stops.
baseline_then_move() {
	if ! wait_sweep "$@"; then
		t_fail "the gatherers delivered their baseline" "$(tail -5 "$tmp"/g-*.err)"
		t_summary
		exit 1
	fi
	cp "$R/truth-latest.json" "$tmp/baseline.json"
	"${sim[@]}" run --root "$R" --clock wall --period 0.4 --steps 0 --quiet \
		>>"$tmp/sim.log" 2>&1 &
	simpid=$!
	pids+=("$simpid")
}

# totals_exact NAME: every total of d1's dump is the simulator's since
# $tmp/baseline.json, waited for (until the resent and last batches are
# delivered, at most 20 s) and judged on the last try; a test named NAME.
totals_exact() {
	local i ok=1
	for ((i = 0; i < 100; i++)); do
		if "${checker[@]}" --baseline "$tmp/baseline.json" \
			--final "$R/truth-latest.json" --dump "$tmp/d1.out" \
			>"$tmp/check" 2>&1; then
			ok=0
			break
		fi
		sleep 0.2
	done
	if [ "$ok" = 0 ]; then
		t_pass "$1"
	else
		t_fail "$1" "$(head -30 "$tmp/check")"
	fi
}
