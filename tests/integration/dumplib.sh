# shellcheck shell=bash
# Helpers of the lharvest-dump integration tests (it_dump_*.sh); sourced,
# not run.  The caller sets bin=$1 (the lharvestd binary) first.
# Everything listens on 127.0.0.1, on a port the kernel picks (port 0, read
# back from the "listening on" line), so there is no race for a free port.

: "${bin:?dumplib.sh: set bin to the lharvestd binary first}"
bindir=$(cd "$(dirname "$bin")" && pwd)
dump=$bindir/lharvest-dump
client=$bindir/lhclient
[ -x "$dump" ] || { echo "no $dump"; exit 1; }
[ -x "$client" ] || { echo "no $client"; exit 1; }

tmp=$(mktemp -d)
pids=()
passed=0
failed=0

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

t_pass() { passed=$((passed + 1)); echo "ok - $1"; }
t_fail() {
	failed=$((failed + 1))
	echo "FAIL - $1"
	shift
	[ $# -eq 0 ] || printf '  %s\n' "$@"
}
t_check() { # name, command...: pass if the command succeeds
	local name=$1
	shift
	if "$@"; then t_pass "$name"; else t_fail "$name"; fi
}
t_summary() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# A key file, mode 0600: make_keys FILE KEY...
make_keys() {
	local f=$1
	shift
	printf '%s\n' "$@" >"$f"
	chmod 600 "$f"
}

# wait_grep FILE PATTERN SECONDS: wait until FILE holds a line matching
# the extended regex.
wait_grep() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# start_dump NAME ARGS...: lharvest-dump --listen 127.0.0.1:0 ARGS in the
# background; stdout in $tmp/NAME.out, stderr in $tmp/NAME.err.  Sets
# dump_pid and dump_addr.
start_dump() {
	local name=$1
	shift
	"$dump" --listen 127.0.0.1:0 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	dump_pid=$!
	pids+=("$dump_pid")
	if ! wait_grep "$tmp/$name.err" 'listening on ' 10; then
		cat "$tmp/$name.err"
		echo "lharvest-dump did not start"
		exit 1
	fi
	dump_addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\) .*/\1/p' \
		"$tmp/$name.err")
}

# stop_dump: SIGTERM, wait at most 10 s; the exit status of the dump.
stop_dump() {
	local i
	kill -TERM "$dump_pid" 2>/dev/null || return 1
	for ((i = 0; i < 100; i++)); do
		kill -0 "$dump_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$dump_pid" 2>/dev/null && return 1
	wait "$dump_pid"
}

# The local address lhclient printed ("local 127.0.0.1:40120").
client_addr() {
	sed -n 's/^local //p' "$1"
}

# run_client OUT ARGS...: lhclient against the dump, at most 60 s.
run_client() {
	local out=$1
	shift
	timeout 60 "$client" -c "$dump_addr" "$@" >"$out" 2>&1
}

# start_dump_on ADDR NAME ARGS...: like start_dump, on a given address (to
# start a receiver again on the port an earlier instance had).  Sets
# dump_pid; returns non-zero if it did not start within 10 s.
start_dump_on() {
	local addr=$1 name=$2
	shift 2
	"$dump" --listen "$addr" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	dump_pid=$!
	pids+=("$dump_pid")
	wait_grep "$tmp/$name.err" 'listening on ' 10
}
