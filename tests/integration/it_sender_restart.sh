#!/usr/bin/env bash
# Delivery across a receiver crash (docs/protocol.md section 5): a sender
# (daemon/sender.c + common/proto/outbox.c, driven by lhsend) keeps every batch
# until it is acknowledged and sends it again after reconnecting; the
# receiver (lharvest-dump --state) remembers the last batch of each sender
# on disk, so a resend is acknowledged as a duplicate and never printed
# twice.  Everything on 127.0.0.1.
set -uo pipefail
bin=$1
. "$(dirname "$0")/dumplib.sh"
send=$bindir/lhsend
[ -x "$send" ] || { echo "no $send"; exit 1; }

make_keys "$tmp/keys" "it-sender-restart-key-0123456789"
mkdir -p "$tmp/state"

# 1. 30 sweeps of 5 clients, one every 100 ms; the receiver is killed
#    (SIGKILL) a second in and started again on the same port 2 s later.
start_dump d1 -k "$tmp/keys" --state "$tmp/state"
port_addr=$dump_addr
timeout 90 "$send" --connect "$port_addr" -k "$tmp/keys" --name oss7 \
	--sweeps 30 --clients 5 --period-ms 100 >"$tmp/send.out" 2>"$tmp/send.err" &
send_pid=$!
pids+=("$send_pid")
sleep 1
kill -KILL "$dump_pid"
wait "$dump_pid" 2>/dev/null
sleep 2
"$dump" --listen "$port_addr" -k "$tmp/keys" --state "$tmp/state" \
	>"$tmp/d2.out" 2>"$tmp/d2.err" &
dump_pid=$!
pids+=("$dump_pid")
if wait "$send_pid"; then
	t_pass "the sender delivered everything across the restart"
else
	t_fail "the sender delivered everything across the restart" \
		"$(tail -5 "$tmp/send.err")"
fi
t_check "the sender saw the connection drop and come back" \
	grep -q 'connected again' "$tmp/send.err"

# Every byte arrives: the records printed by both receivers, one copy per
# batch, summed per client, equal what was sent.  lharvest-dump prints a
# batch before it records it as safe, so the one batch in flight at the
# moment of the SIGKILL may have been printed by both; no other may.
cat "$tmp/d1.out" "$tmp/d2.out" | python3 -c '
import json, sys
tot, seen, twice = {}, {}, set()
for line in sys.stdin:
    r = json.loads(line)
    key = (r["batch"], r["nid"])
    if key in seen:
        twice.add(r["batch"])
        continue
    seen[key] = 1
    tot[r["nid"]] = tot.get(r["nid"], 0) + r["read_bytes"]
for nid in sorted(tot):
    print(nid, tot[nid])
print("batches printed twice:", len(twice), file=sys.stderr)
' >"$tmp/got" 2>"$tmp/twice"
grep '@o2ib' "$tmp/send.out" | sort >"$tmp/want"
if diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"; then
	t_pass "no loss: $(wc -l <"$tmp/want") clients exact"
else
	t_fail "no loss" "$(cat "$tmp/diff")"
fi
t_check "no batch but the one in flight printed twice" \
	grep -qE 'twice: [01]$' "$tmp/twice"
t_check "the receiver kept the last batch on disk" \
	test -s "$tmp/state/6f737337.batch"

# 2. The same sender starts from batch 1 again (as if its state were
#    lost): the receiver, restarted on the same state, acknowledges it as
#    a duplicate and prints nothing.
stop_dump
start_dump d3 -k "$tmp/keys" --state "$tmp/state"
timeout 60 "$send" --connect "$dump_addr" -k "$tmp/keys" --name oss7 \
	--sweeps 1 --clients 5 --period-ms 50 >"$tmp/send2.out" 2>"$tmp/send2.err"
t_check "a batch already counted is acknowledged as a duplicate" \
	grep -q 'acked 1 duplicates 1' "$tmp/send2.out"
t_check "and not printed again" test ! -s "$tmp/d3.out"
t_check "the receiver said so in one line" \
	grep -q 'batch 1 was printed already' "$tmp/d3.err"

t_summary
