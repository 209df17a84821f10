#!/usr/bin/env bash
# prom_load.sh BUILD_DIR [SWEEPS]
#
# /metrics under the aggregator load of issue 9, run by hand (never by the
# tests): tests/bench/agg_load.sh (100 gatherers x 10,000 clients, 20,000
# hosts x 4 filesystems, into a real aggregator spoofing into a real gmond)
# runs SWEEPS sweeps (default 8); meanwhile ten scrapers GET /metrics
# together, each every PAUSE seconds (LH_BENCH_SCRAPE_PAUSE, default 1;
# 0: back to back), but only during every other sweep interval (odd
# multiples of the interval on the wall clock).  So in one run, half the
# sweeps close and send to Ganglia with ten concurrent scrapes and half
# without, and their medians compare:
#  - close: the aggregator's -v line "sweep T: closing took C s CPU (W s
#    wall)" (sweep T is closed, and sent, just after T: agg_load.sh's
#    gatherers send at the boundary);
#  - Ganglia: "sweep T: Ganglia: ... sent in W s (C s CPU)";
#  - the page: "prometheus: page of sweep T: ... in X s CPU", written at
#    the first scrape after each sweep and shared by the others;
#  - each scrape's time to the last byte, as curl saw it;
#  - the aggregator's CPU per scrape: its CPU in the intervals with
#    scrapes less that in the intervals without (agg_load.sh samples it),
#    over the scrapes of an interval.
# Sweep 1 is left out (agg_load.sh's warm-up).  About 3 minutes; loads
# both CPUs of a small machine, so run it when nobody else needs them.
# Environment: LH_BENCH_INTERVAL (20) and the other agg_load.sh knobs.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [SWEEPS]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
sweeps=${2:-8}
interval=${LH_BENCH_INTERVAL:-20}
scrapers=10
pause=${LH_BENCH_SCRAPE_PAUSE:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/lhpromload.XXXXXX")
alpid='' spids=()
cleanup() {
	local p
	for p in "${spids[@]}" $alpid; do kill "$p" 2>/dev/null || true; done
	for p in "${spids[@]}" $alpid; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

# agg_load.sh keeps its directory (LH_BENCH_KEEP) under ours (TMPDIR).
TMPDIR=$work LH_BENCH_KEEP=1 bash "$src/tests/bench/agg_load.sh" "$build" \
	"$sweeps" >"$work/agg_load.out" 2>"$work/agg_load.err" &
alpid=$!
port=
for ((i = 0; i < 1200; i++)); do
	logs=("$work"/lhaggload.*/agg.log)
	log=${logs[0]}
	[ -f "$log" ] && port=$(sed -n 's/.*http: listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -n 1)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { echo "no HTTP listener in the aggregator's log" >&2; cat "$work/agg_load.err" >&2; exit 1; }

# A scraper: back to back during odd intervals, idle during even ones.
scrape() {
	while kill -0 "$alpid" 2>/dev/null; do
		if (($(date +%s) / interval % 2 == 1)); then
			curl -s -o /dev/null -w '%{time_starttransfer} %{time_total}\n' \
				"http://127.0.0.1:$port/metrics" >>"$work/scrape.$1" || true
			[ "$pause" = 0 ] || sleep "$pause"
		else
			sleep 0.2
		fi
	done
}
for ((i = 1; i <= scrapers; i++)); do
	scrape "$i" &
	spids+=("$!")
done
wait "$alpid" || { echo "agg_load.sh failed:" >&2; tail -n 20 "$work/agg_load.err" >&2; exit 1; }
alpid=
for p in "${spids[@]}"; do kill "$p" 2>/dev/null || true; done
for p in "${spids[@]}"; do wait "$p" 2>/dev/null || true; done
spids=()
cat "$work/agg_load.out"
cat "$work"/scrape.* >"$work/scrapes"

python3 - "$log" "$work/scrapes" "$interval" "$(getconf CLK_TCK)" <<'PY'
import os, re, statistics, sys

log, scrapes, interval, hz = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
close, sent, page = {}, {}, []
for line in open(log):
    m = re.search(r"sweep (\d+): closing took (\S+) s CPU \((\S+) s wall\)", line)
    if m:
        close[int(m.group(1))] = (float(m.group(2)), float(m.group(3)))
    m = re.search(r"sweep (\d+): Ganglia: \d+ values and \d+ metadata sent in (\S+) s \((\S+) s CPU\)", line)
    if m:
        sent[int(m.group(1))] = (float(m.group(2)), float(m.group(3)))
    m = re.search(r"prometheus: page of sweep (\d+): (\d+) rows, (\d+) series .* (\d+) bytes in (\S+) s CPU", line)
    if m and int(m.group(3)) > 0:
        page.append((int(m.group(1)), int(m.group(3)), int(m.group(4)), float(m.group(5))))
ids = sorted(close)[1:]
loaded = lambda t: t // interval % 2 == 1
med = lambda v: statistics.median(v) if v else float("nan")
rows = [("close CPU (s)", lambda t: close[t][0]), ("close wall (s)", lambda t: close[t][1]),
        ("Ganglia send wall (s)", lambda t: sent[t][0]), ("Ganglia send CPU (s)", lambda t: sent[t][1])]
print("\n| per sweep | without scrapes | with 10 concurrent scrapes | ratio |")
print("|---|---|---|---|")
for name, f in rows:
    a = [f(t) for t in ids if not loaded(t) and t in sent]
    b = [f(t) for t in ids if loaded(t) and t in sent]
    print("| %s | %.3f (%d sweeps) | %.3f (%d sweeps) | %.2f |"
          % (name, med(a), len(a), med(b), len(b), med(b) / med(a) if med(a) else float("nan")))
t = [tuple(map(float, l.split())) for l in open(scrapes) if l.strip()]
print()
if page:
    print("page written once per sweep: median %.1f ms CPU (%d pages of %d series, %.1f MB)"
          % (1e3 * med([p[3] for p in page]), len(page), page[-1][1], page[-1][2] / 1e6))
# The aggregator's CPU in each whole interval of the run, by kind.
cpu = {}
for line in open(os.path.join(os.path.dirname(log), "samples")):
    ts, ticks, _ = line.split()
    cpu.setdefault(int(float(ts)) // interval, []).append(int(ticks) / hz)
slots = sorted(cpu)[2:-1]  # whole intervals after the warm-up
use = {k: max(cpu[k]) - min(cpu[k]) for k in slots}
on = [v for k, v in use.items() if k % 2 == 1]
off = [v for k, v in use.items() if k % 2 == 0]
if t:
    tot = sorted(x[1] for x in t)
    n_on = sum(1 for k in sorted(cpu) if k % 2 == 1) or 1
    per = len(t) / n_on
    print("scrapes: %d (%.0f per interval with scrapes), time to last byte median %.3f s, "
          "95th percentile %.3f s" % (len(t), per, med(tot), tot[int(0.95 * (len(tot) - 1))]))
    if on and off:
        print("aggregator CPU per interval: %.2f s with scrapes, %.2f s without: "
              "%.2f ms CPU per scrape" % (med(on), med(off), 1e3 * (med(on) - med(off)) / per))
PY
