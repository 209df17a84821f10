#!/usr/bin/env bash
# What lharvestd tells systemd (sd_notify(3), Type=notify units): a
# gatherer (on a simulated 2.15 server, sending to lharvest-dump) and an
# aggregator (dns = no, gmond on a UDP port nobody reads) each run with
# NOTIFY_SOCKET pointing at tests/tools/notify_listen.py, as systemd would
# start them.  Each must send, from its own pid (NotifyAccess=main):
# READY=1 once set up; WATCHDOG=1 at least every 0.6 s when
# WATCHDOG_USEC=1000000 (with WATCHDOG_PID its pid, or unset), none when
# WATCHDOG_PID is another process or WATCHDOG_USEC is unset; on SIGHUP
# RELOADING=1 with MONOTONIC_USEC (CLOCK_MONOTONIC, us) then READY=1; on
# SIGTERM STOPPING=1, then exit 0.  Then the units' command line (no -d,
# JOURNAL_STREAM set): it stays in the foreground, notifies from the pid
# systemd started, and logs with <N> priority prefixes.  Last, a
# NOTIFY_SOCKET in the abstract namespace ("@name").  lharvestd speaks the
# protocol itself: it must not link libsystemd (issue 9, memory).
#
#   bash it_notify.sh BUILD/daemon/lharvestd      (LH_SRCDIR = source tree)
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
listen=(python3 "$src/tests/tools/notify_listen.py")
# The same on an abstract name (NAME OUT_FILE; the output file appears
# once it listens), for NOTIFY_SOCKET=@NAME: notify_listen.py binds paths
# only.  The kernel takes every byte of the address as the name, so a
# stray NUL counted after it would miss this socket.
listen_abstract=(python3 -c '
import socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind(b"\0" + sys.argv[1].encode())
s.settimeout(0.1)
cred = struct.calcsize("3i")
end = time.monotonic() + 120
with open(sys.argv[2], "a") as out:
    while time.monotonic() < end:
        try:
            data, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(cred))
        except socket.timeout:
            continue
        pid = 0
        for lvl, kind, c in anc:
            if lvl == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("3i", c[:cred])[0]
        text = data.decode("utf-8", "replace").strip("\n").replace("\n", "|")
        out.write("%.6f %d %s\n" % (time.monotonic(), pid, text))
        out.flush()
')
# The aggregator links libganglia, whose gmond.conf cannot be freed
# (tests/ganglia/lsan.supp); for the sanitizer build.
. "$src/tests/ganglia/sanitizer.sh"
# WATCHDOG_USEC = 1 s: the daemon pings every 0.5 s, so the median gap
# between two WATCHDOG=1 is at most 0.6 s; a busy machine may delay one
# ping, but none may come later than 0.9 s after the last (systemd would
# act at 1 s).
gap_med=0.6
gap_max=0.9

# 0. No libsystemd (and what it pulls in) in the process.  (ldd's whole
#    output first: grep -q closing the pipe early would fail the pipeline
#    under pipefail.)
libs=$(ldd "$bin" 2>/dev/null)
if grep -q 'libsystemd\.so' <<<"$libs"; then
	t_fail "$bin does not link libsystemd" "$(grep 'libsystemd' <<<"$libs")"
else
	t_pass "$bin does not link libsystemd"
fi

