#!/usr/bin/env bash
# An output that cannot commit holds the gatherers' ACKs (issue 16, the
# consumer seam): a relay whose relay.state cannot be written (a directory
# stands where the file goes) must not acknowledge a batch, must
# recognise the batch when its sender sends it again on a new connection,
# and, once a save succeeds, acknowledge it there (not on the connection
# that is gone); after that the ledger has it, and a third copy is
# acknowledged as a duplicate, not counted again.
#
# The gatherer is lhclient (one SWEEP, waits for its ACK); the relay's
# downstream is a port nothing listens on (its deltas wait in the outbox,
# which is saved all the same).  About 20 s.
#
#   bash it_relay_held.sh BUILD/daemon/lharvestd      (LH_SRCDIR unused)
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"

interval=1
make_keys "$tmp/keys" "it-relay-held-key-0123456789abcdef"
mkdir -m 700 "$tmp/state"
st=$tmp/state/relay.state
nowhere=127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'scratch 10.0.0.%d@o2ib 4096 512 1 2 3 0\n' 1 2 3 >"$tmp/records"

abort() {
	t_fail "$@" "--- relay (last lines)" "$(tail -n 12 "$tmp/relay.err" 2>/dev/null)"
	t_summary
	exit 1
}

cat >"$tmp/relay.conf" <<EOF
role = "relay"
http { listen = "127.0.0.1:0" }
interval = $interval
listen = "127.0.0.1:0"
secret_file = "$tmp/keys"
state_dir = "$tmp/state"
name = "relay1"
deadline = 0.5
route "all" {
	networks = { "o2ib" }
	server = "$nowhere"
}
EOF
"$bin" -d -v -f "$tmp/relay.conf" 2>"$tmp/relay.err" &
relay_pid=$!
pids+=("$relay_pid")
wait_grep "$tmp/relay.err" 'listening on 127\.0\.0\.1:[0-9]+' 10 ||
	abort "the relay started" "$(cat "$tmp/relay.err")"
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/relay.err" | head -n 1)

# send NAME BATCH TIMEOUT: one SWEEP of g1 for the current sweep; the
# client's exit status (0: acknowledged).
send() {
	timeout $(($3 + 10)) "$client" -c "$addr" -k "$tmp/keys" -n g1 \
		--records "$tmp/records" --sweep-id "$(date +%s)" --batch "$2" \
		--interval "$interval" --timeout "$3" >"$tmp/$1.out" 2>&1
}

send first 1 20
t_check "a batch is acknowledged while the state can be saved" \
	grep -q 'SWEEP acked seq [0-9]* batch 1$' "$tmp/first.out"

# A directory where relay.state goes: every save fails from now on.
for ((i = 0; i < 50; i++)); do
	rm -f "$st"
	mkdir "$st" 2>/dev/null && break
	sleep 0.05
done
[ -d "$st" ] || abort "a directory stands where relay.state goes"
wait_grep "$tmp/relay.err" 'relay\.state: .*; holding acknowledgements back' 10 ||
	abort "the relay says it holds acknowledgements back"
t_pass "the relay says it holds acknowledgements back"

if send held 2 4; then
	t_fail "a batch is not acknowledged while its sweep cannot be saved" "$(cat "$tmp/held.out")"
else
	t_pass "a batch is not acknowledged while its sweep cannot be saved"
fi

# The sender tries again on a new connection; meanwhile the state can be
# saved again: the held ACK must reach this connection.
send resent 2 30 &
cpid=$!
wait_grep "$tmp/resent.out" 'HELLO acked' 10
sleep 1 # the resend is in (the client waits for its ACK)
grep -q 'SWEEP acked' "$tmp/resent.out" &&
	t_fail "the resend waits while the state cannot be saved" "$(cat "$tmp/resent.out")"
rmdir "$st"
wait "$cpid"
rc=$?
t_check "the resend is acknowledged on its new connection once a save succeeds ($rc)" \
	grep -q 'SWEEP acked seq [0-9]* batch 2$' "$tmp/resent.out"
t_check "... and the relay says so" grep -q 'relay\.state: saved again' "$tmp/relay.err"

send again 2 20
t_check "a third copy is acknowledged" grep -q 'SWEEP acked seq [0-9]* batch 2$' "$tmp/again.out"
t_check "... as a duplicate: the ledger has the batch" \
	grep -qE 'gatherer g1 \(127\.0\.0\.1:[0-9]+\): batch 2 was counted already' "$tmp/relay.err"
# Every sweep's deltas (-v): batches 1 and 2, three clients of 4096
# bytes read each, counted once each.
sum=$(sed -n 's/.*: fs scratch: [0-9]* clients, read_bytes \([0-9]*\) .*/\1/p' "$tmp/relay.err" |
	awk '{ s += $1 } END { print s + 0 }')
t_check "each batch was counted once ($sum bytes read, want 24576)" test "$sum" -eq 24576
t_check "the relay is still running" kill -0 "$relay_pid"
kill -TERM "$relay_pid"
wait "$relay_pid"
t_check "it stops cleanly and leaves its state" test -s "$st"
t_summary
