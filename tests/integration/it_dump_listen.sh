#!/usr/bin/env bash
# lharvest-dump --listen against lhclient: a good session prints exactly
# what was sent and acks it; each way of breaking the protocol costs the
# offender its connection with exactly one log line naming it and the
# reason, while a good client connected at the same time carries on; key
# rotation; a key file others can read is refused.
set -euo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"

k1=lharvest-test-key-one-0123456789abcdef
k2=lharvest-test-key-two-9876543210fedcba
make_keys "$tmp/keys" "$k1" "$k2"
# A server rolling the key out: the new key first (it signs), the old one
# still accepted.
make_keys "$tmp/keys-rotated" "$k2" "$k1"
make_keys "$tmp/keys-other" "some-other-site-key-0000000000-abcdef"

cat >"$tmp/recs" <<'EOR'
# fs nid read_bytes write_bytes read_ops write_ops oss_ops mds_ops [span_us]
scratch 10.1.2.3@o2ib 176312373248 380270596096 49412 92820 142302 0
scratch 192.168.0.4@tcp102 0 0 0 0 3 0 5000000
scratch 12@gni 1 2 3 4 5 6
home 10.1.2.3@o2ib 0 0 0 0 0 136736
EOR

start_dump d -k "$tmp/keys" --handshake-timeout 2 --read-timeout 3 --log-all

# 1. A good session: two sweeps, both acked, every record printed once.
if run_client "$tmp/good.out" -k "$tmp/keys" -n oss1 --records "$tmp/recs" \
	--sweeps 2 --sweep-id 1700000020 --batch 7; then
	t_pass "good session completes"
else
	t_fail "good session completes" "$(cat "$tmp/good.out")"
fi
t_check "good session: both sweeps acked" \
	grep -qx 'SWEEP acked seq 3 batch 8' "$tmp/good.out"
sort >"$tmp/want" <<'EOW'
{"sender":"oss1","sweep":1700000020,"batch":7,"fs":"scratch","nid":"10.1.2.3@o2ib","read_bytes":176312373248,"write_bytes":380270596096,"read_ops":49412,"write_ops":92820,"oss_ops":142302,"mds_ops":0,"span_us":10000000,"start_ns":1700000010000000000}
{"sender":"oss1","sweep":1700000020,"batch":7,"fs":"scratch","nid":"192.168.0.4@tcp102","read_bytes":0,"write_bytes":0,"read_ops":0,"write_ops":0,"oss_ops":3,"mds_ops":0,"span_us":5000000,"start_ns":1700000010000000000}
{"sender":"oss1","sweep":1700000020,"batch":7,"fs":"scratch","nid":"12@gni","read_bytes":1,"write_bytes":2,"read_ops":3,"write_ops":4,"oss_ops":5,"mds_ops":6,"span_us":10000000,"start_ns":1700000010000000000}
{"sender":"oss1","sweep":1700000020,"batch":7,"fs":"home","nid":"10.1.2.3@o2ib","read_bytes":0,"write_bytes":0,"read_ops":0,"write_ops":0,"oss_ops":0,"mds_ops":136736,"span_us":10000000,"start_ns":1700000010000000000}
{"sender":"oss1","sweep":1700000030,"batch":8,"fs":"scratch","nid":"10.1.2.3@o2ib","read_bytes":176312373248,"write_bytes":380270596096,"read_ops":49412,"write_ops":92820,"oss_ops":142302,"mds_ops":0,"span_us":10000000,"start_ns":1700000020000000000}
{"sender":"oss1","sweep":1700000030,"batch":8,"fs":"scratch","nid":"192.168.0.4@tcp102","read_bytes":0,"write_bytes":0,"read_ops":0,"write_ops":0,"oss_ops":3,"mds_ops":0,"span_us":5000000,"start_ns":1700000020000000000}
{"sender":"oss1","sweep":1700000030,"batch":8,"fs":"scratch","nid":"12@gni","read_bytes":1,"write_bytes":2,"read_ops":3,"write_ops":4,"oss_ops":5,"mds_ops":6,"span_us":10000000,"start_ns":1700000020000000000}
{"sender":"oss1","sweep":1700000030,"batch":8,"fs":"home","nid":"10.1.2.3@o2ib","read_bytes":0,"write_bytes":0,"read_ops":0,"write_ops":0,"oss_ops":0,"mds_ops":136736,"span_us":10000000,"start_ns":1700000020000000000}
EOW
wait_grep "$tmp/d.err" 'peer oss1 .*BYE' 5 || true
grep '"sender":"oss1"' "$tmp/d.out" | sort >"$tmp/got" || true
if diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"; then
	t_pass "good session: JSON lines match what was sent"
