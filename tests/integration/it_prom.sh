#!/usr/bin/env bash
# /metrics end to end, read by Debian's prometheus (issue 17): the
# simulator (tests/sim/lustresim.py, scenario aggregator-site.json), one
# lharvestd gatherer per simulated server sweeping every second, one
# aggregator serving /metrics on 127.0.0.1, and a private Prometheus
# (its own config, a temporary TSDB, a free port) scraping it every
# second.  Everything is asked of Prometheus through its HTTP query API:
#
# 1. Rates.  The simulator on the wall clock; after a window of steady
#    counting, rate() of every host's bytes over the window against the
#    true rate (what the simulator wrote over the time its files say it
#    wrote it in) within the quantisation docs/api.md states.
# 2. Exactness.  The simulator stepped by hand (a fake clock: nothing
#    changes between steps, and each step is counted before the next):
#    `x @ t1 - x @ t0` of every counter of every (host, fs) and every
#    filesystem equals what the simulator counted between its steps,
#    exactly, across an export reset (of a client idle then, so that no
#    file loses what it did) and an aggregator restart on its state_dir.
#    No counter ever went back (resets() = 0 over the whole run).
# 3. The page: promtool check metrics on it; ten concurrent scrapes all
#    answered, sharing one page written once for the sweep; the Grafana
#    dashboard's metric names, units and every query, evaluated by this
#    Prometheus (dashboard_check.py).
# 4. A reload to one family and a series cap: the page follows, the
#    series left out are counted, and one line says so, once.
#
# About 55 s.  bash it_prom.sh BUILD/daemon/lharvestd (LH_SRCDIR set).
# Environment: LH_PROM_KEEP=DIR keeps the files of a failed run.
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
# shellcheck source=agglib.sh
. "$(dirname "$0")/agglib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
command -v prometheus >/dev/null || { echo "no prometheus: apt-get install prometheus"; exit 1; }
command -v promtool >/dev/null || { echo "no promtool: apt-get install prometheus"; exit 1; }
sim=(python3 "$src/tests/sim/lustresim.py")
chk=(python3 "$src/tests/integration/prom_check.py")
scenario=$src/tests/sim/scenarios/aggregator-site.json

interval=1
window=20
servers=(mds1 oss1 oss2)
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
	if [ -n "${LH_PROM_KEEP:-}" ] && [ "$failed" -gt 0 ]; then
		mkdir -p "$LH_PROM_KEEP" && cp -r "$tmp"/. "$LH_PROM_KEEP"/ &&
			echo "# files of this run kept in $LH_PROM_KEEP"
	fi
	rm -rf "$tmp"
}