# wait_note NAME AFTER REGEX SECONDS: a notification of run NAME (lines
# "T PID A=1|B=2" in $tmp/NAME.notify) after line AFTER whose text
# matches REGEX; its line number in note_line.
wait_note() {
	local i
	for ((i = 0; i < $4 * 10; i++)); do
		note_line=$(awk -v n="$2" -v re="$3" '
			NR > n { t = $0; sub(/^[^ ]+ [^ ]+ /, "", t)
				if (t ~ re) { print NR; exit } }' \
			"$tmp/$1.notify" 2>/dev/null)
		[ -n "$note_line" ] && return 0
		sleep 0.1
	done
	return 1
}

nlines() { wc -l <"$tmp/$1.notify" 2>/dev/null || echo 0; }

# run NAME CONF ENV... [-- ARGS...]: a notification listener on
# $tmp/NAME.sock (or, with $abstract set, on that abstract name), then
# lharvestd -f CONF ARGS (default -d) with NOTIFY_SOCKET pointing at it and
# ENV (VAR=value; @PID@ is replaced by lharvestd's own pid).  Sets run_pid;
# stderr in $tmp/NAME.err.
run() {
	local name=$1 conf=$2 i
	local -a envs=() args=(-d)
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	if [ $# -gt 0 ]; then
		shift
		args=("$@")
	fi
	local sock=$tmp/$name.sock
	if [ -n "${abstract:-}" ]; then
		sock=@$abstract
		"${listen_abstract[@]}" "$abstract" "$tmp/$name.notify" &
		pids+=("$!")
		for ((i = 0; i < 100; i++)); do
			[ -e "$tmp/$name.notify" ] && break
			sleep 0.05
		done
		[ -e "$tmp/$name.notify" ] || { echo "the abstract listener did not start"; exit 1; }
	else
		"${listen[@]}" "$sock" "$tmp/$name.notify" --seconds 120 &
		pids+=("$!")
		for ((i = 0; i < 100; i++)); do
			[ -S "$sock" ] && break
			sleep 0.05
		done
		[ -S "$sock" ] || { echo "notify_listen.py did not start"; exit 1; }
	fi
	# Nothing of the caller's own service manager leaks in.
	(exec env -u NOTIFY_SOCKET -u WATCHDOG_USEC -u WATCHDOG_PID \
		-u JOURNAL_STREAM NOTIFY_SOCKET="$sock" \
		"${envs[@]//@PID@/$BASHPID}" \
		"$bin" "${args[@]}" -f "$conf") 2>"$tmp/$name.err" &
	run_pid=$!
	pids+=("$run_pid")
}

# dump_notes NAME: what went wrong, for a failure message.
dump_notes() {
	echo "  notifications of $1:"
	sed 's/^/    /' "$tmp/$1.notify" 2>/dev/null | tail -n 20
	echo "  stderr of $1:"
	sed 's/^/    /' "$tmp/$1.err" 2>/dev/null | tail -n 10
}

# check_ready NAME: READY=1 within 15 s, and every notification so far
# from run_pid.
check_ready() {
	if ! wait_note "$1" 0 '^READY=1$' 15; then
		t_fail "$1: READY=1 at start"
		dump_notes "$1"
		return 1
	fi
	t_pass "$1: READY=1 at start"
	ready_line=$note_line
	local bad
	bad=$(awk -v p="$run_pid" '$2 != p' "$tmp/$1.notify")
	if [ -z "$bad" ]; then
		t_pass "$1: every notification from the main pid $run_pid"
	else
		t_fail "$1: every notification from the main pid $run_pid" \
			"$(cat "$tmp/$1.notify")" \
			"$(ps -o pid,ppid,args -p "$(awk -v p="$run_pid" '$2 != p { print $2 }' "$tmp/$1.notify" | sort -u | paste -sd,)" 2>&1)"
	fi
}

# check_watchdog NAME SECONDS: for SECONDS after READY=1, WATCHDOG=1
# every $gap_med s or less in the median, and no gap over $gap_max s (the
# first counted from READY=1).
check_watchdog() {
	local out
	sleep "$2"
	if out=$(awk -v from="$ready_line" -v max="$gap_max" -v med="$gap_med" '
		NR == from { last = $1; start = $1; next }
		NR > from && $3 == "WATCHDOG=1" {
			g[n++] = $1 - last
			if ($1 - last > gap) gap = $1 - last
			last = $1 }
		END { if (last - start < 2) { print "only " n " pings"; exit 1 }
			# insertion sort: a handful of gaps
			for (i = 1; i < n; i++)
				for (j = i; j > 0 && g[j - 1] > g[j]; j--) {
					t = g[j]; g[j] = g[j - 1]; g[j - 1] = t }
			m = (n % 2) ? g[(n - 1) / 2] : (g[n / 2 - 1] + g[n / 2]) / 2
			printf "%d pings, median gap %.3f s, largest %.3f s\n", n, m, gap
			exit gap > max || m > med }' "$tmp/$1.notify"); then
		t_pass "$1: WATCHDOG=1 every <= $gap_med s, none later than $gap_max s ($out)"
	else
		t_fail "$1: WATCHDOG=1 every <= $gap_med s, none later than $gap_max s ($out)"
		dump_notes "$1"
	fi
}

# check_no_watchdog NAME SECONDS: no WATCHDOG=1 at all for SECONDS.
check_no_watchdog() {
	sleep "$2"
	if grep -q ' WATCHDOG=1$' "$tmp/$1.notify"; then
		t_fail "$1: no WATCHDOG=1 ($3)"
		dump_notes "$1"
	else
		t_pass "$1: no WATCHDOG=1 ($3)"
	fi
}

# check_reload NAME: SIGHUP gives RELOADING=1 with MONOTONIC_USEC within
# 2 s of the listener's CLOCK_MONOTONIC, then READY=1.
check_reload() {
	local n line
	n=$(nlines "$1")
	kill -HUP "$run_pid"
	if ! wait_note "$1" "$n" '^RELOADING=1' 10; then
		t_fail "$1: SIGHUP gives RELOADING=1"
		dump_notes "$1"
		return
	fi
	line=$(sed -n "${note_line}p" "$tmp/$1.notify")
	if awk '{ t = $3; if (!sub(/^RELOADING=1\|MONOTONIC_USEC=/, "", t) ||
			t !~ /^[0-9]+$/) exit 1
		d = t / 1e6 - $1; exit (d < -2 || d > 2) }' <<<"$line"; then
		t_pass "$1: SIGHUP gives RELOADING=1 with MONOTONIC_USEC"
	else
		t_fail "$1: SIGHUP gives RELOADING=1 with MONOTONIC_USEC" "$line"
	fi
	if wait_note "$1" "$note_line" '^READY=1$' 10; then
		t_pass "$1: READY=1 after the reload"
	else
		t_fail "$1: READY=1 after the reload"
		dump_notes "$1"
	fi
}

# check_stop NAME: SIGTERM gives STOPPING=1 and exit 0 within 10 s.
check_stop() {
	local n i rc
	n=$(nlines "$1")
	kill -TERM "$run_pid"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$run_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$run_pid" 2>/dev/null; then
		kill -KILL "$run_pid"
		t_fail "$1: exits within 10 s of SIGTERM"
		return
	fi
	wait "$run_pid"
	rc=$?
	if wait_note "$1" "$n" '^STOPPING=1$' 2; then
		t_pass "$1: SIGTERM gives STOPPING=1"
	else
		t_fail "$1: SIGTERM gives STOPPING=1"
		dump_notes "$1"
	fi
	if [ "$rc" -eq 0 ]; then
		t_pass "$1: exit 0 after SIGTERM"
	else
		t_fail "$1: exit 0 after SIGTERM (got $rc)"
		dump_notes "$1"
	fi
}

# A simulated Lustre 2.15 server and a receiver for its gatherer.
python3 "$src/tests/sim/lustresim.py" tree --root "$tmp/lsim" --version 2.15 \
	>"$tmp/sim.log" 2>&1 || { cat "$tmp/sim.log"; exit 1; }
make_keys "$tmp/keys" "it-notify-key-0123456789abcdef-0123"
start_dump dump -k "$tmp/keys"
gconf() { # NAME: a gatherer configuration with its own state_dir
	mkdir -m 700 "$tmp/state-$1"
	cat >"$tmp/$1.conf" <<-EOF
		role = "gatherer"
		interval = 1
		lustre_root = "$tmp/lsim/oss1"
		server = "$dump_addr"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-$1"
		name = "$1"
	EOF
}

# 1. The gatherer, watchdog with WATCHDOG_PID = its pid.
gconf gatherer
run gatherer "$tmp/gatherer.conf" WATCHDOG_USEC=1000000 WATCHDOG_PID=@PID@
if check_ready gatherer; then
	check_watchdog gatherer 3
	check_reload gatherer
	check_reload gatherer
	check_stop gatherer
fi

# 2. The aggregator, WATCHDOG_PID unset; gmond's port is read by no one.
gm_udp=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' \
	"$gm_udp" >"$tmp/send.conf"
mkdir -m 700 "$tmp/state-agg"
cat >"$tmp/agg.conf" <<EOF
role = "aggregator"
http { listen = "127.0.0.1:0" }
interval = 1
listen = "127.0.0.1:0"
secret_file = "$tmp/keys"
state_dir = "$tmp/state-agg"
name = "agg"
dns = no
gmond_conf = "$tmp/send.conf"
EOF
run aggregator "$tmp/agg.conf" WATCHDOG_USEC=1000000
if check_ready aggregator; then
	check_watchdog aggregator 3
	check_reload aggregator
	check_stop aggregator
fi

# 3. No watchdog when it is meant for another process, or not asked for.
gconf other
run other "$tmp/other.conf" WATCHDOG_USEC=1000000 WATCHDOG_PID=1
if check_ready other; then
	check_no_watchdog other 1.5 "WATCHDOG_PID is another process"
	check_stop other
fi
gconf nowd
run nowd "$tmp/nowd.conf"
if check_ready nowd; then
	check_no_watchdog nowd 1.5 "no WATCHDOG_USEC"
	check_stop nowd
fi

# 4. The units' command line: no -d, JOURNAL_STREAM set (as systemd sets
#    it when stderr is the journal).  No detaching: READY=1 comes from the
#    pid started, and the log lines carry priority prefixes.
gconf unit
run unit "$tmp/unit.conf" JOURNAL_STREAM=8:1234 WATCHDOG_USEC=1000000 -- \
	-v
if check_ready unit; then
	if grep -qE '^<6>gatherer unit: ' "$tmp/unit.err" &&
		! grep -qvE '^<[0-7]>' "$tmp/unit.err"; then
		t_pass "unit: log lines with <N> priority prefixes"
	else
		t_fail "unit: log lines with <N> priority prefixes" \
			"$(head -n 5 "$tmp/unit.err")"
	fi
	check_reload unit
	check_stop unit
fi

# 5. NOTIFY_SOCKET=@name: the abstract namespace, with the watchdog.
gconf abstract
abstract=lharvestd-it-notify-$$
run abstract "$tmp/abstract.conf" WATCHDOG_USEC=1000000
abstract=
if check_ready abstract; then
	check_watchdog abstract 3
	check_reload abstract
	check_stop abstract
fi

t_summary
