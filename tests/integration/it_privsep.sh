#!/usr/bin/env bash
# Privilege separation of the gatherer (issue 15 item 10), as root, with
# user = "nobody", against the simulator and a real lharvest-dump
# receiver on 127.0.0.1:
#
#  1. Lustre 2.15 (the tree is 0644 under /proc): a gatherer that ran as
#     root leaves a root-owned state; started again with the user, it gives
#     state_dir to the user, restores the state, forks no reader, and the
#     process holding the TCP socket has uid 65534 (every uid field); on
#     SIGHUP the root-owned key read at start is kept;
#  2. Lustre 2.17 with its debugfs part mode 0700, owner root (the user
#     cannot list it): three gatherers (mds1, oss1, oss2) each fork a stats reader;
#     the socket holder is not root, the reader is uid 0 with no capability
#     and no socket to the network, the two processes' resident memory is
#     reported and stays under the gatherer's 16 MiB budget; through steps,
#     a client appearing on a known target (its uuid read on request), a
#     clear, and the reader SIGKILLed (the gatherer says so in one line and
#     exits 1, then starts again from its state), the sums delivered equal
#     the simulator's truth exactly (gatherer_check.py);
#  3. (run between 1 and 2) a gatherer started before Lustre: no target,
#     a debugfs closed to the user: a reader is forked all the same, and
#     reads the 2.17 targets once they appear.
#
# Needs root (skipped otherwise) and the user nobody.
set -uo pipefail
bin=$1
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
sim=(python3 "$src/tests/sim/lustresim.py")
checker=(python3 "$src/tests/integration/gatherer_check.py")
user=nobody

if [ "$(id -u)" != 0 ] || ! uid=$(id -u "$user" 2>/dev/null); then
	echo "skip: needs root and the user $user"
	t_summary
	exit 0
fi
# The user must reach state_dir through the test's directory.
chmod 755 "$tmp"
make_keys "$tmp/keys" "it-privsep-key-0123456789abcdef0123"

now_s() { echo "${EPOCHREALTIME%.*}"; }

# wait_sweep SENDER MIN SECONDS: the dump printed a record of SENDER with
# a sweep id >= MIN.
wait_sweep() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		awk -v s="\"sender\":\"$1\"" -v min="$2" '
			index($0, s) && match($0, /"sweep":[0-9]+/) &&
			substr($0, RSTART + 8, RLENGTH - 8) + 0 >= min { f = 1 }
			END { exit !f }' "$tmp"/d*.out 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

conf() { # conf NAME ROOT USER
	cat >"$tmp/$1.conf" <<EOF
role = "gatherer"
interval = 1
lustre_root = "$2"
server = "$dump_addr"
secret_file = "$tmp/keys"
state_dir = "$tmp/st-$1"
name = "$1"
user = "$3"
EOF
}

declare -A gpid=()
start_g() { # start_g NAME
	"$bin" -d -f "$tmp/$1.conf" >>"$tmp/g-$1.out" 2>>"$tmp/g-$1.err" &
	gpid[$1]=$!
	pids+=("$!")
}

stop_g() { # stop_g NAME: SIGTERM, true when it exited 0 within 5 s
	local p=${gpid[$1]} i
	kill -TERM "$p" 2>/dev/null || return 1
	for ((i = 0; i < 50; i++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	wait "$p"
}

# holders PORT: "pid uid-fields" of every process with a TCP connection
# to 127.0.0.1:PORT (the gatherers: the dump's own sockets have it as
# their local port).
holders() {
	python3 - "$1" <<'EOF'
import os, sys
port = int(sys.argv[1])
inodes = set()
for f in ("/proc/net/tcp", "/proc/net/tcp6"):
    try:
        lines = open(f).read().splitlines()[1:]
    except OSError:
        continue
    for line in lines:
        p = line.split()
        if int(p[2].split(":")[1], 16) == port and p[3] == "01":
            inodes.add("socket:[%s]" % p[9])
for pid in sorted(os.listdir("/proc")):
    if not pid.isdigit():
        continue
    try:
        fds = os.listdir("/proc/%s/fd" % pid)
        if not any(os.readlink("/proc/%s/fd/%s" % (pid, fd)) in inodes
                   for fd in fds):
            continue
        uid = [l.split()[1:] for l in open("/proc/%s/status" % pid)
               if l.startswith("Uid:")][0]
        print(pid, " ".join(uid))
    except OSError:
        continue
EOF
}

# status_of PID FIELD: a field of /proc/PID/status, without its name.
status_of() { awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ /, ""); print }' "/proc/$1/status"; }

# reader_of PID: the stats reader, the child of PID named lharvestd-read.
reader_of() {
	local c kids=()
	read -ra kids 2>/dev/null <"/proc/$1/task/$1/children"
	for c in "${kids[@]}"; do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = lharvestd-read ] && echo "$c"
	done
}

