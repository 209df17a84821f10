#!/usr/bin/env bash
# agg_load.sh BUILD_DIR [SWEEPS]
#
# The aggregator under the load of issue 9, run by hand (never by the
# tests): 100 gatherers x 10,000 clients each, 1,000,000 SWEEP records per
# sweep, over 4 filesystems, into a real aggregator (BUILD_DIR should be a
# release build: RelWithDebInfo or Release) that spoofs 20,000 hosts x 4
# metrics into a private gmond on 127.0.0.1 (tests/ganglia/gmond.sh).
#
# tests/bench/loadgen.c is the 100 gatherers, in one process: the real
# handshake and HMAC key, one TCP connection and name per gatherer, each
# SWEEP sent at the sweep boundary (+200 ms) once the previous one was
# acknowledged.  Layout: 4 filesystems; gatherers 0-49 serve the first two,
# 50-99 the last two (5,000 clients of each); the first gatherer of each
# half is the MDS.  Each filesystem has its own 5,000 client NIDs
# (10.1.x.y@o2ib, named cnNNNNN by a hosts_file), so the aggregator sums
# 1,000,000 records into 20,000 (filesystem, client) pairs and spoofs
# exactly 20,000 hosts x 4 metrics (<fs>_read_bytes, _write_bytes,
# _oss_ops, _mds_ops: the default metrics, extra_metrics and metadata_ops
# off), plus 4 filesystems x 4 metrics for the totals host.
#
# Per sweep T (SWEEPS of them, default 6, every 20 s):
#  - decode: the aggregator's CPU (utime+stime of /proc/PID/stat, sampled
#    every 0.1 s) from just before the frames were sent until the sweep
#    started closing: reading, HMAC, decoding and summing 1M records;
#  - close: its own -v line "sweep T: closing took C s CPU": rates, NID ->
#    host, per-host sums, the hand-off of 80,016 values to the Ganglia sink
#    (gsink_put), the ledger (100 files, fsync'd) and the ACKs;
#  - decode + close: what the target of issue 9 bounds (1 s of CPU);
#  - Ganglia: the -v line "sweep T: Ganglia: ... sent in W s (C s CPU)":
#    the sink's paced sending (15,000 packets/s, or LH_BENCH_PACE) to
#    gmond;
#  - interval: all of the aggregator's CPU from one sweep's start to the
#    next's;
#  - RSS: the largest sample of the interval, and VmHWM at the end.
# After the last sweep's values are out, gmond's XML is read once (never
# during a send: gmond stops reading UDP while it writes XML), and every
# metric is compared with the last sweep's value as loadgen computed it
# (gmond keeps a 32-bit float of the "%.2f" text the sink sends).
# The generator's own CPU per sweep is reported alongside.
#
# Environment (for a quick try of the script, not for the numbers):
# LH_BENCH_INTERVAL (20), LH_BENCH_GATHERERS (100), LH_BENCH_CLIENTS
# (10000), LH_BENCH_FILESYSTEMS (4), LH_BENCH_FS_PER_GATHERER (2).
# LH_BENCH_PACE sets ganglia { pace } (issue 19; a tree before that key
# refuses it).
# LH_BENCH_PERF=FILE records the aggregator with perf into FILE (499 Hz,
# DWARF call graphs, realtime timestamps so that perf report --time can
# pick one phase of a sweep), for a profile; the numbers of such a run are
# not the ones to quote.  LH_BENCH_KEEP=1 keeps the temporary directory
# (logs, samples, gmond's values).  The state directory (the ledger) goes
# under $TMPDIR or /tmp:
# a disk, as /var/lib/lharvestd is.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [SWEEPS]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
sweeps=${2:-6}
interval=${LH_BENCH_INTERVAL:-20}
gat=${LH_BENCH_GATHERERS:-100}
clients=${LH_BENCH_CLIENTS:-10000}
nfs=${LH_BENCH_FILESYSTEMS:-4}
fspg=${LH_BENCH_FS_PER_GATHERER:-2}
offset_ms=200
gm=$src/tests/ganglia/gmond.sh
lgen=$build/tests/bench_loadgen
lhd=$build/daemon/lharvestd

