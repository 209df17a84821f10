#!/usr/bin/env bash
# The gatherer reads a target's stats files in runs (up to 96 files, about
# 64 KiB of text), then counts them in the same order
# (daemon/gatherer_sweep.c).  Here every target has 300 exports, so each
# sweep crosses several runs, with files that cannot be counted among
# them: a NID directory without stats, one with a counter line that has
# a bad number, one whose stats are over 64 KiB.  Every client moves all the time (the
# simulator steps every 0.4 s, on the wall clock) while an OSS's and an
# MDS's gatherers sweep every second into a real lharvest-dump on
# 127.0.0.1; then every total is the simulator's, exactly, the odd
# directories count nothing, and the bad files are told in one line.
# About 15 s.
#
#   bash it_gatherer_runs.sh BUILD/daemon/lharvestd   (LH_SRCDIR = source)
set -uo pipefail
bin=$1
. "$(dirname "$0")/dumplib.sh"
. "$(dirname "$0")/gstatelib.sh"

make_keys "$tmp/keys" "it-gatherer-runs-key-0123456789ab"
"${sim[@]}" tree --root "$R" --version 2.15 --servers 1 --clients 300 \
	>/dev/null || { echo "simulator failed"; exit 1; }

# Odd NID directories in every target's exports/, among the clients'.
# (The simulator rewrites only the files it knows.)
big=$(head -c 70000 /dev/zero | tr '\0' 'x')
for ex in "$R"/*/proc/fs/lustre/*/*/exports "$R"/*/sys/kernel/debug/lustre/*/*/exports; do
	[ -d "$ex" ] || continue
	mkdir "$ex/10.250.0.1@tcp" "$ex/10.250.0.2@tcp" "$ex/10.250.0.3@tcp"
	printf 'snapshot_time 1.5 secs.nsecs\nread_bytes 12 samples [bytes] 1 x 3\n' \
		>"$ex/10.250.0.2@tcp/stats"
	printf '%s\n' "$big" >"$ex/10.250.0.3@tcp/stats"
	: >"$ex/10.250.0.1@tcp/uuid"
	: >"$ex/10.250.0.2@tcp/uuid"
	: >"$ex/10.250.0.3@tcp/uuid"
done
nodd=$(find "$R" -path '*/exports/10.250.0.2@tcp' | wc -l)
t_check "odd directories in every target ($nodd)" test "$nodd" -ge 3

start_dump d1 -k "$tmp/keys" --state "$tmp/dstate"
for n in oss1 mds1; do
	gatherer_conf $n
	start_g $n -v
done
baseline_then_move oss1 mds1
for ((k = 0; k < 4; k++)); do
	wait_sweep oss1 mds1
done
# The simulator's last step, then a sweep that read it.
kill -TERM "$simpid"
wait "$simpid" 2>/dev/null
wait_sweep oss1 mds1
wait_sweep oss1 mds1

totals_exact "300 exports a target, read in runs: every total is the simulator's, exactly"
# What the odd directories delivered: nothing but zeros.
t_check "the odd directories count nothing" python3 - "$tmp/d1.out" <<'EOP'
import json, sys
for line in open(sys.argv[1]):
    if not line.endswith("\n"):
        continue
    r = json.loads(line)
    if r["nid"].startswith("10.250.0.") and any(
            r.get(k, 0) for k in ("read_bytes", "write_bytes", "read_ops",
                                  "write_ops", "oss_ops", "mds_ops")):
        sys.exit(f"counted: {line.strip()}")
EOP
# A sweep names its first unreadable file and says there are more.
for n in oss1 mds1; do
	t_check "$n: one line names a bad file, with its reason, and the others" \
		test "$(grep -c 'exports/10\.250\.0\.[23]@tcp/stats: .* (and more files like it' \
		"$tmp/g-$n.err")" -eq 1
	t_check "$n: ... and no other line names one" test \
		"$(grep -c '10\.250\.0\.' "$tmp/g-$n.err")" -eq 1
done
kill -TERM "${gp[oss1]}" "${gp[mds1]}"
wait "${gp[oss1]}" "${gp[mds1]}"
t_summary
