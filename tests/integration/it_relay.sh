#!/usr/bin/env bash
# The relay end to end: a site-wide filesystem "site" (simulator scenario
# relay-site.json: 2 OSS and an MDS) is mounted by two clusters, alpha
# (clients on @o2ib and @tcp) and beta (@o2ib2, @tcp102), plus one client
# on @o2ib7 that no route takes.  Its three gatherers send to one lharvestd
# relay, which routes every client to its cluster's head: two lharvestd
# aggregators, each spoofing into its own real gmond.  Head alpha also has
# a local gatherer (filesystem "ahome" on server ossa) on the same port.
#
# While it runs: head beta SIGKILLed and restarted on its state_dir (the
# relay keeps beta's deltas meanwhile), then the relay itself SIGKILLed and
# restarted on its state_dir.  Checked:
#  - each head's gmond shows exactly its own cluster's hosts (and its
#    totals host), never another cluster's nor the unrouted client, with
#    values within 0.5% of the simulator's ground truth in every quiet
#    sample, never negative nor above the true rate + 0.5%;
#  - head alpha is unaffected by beta's outage: its quiet samples include
#    that window;
#  - nothing is lost or counted twice: the simulator is paused at step 0
#    until every gatherer has taken its baseline and stopped at the end;
#    the deltas each head logged (-v, every run summed) equal the truth of
#    its clients exactly, for both filesystems, and the relay's equal the
#    truth of every site client (the unrouted one included: it is counted,
#    just not sent on);
#  - the relay's own site-wide view (spoof = yes, a third gmond) shows
#    every site client, the unrouted one included, within 0.5%;
#  - the relay named the unrouted client; every daemon exits 0 on SIGTERM.
# Everything on 127.0.0.1; about 90 s.
#
#   bash it_relay.sh BUILD/daemon/lharvestd      (LH_SRCDIR = source tree)
#
# Environment: LH_RELAY_KEEP=DIR (copy every file of a failed run there).
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
# shellcheck source=agglib.sh
. "$(dirname "$0")/agglib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
sim=(python3 "$src/tests/sim/lustresim.py")
chk=(python3 "$src/tests/integration/aggregator_check.py")
gm=$src/tests/ganglia/gmond.sh
scenario=$src/tests/sim/scenarios/relay-site.json
command -v gmond >/dev/null || { echo "no gmond: apt-get install ganglia-monitor"; exit 1; }
. "$src/tests/ganglia/sanitizer.sh"

# The points of a sweep at which head beta and the relay are killed are
# random (LH_RELAY_SEED repeats a run's).
seed=${LH_RELAY_SEED:-$RANDOM}
RANDOM=$seed
echo "# seed $seed (LH_RELAY_SEED=$seed repeats these random points)"
interval=2
deadline=0.8       # the heads'
relay_deadline=0.4 # the relay's: well before the heads'
heads=(alpha beta)
views=(alpha beta site) # gmonds: the heads', and the relay's site-wide view
R=$tmp/sim
faults=$tmp/faults.txt
t_start=$EPOCHREALTIME
declare -A hpid=() hruns=() gm_udp=() gm_tcp=() ppid=() gpid=()
relay_pid=
relay_runs=0
sim_pid=

cleanup() {
	local p h
	for p in "${pids[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	for h in "${views[@]}"; do
		"$gm" stop "$tmp/gmond-$h" >/dev/null 2>&1
	done
	if [ -n "${LH_RELAY_KEEP:-}" ] && [ "$failed" -gt 0 ]; then
		mkdir -p "$LH_RELAY_KEEP" && cp -r "$tmp"/. "$LH_RELAY_KEEP"/ &&
			echo "# files of this run kept in $LH_RELAY_KEEP"
	fi
	rm -rf "$tmp"
}

abort() {
	t_fail "$@" "--- relay (last lines)" "$(tail -n 8 "$tmp"/relay*.log 2>/dev/null)" \
		"--- heads (last lines)" "$(tail -n 4 "$tmp"/head-*.log 2>/dev/null)"
	t_summary
	exit 1
}

# head_start NAME: its next run, on its config (fixed port from the first).
head_start() {
	local h=$1 n
	n=$((${hruns[$h]:-0} + 1))
	hruns[$h]=$n
	echo "== head $h run $n at $EPOCHREALTIME" >>"$tmp/head-$h-$n.log"
	"$bin" -d -v -f "$tmp/head-$h.conf" >>"$tmp/head-$h.out" 2> >(stamp >>"$tmp/head-$h-$n.log") &
	hpid[$h]=$!
	pids+=("$!")
	wait_grep "$tmp/head-$h-$n.log" 'listening on 127\.0\.0\.1:[0-9]+' 10 ||
		abort "head $h run $n started" "$(cat "$tmp/head-$h-$n.log")"
}

