#!/usr/bin/env bash
# lharvest-dump FILE: the frames of a captured stream, both directions of a
# real session (lhclient writes what it sends and what it receives), then
# the clear stop at a truncated or foreign stream.
set -euo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"

make_keys "$tmp/keys" lharvest-test-key-one-0123456789abcdef
cat >"$tmp/recs" <<'EOR'
scratch 10.1.2.3@o2ib 176312373248 380270596096 49412 92820 142302 0
scratch 12@gni 1 2 3 4 5 6 5000000
home 10.1.2.3@o2ib 0 0 0 0 0 136736
EOR

start_dump d -k "$tmp/keys"
t_check "capture a session" run_client "$tmp/c.out" -k "$tmp/keys" -n oss7 \
	--records "$tmp/recs" --sweep-id 1700000020 --batch 3 \
	--write-capture "$tmp/sent.bin" --read-capture "$tmp/recv.bin"
stop_dump || true

# What the gatherer sent: HELLO, SWEEP, BYE.
t_check "sent stream: dumped" "$dump" "$tmp/sent.bin" >"$tmp/sent.txt" 2>&1
cat "$tmp/sent.txt"
want_lines=(
	'^MAC not verified'
	'^@0 HELLO type 2 flags 0x0000 len [0-9]+ key [0-9a-f]{8} sender [0-9a-f]{16} seq 1 sweep 0 \(-\)$'
	'^  name "oss7" role gatherer software "lhclient [^"]*" time [0-9T:.-]+Z interval 10 s caps 0x1 nonce [0-9a-f]{64}$'
	'^  fs\[0\] scratch$'
	'^  fs\[1\] home$'
	'^  target home-OST0001 fs home$'
	'^@[0-9]+ SWEEP type 4 .* seq 2 sweep 1700000020 \(2023-11-14T22:13:40Z\)$'
	'^  batch 3 first_sweep 1700000020 start 2023-11-14T22:13:30Z \(1700000010000000000 ns\) span_us 10000000 filesystems 2 records 3$'
	'^  scratch 10\.1\.2\.3@o2ib read_bytes 176312373248 write_bytes 380270596096 read_ops 49412 write_ops 92820 oss_ops 142302 mds_ops 0 span_us 10000000$'
	'^  scratch 12@gni read_bytes 1 write_bytes 2 read_ops 3 write_ops 4 oss_ops 5 mds_ops 6 span_us 5000000$'
	'^  home 10\.1\.2\.3@o2ib read_bytes 0 write_bytes 0 read_ops 0 write_ops 0 oss_ops 0 mds_ops 136736 span_us 10000000$'
	'^@[0-9]+ BYE type 5 .* seq 3 sweep 0 \(-\)$'
	'^  bye reason 0 text "lhclient done"$'
	'^3 frames, [0-9]+ bytes$'
)
for re in "${want_lines[@]}"; do
	t_check "sent stream shows /$re/" grep -qE "$re" "$tmp/sent.txt"
done
t_check "sent stream: 'MAC not verified' said once" \
	test "$(grep -c 'MAC not verified' "$tmp/sent.txt")" -eq 1

# What the listener sent: CHALLENGE, ACK of HELLO, ACK of the SWEEP.
# shellcheck disable=SC2016 # $1..$3: the inner sh's arguments
t_check "received stream: dumped from stdin" \
	sh -c '"$1" - <"$2" >"$3" 2>&1' sh "$dump" "$tmp/recv.bin" "$tmp/recv.txt"
cat "$tmp/recv.txt"
for re in \
	'^@0 CHALLENGE type 1 .* seq 1 sweep 0 \(-\)$' \
	'^  name "lharvest-dump" role aggregator time [0-9T:.-]+Z caps 0x3 nonce [0-9a-f]{64}$' \
	'^@[0-9]+ ACK type 3 .* seq 2 ' \
	'^  ack HELLO seq 1 batch 0 time ' \
	'^  ack SWEEP seq 2 batch 3 time ' \
	'^3 frames, [0-9]+ bytes$'; do
	t_check "received stream shows /$re/" grep -qE "$re" "$tmp/recv.txt"
done

# -v adds the MACs.
"$dump" -v "$tmp/sent.bin" >"$tmp/v.txt" 2>&1 || true
t_check "-v prints one MAC per frame" \
	test "$(grep -cE '^  mac [0-9a-f]{64}$' "$tmp/v.txt")" -eq 3

# A stream cut in the middle of the SWEEP: the frames before it, then the
# offset and the reason, exit 1.
sw=$(sed -n 's/^@\([0-9]*\) SWEEP .*/\1/p' "$tmp/sent.txt")
head -c $((sw + 109)) "$tmp/sent.bin" >"$tmp/cut.bin"
set +e
"$dump" "$tmp/cut.bin" >"$tmp/cut.out" 2>"$tmp/cut.err"
st=$?
set -e
t_check "truncated stream: exit 1" test "$st" -eq 1
t_check "truncated stream: offset and reason" \
	grep -qE "^lharvest-dump: offset $sw: truncated SWEEP frame \(109 of [0-9]+ bytes\)$" "$tmp/cut.err"
t_check "truncated stream: the HELLO before it is printed" \
	grep -q '^@0 HELLO' "$tmp/cut.out"

head -c $((sw + 9)) "$tmp/sent.bin" >"$tmp/cut2.bin"
set +e
"$dump" "$tmp/cut2.bin" >"$tmp/cut2.out" 2>"$tmp/cut2.err"
st=$?
set -e
t_check "stream cut in a header: exit 1, offset and reason" \
	grep -qx "lharvest-dump: offset $sw: truncated header (9 of 40 bytes)" "$tmp/cut2.err"

# Not a capture of lharvestd at all.
printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\nand some more bytes to pass 40\r\n' >"$tmp/http.bin"
set +e
"$dump" "$tmp/http.bin" >"$tmp/http.out" 2>"$tmp/http.err"
st=$?
set -e
t_check "foreign stream: exit 1 with offset 0 and the reason" \
	test "$st" -eq 1 -a "$(wc -l <"$tmp/http.err")" -eq 1
t_check "foreign stream: says bad magic" grep -qi '^lharvest-dump: offset 0: .*magic' "$tmp/http.err"
cat "$tmp/http.err"

# A stream whose payload does not decode: the HELLO length grown by one
# byte (and one junk byte inserted) passes the header but not the decoder.
python3 - "$tmp/sent.bin" "$tmp/bad.bin" <<'EOP'
import struct, sys
data = open(sys.argv[1], "rb").read()
n = struct.unpack(">I", data[8:12])[0]
hdr = data[:8] + struct.pack(">I", n + 1) + data[12:40]
open(sys.argv[2], "wb").write(hdr + data[40:40 + n] + b"\xff" + data[40 + n:])
EOP
set +e
"$dump" "$tmp/bad.bin" >"$tmp/bad.out" 2>"$tmp/bad.err"
st=$?
set -e
t_check "undecodable payload: exit 1, offset and reason" \
	grep -qE '^lharvest-dump: offset 0: bad HELLO payload: ' "$tmp/bad.err"
cat "$tmp/bad.err"
# shellcheck disable=SC2016 # $1: the inner sh's argument
t_check "missing file: exit 1" sh -c '! "$1" /nonexistent/cap.bin 2>/dev/null' sh "$dump"

t_summary
