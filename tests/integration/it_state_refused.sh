#!/usr/bin/env bash
# State files that cannot be used, and state directories others could
# tamper with (issue 15, items 4 and 5), with the real binary:
#
#  1. a directory where gatherer.state should be (it cannot be read, as
#     on an I/O error): tried again, then the gatherer exits 1 with one
#     line and the directory is left as it was (never replaced);
#  2. a gatherer.state written by a newer lharvestd (a format one above
#     this version's, checksum
#     right): moved aside byte for byte to gatherer.state.bad.<time> with
#     one line, and the gatherer runs and saves a new state;
#  3. a damaged relay.state: the relay does not start (its deltas were
#     acknowledged upstream), says so in one line, and the file is kept
#     byte for byte;
#  4. state_dir writable by group, or a symbolic link: refused at start
#     with one line naming the directory and the reason.
# No receiver is needed (the senders retry meanwhile).  About 15 s.
#
#   bash it_state_refused.sh BUILD/daemon/lharvestd   (LH_SRCDIR = source tree)
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
R=$tmp/sim

make_keys "$tmp/keys" "it-state-refused-key-0123456789abc"
python3 "$src/tests/sim/lustresim.py" tree --root "$R" --version 2.15 \
	--servers 1 --clients 4 >/dev/null || { echo "simulator failed"; exit 1; }
# A port nothing listens on: taken from a socket closed at once.
nowhere=127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

gconf() { # gconf STATE_DIR: the gatherer's configuration
	cat >"$tmp/g.conf" <<-EOF
		role = "gatherer"
		interval = 1
		lustre_root = "$R/oss1"
		server = "$nowhere"
		secret_file = "$tmp/keys"
		state_dir = "$1"
		name = "oss1"
	EOF
}

# run_until_exit LOG SECONDS CONF: the daemon in the foreground; its exit
# status (124: still running after SECONDS, then stopped).
run_until_exit() {
	timeout "$2" "$bin" -d -f "$3" 2>"$1"
}

# ------------------------------------------------ 1. a directory in the way

mkdir -m 700 "$tmp/st1" "$tmp/st1/gatherer.state"
touch "$tmp/st1/gatherer.state/marker"
gconf "$tmp/st1"
run_until_exit "$tmp/g1.err" 20 "$tmp/g.conf"
rc=$?
t_check "a state file that cannot be read: the gatherer exits 1 ($rc)" test "$rc" -eq 1
t_check "... tried again before giving up" \
	grep -q 'gatherer.state: a directory, not a file; trying again' "$tmp/g1.err"
t_check "... then one line saying it keeps the file" \
	grep -q 'gatherer.state: a directory, not a file; not starting: the file is kept as it is' "$tmp/g1.err"
t_check "... which is left as it was" test -f "$tmp/st1/gatherer.state/marker"

# ----------------------------------------- 2. a newer version (downgrade)

mkdir -m 700 "$tmp/st2"
gconf "$tmp/st2"
"$bin" -d -f "$tmp/g.conf" 2>"$tmp/g2a.err" &
gp=$!
pids+=("$gp")
wait_grep "$tmp/g2a.err" 'gatherer oss1: every' 10
for ((i = 0; i < 50; i++)); do
	[ -s "$tmp/st2/gatherer.state" ] && break
	sleep 0.1
done
kill -TERM "$gp"
wait "$gp"
t_check "a gatherer saved its state" test -s "$tmp/st2/gatherer.state"
# The next format, as a newer lharvestd would write: the version bumped
# and the trailing SHA-256 made right again.
cur=$(python3 -c 'import struct, sys; print(struct.unpack(">I", open(sys.argv[1], "rb").read()[4:8])[0])' "$tmp/st2/gatherer.state")
python3 - "$tmp/st2/gatherer.state" "$((cur + 1))" <<-'EOF'
	import hashlib, struct, sys
	p = sys.argv[1]
	b = open(p, "rb").read()[:-32]
	b = b[:4] + struct.pack(">I", int(sys.argv[2])) + b[8:]
	open(p, "wb").write(b + hashlib.sha256(b).digest())