abort() {
	t_fail "$@" "--- aggregator (last lines)" "$(tail -n 8 "$tmp"/agg*.log 2>/dev/null)"
	t_summary
	exit 1
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

agg_start() {
	agg_runs=$((agg_runs + 1))
	"$bin" -d -v -f "$tmp/agg.conf" >>"$tmp/agg.out" 2>"$tmp/agg$agg_runs.log" &
	agg_pid=$!
	pids+=("$agg_pid")
	wait_grep "$tmp/agg$agg_runs.log" "http: listening on 127\.0\.0\.1:$http_port" 10 ||
		abort "aggregator run $agg_runs serves HTTP" "$(cat "$tmp/agg$agg_runs.log")"
}

g_start() { # NAME ROOT STATE
	cat >"$tmp/$1.conf" <<-EOF
		role = "gatherer"
		interval = $interval
		lustre_root = "$2/$1"
		server = "$addr"
		secret_file = "$tmp/keys"
		state_dir = "$3"
		name = "$1"
	EOF
	"$bin" -d -f "$tmp/$1.conf" >>"$tmp/g-$1.out" 2>>"$tmp/g-$1.log" &
	gpid[$1]=$!
	pids+=("$!")
}

g_stop() {
	local n
	for n in "${servers[@]}"; do
		term "${gpid[$n]}" "gatherer $n" || t_fail "gatherer $n stops" "$term_msg"
	done
}

# counted: every gatherer has read the tree as it is now and the
# aggregator has counted it (two sweeps of all three, on time, closed
# after now: the second began after now).
counted() {
	local log=$tmp/agg$agg_runs.log
	wait_sweep "$log" '3 gatherers \(0 late\)' 10 &&
		wait_sweep "$log" '3 gatherers \(0 late\)' 10
}

# scraped_after T: the time of a scrape of the aggregator after T (s).
scraped_after() {
	local i
	for ((i = 0; i < 100; i++)); do
		"${chk[@]}" scraped "$purl" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# plateau: the counters are still (the simulator waits for us) and
# Prometheus has them: prints the time of a scrape that has them.
plateau() {
	local t=$EPOCHREALTIME
	scraped_after "$t" || abort "Prometheus scraped the aggregator" "$(tail -n 5 "$tmp/prom.log")"
}

step() { # one simulator step on the fake clock, counted
	"${sim[@]}" run --root "$Rf" --steps 1 --quiet >>"$tmp/sim-f.log" 2>&1 ||
		abort "simulator step" "$(tail -n 3 "$tmp/sim-f.log")"
	k=$((k + 1))
	counted || abort "step $k counted" "$(grep sweep "$tmp/agg$agg_runs.log" | tail -n 3)"
}

# ------------------------------------------------------------------ setup

make_keys "$tmp/keys" "it-prom-key-0123456789abcdef0123"
cat >"$tmp/hosts" <<'EOF'
# it_prom.sh: every client of aggregator-site.json (node05 is multi-rail)
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
http_port=$(free_port)
prom_port=$(free_port)
purl=http://127.0.0.1:$prom_port
mkdir -m 700 "$tmp/agg-state"
agg_conf() { # LISTEN
	cat >"$tmp/agg.conf" <<-EOF
		role = "aggregator"
		interval = $interval
		deadline = 0.5
		listen = "$1"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/agg-state"
		name = "agg"
		hosts_file = "$tmp/hosts"
		dns = no
		# No gmond: what is tested is /metrics.
		gmond_conf = "$tmp/no-gmond.conf"
		http { listen = "127.0.0.1:$http_port" }
		prometheus { metadata_ops = { "open", "getattr" } }
	EOF
}
agg_conf 127.0.0.1:0
agg_start
addr=$(grep -v 'http:' "$tmp/agg1.log" | sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' | head -n 1)
[ -n "$addr" ] || abort "the aggregator's listener address" "$(cat "$tmp/agg1.log")"
agg_conf "$addr" # a restart listens where the gatherers look

cat >"$tmp/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: lharvestd
    static_configs:
      - targets: ["127.0.0.1:$http_port"]
EOF
prometheus --config.file="$tmp/prom.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$prom_port" --log.level=warn \
	>"$tmp/prom.log" 2>&1 &
pids+=("$!")
for ((i = 0; i < 300; i++)); do
	curl -sf "$purl/-/ready" >/dev/null 2>&1 && break
	sleep 0.1
done
curl -sf "$purl/-/ready" >/dev/null 2>&1 || abort "Prometheus is ready" "$(tail -n 5 "$tmp/prom.log")"
t_pass "Prometheus scrapes 127.0.0.1:$http_port every second"

# ------------------------------------------------- 1. rates, wall clock

Rw=$tmp/sim-wall
"${sim[@]}" run --root "$Rw" --scenario "$scenario" --clock wall --period 1 \
	--align --steps 0 --quiet >>"$tmp/sim-w.log" 2>&1 &
simw=$!
pids+=("$simw")
R=$Rw
wait_grep "$Rw/truth.jsonl" '"step": 0' 10 || abort "the simulator wrote its first step" "$(tail "$tmp/sim-w.log")"
for n in "${servers[@]}"; do
	mkdir -m 700 "$tmp/state-$n"
	g_start "$n" "$Rw" "$tmp/state-$n"
done
# Every gatherer's first sweep is a baseline; the counting is steady from
# the first sweep after it with all 13 (filesystem, NID) pairs.
wait_sweep "$tmp/agg1.log" '3 gatherers \(0 late\), 13 clients' 20 ||
	abort "the aggregator counted all 3 gatherers and 13 clients" "$(grep sweep "$tmp/agg1.log" | tail -n 3)"
t_steady=$EPOCHREALTIME
sleep_until_us $(($(now_us) + (window + 2) * 1000000))
t_end=$(scraped_after "$EPOCHREALTIME") || abort "Prometheus scraped after the window"
t_end=$(awk -v t="$t_end" 'BEGIN { printf "%.3f", t - 0.5 }')
"${chk[@]}" rate "$purl" "$Rw/truth.jsonl" "$tmp/hosts" "$t_end" "$window" "$interval" >"$tmp/rate.out" 2>&1
replay "$tmp/rate.out"
awk -v a="$t_steady" -v b="$t_end" 'BEGIN { if (b - 20 < a) exit 1 }' ||
	t_fail "the rate window began after the counting was steady"

term "$simw" "the wall-clock simulator" || true
g_stop

# ------------------------------------------- 2. exactness, fake clock

Rf=$tmp/sim-fake
k=0
"${sim[@]}" run --root "$Rf" --scenario "$scenario" --fresh --clock fake \
	--start-time "$(date +%s)" --steps 1 --quiet >>"$tmp/sim-f.log" 2>&1 ||
	abort "the fake-clock simulator's step 0" "$(tail -n 3 "$tmp/sim-f.log")"
R=$Rf
for n in "${servers[@]}"; do
	mkdir -m 700 "$tmp/state-f-$n"
	g_start "$n" "$Rf" "$tmp/state-f-$n"
done
counted || abort "the gatherers read the new tree (their baseline)"
step # 1: every host moves
step # 2
t0=$(plateau)
k0=$k
step # 3
"${sim[@]}" event --root "$Rf" client_idle --nid 10.1.0.3@o2ib >>"$tmp/sim-f.log" 2>&1
step # 4: node03 idle, its last counts read
"${sim[@]}" event --root "$Rf" reset_export --target scratch-OST0002 \
	--nid 10.1.0.3@o2ib >>"$tmp/sim-f.log" 2>&1
step # 5: its export on scratch-OST0002 zeroed
"${sim[@]}" event --root "$Rf" client_return --nid 10.1.0.3@o2ib >>"$tmp/sim-f.log" 2>&1
step # 6
grep -q '"reset_export"' "$Rf/events.jsonl" ||
	t_fail "the simulator applied the export reset" "$(tail -n 3 "$Rf/events.jsonl")"
# The aggregator restarted on its state_dir (and its counters file).
term "$agg_pid" "aggregator run $agg_runs" || t_fail "the aggregator stops" "$term_msg"
agg_start
step # 7: counted by the restarted aggregator (gatherers reconnected)
step # 8
t1=$(plateau)
k1=$k
"${chk[@]}" exact "$purl" "$Rf/truth.jsonl" "$tmp/hosts" "$t0" "$k0" "$t1" "$k1" >"$tmp/exact.out" 2>&1
replay "$tmp/exact.out"
span=$(awk -v a="$t_start" -v b="$t1" 'BEGIN { printf "%d", b - a + 5 }')
"${chk[@]}" resets "$purl" "$t1" "$span" >"$tmp/resets.out" 2>&1
replay "$tmp/resets.out"

# ------------------------------------------------------------ 3. the page

curl -sf "http://127.0.0.1:$http_port/metrics" >"$tmp/metrics.txt" ||
	t_fail "GET /metrics"
if promtool check metrics <"$tmp/metrics.txt" >"$tmp/promtool.out" 2>&1; then
	t_pass "promtool check metrics: clean ($(grep -vc '^#' "$tmp/metrics.txt") samples)"
else
	t_fail "promtool check metrics" "$(head -n 10 "$tmp/promtool.out")"
fi
# Ten at once: every answer has the same counters (the page of the last
# sweep, written once for it and shared).
step # 9: a new page to write
for i in $(seq 10); do
	curl -sf "http://127.0.0.1:$http_port/metrics" >"$tmp/c$i.txt" &
	cpids[i]=$!
done
ok=0
for i in $(seq 10); do wait "${cpids[i]}" && ok=$((ok + 1)); done
t_check "ten concurrent scrapes are all answered ($ok)" test "$ok" -eq 10
for i in $(seq 10); do grep '^lustre_' "$tmp/c$i.txt" | md5sum; done | sort -u >"$tmp/sums"
t_check "they show the same counters" test "$(wc -l <"$tmp/sums")" -eq 1
sweep=$(grep -o 'prometheus: page of sweep [0-9]*' "$tmp/agg$agg_runs.log" | tail -n 1)
t_check "the page was written once for that sweep ($sweep)" \
	test "$(grep -c "$sweep:" "$tmp/agg$agg_runs.log")" -eq 1
python3 "$src/tests/integration/dashboard_check.py" "$src/contrib/grafana-dashboard.json" \
	"$tmp/metrics.txt" "$purl" >"$tmp/dash.out" 2>&1
replay "$tmp/dash.out"

# ------------------------------------------------------- 4. a reload

sed -i 's/^prometheus {.*/prometheus { families = { "bytes" } max_series = 6 }/' "$tmp/agg.conf"
kill -HUP "$agg_pid"
wait_grep "$tmp/agg$agg_runs.log" 'configuration reloaded from' 10 ||
	t_fail "the aggregator reloaded" "$(tail -n 3 "$tmp/agg$agg_runs.log")"
for ((i = 0; i < 2; i++)); do
	curl -sf "http://127.0.0.1:$http_port/metrics" >"$tmp/metrics2.txt" ||
		t_fail "GET /metrics after the reload"
done
# 12 (host, fs) rows x 2 bytes series: 3 rows shown, 9 left out.
t_check "after the reload: bytes only, 3 rows of 2 series" 	test "$(grep -c '^lustre_client_' "$tmp/metrics2.txt")" -eq 6
t_check "the series left out are counted (18)" 	grep -qx 'lharvestd_prometheus_series_dropped 18' "$tmp/metrics2.txt"
t_check "one line says max_series was reached" 	test "$(grep -c 'prometheus: max_series (6) reached: 18 per-host series left out' "$tmp/agg$agg_runs.log")" -eq 1

g_stop
if term "$agg_pid" "aggregator run $agg_runs"; then
	t_pass "the aggregator exits 0 on SIGTERM"
else
	t_fail "the aggregator exits 0 on SIGTERM" "$term_msg"
fi
if grep -E 'out of memory|prometheus: .*(cannot|failed)' "$tmp"/agg*.log >"$tmp/complaints"; then
	t_fail "no complaint of the Prometheus output in the log" "$(head -n 5 "$tmp/complaints")"
else
	t_pass "no complaint of the Prometheus output in the log"
fi
t_summary