mkdir -m 700 "$tmp/dstate"
start_dump d1 -k "$tmp/keys" --state "$tmp/dstate"
port=${dump_addr##*:}

# ------------------------------------------------ 1. 2.15: no reader at all
R15=$tmp/sim15
"${sim[@]}" tree --root "$R15" --version 2.15 --servers 1 --clients 8 \
	>/dev/null || { echo "simulator failed"; exit 1; }
chmod -R go+rX "$R15"
conf s15 "$R15/oss1" ""
start_g s15
if wait_sweep s15 "$(($(now_s) + 1))" 20 && stop_g s15; then
	t_pass "2.15: a gatherer as root (no user) saved its state"
else
	t_fail "2.15: a gatherer as root (no user) saved its state" \
		"$(tail -n 5 "$tmp/g-s15.err")"
fi
owner=$(stat -c %u "$tmp/st-s15/gatherer.state" 2>/dev/null)
t_check "2.15: that state is root's" [ "$owner" = 0 ]

conf s15 "$R15/oss1" "$user"
start_g s15
if wait_sweep s15 "$(($(now_s) + 1))" 20; then
	t_pass "2.15: the gatherer started again with user = \"$user\" delivers"
else
	t_fail "2.15: the gatherer started again with user = \"$user\" delivers" \
		"$(tail -n 5 "$tmp/g-s15.err")"
fi
h=$(holders "$port")
if [ "$h" = "${gpid[s15]} $uid $uid $uid $uid" ]; then
	t_pass "2.15: the TCP socket is held by the gatherer, uid $uid ($h)"
else
	t_fail "2.15: the TCP socket is held by the gatherer, uid $uid" \
		"holders: ${h:-none}; gatherer pid ${gpid[s15]}"
fi
t_check "2.15: no stats reader (the user reads /proc/fs/lustre itself)" \
	[ -z "$(reader_of "${gpid[s15]}")" ]
if grep -q "running as $user (uid $uid), reading the Lustre tree itself" \
	"$tmp/g-s15.err" && grep -q "given to uid $uid" "$tmp/g-s15.err" &&
	grep -q "state restored" "$tmp/g-s15.err"; then
	t_pass "2.15: state_dir taken over from root, state restored, one line each"
else
	t_fail "2.15: state_dir taken over from root, state restored" \
		"$(cat "$tmp/g-s15.err")"
fi
bad=$(find "$tmp/st-s15" ! -user "$user" | head -n 3)
t_check "2.15: state_dir and its files are the user's now" [ -z "$bad" ]
# SIGHUP: the key file is root's (0600): the user cannot read it again,
# so the key read at start stays, and the rest of the file applies.
kill -HUP "${gpid[s15]}"
if wait_grep "$tmp/g-s15.err" 'configuration reloaded' 10 &&
	grep -q "keys: Permission denied; keeping the key read at start" \
		"$tmp/g-s15.err" &&
	wait_sweep s15 "$(($(now_s) + 1))" 20; then
	t_pass "2.15: SIGHUP keeps the root-owned key read at start, and goes on"
else
	t_fail "2.15: SIGHUP keeps the root-owned key read at start, and goes on" \
		"$(tail -n 4 "$tmp/g-s15.err")"
fi
stop_g s15 || t_fail "2.15: the gatherer exited 0 on SIGTERM"

# ------------------ 3 (first, it is quick). Lustre not started yet: a reader
# The gatherer starts before Lustre does: no target anywhere, and a
# debugfs the user cannot enter.  A 2.17 server cannot be told from an
# older one yet, so the reader is forked, and reads the targets once
# they appear.
L=$tmp/late
mkdir -p "$L/oss1/sys/kernel/debug"
chmod 700 "$L/oss1/sys/kernel/debug"
conf late "$L/oss1" "$user"
start_g late
if wait_grep "$tmp/g-late.err" "the Lustre tree needs root: read by the stats reader" 10 &&
	wait_grep "$tmp/g-late.err" "no Lustre target found" 10; then
	t_pass "before Lustre: no target, debugfs closed to $user: a reader all the same"
else
	t_fail "before Lustre: no target, debugfs closed to $user: a reader all the same" \
		"$(cat "$tmp/g-late.err")"
fi
"${sim[@]}" tree --root "$tmp/late-src" --version 2.17 --servers 1 \
	--clients 4 >/dev/null || { echo "simulator failed"; exit 1; }
chmod -R go+rX "$tmp/late-src"
# Lustre starts: each part renamed into place (debugfs keeps its mode).
mv "$tmp/late-src/oss1/proc" "$L/oss1/"
mv "$tmp/late-src/oss1/sys/fs" "$L/oss1/sys/"
mv "$tmp/late-src/oss1/sys/kernel/debug/lustre" "$L/oss1/sys/kernel/debug/"
if wait_grep "$tmp/g-late.err" "Lustre targets found" 20 &&
	wait_sweep late "$(($(now_s) + 1))" 20 &&
	grep -q '"sender":"late".*"nid":"[^"]*@' "$tmp/d1.out"; then
	t_pass "then Lustre 2.17 starts: its targets are read, through the reader"
else
	t_fail "then Lustre 2.17 starts: its targets are read, through the reader" \
		"$(tail -n 4 "$tmp/g-late.err")"
fi
stop_g late || t_fail "the late gatherer exited 0 on SIGTERM"

# ----------------------------------- 2. 2.17: debugfs 0700, the reader reads
# A receiver of its own: the checker sums every record it printed.
mkdir -m 700 "$tmp/dstate2"
start_dump d2 -k "$tmp/keys" --state "$tmp/dstate2"
port=${dump_addr##*:}
R=$tmp/sim17
"${sim[@]}" run --root "$R" --scenario "$src/tests/sim/scenarios/gatherer-site.json" \
	--version 2.17 --start-time $(($(now_s) - 60)) --steps 1 --quiet \
	>>"$tmp/sim.log" 2>&1 || { echo "simulator failed"; exit 1; }
chmod -R go+rX "$R"
servers=(mds1 oss1 oss2)
for n in "${servers[@]}"; do
	chmod 700 "$R/$n/sys/kernel/debug"
	chown root:root "$R/$n/sys/kernel/debug"
done
cp "$R/truth-latest.json" "$tmp/baseline.json"
if ! setpriv --reuid="$uid" --regid="$uid" --clear-groups \
	ls "$R/oss1/sys/kernel/debug" >/dev/null 2>&1; then
	t_pass "2.17: $user cannot list the debugfs part"
else
	t_fail "2.17: $user cannot list the debugfs part"
fi
for n in "${servers[@]}"; do
	cp "$R/$n/expected-once.jsonl" "$tmp/once0-$n.jsonl"
	conf "$n" "$R/$n" "$user"
	start_g "$n"
done
t0=$(now_s)
ok=1
for n in "${servers[@]}"; do
	wait_sweep "$n" 1 20 || ok=0
done
if [ "$ok" = 1 ]; then
	t_pass "2.17: every gatherer delivered its baseline"
else
	t_fail "2.17: every gatherer delivered its baseline" \
		"$(tail -n 5 "$tmp/g-oss1.err")"
fi

# step: one simulator step, then a sweep of each gatherer after it.
step() {
	"${sim[@]}" run --root "$R" --steps 1 --quiet >>"$tmp/sim.log" 2>&1
	settle
}
settle() {
	local target=$(($(now_s) + 2)) n
	for n in "${servers[@]}"; do
		wait_sweep "$n" "$target" 20 || {
			t_fail "a sweep of $n after the step" "$(tail -n 5 "$tmp/g-$n.err")"
			return 1
		}
	done
}
ev() { "${sim[@]}" event --root "$R" "$@" --now >>"$tmp/sim.log" 2>&1; }

step
h=$(holders "$port")
want=$(for n in "${servers[@]}"; do echo "${gpid[$n]} $uid $uid $uid $uid"; done | sort)
if [ "$(echo "$h" | sort)" = "$want" ]; then
	t_pass "2.17: the TCP sockets are held by the gatherers, uid $uid"
else
	t_fail "2.17: the TCP sockets are held by the gatherers, uid $uid" \
		"holders: ${h:-none}" "gatherers: $want"
fi
rd=$(reader_of "${gpid[oss1]}")
if [ -n "$rd" ] && [ "$(status_of "$rd" Uid)" = "0 0 0 0" ] &&
	[ "$(status_of "$rd" CapEff)" = 0000000000000000 ] &&
	[ "$(status_of "$rd" CapPrm)" = 0000000000000000 ] &&
	[ "$(status_of "$rd" NoNewPrivs)" = 1 ] &&
	! holders "$port" | grep -q "^$rd "; then
	t_pass "2.17: the stats reader (pid $rd) is uid 0 with no capability and no socket"
else
	t_fail "2.17: the stats reader is uid 0 with no capability and no socket" \
		"reader: ${rd:-none}" "$(grep -E 'Uid|Cap|NoNew' "/proc/$rd/status" 2>/dev/null)"
fi
t_check "2.17: the gatherer says it uses the reader, in one line" \
	grep -q "the Lustre tree needs root: read by the stats reader, pid $rd" \
	"$tmp/g-oss1.err"
g_rss=$(status_of "${gpid[oss1]}" VmRSS | awk '{ print $1 }')
r_rss=$(status_of "$rd" VmRSS | awk '{ print $1 }')
echo "# RSS: gatherer $g_rss kB + stats reader $r_rss kB = $((g_rss + r_rss)) kB"
# A sanitizer build's shadow memory is no measure of the budget.
if ldd "$bin" 2>/dev/null | grep -q 'libasan'; then
	echo "# sanitizer build: the 16 MiB budget is not checked"
else
	t_check "2.17: gatherer and reader together under 16 MiB" \
		[ $((g_rss + r_rss)) -lt 16384 ]
fi

# A client new on known targets (its uuid asked for by name), a clear.
ev client_appear --nid 10.1.0.10@o2ib
settle
step
ev clear --target scratch-OST0000
settle
step

# The reader killed: one line, exit 1, no state written after it.
kill -KILL "$rd"
for ((i = 0; i < 100; i++)); do
	kill -0 "${gpid[oss1]}" 2>/dev/null || break
	sleep 0.1
done
wait "${gpid[oss1]}"
rc=$?
if [ "$rc" = 1 ] && [ "$(grep -c 'stats reader (pid' "$tmp/g-oss1.err")" = 1 ] &&
	grep -q 'stopping: the Lustre tree cannot be read' "$tmp/g-oss1.err"; then
	t_pass "2.17: the reader SIGKILLed: the gatherer says so and exits 1"
else
	t_fail "2.17: the reader SIGKILLed: the gatherer says so and exits 1" \
		"exit status $rc" "$(tail -n 4 "$tmp/g-oss1.err")"
fi
# I/O while it is down: counted once it is back, from its state.
"${sim[@]}" run --root "$R" --steps 1 --quiet >>"$tmp/sim.log" 2>&1
start_g oss1
settle
step

cp "$R/truth-latest.json" "$tmp/final.json"
ok=1
for n in "${servers[@]}"; do stop_g "$n" || ok=0; done
t_check "2.17: every gatherer exited 0 on SIGTERM (their readers with them)" [ "$ok" = 1 ]
stop_dump || t_fail "the receiver stopped on SIGTERM"
for n in "${servers[@]}"; do
	[ -z "$(reader_of "${gpid[$n]}")" ] || t_fail "the reader of $n is gone"
done
args=(--baseline "$tmp/baseline.json" --final "$tmp/final.json"
	--events "$R/events.jsonl" --dump "$tmp/d2.out")
for n in "${servers[@]}"; do
	args+=(--first-sweep "$n=$tmp/once0-$n.jsonl")
done
if "${checker[@]}" "${args[@]}" >"$tmp/check.out" 2>&1; then
	t_pass "2.17: every client's deltas add up to the truth exactly ($(tail -n 1 "$tmp/check.out"))"
else
	t_fail "2.17: every client's deltas add up to the truth exactly" \
		"$(head -n 40 "$tmp/check.out")"
fi
echo "# $(($(now_s) - t0)) s for the 2.17 part"
t_summary
