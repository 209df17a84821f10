#!/usr/bin/env bash
# The demo: build lharvestd, start a simulated Lustre 2.15 site (two OSS
# with two OSTs each, one MDS, clients on three LNets, an MDS peer export
# and 0@lo that must not count), and show what the gatherer reads on each
# server: the cumulative counters, then the per-client rates over a few
# seconds.  Installs its Debian packages itself (as root on Debian 12).
# Usage: bash scripts/demo.sh [seconds between the two readings, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
wait_s=${1:-5}

scripts/deps.sh build
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
