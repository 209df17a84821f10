#!/usr/bin/env bash
# `lharvest top` in a terminal of 80 x 24 (tmux, on a server of its own):
# through a real aggregator fed by the simulator and three gatherers
# (apilib.sh), the captured screen shows the header line, the hosts of
# scratch in the true order of their read rates (what the simulator
# wrote), fits 80 columns, and reacts to the keys: h sorts by host name,
# f shows one filesystem, r sorts by read again, q quits.  About 25 s.
#
#   bash it_top.sh BUILD/daemon/lharvestd      (LH_SRCDIR = source tree)
set -uo pipefail
bin=$1
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
# shellcheck source=agglib.sh
. "$(dirname "$0")/agglib.sh"
# shellcheck source=apilib.sh
. "$(dirname "$0")/apilib.sh"
# shellcheck source=../ganglia/sanitizer.sh
. "$src/tests/ganglia/sanitizer.sh"
command -v tmux >/dev/null || { echo "no tmux: apt-get install tmux"; exit 1; }

tsock=$tmp/tmux.sock
tm() { tmux -S "$tsock" "$@"; }

abort() {
	t_fail "$@" "--- screen" "$(cat "$tmp/screen" 2>/dev/null)" \
		"--- aggregator (last lines)" "$(tail -n 8 "$tmp"/agg.log 2>/dev/null)"
	tm kill-server 2>/dev/null
	t_summary
	exit 1
}

# screen_until SECONDS PROGRAM ARGS...: capture the pane until the Python
# PROGRAM (reading the screen on stdin, given ARGS) exits 0.
screen_until() {
	local i
	for ((i = 0; i < $1 * 5; i++)); do
		tm capture-pane -p -t top >"$tmp/screen" 2>/dev/null
		python3 -c "$2" "${@:3}" <"$tmp/screen" && return 0
		sleep 0.2
	done
	return 1
}

# The screen's table: HOST FS per line, in order.
table='
import sys
rows = [l.split()[:2] for l in sys.stdin.read().splitlines()[3:] if l.strip()]
'

api_start
# Each host's true read rate on scratch: what the simulator wrote over
# three sweeps, once the gatherers are counted.
s0=$(sim_last)
for i in 1 2 3; do
	wait_sweep "$agg_log" '3 gatherers' 20 || abort "sweep $i with the three gatherers closed"
done
s1=$(sim_last)
want_read=()
while read -r h; do want_read+=("$h"); done < <(APIDIR="$src/tests/integration" python3 -c '
import os, sys
sys.path.insert(0, os.environ["APIDIR"])
import apicheck
g = apicheck.growth(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
for h, fs in sorted((k for k in g if k[1] == "scratch"), key=lambda k: (-g[k]["read_bytes"], k)):
    print(h)
' "$R/truth.jsonl" "$tmp/hosts" "$s0" "$s1")
[ "${#want_read[@]}" -ge 5 ] || abort "the truth names the hosts of scratch" "${want_read[*]}"

tm -f /dev/null new-session -d -s top -x 80 -y 24 \
	"TERM=xterm LANG=C.UTF-8 '$lharvest' -H '$http' top 2>'$tmp/top.err'; echo exited \$? >'$tmp/top.rc'; sleep 30" ||
	abort "tmux started lharvest top"

# 1. The header, and every row of the table, by read rate.
screen_until 15 "$table
s = open('$tmp/screen').read().splitlines()
sys.exit(not (s and s[0].startswith('lharvest top: agg (aggregator)') and len(rows) == 12))" ||
	abort "lharvest top shows the header and the 12 (host, filesystem) rows"
t_pass "lharvest top: the header line and every (host, filesystem)"
t_check "lharvest top: nothing wider than 80 columns" \
	bash -c "! awk 'length(\$0) > 80' '$tmp/screen' | grep -q ."
t_check "lharvest top: rates in human units" grep -qE ' [0-9.]+ MiB/s ' "$tmp/screen"
t_check "lharvest top: the header says the sort and the filesystem" grep -q '^sort: read .* fs: all ' "$tmp/screen"

# 2. f: scratch only (the filesystems in order: home, scratch; f goes
# from all to home, then to scratch).
tm send-keys -t top f
screen_until 10 "$table
sys.exit(not ('fs: home' in open('$tmp/screen').read() and rows and all(r[1] == 'home' for r in rows)))" ||
	abort "f: home's rows only"
tm send-keys -t top f
order="import sys; want = sys.argv[1:]
$table
sys.exit(not ([r[0] for r in rows] == want and all(r[1] == 'scratch' for r in rows)))"
# The rows by true read rate, the same order the API must give.
if screen_until 10 "$order" "${want_read[@]}"; then
	t_pass "f twice: scratch's hosts, by read rate in the true order (${want_read[*]})"
else
	t_fail "f twice: scratch's hosts, by read rate in the true order" "want ${want_read[*]}" "$(cat "$tmp/screen")"
fi

# 3. h: by host name.
mapfile -t by_name < <(printf '%s\n' "${want_read[@]}" | sort)
tm send-keys -t top h
if screen_until 10 "$order" "${by_name[@]}"; then
	t_pass "h: the same hosts by name (${by_name[*]})"
else
	t_fail "h: the same hosts by name" "want ${by_name[*]}" "$(cat "$tmp/screen")"
fi
t_check "h: the header says the new sort" grep -q '^sort: host ' "$tmp/screen"

# 4. r: back to read rate.  q: quits with status 0.
tm send-keys -t top r
if screen_until 10 "$order" "${want_read[@]}"; then
	t_pass "r: by read rate again"
else
	t_fail "r: by read rate again" "$(cat "$tmp/screen")"
fi
tm send-keys -t top q
wait_grep "$tmp/top.rc" 'exited' 10 || abort "q: lharvest top quit"
t_check "q: lharvest top exited with status 0, nothing on stderr" \
	bash -c "grep -qx 'exited 0' '$tmp/top.rc' && ! [ -s '$tmp/top.err' ]"
tm kill-server 2>/dev/null

# 5. No daemon: one line and status 1, before taking the screen.
term "$agg_pid" aggregator || t_fail "the aggregator exited 0 on SIGTERM" "$term_msg"
"$lharvest" -H "$http" top >"$tmp/gone.out" 2>&1
rc=$?
t_check "lharvest top with the daemon gone: status 1, one line" \
	bash -c "[ $rc -eq 1 ] && [ \"\$(cat '$tmp/gone.out')\" = 'lharvest: cannot reach lharvestd at $http: Connection refused' ]"
t_summary