btype=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
case $btype in
RelWithDebInfo | Release) ;;
*) echo "# warning: $build is a '$btype' build, not a release build" >&2 ;;
esac
echo "# building lharvestd and bench_loadgen in $build" >&2
cmake --build "$build" -j"$(nproc)" --target lharvestd bench_loadgen >/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lhaggload.XXXXXX")
apid='' spid='' lpid='' ppid=''
cleanup() {
	local p
	for p in $lpid $ppid $apid $spid; do kill "$p" 2>/dev/null || true; done
	for p in $lpid $ppid $apid $spid; do wait "$p" 2>/dev/null || true; done
	"$gm" stop "$tmp/gmond" || true
	if [ -n "${LH_BENCH_KEEP:-}" ]; then echo "# kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

layout=(--gatherers "$gat" --clients "$clients" --filesystems "$nfs"
	--fs-per-gatherer "$fspg")
"$lgen" --setup "$tmp" "${layout[@]}"
nhosts=$(($(wc -l <"$tmp/hosts") - 1))

# A private gmond.
for ((i = 0; i < 20; i++)); do
	udp=$((20000 + RANDOM % 30000))
	tcp=$((udp + 1))
	"$gm" start "$tmp/gmond" "$udp" "$tcp" >/dev/null 2>"$tmp/gmond.err" && break
	udp=
done
[ -n "$udp" ] || { cat "$tmp/gmond.err" >&2; exit 1; }
printf 'udp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' "$udp" >"$tmp/send.conf"

# The aggregator.
printf 'bench-key-0123456789abcdef0123456789\n' >"$tmp/keys"
chmod 600 "$tmp/keys"
mkdir -m 700 "$tmp/state"
{
	echo 'role = "aggregator"'
	echo 'http { listen = "127.0.0.1:0" }'
	echo "interval = $interval"
	echo 'listen = "127.0.0.1:0"'
	echo "secret_file = \"$tmp/keys\""
	echo "state_dir = \"$tmp/state\""
	echo 'name = "bench-agg"'
	cat "$tmp/gatherers"
	echo "hosts_file = \"$tmp/hosts\""
	echo 'rewrite = {}'
	echo 'dns = no'
	echo "ganglia { gmond_conf = \"$tmp/send.conf\"${LH_BENCH_PACE:+ pace = $LH_BENCH_PACE} }"
} >"$tmp/agg.conf"
"$lhd" -n -f "$tmp/agg.conf" >/dev/null

stamp() {
	local l
	while IFS= read -r l; do
		printf '%s %s\n' "$EPOCHREALTIME" "$l"
	done
}
: >"$tmp/agg.log"
"$lhd" -d -v -f "$tmp/agg.conf" 2> >(stamp >>"$tmp/agg.log") &
apid=$!
addr=
for ((i = 0; i < 100; i++)); do
	addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/agg.log" | head -n 1)
	[ -n "$addr" ] && break
	sleep 0.1
done
[ -n "$addr" ] || { echo "the aggregator did not start" >&2; cat "$tmp/agg.log" >&2; exit 1; }

# The sampler: time, utime+stime (ticks), RSS (pages) every 0.1 s, without
# forking (read -t on a FIFO nobody writes is the pause).
mkfifo "$tmp/nap"
sample() {
	local st f
	exec 9<>"$tmp/nap"
	while read -r st <"/proc/$apid/stat" 2>/dev/null; do
		read -ra f <<<"${st##*) }"
		echo "$EPOCHREALTIME $((f[11] + f[12])) ${f[21]}"
		read -rt 0.1 -u 9 || true
	done
}
sample >"$tmp/samples" &
spid=$!
if [ -n "${LH_BENCH_PERF:-}" ]; then
	perf record -q -F 499 --call-graph dwarf,16384 -k realtime -o "$LH_BENCH_PERF" -p "$apid" 2>"$tmp/perf.err" &
	ppid=$!
fi

# Whether anything else ran meanwhile: the machine's busy time over the
# run against that of the benchmark's own processes.
busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8, $5 + $6}' /proc/stat; }
gpid=$(cat "$tmp/gmond/gmond.pid")
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
read -r busy0 idle0 < <(busy)
own0=$(($(ticks "$apid") + $(ticks "$gpid")))
echo "# $sweeps sweeps of $gat gatherers x $clients clients every $interval s into $addr" >&2
"$lgen" --connect "$addr" -k "$tmp/keys" "${layout[@]}" --sweeps "$sweeps" \
	--interval "$interval" --offset-ms "$offset_ms" --expect "$tmp/expect" \
	>"$tmp/lg.out" 2>"$tmp/lg.err" &
lpid=$!
lrc=0
wait "$lpid" || lrc=$?
lpid=
if [ "$lrc" -ne 0 ]; then
	echo "# bench_loadgen exited with $lrc:" >&2
	tail -n 5 "$tmp/lg.err" >&2
	echo "# the aggregator's log ends:" >&2
	tail -n 15 "$tmp/agg.log" >&2
	if ! kill -0 "$apid" 2>/dev/null; then
		arc=0
		wait "$apid" || arc=$?
		apid=
		echo "# the aggregator exited with status $arc" >&2
		exit 1
	fi
fi
last=$(sed -n 's/^sweep \([0-9]*\) .*/\1/p' "$tmp/lg.out" | tail -n 1)
for ((i = 0; i < interval * 20; i++)); do
	grep -q "lharvestd: sweep $last: Ganglia: " "$tmp/agg.log" && break
	sleep 0.1
