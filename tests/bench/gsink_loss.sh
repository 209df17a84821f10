#!/usr/bin/env bash
# gsink_loss.sh BUILD_DIR [HOSTS [RUNS [PACE...]]]
#
# How many spoofed metrics a real gmond (a private one on 127.0.0.1, see
# tests/ganglia/gmond.sh) loses when lhspoof sends HOSTS x 4 metrics through
# gmetric/sink.c at each PACE (packets per second, 0 = unpaced): two sweeps
# 20 s apart, metadata only in the first (--meta-interval 3600), then one
# read of gmond's XML (never during a send: gmond stops reading UDP while
# it writes XML).  Every run starts a fresh gmond.  Per run it prints
#   pace P run R: present N/T current C/T sweep1 S1 ms sweep2 S2 ms
# "present": metrics gmond knows (their metadata and a value arrived);
# "current": metrics showing the second sweep's value.  Then the median of
# the runs per pace.  Defaults: 20000 hosts, 3 runs, paces 0 10000 20000.
# Each run also gives lhspoof's CPU: in all (cpu, ms: user + system of
# the whole process, from bash's times, so a build from before issue 19
# is measured the same way) and per sweep (cpu1, cpu2: the puts and the
# paced send, from lhspoof's own lines since issue 19), and the datagrams
# gmond's socket dropped (the drops column of /proc/net/udp: its receive
# buffer was full).  GSINK_TICK_MS sets the sink's tick (lhspoof
# --flush-ms, since issue 19); unset, the sink's default.
# Results go into docs/performance.md by hand, with the machine and date.
set -u
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [HOSTS [RUNS [PACE...]]]" >&2; exit 2; }
build=$(cd "$1" && pwd)
hosts=${2:-20000}
runs=${3:-3}
shift $(($# < 3 ? $# : 3))
paces=("$@")
[ ${#paces[@]} -gt 0 ] || paces=(0 10000 20000)
src=$(cd "$(dirname "$0")/../.." && pwd)
gm=$src/tests/ganglia/gmond.sh
spoof=$build/daemon/lhspoof
[ -x "$spoof" ] || { echo "no $spoof" >&2; exit 1; }
tmp=$(mktemp -d)
trap '"$gm" stop "$tmp/g"; rm -rf "$tmp"' EXIT
total=$((hosts * 4))

start_gmond() { # sets udp, tcp
	local i
	for ((i = 0; i < 20; i++)); do
		udp=$((20000 + RANDOM % 30000))
		tcp=$((udp + 1))
		"$gm" start "$tmp/g" "$udp" "$tcp" >/dev/null 2>"$tmp/start.err" && return 0
	done
	cat "$tmp/start.err" >&2
	return 1
}

# udp_drops PORT: datagrams the socket bound to 127.0.0.1:PORT dropped.
udp_drops() {
	awk -v p="$(printf '0100007F:%04X' "$1")" '$2 == p { print $NF; f = 1 } END { if (!f) print "?" }' /proc/net/udp
}

# children_ms: user + system CPU of this shell's waited-for children, ms
# (times, a builtin, run in this shell: not in a pipe's subshell).
children_ms() {
	times >"$tmp/times"
	awk 'NR == 2 {
		t = 0
		for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] }
		printf "%d", t * 1000 }' "$tmp/times"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# gmond $(gmond --version 2>&1 | head -1), net.core.rmem_default $(sysctl -n net.core.rmem_default)"
tick=()
if [ -n "${GSINK_TICK_MS:-}" ]; then tick=(--flush-ms "$GSINK_TICK_MS"); fi
echo "# $hosts hosts x 4 metrics = $total metrics, $runs runs per pace, tick ${GSINK_TICK_MS:-default} ms"
for pace in "${paces[@]}"; do
	: >"$tmp/present" && : >"$tmp/current" && : >"$tmp/cpu" && : >"$tmp/cpu1" && : >"$tmp/cpu2"
	for ((r = 1; r <= runs; r++)); do
		start_gmond || exit 1
		printf 'udp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' "$udp" >"$tmp/send.conf"
		children_ms >"$tmp/cpu0"
		cpu0=$(cat "$tmp/cpu0")
		"$spoof" -c "$tmp/send.conf" --hosts "$hosts" --sweeps 2 \
			--period-ms 20000 --pace "$pace" --meta-interval 3600 "${tick[@]}" \
			>"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
		children_ms >"$tmp/cpu0"
		cpu=$(($(cat "$tmp/cpu0") - cpu0))
		sleep 2
		drops=$(udp_drops "$udp")
		"$gm" xml "$tcp" --values >"$tmp/values"
		"$gm" stop "$tmp/g"
		present=$(wc -l <"$tmp/values")
		current=$(grep -c '\.25$' "$tmp/values")
		s1=$(sed -n 's/^sweep 0 sent in \([0-9]*\) ms.*/\1/p' "$tmp/err")
		s2=$(sed -n 's/^sweep 1 sent in \([0-9]*\) ms.*/\1/p' "$tmp/err")
		c1=$(sed -n 's/^sweep 0 sent in .* cpu \([0-9.]*\) ms$/\1/p' "$tmp/err")
		c2=$(sed -n 's/^sweep 1 sent in .* cpu \([0-9.]*\) ms$/\1/p' "$tmp/err")
		echo "pace $pace run $r: present $present/$total current $current/$total sweep1 $s1 ms sweep2 $s2 ms cpu $cpu ms cpu1 ${c1:--} ms cpu2 ${c2:--} ms gmond_drops $drops"
		echo "$present" >>"$tmp/present"
		echo "$current" >>"$tmp/current"
		echo "$cpu" >>"$tmp/cpu"
		echo "${c1:-nan}" >>"$tmp/cpu1"
		echo "${c2:-nan}" >>"$tmp/cpu2"
	done
	p=$(median <"$tmp/present")
	c=$(median <"$tmp/current")
	echo "pace $pace median: present $p/$total ($(awk -v a="$p" -v t="$total" 'BEGIN{printf "%.2f", 100*(t-a)/t}')% lost)" \
		"current $c/$total ($(awk -v a="$c" -v t="$total" 'BEGIN{printf "%.2f", 100*(t-a)/t}')% lost)" \
		"cpu $(median <"$tmp/cpu") ms (cpu1 $(median <"$tmp/cpu1") ms cpu2 $(median <"$tmp/cpu2") ms)"
done
