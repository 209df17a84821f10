#!/usr/bin/env bash
# The JSON API (docs/api.md section 3) and `lharvest status/host` through
# a real aggregator fed by the simulator and three gatherers (apilib.sh).
# Checked: the totals of every (host, filesystem) grow by exactly what
# the simulator wrote between two quiet moments (the simulator stopped
# and every delta through), per counter and per metadata operation;
# rows not in the last sweep show "current": false and rates 0; the
# listings are in the true order; every error answer (status, envelope,
# message); every example of docs/api.md has the shape of the live answer
# (LH_API_REGEN=1 writes them instead); a relay's /v1/routes and its
# answers before the first sweep; lharvest status/host with and without
# --json, an unknown host, and the one line when the daemon is gone.
# About 40 s.
#
#   bash it_api.sh BUILD/daemon/lharvestd      (LH_SRCDIR = source tree)
set -uo pipefail
bin=$1
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
# shellcheck source=agglib.sh
. "$(dirname "$0")/agglib.sh"
# shellcheck source=apilib.sh
. "$(dirname "$0")/apilib.sh"
# libconfuse memory libganglia cannot free; only the sanitizer build.
# shellcheck source=../ganglia/sanitizer.sh
. "$src/tests/ganglia/sanitizer.sh"

abort() {
	t_fail "$@" "--- aggregator (last lines)" "$(tail -n 8 "$tmp"/agg.log 2>/dev/null)"
	t_summary
	exit 1
}

# check_py ARGS...: an apicheck.py check, its lines as results.
check_py() {
	"${api[@]}" "$@" >"$tmp/check.out" 2>&1
	replay "$tmp/check.out"
}

# py FILE... <<< PROGRAM: true when the Python program exits 0.
py() {
	python3 -c "$(cat)" "$@"
}

# ----------------------------------------------------- 1. while it runs

api_start
api_get /v1/status "$tmp/status.json" || abort "GET /v1/status" "$(cat "$tmp/status.json")"
t_check "/v1/status: an aggregator named agg, its last sweep, three gatherers" py "$tmp/status.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
d = a["data"]
sys.exit(not (a["success"] and a["message"] == "" and d["role"] == "aggregator"
              and d["name"] == "agg" and d["last_sweep"]["id"] % 2 == 0
              and d["gatherers"]["connected"] == 3 and d["gatherers"]["expected"] == 3
              and d["filesystems"] == ["home", "scratch"] and d["interval_s"] == 2))
PY
if [ -n "${LH_API_REGEN:-}" ]; then
	check_py doc "$src/docs/api.md" "$base" --write
else
	# /v1/routes's example is a relay's: checked in part 4.
	sed '/<!-- example: \/v1\/routes -->/,/^```$/d' "$src/docs/api.md" >"$tmp/api-agg.md"
	check_py doc "$tmp/api-agg.md" "$base"
fi
check_py errors "$base"

# lharvest against the live aggregator.
"$lharvest" -H "$http" status --json >"$tmp/l-status.json" 2>"$tmp/l.err"
t_check "lharvest status --json: the data of /v1/status" py "$tmp/l-status.json" "$tmp/status.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["data"]
sys.exit(not (set(a) == set(b) and a["name"] == "agg" and a["role"] == "aggregator"))
PY
"$lharvest" -H "$http" status >"$tmp/l-status.txt" 2>&1
t_check "lharvest status: the daemon, its sweep and every gatherer" \
	bash -c "grep -q '^lharvestd agg: aggregator ' '$tmp/l-status.txt' && grep -q '^last sweep: ' '$tmp/l-status.txt' &&
		[ \$(grep -cE '^  (mds1|oss1|oss2) .* connected ' '$tmp/l-status.txt') -eq 3 ]"
"$lharvest" -H "$http" host node05 --json >"$tmp/l-host.json" 2>"$tmp/l.err"
t_check "lharvest host node05 --json: both filesystems with their metadata operations" py "$tmp/l-host.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fs = {f["fs"]: f for f in d["filesystems"]}
sys.exit(not (d["host"] == "node05" and set(fs) == {"home", "scratch"}
              and fs["scratch"]["mdops"]["open"]["total"] > 0))