relay_start() {
	relay_runs=$((relay_runs + 1))
	echo "== relay run $relay_runs at $EPOCHREALTIME" >>"$tmp/relay$relay_runs.log"
	"$bin" -d -v -f "$tmp/relay.conf" >>"$tmp/relay.out" 2> >(stamp >>"$tmp/relay$relay_runs.log") &
	relay_pid=$!
	pids+=("$relay_pid")
	wait_grep "$tmp/relay$relay_runs.log" 'listening on 127\.0\.0\.1:[0-9]+' 10 ||
		abort "relay run $relay_runs started" "$(cat "$tmp/relay$relay_runs.log")"
}

g_start() { # NAME
	local n=$1
	echo "== started at $EPOCHREALTIME" >>"$tmp/g-$n.log"
	"$bin" -d -v -f "$tmp/$n.conf" >>"$tmp/g-$n.out" 2> >(stamp >>"$tmp/g-$n.log") &
	gpid[$n]=$!
	pids+=("$!")
}

listen_addr() { # LOG: the address a daemon listens on
	sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$1" | head -n 1
}

kill9() { # PID: SIGKILL, quietly
	{
		kill -KILL "$1"
		wait "$1"
	} 2>/dev/null
	forget "$1"
}

# ------------------------------------------------------------------ setup

# The simulator's step 0, on the wall clock; it is paused there until
# every gatherer has taken its baseline.
"${sim[@]}" run --root "$R" --scenario "$scenario" --clock wall --period 1 \
	--align --steps 1 --quiet >>"$tmp/sim.log" 2>&1 ||
	abort "the simulator wrote step 0" "$(tail "$tmp/sim.log")"
cp "$R/truth-latest.json" "$tmp/baseline.json"

make_keys "$tmp/keys" "it-relay-key-0123456789abcdef0123"
cat >"$tmp/hosts-alpha" <<'EOF'
# cluster alpha: o2ib and tcp
10.1.0.1	a01
10.1.0.2	a02
192.168.1.3	a03
EOF
cat >"$tmp/hosts-beta" <<'EOF'
# cluster beta: o2ib2 and tcp102
10.2.0.1	b01
10.2.0.2	b02
192.168.2.3	b03
EOF
{
	echo "# the relay's site-wide view: every client, the unrouted one too"
	grep -hv '^#' "$tmp/hosts-alpha" "$tmp/hosts-beta"
	printf '10.7.0.1\tx01\n'
} >"$tmp/hosts-site"
for h in "${views[@]}"; do
	for ((i = 0; i < 20; i++)); do
		u=$((20000 + RANDOM % 30000))
		if "$gm" start "$tmp/gmond-$h" "$u" $((u + 1)) >/dev/null 2>"$tmp/gmond-$h.err"; then
			gm_udp[$h]=$u
			gm_tcp[$h]=$((u + 1))
			break
		fi
	done
	[ -n "${gm_tcp[$h]:-}" ] || abort "gmond of $h started" "$(cat "$tmp/gmond-$h.err")"
	"${chk[@]}" poll --port "${gm_tcp[$h]}" --out "$tmp/samples-$h.jsonl" &
	ppid[$h]=$!
	pids+=("$!")
	printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' \
		"${gm_udp[$h]}" >"$tmp/send-$h.conf"
done
for h in "${heads[@]}"; do
	mkdir -m 700 "$tmp/state-$h"
	# Port 0 for the first run; the restart listens where the relay looks.
	for listen in 127.0.0.1:0 ""; do
		[ -n "$listen" ] || listen=$(listen_addr "$tmp/head-$h-1.log")
		cat >"$tmp/head-$h.conf" <<-EOF
			role = "aggregator"
			http { listen = "127.0.0.1:0" }
			interval = $interval
			listen = "$listen"
			secret_file = "$tmp/keys"
			state_dir = "$tmp/state-$h"
			name = "head-$h"
			deadline = $deadline
			hosts_file = "$tmp/hosts-$h"
			dns = no
			gmond_conf = "$tmp/send-$h.conf"
			metadata_ops = { "all" }
		EOF
		[ "${hruns[$h]:-0}" -gt 0 ] || head_start "$h"
	done
done
head_addr_alpha=$(listen_addr "$tmp/head-alpha-1.log")
head_addr_beta=$(listen_addr "$tmp/head-beta-1.log")

