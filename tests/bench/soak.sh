#!/usr/bin/env bash
# soak.sh BUILD_DIR [MINUTES]
#
# The aggregator soaked under faults, run by hand (never by the tests;
# issue 15): 200 simulated gatherers (tests/bench/loadgen.c, the real
# protocol over real TCP) against one aggregator spoofing into a real
# gmond on 127.0.0.1, for MINUTES (default 30), in segments of a few
# sweeps.  Between and during segments one fault at a time, chosen at
# random:
#   agg-kill    the aggregator SIGKILLed mid-sweep, restarted on its
#               state_dir and port;
#   gen-kill    the 200 gatherers vanish mid-sweep (loadgen SIGKILLed);
#   agg-stop    the aggregator SIGSTOPped for 1.5 intervals (late batches);
#   flood       1,500 idle connections for 2 intervals;
#   garbage     scans, junk, a 2 GiB frame header, a forged HELLO, half a
#               header, an idle peer (aggregator_check.py garbage);
#   gmond       gmond killed and started again on its ports.
# After each segment that no fault touched, every value gmond shows is
# compared with the segment's last sweep as loadgen computed it: a value
# missing or different is a record lost.  Every interval the aggregator's
# RSS and open descriptors are sampled; they must stay flat (after the
# first 3 minutes, the last quarter's largest within 10% / 16 descriptors
# of the second quarter's).
#
# LH_SOAK_VALGRIND=1 runs instead a short soak (MINUTES default 4, 20
# gatherers) with the aggregator under valgrind's memcheck
# (--leak-check=full; its forked gmond.conf checker is not followed),
# never SIGKILLed so that valgrind reports at its exit, values not
# compared (it cannot keep the pace), and reports the error summary.
#
# Environment: LH_SOAK_INTERVAL (10), LH_SOAK_GATHERERS (200),
# LH_SOAK_CLIENTS (per gatherer, 500), LH_SOAK_SEGMENT (sweeps, 6),
# LH_SOAK_SEED (the faults' order; default $RANDOM, printed),
# LH_SOAK_FAULTS (the kinds of fault to choose from, or "none"),
# LH_SOAK_KEEP=1 (keep the temporary directory).
#
# Prints a summary for docs/reliability.md: faults survived by kind,
# SWEEP frames sent, values lost, RSS and descriptors.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [MINUTES]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
valgrind=${LH_SOAK_VALGRIND:-}
if [ -n "$valgrind" ]; then
	minutes=${2:-4}
	gat=${LH_SOAK_GATHERERS:-20}
else
	minutes=${2:-30}
	gat=${LH_SOAK_GATHERERS:-200}
fi
interval=${LH_SOAK_INTERVAL:-10}
clients=${LH_SOAK_CLIENTS:-500}
segment=${LH_SOAK_SEGMENT:-6}
seed=${LH_SOAK_SEED:-$RANDOM}
RANDOM=$seed
gm=$src/tests/ganglia/gmond.sh
chk=(python3 "$src/tests/integration/aggregator_check.py")
lgen=$build/tests/bench_loadgen
lhd=$build/daemon/lharvestd
command -v gmond >/dev/null || { echo "no gmond: apt-get install ganglia-monitor" >&2; exit 1; }
[ -z "$valgrind" ] || command -v valgrind >/dev/null ||
	{ echo "no valgrind: apt-get install valgrind" >&2; exit 1; }
