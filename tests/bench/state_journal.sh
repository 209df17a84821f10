#!/usr/bin/env bash
# What the gatherer's state costs per sweep (docs/performance.md, "Issue
# 19: the gatherer's state journal"), run by hand, never by the tests:
#
#   tests/bench/state_journal.sh BUILD TREE STATE_DIR [IDLE [BUSY [INTERVAL [TICK]]]]
#
# BUILD: a build tree with daemon/lharvestd and daemon/lharvest-dump (this
# tree's, or another commit's with the same "state: ..." -v line).  TREE: a
# lustresim tree made with `lustresim.py big ... --save-state` (its server
# oss1 is read; `lustresim.py run` moves every client).  STATE_DIR: made
# afresh for the gatherer (put it on a disk, /var/tmp, or on tmpfs,
# /dev/shm).  The gatherer sweeps every INTERVAL seconds (default 10):
# IDLE sweeps (default 20) with nothing moving, then TICK sweeps (default
# 0) each after every stats file's snapshot_time alone moved (by the
# interval, plus the file's offset in the pass that rewrites them: as a
# real server's idle exports, whose snapshot_time is the time of the
# read), then BUSY sweeps (default 4) each after one simulator step that
# moves every client.  Each save
# prints `state: N bytes ... in T s` (lharvestd -v); quoted per phase:
# bytes per sweep (mean, compactions included, and per day at a 20 s
# interval), the save's time (median, max), and the sweep's time (median).
# The first two sweeps (the baseline, and the save after it, which writes
# a new base) are left out.  Then the gatherer's peak RSS (VmHWM), and the
# peak after a SIGKILL and a restart (the journal's records replayed) over
# the load and two sweeps.
set -euo pipefail
b=$(cd "$1" && pwd)
tree=$2
state=$3
idle=${4:-20}
busy=${5:-4}
interval=${6:-10}
tick=${7:-0}
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/lhstate.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

rm -rf "$state"
mkdir -m 700 "$state"
printf 'bench-key-0123456789abcdef0123456789\n' >"$tmp/keys"
chmod 600 "$tmp/keys"
"$b/daemon/lharvest-dump" --listen 127.0.0.1:0 -k "$tmp/keys" \
	>/dev/null 2>"$tmp/dump.log" &
pids+=("$!")
addr=
for ((i = 0; i < 50; i++)); do
	addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/dump.log" | head -n 1)
	[ -n "$addr" ] && break
	sleep 0.1
done
[ -n "$addr" ] || { echo "lharvest-dump did not start" >&2; exit 1; }
cat >"$tmp/g.conf" <<EOF
role = "gatherer"
interval = $interval
lustre_root = "$tree/oss1"
server = "$addr"
secret_file = "$tmp/keys"
state_dir = "$state"
name = "bench-oss"
EOF
"$b/daemon/lharvestd" -d -v -f "$tmp/g.conf" 2>"$tmp/g.log" &
gpid=$!
pids+=("$gpid")
saves() { grep -c 'lharvestd: state: [0-9]* bytes' "$tmp/g.log" || true; }
wait_saves() {
	while [ "$(saves)" -lt "$1" ]; do
		kill -0 "$gpid" 2>/dev/null || { cat "$tmp/g.log" >&2; exit 1; }
		sleep 0.2
	done
}
total=$((idle + 2))
echo "# $idle idle sweeps every $interval s, state in $state" >&2
wait_saves "$total"
echo "# $tick sweeps with only snapshot_time moving" >&2
for ((n = 1; n <= tick; n++)); do
	python3 - "$tree/oss1" "$interval" <<'PY'