mkdir -m 700 "$tmp/state-relay"
for listen in 127.0.0.1:0 ""; do
	[ -n "$listen" ] || listen=$(listen_addr "$tmp/relay1.log")
	cat >"$tmp/relay.conf" <<-EOF
		role = "relay"
		http { listen = "127.0.0.1:0" }
		interval = $interval
		listen = "$listen"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-relay"
		name = "relay1"
		deadline = $relay_deadline
		spoof = yes
		hosts_file = "$tmp/hosts-site"
		dns = no
		gmond_conf = "$tmp/send-site.conf"
		metadata_ops = { "all" }
		route "alpha" {
			networks = { "o2ib", "tcp" }
			server = "$head_addr_alpha"
		}
		route "beta" {
			networks = { "o2ib2", "tcp[100-199]" }
			server = "$head_addr_beta"
		}
	EOF
	[ "$relay_runs" -gt 0 ] || relay_start
done
relay_addr=$(listen_addr "$tmp/relay1.log")

for n in mds1 oss1 oss2 ossa; do
	to=$relay_addr
	[ "$n" = ossa ] && to=$head_addr_alpha
	mkdir -m 700 "$tmp/state-$n"
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

# Every gatherer's baseline (its first sweep, all zeros) is with the relay
# or head alpha: then the simulator runs, on the second.
wait_sweep "$tmp/relay1.log" '3 gatherers' 20 || abort "the relay closed a sweep with its 3 gatherers"
wait_sweep "$tmp/head-alpha-1.log" '2 gatherers' 20 || abort "head alpha closed a sweep with the relay and ossa"
"${sim[@]}" run --root "$R" --steps 0 --quiet >>"$tmp/sim.log" 2>&1 &
sim_pid=$!
pids+=("$sim_pid")
# Steady state: every head sweep with its clients.
wait_sweep "$tmp/head-beta-1.log" '1 gatherers \(0 late\), 3 clients' 20 ||
	abort "head beta closed a sweep with its 3 clients" "$(grep sweep "$tmp/head-beta-1.log" | tail -n 4)"
fault startup "$t_start"
sleep 14

# ----------------------------------------------------------------- faults

# Head beta killed at a random point of a sweep, back 6 s later on the
# same port and state_dir: the relay keeps beta's deltas (coalesced) and
# sends them when it is back; alpha must not notice.
ms=$((RANDOM % (interval * 1000)))
at_boundary "$ms"
t1=$EPOCHREALTIME
kill9 "${hpid[beta]}"
echo "== SIGKILL at $EPOCHREALTIME ($ms ms into the sweep)" >>"$tmp/head-beta-1.log"
sleep 6
head_start beta
wait_sweep "$tmp/head-beta-2.log" '1 gatherers \(0 late\), 3 clients' 40 ||
	abort "head beta counted the relay's data again" "$(grep -E 'sweep|relay' "$tmp/head-beta-2.log" | tail -n 6)"
fault head-beta-kill "$t1"
sleep 12

# The relay killed at a random point of a sweep (before, while or after
# it closes and saves one), back 3 s later on its state_dir: the gatherers
# resend what it had not acknowledged, it resends what the heads had not.
ms=$((RANDOM % (interval * 1000)))
at_boundary "$ms"
t1=$EPOCHREALTIME
kill9 "$relay_pid"
echo "== SIGKILL at $EPOCHREALTIME ($ms ms into the sweep)" >>"$tmp/relay1.log"
sleep 3
relay_start
wait_sweep "$tmp/relay2.log" '3 gatherers \(0 late\)' 40 ||
	abort "the gatherers reported to the restarted relay" "$(grep -E 'sweep|connected' "$tmp/relay2.log" | tail -n 6)"
wait_sweep "$tmp/head-alpha-1.log" '2 gatherers \(0 late\), 5 clients' 20 ||
	abort "head alpha counted the restarted relay's data"
wait_sweep "$tmp/head-beta-2.log" '1 gatherers \(0 late\), 3 clients' 20 ||
	abort "head beta counted the restarted relay's data"
fault relay-kill "$t1"
sleep 14

# ------------------------------------------------------------------- stop

# The simulator stops; the last deltas go through.
kill -TERM "$sim_pid"
wait "$sim_pid"
forget "$sim_pid"
t1=$EPOCHREALTIME
# The relay's sweeps, then the heads' (which count what it forwarded).
drained "$tmp/relay$relay_runs.log" 3 30 || echo "# the relay closed fewer than 3 sweeps in 30 s"
for h in "${heads[@]}"; do
	drained "$tmp/head-$h-${hruns[$h]}.log" 2 30 || echo "# head $h closed fewer than 2 sweeps in 30 s"
done
bad=()
for n in mds1 oss1 oss2 ossa; do
	term "${gpid[$n]}" "gatherer $n" || bad+=("$term_msg")
done
term "$relay_pid" relay || bad+=("$term_msg")
for h in "${heads[@]}"; do
	term "${hpid[$h]}" "head $h" || bad+=("$term_msg")
