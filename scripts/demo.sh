#!/usr/bin/env bash
# The demo: build lharvestd, start a simulated Lustre 2.15 site (two OSS
# with two OSTs each, one MDS, clients on three LNets, an MDS peer export
# and 0@lo that must not count), and show what the gatherer reads on each
# server: the cumulative counters, then the per-client rates over a few
# seconds, then the gatherer daemons at work (one per server, sending
# signed SWEEPs to lharvest-dump while the site runs), and finally the
# whole chain into a private gmond on 127.0.0.1 through the aggregator.
# Installs its Debian packages itself (as root on Debian 12).
# Usage: bash scripts/demo.sh [seconds between the two readings, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
wait_s=${1:-5}

scripts/deps.sh demo
echo "== building lharvestd"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
bin=$PWD/build/daemon/lharvestd
"$bin" -V

work=$(mktemp -d /tmp/lharvestd-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
sim=(python3 tests/sim/lustresim.py)
scenario=tests/sim/scenarios/small-all-events.json

echo
echo "== a simulated Lustre 2.15 site in $work/sim"
"${sim[@]}" run --root "$work/sim" --scenario "$scenario" --clock wall \
	--period "$wait_s" --steps 1 --quiet
for s in "$work"/sim/*/; do
	n=$(find "$s" -name stats -path '*exports*' | wc -l)
	t=$(find "$s"proc/fs/lustre -mindepth 2 -maxdepth 2 -type d -name '*-[OM][SD]T*' | sed 's|.*/||' | sort | tr '\n' ' ')
	echo "  $(basename "$s"): targets $t($n export stats files)"
done
f=$(grep -l '^write_bytes' "$work"/sim/oss1/proc/fs/lustre/obdfilter/scratch-OST0000/exports/*/stats | head -1)
echo
echo "-- one of them, ${f#"$work"/sim/}:"
sed 's/^/   /' "$f"

echo
echo "== what the gatherers read now (lharvestd --once on each server)"
python3 scripts/demo_show.py "$bin" "$work/sim" "$work/state.json"

echo
echo "== $wait_s seconds later: per-client rates, summed over all servers"
sleep "$wait_s"
"${sim[@]}" run --root "$work/sim" --steps 1 --quiet
python3 scripts/demo_show.py "$bin" "$work/sim" "$work/state.json"
echo
echo "Server-to-server exports (the MDS's OSP connection, uuid"
echo "<fs>-MDT0000-mdtlov_UUID, and 0@lo) are never reported as clients;"
echo "idle clients are reported with zeros."

# The daemons: one gatherer per server, sweeping every 2 s on the wall
# clock, each sending signed SWEEPs over TCP to lharvest-dump (standing in
# for the aggregator) while the site keeps running.  The simulator renders
# its files every second (Lustre updates them continuously): a file that
# did not change between two sweeps would show a rate of 0, then double.
echo
echo "== the gatherer daemons: lharvestd -d on each server, every 2 s,"
echo "   sending to lharvest-dump --listen on 127.0.0.1 for 9 s"
printf 'demo-%s\n' "$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')" >"$work/secret"
chmod 600 "$work/secret"
live_pids=()
stop_live() { # the gatherers first, the receiver last
	local i p
	for ((i = ${#live_pids[@]} - 1; i >= 0; i--)); do
		p=${live_pids[i]}
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	live_pids=()
}
trap 'stop_live; rm -rf "$work"' EXIT
build/daemon/lharvest-dump --listen 127.0.0.1:0 -k "$work/secret" \
	>"$work/dump.out" 2>"$work/dump.err" &
live_pids+=($!)
for _ in $(seq 50); do
	grep -q 'listening on' "$work/dump.err" && break
	sleep 0.1
done
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\) .*/\1/p' "$work/dump.err")
"${sim[@]}" run --root "$work/sim" --clock wall --period 1 --align \
	--steps 0 --quiet >/dev/null 2>&1 &
live_pids+=($!)
for s in "$work"/sim/*/; do
	name=$(basename "$s")
	cat >"$work/$name-live.conf" <<EOF
role = "gatherer"
interval = 2
lustre_root = "${s%/}"
server = "$addr"
secret_file = "$work/secret"
state_dir = "$work/state-$name"
name = "$name"
EOF
	"$bin" -d -f "$work/$name-live.conf" 2>>"$work/gatherers.log" &
	live_pids+=($!)
done
sleep 9
stop_live
python3 scripts/demo_live.py "$work/dump.out"
echo
echo "Each rate is exact over its servers' targets: every record carries"
echo "the time its deltas cover, from the stats files' own snapshot_time."
echo "The gatherers' log:"
sed 's/^/   /' "$work/gatherers.log"

# The whole chain: the same gatherers send to the aggregator, which maps
# each client NID to a host name and spoofs its rates into a private gmond
# (127.0.0.1 only, started here, stopped at the end): what every compute
# node's Ganglia page would show.
echo
echo "== the whole chain: gatherers -> lharvestd aggregator -> gmond on 127.0.0.1"
read -r udp tcp < <(python3 -c 'import socket
s1 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s1.bind(("127.0.0.1", 0))
s2 = socket.socket(); s2.bind(("127.0.0.1", 0))
print(s1.getsockname()[1], s2.getsockname()[1])')
bash tests/ganglia/gmond.sh start "$work/gmond" "$udp" "$tcp" >/dev/null
trap 'stop_live; bash tests/ganglia/gmond.sh stop "$work/gmond"; rm -rf "$work"' EXIT
printf 'globals { daemonize = no }\nudp_send_channel { host = 127.0.0.1\n  port = %s }\n' \
	"$udp" >"$work/gmetric.conf"
python3 scripts/demo_hosts.py "$work/sim/truth-latest.json" >"$work/hosts"
printf '%s\n' 'role = "aggregator"' 'interval = 2' 'deadline = 0.6' \
	'listen = "127.0.0.1:0"' "secret_file = \"$work/secret\"" \
	"state_dir = \"$work/state-aggregator\"" 'name = "head"' \
	"ganglia { gmond_conf = \"$work/gmetric.conf\" }" "hosts_file = \"$work/hosts\"" \
	'dns = no' "http { listen = \"\" socket = \"$work/http.sock\" }" \
	>"$work/aggregator.conf"
"$bin" -d -f "$work/aggregator.conf" 2>"$work/aggregator.log" &
live_pids+=($!)
for _ in $(seq 50); do
	grep -q 'listening on' "$work/aggregator.log" && break
	sleep 0.1
done
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\),.*/\1/p' "$work/aggregator.log")
"${sim[@]}" run --root "$work/sim" --clock wall --period 1 --align \
	--steps 0 --quiet >/dev/null 2>&1 &
live_pids+=($!)
for s in "$work"/sim/*/; do
	name=$(basename "$s")
	sed -i "s/^server = .*/server = \"$addr\"/" "$work/$name-live.conf"
	"$bin" -d -f "$work/$name-live.conf" 2>>"$work/gatherers.log" &
	live_pids+=($!)
done
for round in 1 2 3; do
	sleep 4
	echo
	echo "-- what gmond shows, $((round * 4)) s in (host, metric, value):"
	bash tests/ganglia/gmond.sh xml "$tcp" --values | sort |
		grep -E '^(node0[1-4]|lustre-totals) scratch_' | sed 's/^/   /'
done
# The same sweeps, asked over the aggregator's HTTP listener (here a unix
# socket; 127.0.0.1:8023 by default): the lharvest command, and a few
# lines of the Prometheus page (docs/api.md).
echo
echo "-- asked over HTTP: lharvest status, lharvest host node01, /metrics:"
"$(dirname "$bin")/lharvest" -S "$work/http.sock" status | sed 's/^/   /'
"$(dirname "$bin")/lharvest" -S "$work/http.sock" host node01 | sed 's/^/   /'
python3 - "$work/http.sock" <<'PY' | grep -E '^lustre_client_(read|write)_bytes_total\{host="node0[12]"' | sed 's/^/   /'
import http.client, socket, sys
class Conn(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sys.argv[1])
c = Conn("lharvest")
c.request("GET", "/metrics")
sys.stdout.write(c.getresponse().read().decode())
PY
stop_live
echo
echo "The aggregator's log:"
sed 's/^/   /' "$work/aggregator.log"