PY
"$lharvest" -H "$http" host node05 >"$tmp/l-host.txt" 2>&1
t_check "lharvest host node05: one line of rates and one of totals per filesystem" \
	bash -c "grep -qE '^scratch +now +[0-9.]+ [KMG]iB/s' '$tmp/l-host.txt' && grep -qE '^ +total +[0-9.]+ [KMGT]iB' '$tmp/l-host.txt'"
# Found from a configuration's http section: its TCP address, or its
# unix socket when listen is off; and -S.
printf 'role = "aggregator"\nhttp { listen = "%s" }\n' "$http" >"$tmp/cli-tcp.conf"
printf 'role = "aggregator"\nhttp {\n listen = ""\n socket = "%s"\n}\n' "$tmp/http.sock" >"$tmp/cli-sock.conf"
for how in "-f $tmp/cli-tcp.conf" "-f $tmp/cli-sock.conf" "-S $tmp/http.sock"; do
	# shellcheck disable=SC2086 # $how is two words on purpose
	"$lharvest" $how status --json >"$tmp/l-how.json" 2>"$tmp/l.err"
	t_check "lharvest ${how%% *} ${how##*/} status --json: answered" \
		py "$tmp/l-how.json" <<<'import json, sys; sys.exit(json.load(open(sys.argv[1]))["name"] != "agg")'
done
"$lharvest" -H "$http" host node99 >"$tmp/l-99.out" 2>&1
rc=$?
t_check "lharvest host node99: status 1 and the daemon's message" \
	bash -c "[ $rc -eq 1 ] && [ \"\$(cat '$tmp/l-99.out')\" = 'lharvest: unknown host \"node99\"' ]"

# ------------------------------ 2. the counters against the truth, exactly

# Two quiet moments: the simulator stopped, every delta through (three
# more sweeps), and between them a stretch of running.
sim_stop
s0=$(sim_last)
drained "$agg_log" 3 30 || abort "three sweeps closed after the simulator stopped"
api_get "/v1/hosts?sort=host&limit=10000" "$tmp/t0.json" || abort "GET /v1/hosts (t0)" "$(cat "$tmp/t0.json")"
api_get /v1/hosts/node05 "$tmp/h0.json" || abort "GET /v1/hosts/node05 (t0)"
sim_run
# The listings of three sweeps while it runs (a gatherer late on a busy
# machine makes one sweep's rates partial: one of three must be right).
queries=("fs=scratch&sort=read" "fs=home&sort=read" "fs=scratch&sort=mds_ops" "sort=oss_ops")
for i in 1 2 3; do
	wait_sweep "$agg_log" '3 gatherers' 20 || abort "sweep $i closed after the simulator resumed"
	[ "$i" -eq 1 ] && continue # the first holds the simulator's pause
	for q in "${queries[@]}"; do
		api_get "/v1/hosts?$q" "$tmp/live-${q//[&=]/_}-$i.json" || abort "GET /v1/hosts?$q"
	done
done
sim_stop
s1=$(sim_last)
drained "$agg_log" 3 30 || abort "three sweeps closed after the simulator stopped again"
api_get "/v1/hosts?sort=host&limit=10000" "$tmp/t1.json" || abort "GET /v1/hosts (t1)"
api_get /v1/hosts/node05 "$tmp/h1.json" || abort "GET /v1/hosts/node05 (t1)"
check_py totals "$tmp/t0.json" "$tmp/t1.json" "$s0" "$s1" --truth "$R/truth.jsonl" \
	--hosts "$tmp/hosts" --host-t0 "$tmp/h0.json" --host-t1 "$tmp/h1.json"
for q in "${queries[@]}"; do
	fs=$(sed -n 's/.*fs=\([a-z]*\).*/\1/p' <<<"$q")
	check_py order "$tmp/live-${q//[&=]/_}-2.json" "$tmp/live-${q//[&=]/_}-3.json" \
		"$s0" "$s1" --truth "$R/truth.jsonl" \
		--hosts "$tmp/hosts" ${fs:+--fs "$fs"} --sort "${q##*sort=}"