else
	t_fail "good session: JSON lines match what was sent" "$(cat "$tmp/diff")"
fi
t_check "good session: BYE logged as a clean close" \
	grep -q 'peer oss1 .*: BYE (reason 0: lhclient done), closing' "$tmp/d.err"
if grep 'peer oss1 ' "$tmp/d.err" | grep 'dropping' >/dev/null; then
	t_fail "good session: no drop logged" "$(grep 'peer oss1 ' "$tmp/d.err")"
else
	t_pass "good session: no drop logged"
fi

# 2. Key rotation: the client signs with the second key of the dump's file.
if run_client "$tmp/rot.out" -k "$tmp/keys-rotated" -n oss-rot \
	--records "$tmp/recs"; then
	t_pass "key rotation: HELLO signed with the second key is accepted"
else
	t_fail "key rotation: HELLO signed with the second key is accepted" \
		"$(cat "$tmp/rot.out")"
fi
wait_grep "$tmp/d.out" '"sender":"oss-rot"' 5 || true
t_check "key rotation: its 4 records arrive" \
	test "$(grep -c '"sender":"oss-rot"' "$tmp/d.out")" -eq 4

# 3. Misbehaving clients, all at once, while a good client (4 sweeps, one
#    a second) stays connected through all of it.
"$client" -c "$dump_addr" -k "$tmp/keys" -n oss-good --records "$tmp/recs" \
	--sweeps 4 --delay 1 --sweep-id 1700000100 >"$tmp/g.out" 2>&1 &
good=$!
pids+=("$good")
wait_grep "$tmp/g.out" '^HELLO acked' 10 || true

modes=(bad-mac replay oversize idle idle-open garbage wrong-version half-frame
	version-1 send-ack role-0 role-9)
# lhclient's option for a mode, when it is not --MODE.
declare -A args=([role-0]='--role 0' [role-9]='--role 9')
declare -A reason=(
	[bad-mac]='bad MAC on SWEEP frame'
	[replay]='sequence number 2, expected 3 \(replayed or reordered frame\)'
	[oversize]='frame of [0-9]+ bytes, limit 16777216'
	[idle]='no HELLO within 2 s'
	[idle-open]='nothing received for 3 s'
	[garbage]='not the lharvestd protocol \(bad magic, starts "GET / HTTP'
	[wrong-version]='protocol version 3, this side speaks 2'
	[half-frame]='connection (closed|reset) mid-frame \([0-9]+ of [0-9]+ bytes\)'
	[version-1]='protocol version 1: upgrade this peer to lharvestd with protocol 2'
	[send-ack]='ACK frame \(type 3, flags 0x0000\): ACK from a connector \(only a listener acknowledges\)'
	[role-0]='HELLO: role 0 \(1 gatherer, 2 aggregator, 3 relay\)'
	[role-9]='HELLO: role 9 \(1 gatherer, 2 aggregator, 3 relay\)'
)
declare -A name=(
	[bad-mac]=oss-bad-mac [replay]=oss-replay [oversize]=oss-oversize
	[idle]='\?' [idle-open]=oss-idle-open [garbage]='\?'
	[wrong-version]='\?' [half-frame]=oss-half-frame
	[version-1]='\?' [send-ack]=oss-send-ack [role-0]='\?' [role-9]='\?'
)
declare -A bad
for m in "${modes[@]}"; do
	# shellcheck disable=SC2086 # args holds two words
	"$client" -c "$dump_addr" -k "$tmp/keys" -n "oss-$m" \
		--records "$tmp/recs" --timeout 20 ${args[$m]:---$m} \
		>"$tmp/m-$m.out" 2>&1 &
	bad[$m]=$!
	pids+=("${bad[$m]}")
