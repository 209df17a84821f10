#!/usr/bin/env bash
# --once against simulated servers of every Lustre version, and through
# every event of a scenario, compared with the simulator's expectations.
set -euo pipefail
bin=$1
src=${LH_SRCDIR:?}
sim="python3 $src/tests/sim/lustresim.py"
cmp="python3 $src/tests/integration/compare_once.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0

check_all() { # root
	local s
	for s in "$1"/*/; do
		[ -f "$s/expected-once.jsonl" ] || continue
		$cmp "$bin" "${s%/}"
		pass=$((pass + 1))
	done
}

# Every format: 2 OSS x 2 OSTs + 1 MDS, clients on several LNets.
for v in 2.5 2.7 2.10 2.12 2.14 2.15.0 2.15 2.16 2.17; do
	$sim tree --root "$tmp/$v" --version "$v" --clients 30 --seed 7 >/dev/null
	check_all "$tmp/$v"
done
# 2.16 with enable_stats_header=0; MDT and OSTs on one node (0@lo).
$sim tree --root "$tmp/nohdr" --version 2.16 --no-stats-header >/dev/null
check_all "$tmp/nohdr"
$sim tree --root "$tmp/coloc" --version 2.10 --colocate >/dev/null
check_all "$tmp/coloc"

# Every event, step by step: clear, reset_export, failover, clients
# appearing, idling and returning, unmount and mount.
for sc in small-all-events v2.12-idle-disconnect v2.17-debugfs; do
	root=$tmp/run-$sc
	$sim run --root "$root" --scenario "$src/tests/sim/scenarios/$sc.json" \
		--clock fake --steps 1 --quiet
	steps=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('steps', 12))" \
		"$src/tests/sim/scenarios/$sc.json")
	for ((i = 1; i < steps; i++)); do
		check_all "$root" >/dev/null
		$sim run --root "$root" --steps 1 --quiet
	done
	check_all "$root"
done
echo "$pass passed, 0 failed"