done
# Which rows, not their values: a sweep may close between the two answers
# (on a busy machine, a late gatherer's last deltas).
api_get "/v1/hosts?limit=3&sort=host" "$tmp/lim.json"
t_check "/v1/hosts?limit=3&sort=host: the first three rows by name, and how many matched" \
	py "$tmp/lim.json" "$tmp/t1.json" <<'PY'
import json, sys
d, full = (json.load(open(p))["data"] for p in sys.argv[1:3])
key = lambda rows: [(r["host"], r["fs"]) for r in rows]
sys.exit(not (key(d["hosts"]) == key(full["hosts"])[:3] and d["matched"] == len(full["hosts"]) and d["limit"] == 3))
PY

# ----------------------------------------------- 3. the daemon gone

term "$agg_pid" aggregator || t_fail "the aggregator exited 0 on SIGTERM" "$term_msg"
"$lharvest" -H "$http" status >"$tmp/gone.out" 2>&1
rc=$?
t_check "lharvest status with the daemon gone: status 1, one line" \
	bash -c "[ $rc -eq 1 ] && [ \"\$(cat '$tmp/gone.out')\" = 'lharvest: cannot reach lharvestd at $http: Connection refused' ]"

# ------------------------------- 4. a relay: routes, before the first sweep

# The longest interval and deadline: the sweep in progress at the start
# closes at the end of the hour, long after these requests (unless the
# test runs in its last second: the relay's sweep lines say).
mkdir -m 700 "$tmp/relay-state"
cat >"$tmp/relay.conf" <<CONF
role = "relay"
interval = 3600
deadline = 3599
listen = "127.0.0.1:0"
secret_file = "$tmp/keys"
state_dir = "$tmp/relay-state"
name = "relay1"
route "north" {
	networks = { "o2ib", "o2ib2" }
	server = "127.0.0.1:1"
}
route "south" {
	networks = { "tcp" }
	server = "127.0.0.1:1"
}
http { listen = "127.0.0.1:0" }
CONF
"$bin" -d -v -f "$tmp/relay.conf" >"$tmp/relay.out" 2>"$tmp/relay.log" &
relay_pid=$!
pids+=("$relay_pid")
wait_grep "$tmp/relay.log" 'http: listening on 127\.0\.0\.1:[0-9]+' 10 ||
	abort "the relay's HTTP listener started" "$(cat "$tmp/relay.log")"
rbase=http://$(sed -n 's/.*http: listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/relay.log" | head -n 1)
if [ -n "${LH_API_REGEN:-}" ]; then
	check_py doc "$src/docs/api.md" "$base" --relay "$rbase" --write --only /v1/routes
else
	sed -n '/<!-- example: \/v1\/routes -->/,/^```$/p' "$src/docs/api.md" >"$tmp/api-relay.md"
	check_py doc "$tmp/api-relay.md" "$rbase"
fi
base=$rbase api_get /v1/routes "$tmp/routes.json"
t_check "a relay's /v1/routes: both routes, their networks, not connected" py "$tmp/routes.json" <<'PY'
import json, sys
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["data"]["routes"]}
sys.exit(not (set(r) == {"north", "south"} and r["north"]["networks"] == ["o2ib", "o2ib2"]
              and r["south"]["dest"] == "127.0.0.1:1" and not r["north"]["connected"]))
PY
base=$rbase api_get /v1/hosts "$tmp/first.json"
if grep -qE 'lharvestd: sweep [0-9]+:' "$tmp/relay.log"; then
	echo "# the relay closed a sweep already (the end of an hour): not before the first sweep"
else
	t_check "before the first sweep: success, \"no sweep closed yet\", no rows" py "$tmp/first.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
sys.exit(not (a["success"] and a["message"] == "no sweep closed yet" and a["data"]["hosts"] == []
              and a["data"]["sweep"] == 0))
PY
fi
term "$relay_pid" relay || t_fail "the relay exited 0 on SIGTERM" "$term_msg"
t_summary