import os, sys, time
root, step = sys.argv[1], int(sys.argv[2]) * 10**9
t0 = time.monotonic_ns()
for d, _, files in os.walk(root):
    if "stats" not in files or os.path.basename(os.path.dirname(d)) != "exports":
        continue
    p = os.path.join(d, "stats")
    with open(p) as f:
        lines = f.read().split("\n")
    w = lines[0].split()
    s, ns = w[1].split(".")
    t = int(s) * 10**9 + int(ns) + step + (time.monotonic_ns() - t0)
    lines[0] = "%-25s %d.%09d %s" % (w[0], t // 10**9, t % 10**9, w[2])
    if lines[2].startswith("elapsed_time"):
        st = lines[1].split()[1].split(".")
        e = t - (int(st[0]) * 10**9 + int(st[1]))
        lines[2] = "%-25s %d.%09d secs.nsecs" % ("elapsed_time", e // 10**9, e % 10**9)
    with open(p + ".tmp", "w") as f:
        f.write("\n".join(lines))
    os.rename(p + ".tmp", p)
PY
	wait_saves $((total + n))
done
total=$((total + tick))
echo "# $busy busy sweeps" >&2
for ((n = 1; n <= busy; n++)); do
	python3 "$src/tests/sim/lustresim.py" run --root "$tree" --steps 1 >/dev/null
	wait_saves $((total + n))
done
# Memory: the peak so far; then killed (the journal keeps its records)
# and restarted: the peak over the load and two sweeps.
hwm=$(awk '$1 == "VmHWM:" {print $2}' "/proc/$gpid/status")
kill -KILL "$gpid"
wait "$gpid" 2>/dev/null || true
"$b/daemon/lharvestd" -d -v -f "$tmp/g.conf" 2>"$tmp/g2.log" &
gpid=$!
pids+=("$gpid")
while [ "$(grep -c 'lharvestd: sweep [0-9]*:' "$tmp/g2.log")" -lt 2 ]; do
	kill -0 "$gpid" 2>/dev/null || { cat "$tmp/g2.log" >&2; exit 1; }
	sleep 0.2
done
hwm2=$(awk '$1 == "VmHWM:" {print $2}' "/proc/$gpid/status")
restored=$(sed -n 's/.*lharvestd: state restored: //p' "$tmp/g2.log")
kill -TERM "$gpid"
wait "$gpid" || true

# One line per save: bytes, seconds, phase; and the sweeps' times.
sed -n 's/.*lharvestd: state: \([0-9]*\) bytes .* in \([0-9.]*\) s$/\1 \2/p' "$tmp/g.log" |
	awk -v idle="$idle" -v tick="$tick" 'NR > 2 && NR <= idle + 2 + tick + '"$busy"' {print $1, $2, (NR <= idle + 2 ? "idle" : NR <= idle + 2 + tick ? "tick" : "busy")}' >"$tmp/saves"
sed -n 's/.*lharvestd: sweep [0-9]*: .* in \([0-9.]*\) s.*/\1/p' "$tmp/g.log" |
	awk -v idle="$idle" -v tick="$tick" 'NR > 2 {print $1, (NR <= idle + 2 ? "idle" : NR <= idle + 2 + tick ? "tick" : "busy")}' >"$tmp/sweeps"
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "state_dir $state ($(df -T "$state" | awk 'NR == 2 {print $2}')), build $b"
echo "peak (VmHWM) $hwm KiB; killed and restarted: $hwm2 KiB ($restored)"
for phase in idle tick busy; do
	n=$(awk -v p="$phase" '$3 == p' "$tmp/saves" | wc -l)
	[ "$n" -gt 0 ] || continue
	awk -v p="$phase" '$3 == p {s += $1; n++; if ($1 > m) m = $1} END {
		printf "%s: %d saves, %.0f bytes per sweep (mean; largest %d), %.2f GB a day at 20 s\n", p, n, s / n, m, s / n * 4320 / 1e9 }' "$tmp/saves"
	printf '%s: save %.4f s median, %.4f s max; sweep %.3f s median\n' "$phase" \
		"$(awk -v p="$phase" '$3 == p {print $2}' "$tmp/saves" | median)" \
		"$(awk -v p="$phase" '$3 == p {print $2}' "$tmp/saves" | sort -g | tail -n 1)" \
		"$(awk -v p="$phase" '$2 == p {print $1}' "$tmp/sweeps" | median)"
	echo "$phase: bytes $(awk -v p="$phase" '$3 == p {printf "%s%s", (n++ ? " " : ""), $1}' "$tmp/saves")"
	echo "$phase: save s $(awk -v p="$phase" '$3 == p {printf "%s%s", (n++ ? " " : ""), $2}' "$tmp/saves")"
done
