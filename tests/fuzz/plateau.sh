#!/usr/bin/env bash
# plateau.sh BUILD_FUZZ_DIR SECONDS [TARGET...]
#
# One long libFuzzer run per target (by hand, not in CI), to see where its
# coverage levels off, and the corpus kept: each target fuzzes for SECONDS
# from its committed corpus (tests/fuzz/corpus/TARGET) into a scratch
# directory; then what it found is merged back, minimised
# (-merge=1), into the committed corpus.  Prints one line per target:
#
#   TARGET runs N edges E features F corpus C->C2 last-new-edge-at T s crashes K
#
# where "last-new-edge-at" is when the edge count last grew: a plateau is
# a run whose last new edge came early.  BUILD_FUZZ_DIR is a build with
# -DLH_FUZZ=ON (scripts/test.sh makes build-fuzz).  Without TARGET, every
# fuzz_* binary there.  LH_PLATEAU_JOBS (default 2) targets at a time.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BUILD_FUZZ_DIR SECONDS [TARGET...]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
secs=$2
shift 2
jobs=${LH_PLATEAU_JOBS:-2}
if [ $# -eq 0 ]; then
	mapfile -t all < <(cd "$build/tests" && for f in fuzz_*; do echo "${f#fuzz_}"; done)
	set -- "${all[@]}"
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/lhplateau.XXXXXX")
trap 'rm -rf "$out"' EXIT

one() { # TARGET
	local t=$1 bin=$build/tests/fuzz_$1 corp=$src/tests/fuzz/corpus/$1 dict
	dict=$src/tests/fuzz/$t.dict
	[ -f "$dict" ] || dict=$src/tests/fuzz/statsparse.dict
	mkdir -p "$out/$t" "$corp"
	local before
	before=$(find "$corp" -type f | wc -l)
	(cd "$out" && "$bin" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 \
		-dict="$dict" -print_final_stats=1 "$out/$t" "$corp" >"$out/$t.log" 2>&1)
	"$bin" -merge=1 "$corp" "$out/$t" >"$out/$t.merge.log" 2>&1
	python3 - "$t" "$out/$t.log" "$before" "$(find "$corp" -type f | wc -l)" \
		"$(find "$out" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'oom-*' -o -maxdepth 1 -name 'timeout-*' | wc -l)" <<'PY'
import re, sys
t, log, before, after, crashes = sys.argv[1:]
runs = edges = feats = 0
last_t, last_edges, rate = 0.0, -1, None
for line in open(log, errors="replace"):
    m = re.match(r"#(\d+)\s+\S+\s+cov: (\d+) ft: (\d+).*?exec/s: (\d+)", line)
    if m:
        runs, e, feats = int(m.group(1)), int(m.group(2)), int(m.group(3))
        rate = int(m.group(4)) or rate
        if e > last_edges:
            last_edges = e
            last_t = runs / rate if rate else 0.0
        edges = e
    m = re.match(r"stat::number_of_executed_units: (\d+)", line)
    if m:
        runs = int(m.group(1))
print("%s runs %d edges %d features %d corpus %s->%s last-new-edge-at %.0f s crashes %s"
      % (t, runs, edges, feats, before, after, last_t, crashes))
PY
}

running=0
for t in "$@"; do
	one "$t" >"$out/$t.line" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
for t in "$@"; do cat "$out/$t.line"; done
ls "$out"/crash-* "$out"/oom-* "$out"/timeout-* 2>/dev/null && cp "$out"/crash-* "$out"/oom-* "$out"/timeout-* . 2>/dev/null
exit 0