echo "# building lharvestd and bench_loadgen in $build" >&2
cmake --build "$build" -j"$(nproc)" --target lharvestd bench_loadgen >/dev/null || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lhsoak.XXXXXX")
apid='' lpid='' spid='' udp='' tcp=''
cleanup() {
	local p
	for p in $lpid $spid $apid; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	for p in $lpid $spid $apid; do wait "$p" 2>/dev/null; done
	"$gm" stop "$tmp/gmond" >/dev/null 2>&1
	if [ -n "${LH_SOAK_KEEP:-}" ]; then echo "# kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
die() {
	echo "soak: $*" >&2
	tail -n 15 "$tmp"/agg*.log >&2 2>/dev/null
	exit 1
}

layout=(--gatherers "$gat" --clients "$clients" --filesystems 4 --fs-per-gatherer 2)
"$lgen" --setup "$tmp" "${layout[@]}" || die "loadgen --setup"

for ((i = 0; i < 20; i++)); do
	udp=$((20000 + RANDOM % 30000))
	tcp=$((udp + 1))
	"$gm" start "$tmp/gmond" "$udp" "$tcp" >/dev/null 2>"$tmp/gmond.err" && break
	udp=
done
[ -n "$udp" ] || die "gmond did not start: $(cat "$tmp/gmond.err")"
printf 'udp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' "$udp" >"$tmp/send.conf"
openssl rand -base64 32 >"$tmp/keys"
chmod 600 "$tmp/keys"
mkdir -m 700 "$tmp/state"
agg_conf() { # LISTEN
	{
		echo 'role = "aggregator"'
		echo 'http { listen = "127.0.0.1:0" }'
		echo "interval = $interval"
		echo "listen = \"$1\""
		echo "secret_file = \"$tmp/keys\""
		echo "state_dir = \"$tmp/state\""
		echo 'name = "soak-agg"'
		cat "$tmp/gatherers"
		echo "hosts_file = \"$tmp/hosts\""
		echo 'dns = no'
		echo "ganglia { gmond_conf = \"$tmp/send.conf\" }"
	} >"$tmp/agg.conf"
}
agg_conf 127.0.0.1:0

stamp() {
	local l
	while IFS= read -r l; do
		printf '%s %s\n' "$EPOCHREALTIME" "$l"
	done
}
runs=0
agg_start() {
	runs=$((runs + 1))
	local log=$tmp/agg$runs.log
	if [ -n "$valgrind" ]; then
		valgrind --tool=memcheck --leak-check=full --error-exitcode=99 \
			--child-silent-after-fork=yes \
			--log-file="$tmp/valgrind$runs.log" \
			"$lhd" -d -v -f "$tmp/agg.conf" 2> >(stamp >>"$log") &
	else
		"$lhd" -d -v -f "$tmp/agg.conf" 2> >(stamp >>"$log") &
	fi
	apid=$!
	for ((i = 0; i < 600; i++)); do
		grep -q 'listening on' "$log" 2>/dev/null && return 0
		sleep 0.1
	done
	die "the aggregator did not start"
}
agg_start
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/agg1.log" | head -n 1)
agg_conf "$addr"

# Every interval: time, RSS (KiB), open descriptors and PID of the
# aggregator.
sample() {
	while sleep "$interval"; do
		local p rss fds
		p=$(cat "$tmp/apid" 2>/dev/null) || continue
		rss=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null) || continue
		fds=$(find "/proc/$p/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
		[ -n "$rss" ] && echo "$EPOCHREALTIME $rss $fds $p"
	done
}
echo "$apid" >"$tmp/apid"
sample >"$tmp/samples" &
spid=$!

# LH_SOAK_FAULTS: the kinds to choose from (default all; "none": every
# segment clean, for a baseline of RSS without faults).
# Under valgrind the aggregator is never SIGKILLed (valgrind reports at
# exit), and values are not compared (it is too slow to keep the pace).
if [ -n "$valgrind" ]; then
	read -ra faults <<<"${LH_SOAK_FAULTS:-gen-kill agg-stop flood garbage gmond}"
else
	read -ra faults <<<"${LH_SOAK_FAULTS:-agg-kill gen-kill agg-stop flood garbage gmond}"
fi
[ "${faults[*]}" = none ] && faults=()
declare -A survived=()
lost=0 checked=0 sent=0 seg=0
t_end=$(($(date +%s) + minutes * 60))
echo "# seed $seed; $gat gatherers x $clients clients every $interval s into $addr, $minutes min" >&2

# compare SEG: gmond's values against loadgen's last sweep of the segment.
compare() {
	local n
	sleep 3
	"$gm" xml "$tcp" --values >"$tmp/values$1" 2>/dev/null
	n=$(python3 - "$tmp/expect$1" "$tmp/values$1" <<'PY'
import struct, sys
f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
want = {}
for line in open(sys.argv[1]):
    h, m, v = line.split()
    want[(h, m)] = float(v)
got = {}
for line in open(sys.argv[2]):
    p = line.split()
    if len(p) == 3:
        got[(p[0], p[1])] = p[2]
bad = 0
for k, v in want.items():
    try:
        g = float(got[k])
    except (KeyError, ValueError):
        bad += 1
        continue
    if abs(g - f32(float("%.2f" % v))) > max(0.011, abs(v) * 1e-6):
        bad += 1
print(bad, len(want))
PY
)
	lost=$((lost + ${n% *}))
	checked=$((checked + ${n#* }))
	echo "# segment $1: ${n% *} of ${n#* } values not the last sweep's" >&2
}

while [ "$(date +%s)" -lt "$t_end" ]; do
	seg=$((seg + 1))
	fault=none
	# One segment in three is clean: its values are compared.
	if ((seg % 3 != 1)) && [ ${#faults[@]} -gt 0 ]; then
		fault=${faults[$((RANDOM % ${#faults[@]}))]}
	fi
	"$lgen" --connect "$addr" -k "$tmp/keys" "${layout[@]}" --sweeps "$segment" \
		--interval "$interval" --offset-ms 200 --expect "$tmp/expect$seg" \
		>"$tmp/lg$seg.out" 2>"$tmp/lg$seg.err" &
	lpid=$!
	# The fault, a random point into the segment's middle sweeps.
	sleep $((interval * (1 + RANDOM % (segment - 2)) + RANDOM % interval))
	case $fault in
	agg-kill)
		kill -KILL "$apid"
		wait "$apid" 2>/dev/null
		sleep 2
		agg_start
		echo "$apid" >"$tmp/apid"
		;;
	gen-kill)
		kill -KILL "$lpid"
		;;
	agg-stop)
		kill -STOP "$apid"
		sleep $((interval * 3 / 2))
		kill -CONT "$apid"
		;;
	flood)
		python3 - "$addr" 1500 $((interval * 2)) <<'PY' >>"$tmp/flood.out" 2>&1
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = []
for i in range(int(sys.argv[2])):
    try:
        s.append(socket.create_connection((host, int(port)), timeout=2))
    except OSError:
        pass
time.sleep(float(sys.argv[3]))
print("opened", len(s))
PY
		;;
	garbage)
		"${chk[@]}" garbage --addr "$addr" --idle-max 15 >>"$tmp/garbage.out" 2>&1
		;;
	gmond)
		"$gm" stop "$tmp/gmond" >/dev/null 2>&1
		sleep 1
		"$gm" start "$tmp/gmond" "$udp" "$tcp" >/dev/null 2>>"$tmp/gmond.err" ||
			die "gmond did not start again"
		;;
	esac
	wait "$lpid" 2>/dev/null
	lpid=
	kill -0 "$apid" 2>/dev/null || die "the aggregator died during segment $seg ($fault)"
	[ "$fault" = none ] || survived[$fault]=$((${survived[$fault]:-0} + 1))
	sent=$((sent + $(awk '/^sweep / {f += $4} END {print f + 0}' "$tmp/lg$seg.out")))
	[ "$fault" = none ] && [ -z "$valgrind" ] && compare "$seg"
	echo "# segment $seg: $fault" >&2
done

kill -TERM "$apid"
arc=0
wait "$apid" || arc=$?
apid=
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
spid=

echo
echo "## Soak, $(date -u +%Y-%m-%d): $minutes min, $gat gatherers x $clients clients every $interval s, seed $seed"
echo
for k in "${!survived[@]}"; do echo "- fault $k: survived ${survived[$k]} times"; done | sort
echo "- SWEEP frames sent: $sent; aggregator runs: $runs; exit status at the end: $arc"
echo "- values compared after clean segments: $checked; **lost: $lost**"
python3 - "$tmp/samples" <<'PY'
import sys
runs = {}
for l in open(sys.argv[1]):
    p = l.split()
    if len(p) == 4:
        runs.setdefault(p[3], []).append(tuple(float(x) for x in p[:3]))
# Per aggregator run (a restart starts afresh): after its first 3 minutes,
# the median RSS and descriptor count of the last quarter against the
# second quarter's (medians: a sample taken while 200 gatherers reconnect
# is not a leak; a leak moves the median), and the largest RSS.
med = lambda v: sorted(v)[len(v) // 2]
for pid, s in runs.items():
    t0 = s[0][0]
    s = [x for x in s if x[0] - t0 >= 180]
    if len(s) < 8:
        print("- aggregator run %s: %d samples after its first 3 minutes, too few to judge" % (pid, len(s)))
        continue
    q = len(s) // 4
    a, b = s[q:2 * q], s[3 * q:]
    ra, rb = med([x[1] for x in a]), med([x[1] for x in b])
    fa, fb = med([x[2] for x in a]), med([x[2] for x in b])
    flat = rb <= ra * 1.10 and fb <= fa + 16
    print("- aggregator run %s (%.0f min): median RSS %d then %d KiB (largest %d), "
          "descriptors %d then %d: %s"
          % (pid, (s[-1][0] - t0) / 60, ra, rb, max(x[1] for x in s), fa, fb,
             "flat" if flat else "**GROWING**"))
PY
if [ -n "$valgrind" ]; then
	for f in "$tmp"/valgrind*.log; do
		echo "- valgrind $(basename "$f"): $(grep -E 'ERROR SUMMARY|definitely lost|indirectly lost' "$f" | sed 's/^==[0-9]*== //' | paste -sd';')"
	done
fi