done
# A port scan: connect and close without a byte.
python3 - "$dump_addr" >"$tmp/scan.out" <<'EOP'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=10)
print("local %s:%d" % s.getsockname())
s.close()
EOP

for m in "${modes[@]}"; do
	if wait "${bad[$m]}"; then
		t_pass "$m: the client was disconnected"
	else
		t_fail "$m: the client was disconnected" "$(cat "$tmp/m-$m.out")"
	fi
done
if wait "$good"; then
	t_pass "good client during the misbehaviour: completes"
else
	t_fail "good client during the misbehaviour: completes" \
		"$(cat "$tmp/g.out")"
fi
t_check "good client during the misbehaviour: 4 sweeps acked" \
	test "$(grep -c '^SWEEP acked' "$tmp/g.out")" -eq 4
wait_grep "$tmp/d.err" 'peer oss-good .*BYE' 5 || true
t_check "good client during the misbehaviour: 16 records printed" \
	test "$(grep -c '"sender":"oss-good"' "$tmp/d.out")" -eq 16
if grep 'peer oss-good ' "$tmp/d.err" | grep 'dropping' >/dev/null; then
	t_fail "good client during the misbehaviour: not dropped" \
		"$(grep 'peer oss-good ' "$tmp/d.err")"
else
	t_pass "good client during the misbehaviour: not dropped"
fi

# Exactly one log line for each offender, naming it and the reason (once
# each has one: the listener may get to the last offender late).
for m in "${modes[@]}"; do
	addr=$(client_addr "$tmp/m-$m.out")
	[ -z "$addr" ] || wait_grep "$tmp/d.err" " ${addr//./\\.}:.*dropping connection" 10 || true
done
for m in "${modes[@]}"; do
	addr=$(client_addr "$tmp/m-$m.out")
	lines=$(grep -F " $addr:" "$tmp/d.err" | grep -c 'dropping connection' || true)
	want="^lharvest-dump: peer ${name[$m]} ${addr//./\\.}: ${reason[$m]}.*, dropping connection$"
	if [ -n "$addr" ] && [ "$lines" -eq 1 ] && grep -qE "$want" "$tmp/d.err"; then
		t_pass "$m: one log line naming the peer and the reason"
	else
		t_fail "$m: one log line naming the peer and the reason" \
			"addr '$addr', $lines lines; want /$want/" \
			"$(grep -F " $addr:" "$tmp/d.err" || true)"
	fi
done
addr=$(client_addr "$tmp/scan.out")
# (closed, or reset when the CHALLENGE was still unread: either way.)
scan_re="peer \\? ${addr//./\\.}: connection (closed|reset) before HELLO, dropping connection$"
wait_grep "$tmp/d.err" "$scan_re" 5 || true
if [ "$(grep -cF " $addr:" "$tmp/d.err")" -eq 1 ] && grep -qE "$scan_re" "$tmp/d.err"; then
	t_pass "port scan: one log line"
else
	t_fail "port scan: one log line" "$(grep -F " $addr:" "$tmp/d.err" || true)"
fi
t_check "misbehaviour printed no records" \
	test "$(grep -c '"sender":"oss-\(bad-mac\|oversize\|idle\|garbage\|wrong\|half\|version\|send-ack\|role\)' "$tmp/d.out")" -eq 0

# 4. A client with a key the dump does not have: refused, dump unharmed.
# A server that moved a key the dump does not have yet to the front (first:
# lines about strangers' HELLOs are rate-limited, one of a kind a period).
make_keys "$tmp/keys-ahead" "brand-new-key-not-rolled-out-yet" "$k1"
if run_client "$tmp/ahead.out" -k "$tmp/keys-ahead" -n oss-ahead \
	--records "$tmp/recs" --timeout 10; then
	t_fail "HELLO with an unknown key: refused" "$(cat "$tmp/ahead.out")"
else
	t_pass "HELLO with an unknown key: refused"
fi
addr=$(client_addr "$tmp/ahead.out")
wait_grep "$tmp/d.err" "$addr: HELLO signed with a key this side does not hold" 5 || true
t_check "HELLO with an unknown key: one line with the reason" \
	test "$(grep -F " $addr:" "$tmp/d.err" | grep -c 'HELLO signed with a key this side does not hold (key id [0-9a-f]\{8\}), dropping connection$')" -eq 1