done
if [ ${#bad[@]} -eq 0 ]; then
	t_pass "every gatherer, the relay and both heads exited 0 within 5 s of SIGTERM"
else
	t_fail "every gatherer, the relay and both heads exited 0 within 5 s of SIGTERM" "${bad[@]}"
fi
fault shutdown "$t1"
sleep 1.5
for h in "${views[@]}"; do
	kill -TERM "${ppid[$h]}"
	wait "${ppid[$h]}"
	forget "${ppid[$h]}"
done

# ------------------------------------------------------------------ check

# Values in each head's gmond.  Alpha's quiet samples include beta's
# outage (only the relay's restart is a fault for it).
# The relay's site-wide view (spoof = yes) has every site client, and
# beta's outage is not a fault for it either.
grep -v '^head-beta-kill ' "$faults" >"$tmp/faults-alpha"
cp "$faults" "$tmp/faults-beta"
cp "$tmp/faults-alpha" "$tmp/faults-site"
for h in "${views[@]}"; do
	logs=()
	case $h in
	site)
		for ((i = 1; i <= relay_runs; i++)); do logs+=(--agg-log "$tmp/relay$i.log"); done
		args=(--only-fs site --gatherers 3 --deadline "$relay_deadline")
		what="relay (site-wide view)"
		;;
	*)
		for ((i = 1; i <= ${hruns[$h]}; i++)); do logs+=(--agg-log "$tmp/head-$h-$i.log"); done
		args=(--only-mapped --gatherers "$([ "$h" = alpha ] && echo 2 || echo 1)" --deadline "$deadline")
		what="head $h"
		;;
	esac
	"${chk[@]}" check --truth "$R/truth.jsonl" --hosts "$tmp/hosts-$h" \
		--samples "$tmp/samples-$h.jsonl" --faults "$tmp/faults-$h" \
		"${logs[@]}" "${args[@]}" --interval "$interval" --metadata-ops all \
		--from "$t_start" >"$tmp/check-$h.out" 2>&1
	sed -e "s/^ok - /ok - $what: /" -e "s/^FAIL - /FAIL - $what: /" "$tmp/check-$h.out" >"$tmp/check-$h.lbl"
	replay "$tmp/check-$h.lbl"
done

# Nothing lost, nothing twice: every run's deltas against the truth.
{
	"${chk[@]}" totals --baseline "$tmp/baseline.json" --final "$R/truth-latest.json" \
		--fs site --hosts "$tmp/hosts-alpha" --label "head alpha" \
		--log "$tmp/head-alpha-1.log"
	"${chk[@]}" totals --baseline "$tmp/baseline.json" --final "$R/truth-latest.json" \
		--fs ahome --hosts "$tmp/hosts-alpha" --label "head alpha" \
		--log "$tmp/head-alpha-1.log"
	"${chk[@]}" totals --baseline "$tmp/baseline.json" --final "$R/truth-latest.json" \
		--fs site --hosts "$tmp/hosts-beta" --label "head beta (killed and restarted)" \
		--log "$tmp/head-beta-1.log" --log "$tmp/head-beta-2.log"
	"${chk[@]}" totals --baseline "$tmp/baseline.json" --final "$R/truth-latest.json" \
		--fs site --label "relay (killed and restarted; every client)" \
		--log "$tmp/relay1.log" --log "$tmp/relay2.log"
} >"$tmp/totals.out" 2>&1
replay "$tmp/totals.out"

if grep -q 'clients on networks no route takes (10\.7\.0\.1@o2ib7' "$tmp/relay1.log"; then
	t_pass "the relay named the client no route takes"
else
	t_fail "the relay named the client no route takes" "$(grep -i route "$tmp/relay1.log" | head -n 5)"
fi
lines=$(cat "$tmp"/relay*.log "$tmp"/head-*.log | grep -v ' == ' |
	grep -iE 'error|warn|cannot|failed|out of memory|dropping|damaged|refused|differs' |
	grep -vE 'route (alpha|beta) 127\.0\.0\.1:[0-9]+: (Connection refused|Connection reset by peer|connection closed by the aggregator|Broken pipe|write failed)(, retrying)?$' |
	grep -vE '(peer |gatherer |relay )[a-z0-9]+ (\()?127\.0\.0\.1:[0-9]+\)?: connection (reset|closed) without BYE$' || true)
if [ -z "$lines" ]; then
	t_pass "the relay and the heads logged nothing unexpected"
else
	t_fail "the relay and the heads logged nothing unexpected" "$(head -n 12 <<<"$lines")"
fi
cat "$tmp/timeline" 2>/dev/null
t_summary