done
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$apid/status")
read -r busy1 idle1 < <(busy)
own1=$(($(ticks "$apid") + $(ticks "$gpid")))
if [ -n "$ppid" ]; then
	kill -INT "$ppid"
	wait "$ppid" || true
fi
sleep 2
# Datagrams gmond's socket dropped over the whole run (its receive
# buffer full): the drops column of /proc/net/udp.
drops=$(awk -v p="$(printf '0100007F:%04X' "$udp")" '$2 == p { print $NF }' /proc/net/udp)
"$gm" xml "$tcp" --values >"$tmp/values"
kill -TERM "$apid"
wait "$apid" || true
apid=
kill "$spid" 2>/dev/null || true
wait "$spid" 2>/dev/null || true
spid=

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
python3 - "$tmp" "$interval" "$offset_ms" "$(getconf CLK_TCK)" \
	"$(getconf PAGESIZE)" "$hwm" "$nhosts" "$clients" \
	"$((busy1 - busy0)) $((idle1 - idle0)) $((own1 - own0))" <<'PY'
import re, statistics, struct, sys

tmp, interval, offset_ms, hz, page, hwm, nhosts, per_gat, mach = sys.argv[1:]
interval, hz, page, hwm = int(interval), int(hz), int(page), int(hwm)
per_gat = int(per_gat)
m_busy, m_idle, m_own = (int(x) for x in mach.split())
off = int(offset_ms) / 1000