# A key the dump never had.
if run_client "$tmp/other.out" -k "$tmp/keys-other" -n oss-other \
	--records "$tmp/recs" --timeout 10; then
	t_fail "unknown key: the session fails" "$(cat "$tmp/other.out")"
else
	t_pass "unknown key: the session fails"
fi
t_check "still serving after all that" \
	run_client "$tmp/after.out" -k "$tmp/keys" -n oss-after --records "$tmp/recs"

# 4b. A SWEEP naming a filesystem that cannot be a Ganglia metric name:
#     its records are dropped with one line, the others printed and the
#     batch acknowledged (not refused and resent forever).
if run_client "$tmp/badfs.out" -k "$tmp/keys" -n oss-badfs \
	--records "$tmp/recs" --rename-fs 'home=h<me'; then
	t_pass "bad filesystem name: the batch is acknowledged"
else
	t_fail "bad filesystem name: the batch is acknowledged" \
		"$(cat "$tmp/badfs.out")"
fi
wait_grep "$tmp/d.err" 'peer oss-badfs .*BYE' 5 || true
t_check "bad filesystem name: the 3 other records printed" \
	test "$(grep -c '"sender":"oss-badfs"' "$tmp/d.out")" -eq 3
t_check "bad filesystem name: none of its records printed" \
	test "$(grep '"sender":"oss-badfs"' "$tmp/d.out" | grep -c '"fs":"h')" -eq 0
t_check "bad filesystem name: one line saying what was dropped" \
	test "$(grep -c 'peer oss-badfs .*: batch 1: dropped 1 records of filesystems whose names cannot be metric names' "$tmp/d.err")" -eq 1

# 5. SIGTERM: clean exit.
t_check "SIGTERM: exit status 0" stop_dump
t_check "SIGTERM: logged" grep -q 'signal 15, exiting' "$tmp/d.err"

# 6. Too many connections: a connection that never sent its HELLO does
#    not hold the place of a newer one (issue 15, finding 15): the older
#    is closed with one line, the newer gets its CHALLENGE.
start_dump mc -k "$tmp/keys" --max-conns 1 --handshake-timeout 5
python3 - "$dump_addr" >"$tmp/mc.out" <<'EOP'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
a = socket.create_connection((host, int(port)), timeout=10)
print("local %s:%d" % a.getsockname())
a.recv(40)
time.sleep(0.3)
b = socket.create_connection((host, int(port)), timeout=10)
b.settimeout(5)
print("newer: " + ("challenged" if b.recv(40)[:4] == b"LHVD" else "nothing"))
a.settimeout(5)
try:
    while a.recv(4096):
        pass
    print("closed")
except socket.timeout:
    print("still open")
b.close()
EOP
addr=$(client_addr "$tmp/mc.out")
t_check "max connections: the newer connection gets its CHALLENGE" \
	grep -qx 'newer: challenged' "$tmp/mc.out"
t_check "max connections: the older one, without a HELLO, is closed" \
	grep -qx closed "$tmp/mc.out"
t_check "max connections: one log line" \
	test "$(grep -c "peer ? $addr: oldest connection without a HELLO, for a newer one, dropping connection" "$tmp/mc.err")" -eq 1
stop_dump || true

# 7. A key file others can read: refused, with one line saying why.
make_keys "$tmp/keys-open" "$k1"
chmod 644 "$tmp/keys-open"
set +e
timeout 10 "$dump" --listen 127.0.0.1:0 -k "$tmp/keys-open" \
	>"$tmp/open.out" 2>"$tmp/open.err"
st=$?
set -e
if [ "$st" -ne 0 ] && [ "$(wc -l <"$tmp/open.err")" -eq 1 ] &&
	grep -q "keys-open" "$tmp/open.err" && ! grep -q listening "$tmp/open.err"; then
	t_pass "key file mode 0644: refused with one line"
else
	t_fail "key file mode 0644: refused with one line" "status $st" \
		"$(cat "$tmp/open.err")"
fi
echo "  ($(cat "$tmp/open.err"))"

t_summary