EOF
cp "$tmp/st2/gatherer.state" "$tmp/newer"
"$bin" -d -f "$tmp/g.conf" 2>"$tmp/g2b.err" &
gp=$!
pids+=("$gp")
wait_grep "$tmp/g2b.err" 'gatherer oss1: every' 10
t_check "a newer state file: one line, moved aside" \
	grep -q "gatherer.state: written by a newer lharvestd (state format $((cur + 1)), this version reads 2 to $cur); moved aside to .*/gatherer.state.bad.[0-9]*, starting afresh" "$tmp/g2b.err"
bads=("$tmp"/st2/gatherer.state.bad.*)
bad=${bads[0]}
t_check "... byte for byte" cmp -s "$tmp/newer" "$bad"
for ((i = 0; i < 50; i++)); do
	[ -s "$tmp/st2/gatherer.state" ] && ! cmp -s "$tmp/newer" "$tmp/st2/gatherer.state" && break
	sleep 0.1
done
t_check "... and the gatherer saves a state of its own" test -s "$tmp/st2/gatherer.state"
t_check "... running" kill -0 "$gp"
kill -TERM "$gp"
wait "$gp"

# ------------------------------------------------ 3. a damaged relay.state

mkdir -m 700 "$tmp/st3"
cat >"$tmp/r.conf" <<-EOF
	role = "relay"
	http { listen = "127.0.0.1:0" }
	interval = 1
	listen = "127.0.0.1:0"
	secret_file = "$tmp/keys"
	state_dir = "$tmp/st3"
	name = "relay1"
	route "all" {
		networks = { "o2ib" }
		server = "$nowhere"
	}
EOF
"$bin" -d -f "$tmp/r.conf" 2>"$tmp/r1.err" &
rp=$!
pids+=("$rp")
for ((i = 0; i < 50; i++)); do
	[ -s "$tmp/st3/relay.state" ] && break
	sleep 0.1
done
kill -TERM "$rp"
wait "$rp"
t_check "a relay saved its state" test -s "$tmp/st3/relay.state"
printf 'garbage' | dd of="$tmp/st3/relay.state" bs=1 seek=12 conv=notrunc 2>/dev/null
cp "$tmp/st3/relay.state" "$tmp/damaged"
run_until_exit "$tmp/r2.err" 20 "$tmp/r.conf"
rc=$?
t_check "a damaged relay.state: the relay exits 1 ($rc)" test "$rc" -eq 1
t_check "... with one line saying what it would lose" \
	grep -q 'relay.state: damaged: checksum mismatch; not starting: it holds the deltas of batches already acknowledged upstream' "$tmp/r2.err"
t_check "... and the file is kept byte for byte" cmp -s "$tmp/damaged" "$tmp/st3/relay.state"

# ------------------------------------------------------- 4. state_dir

mkdir -m 770 "$tmp/st4"
chmod 770 "$tmp/st4"
gconf "$tmp/st4"
run_until_exit "$tmp/g4.err" 10 "$tmp/g.conf"
rc=$?
t_check "a state_dir writable by group: exit 1 ($rc)" test "$rc" -eq 1
t_check "... one line naming it and the reason" \
	grep -q "state_dir $tmp/st4: mode 0770 lets group or others write to it" "$tmp/g4.err"
ln -s "$tmp/st2" "$tmp/st5"
gconf "$tmp/st5"
run_until_exit "$tmp/g5.err" 10 "$tmp/g.conf"
rc=$?
t_check "a state_dir that is a symbolic link: exit 1 ($rc)" test "$rc" -eq 1
t_check "... one line naming it and the reason" \
	grep -q "state_dir $tmp/st5: a symbolic link" "$tmp/g5.err"
t_summary