samples = []  # (time, cpu s, rss KiB)
for line in open(tmp + "/samples"):
    t, c, r = line.split()
    samples.append((float(t), int(c) / hz, int(r) * page // 1024))

def cpu_before(t):
    best = None
    for s in samples:
        if s[0] < t:
            best = s
    return best[1] if best else 0.0

def rss_max(t0, t1):
    v = [s[2] for s in samples if t0 <= s[0] < t1]
    return max(v) if v else 0

lg = {}
for line in open(tmp + "/lg.out"):
    m = re.match(r"sweep (\d+) frames (\d+) bytes (\d+) written_ms (\S+) "
                 r"acked_ms (\S+) cpu_ms (\S+) missed (\d+)", line)
    if m:
        lg[int(m.group(1))] = m.groups()[1:]
    m = re.match(r"loadgen encode_cpu_ms (\S+) total_cpu_ms (\S+) maxrss_kb (\d+)", line)
    if m:
        lg_total = m.groups()

close, sent, info = {}, {}, {}
for line in open(tmp + "/agg.log"):
    m = re.match(r"(\S+) lharvestd: sweep (\d+): closing took (\S+) s CPU "
                 r"\((\S+) s wall\), process CPU (\S+) s", line)
    if m:
        close[int(m.group(2))] = (float(m.group(1)), float(m.group(3)),
                                  float(m.group(4)), float(m.group(5)))
    m = re.match(r"(\S+) lharvestd: sweep (\d+): Ganglia: (\d+) values and "
                 r"(\d+) metadata sent in (\S+) s \((\S+) s CPU\)", line)
    if m:
        sent[int(m.group(2))] = (int(m.group(3)), int(m.group(4)),
                                 float(m.group(5)), float(m.group(6)))
    m = re.match(r"\S+ lharvestd: sweep (\d+): (\d+) gatherers \((\d+) late\), "
                 r"(\d+) clients, (\d+) hosts, (\d+) unmapped, (\d+) awaiting DNS(.*)",
                 line)
    if m:
        info[int(m.group(1))] = m.groups()[1:]

rows = []
for sid in sorted(lg):
    if sid not in close:
        print("# sweep %d: no closing line from the aggregator" % sid, file=sys.stderr)
        continue
    t_close, c_close, w_close, p_close = close[sid]
    base = cpu_before(sid + off)
    decode = max(0.0, p_close - c_close - base)
    nxt = cpu_before(sid + interval + off)
    whole = nxt - base if nxt > base and sid + interval + off < samples[-1][0] else float("nan")
    s = sent.get(sid, (0, 0, float("nan"), float("nan")))
    g = info.get(sid, ("?",) * 7)
    rows.append(dict(sid=sid, decode=decode, close=c_close, dc=decode + c_close,
                     lat=t_close - sid - off, gvals=s[0], gmeta=s[1], gwall=s[2],
                     gcpu=s[3], whole=whole, rss=rss_max(sid, sid + interval),
                     gat=g[0], late=g[1], clients=g[2], hosts=g[3],
                     unmapped=g[4], note=g[6].strip(", "),
                     lgcpu=float(lg[sid][4]), lgw=float(lg[sid][2]),
                     lga=float(lg[sid][3]), frames=int(lg[sid][0]),
                     bytes=int(lg[sid][1]), missed=int(lg[sid][5])))

# gmond's view against the last sweep's expected values.
f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
want = {}
for line in open(tmp + "/expect"):
    h, m, v = line.split()
    want[(h, m)] = float(v)
got = {}
for line in open(tmp + "/values"):
    p = line.split()
    if len(p) == 3:
        got[(p[0], p[1])] = p[2]
present = sum(1 for k in want if k in got)
current = 0
for k, v in want.items():
    if k not in got:
        continue
    try:
        g = float(got[k])
    except ValueError:
        continue
    if abs(g - f32(round(v, 2))) <= 0.011 + 1e-6 * abs(v):
        current += 1
hosts_want = {h for h, _ in want}
hosts_got = {h for h, _ in got}

def med(key, rs):
    v = [r[key] for r in rs if r[key] == r[key]]
    return statistics.median(v) if v else float("nan")

steady = rows[1:] if len(rows) > 1 else rows
fmt = lambda key, rs, f="%.3f": ", ".join(f % r[key] for r in rs)
print("| per sweep | median (sweeps 2-%d) | sweep 1 | sweeps 2-%d |" % (len(rows), len(rows)))
print("|---|---|---|---|")
def line(label, key, f="%.3f", unit=" s"):
    print("| %s | %s%s | %s%s | %s |" % (label, f % med(key, steady), unit,
          f % rows[0][key], unit, fmt(key, steady, f)))
nrec = rows[-1]["frames"] * per_gat
line("aggregator CPU: receive, verify, decode, sum (%s records)" % format(nrec, ","), "decode")
line("aggregator CPU: close (rates, hosts, hand-off to the sink, ledger, ACKs)", "close")
line("**aggregator CPU: decode + close** (target <= 1 s)", "dc")
line("frames sent to sweep closed (wall)", "lat")
line("Ganglia: paced send to gmond (wall)", "gwall")
line("Ganglia: paced send to gmond (CPU)", "gcpu")
line("aggregator CPU over the whole interval", "whole")
line("aggregator RSS, largest sample", "rss", "%d", " KiB")
line("loadgen CPU: write frames, read ACKs", "lgcpu", "%.1f", " ms")
line("loadgen: all frames written after", "lgw", "%.1f", " ms")
line("loadgen: all ACKs in after", "lga", "%.1f", " ms")
print()
r0 = rows[-1]
print("- per sweep: %d frames, %d bytes (%.1f bytes per record), %s gatherers "
      "(%s late), %s clients, %s hosts, %s unmapped%s" % (
          r0["frames"], r0["bytes"],
          r0["bytes"] / max(1, r0["frames"] * per_gat),
          r0["gat"], r0["late"], r0["clients"], r0["hosts"], r0["unmapped"],
          "; " + r0["note"] if r0["note"] else ""))
print("- Ganglia values/metadata per sweep: %s" % ", ".join(
    "%d/%d" % (r["gvals"], r["gmeta"]) for r in rows))
print("- aggregator peak RSS (VmHWM): %d KiB = %.0f MiB (target 256 MB)" % (hwm, hwm / 1024))
own = m_own + float(lg_total[1]) / 1000 * hz
# /proc/stat and the processes' own counters are sampled differently (on
# some VMs the machine's total even comes out below the processes'): only
# a machine total well above the benchmark's own says that something else
# ran.
print("- other load during the run: %.1f %% of all CPUs (the machine busy %.1f %% "
      "by /proc/stat; the benchmark's own processes, aggregator, gmond and "
      "loadgen, %.1f %%)" % (
          100 * max(0, m_busy - own) / (m_busy + m_idle),
          100 * m_busy / (m_busy + m_idle), 100 * own / (m_busy + m_idle)))
print("- sweeps where a gatherer could not send (ACK missing): %d" % sum(1 for r in rows if r["missed"]))
print("- loadgen: encoding every sweep beforehand %s ms CPU; %s ms CPU in all; peak RSS %s KiB" % lg_total)
print("- gmond after the last sweep: %d hosts of %d expected (%d + the totals host), "
      "%d metrics present of %d, %d with the last sweep's value: **loss %d** (%.3f %%)" % (
          len(hosts_got & hosts_want), len(hosts_want), int(nhosts), present, len(want),
          current, len(want) - current, 100 * (len(want) - current) / len(want)))
PY
echo
echo "- $(date -u +%Y-%m-%d), $(nproc) CPUs ($cpu), $(uname -sr), $(gmond --version 2>&1 | head -n 1)"
echo "- gmond's socket dropped ${drops:-?} datagrams over the run (receive buffer full)"
echo "- command: \`tests/bench/agg_load.sh $1 $sweeps\` ($btype build${LH_BENCH_PACE:+, pace $LH_BENCH_PACE})"
