#!/usr/bin/env bash
# The aggregator's ledger against hostile and unlucky senders (issue 15,
# items 2, 3 and 14), with lhclient on 127.0.0.1:
#  - a holder of the key claiming a gatherer's name with batch 2^64-1 is
#    refused with one line and not recorded: the real gatherer's next
#    batch is counted, not acknowledged as a duplicate;
#  - sweep ids ten years ahead and 2^64-1 are refused;
#  - a sender with no ledger entry is never refused for its batch number;
#  - a resend of a counted batch is acknowledged as a duplicate and logged;
#  - a ledger file that cannot be read holds its sender's batches
#    unacknowledged, is left as it is, and the line names the file and the
#    way out; once fixed, batches flow again;
#  - a SWEEP with an unusable filesystem is counted without it, one line
#    and a counter, and acknowledged (item 9: it was resent forever);
#  - gatherer_networks: a name bound to networks is refused from
#    elsewhere, with one line, and taken from them (item 2).
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
# shellcheck source=../ganglia/sanitizer.sh
. "$src/tests/ganglia/sanitizer.sh"

make_keys "$tmp/keys" "it-agg-ledger-key-0123456789abcdef"
mkdir -m 700 "$tmp/state"
cat >"$tmp/agg.conf" <<EOC
role = "aggregator"
http { listen = "127.0.0.1:0" }
interval = 2
deadline = 0.5
listen = "127.0.0.1:0"
secret_file = "$tmp/keys"
state_dir = "$tmp/state"
name = "agg"
dns = no
# No gmond: what is tested here is counting and acknowledging.
gmond_conf = "$tmp/no-gmond.conf"
gatherer_networks = { "oss5 10.99.0.0/16 2001:db8::/64", "oss6 127.0.0.0/8" }
EOC
# start: the aggregator, its log appended to agg.log; sets agg, addr.
start() {
	local n
	n=$(wc -l 2>/dev/null <"$tmp/agg.log" || echo 0)
	"$bin" -d -v -f "$tmp/agg.conf" 2>>"$tmp/agg.log" &
	agg=$!
	pids+=("$agg")
	for ((i = 0; i < 100; i++)); do
		addr=$(tail -n +$((n + 1)) "$tmp/agg.log" |
			sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' | head -n 1)
		[ -n "$addr" ] && return 0
		sleep 0.1
	done
	cat "$tmp/agg.log"
	exit 1
}
start
ledger=$tmp/state/ledger/$(printf 'oss1' | od -An -tx1 | tr -d ' \n').batch

now=$(date +%s)
sweep=$((now / 2 * 2))
b0=$((now * 1000000))
max=18446744073709551615
printf '# fs nid read_bytes write_bytes read_ops write_ops oss_ops mds_ops\nscratch 10.1.0.1@o2ib 2000 0 0 0 1 0\n' >"$tmp/recs"

# send OUT NAME BATCH [ARGS...]: one SWEEP, waiting for its ACK.
send() {
	local out=$1 name=$2 batch=$3
	shift 3
	timeout 30 "$client" -c "$addr" -k "$tmp/keys" -n "$name" \
		--records "$tmp/recs" --interval 2 --sweep-id "$sweep" \
		--batch "$batch" --timeout 8 "$@" >"$tmp/$out" 2>&1
}
lines() { wc -l <"$tmp/agg.log"; }
since() { tail -n +$(($1 + 1)) "$tmp/agg.log"; }

# 1. The gatherer's first batch, numbered from its clock: counted.
if send c1 oss1 "$b0"; then
	t_pass "oss1's first batch is acknowledged"
else
	t_fail "oss1's first batch is acknowledged" "$(cat "$tmp/c1")"
fi
t_check "the ledger holds its number" test "$(cat "$ledger" 2>/dev/null)" = "$b0"

# 2. Sent again (its ACK lost): a duplicate, counted and logged.
n=$(lines)
if send c2 oss1 "$b0"; then
	t_pass "a resend is acknowledged"
else
	t_fail "a resend is acknowledged" "$(cat "$tmp/c2")"
fi
t_check "the duplicate is logged" \
	grep -qE "gatherer oss1 .*: batch $b0 was counted already .*duplicate.*1 duplicates in all" "$tmp/agg.log"

# 3. An impostor with the key claims oss1 with batch 2^64-1.
n=$(lines)
if send c3 oss1 "$max"; then
	t_fail "batch 2^64-1 of a known sender is refused" "$(cat "$tmp/c3")"
else
	t_pass "batch 2^64-1 of a known sender is refused"
fi
t_check "one line says why" wait_grep "$tmp/agg.log" "oss1.*batch $max above our clock in microseconds plus 86400 s .*refused, not recorded" 5
t_check "the ledger is not changed" test "$(cat "$ledger")" = "$b0"
b1=$((b0 + 1))
n=$(lines)
if send c4 oss1 "$b1"; then
	t_pass "oss1's next batch is acknowledged"
else
	t_fail "oss1's next batch is acknowledged" "$(cat "$tmp/c4")"
fi
if since "$n" | grep -q "batch $b1 was counted already"; then
	t_fail "oss1's next batch is counted, not a duplicate" "$(since "$n")"
else
	t_pass "oss1's next batch is counted, not a duplicate"
fi
t_check "the ledger moves on" test "$(cat "$ledger")" = "$b1"

# 4. Sweep ids no clock gives: ten years ahead, 2^64-1.
for id in $((now + 315360000)) "$max"; do
	if timeout 30 "$client" -c "$addr" -k "$tmp/keys" -n oss9 \
		--records "$tmp/recs" --interval 2 --sweep-id "$id" --batch 1 \
		--timeout 8 >"$tmp/c5" 2>&1; then
		t_fail "sweep id $id is refused" "$(cat "$tmp/c5")"
	else
		t_pass "sweep id $id is refused"
	fi
	t_check "sweep id $id: one line says why" \
		wait_grep "$tmp/agg.log" "sweep id $id more than 86400 s ahead of our clock" 5
done

# 5. A sender with no ledger entry is never refused for its number.
if send c6 oss7 18446744073709551610; then
	t_pass "a new sender's batch number is not refused"
else
	t_fail "a new sender's batch number is not refused" "$(cat "$tmp/c6")"
fi

# 6. oss1's ledger file damaged while the aggregator was down: held, not
#    acknowledged, not rewritten.
kill -TERM "$agg"
wait "$agg"
printf 'garbage\n' >"$ledger"
start
b2=$((b1 + 1))
n=$(lines)
if send c7 oss1 "$b2" --timeout 5; then
	t_fail "a batch of a damaged ledger entry is not acknowledged" "$(cat "$tmp/c7")"
else
	t_pass "a batch of a damaged ledger entry is not acknowledged"
fi
t_check "the line names the file and the way out" \
	grep -qE "ledger $ledger: not a batch number; gatherer oss1: batch $b2 held unacknowledged, not counted .*write that number minus one into the file, or remove it" "$tmp/agg.log"
t_check "the damaged file is left as it is" test "$(cat "$ledger")" = garbage
t_check "the aggregator runs on" kill -0 "$agg"
printf '%s\n' "$b1" >"$ledger"
if send c8 oss1 "$b2"; then
	t_pass "fixed by hand: the batch is acknowledged"
else
	t_fail "fixed by hand: the batch is acknowledged" "$(cat "$tmp/c8")"
fi
t_check "fixed by hand: the ledger moves on" test "$(cat "$ledger")" = "$b2"

# 7. A filesystem name that cannot be a metric name: its records dropped,
#    the rest counted and acknowledged.
printf 'scratch 10.1.0.5@o2ib 4000 0 0 0 1 0\nhome 10.1.0.6@o2ib 6000 0 0 0 1 0\n' >"$tmp/recs2"
n=$(lines)
if timeout 30 "$client" -c "$addr" -k "$tmp/keys" -n oss3 \
	--records "$tmp/recs2" --rename-fs 'home=h<me' --interval 2 \
	--sweep-id "$sweep" --batch 5 --timeout 8 >"$tmp/c9" 2>&1; then
	t_pass "a SWEEP with an unusable filesystem is acknowledged"
else
	t_fail "a SWEEP with an unusable filesystem is acknowledged" "$(cat "$tmp/c9")"
fi
t_check "one line says what was dropped" \
	grep -qE 'gatherer oss3 .*: batch 5: 1 records of filesystems whose names cannot be metric names \(h<me\) .* dropped, the rest counted \(1 records' "$tmp/agg.log"
t_check "the rest is counted" \
	wait_grep "$tmp/agg.log" 'sweep [0-9]+: fs scratch: 1 clients, read_bytes 4000 ' 5

# 8. Names bound to networks.
if send c10 oss5 1; then
	t_fail "a bound name from elsewhere is refused" "$(cat "$tmp/c10")"
else
	t_pass "a bound name from elsewhere is refused"
fi
t_check "one line says why" \
	grep -qE "peer oss5 127\.0\.0\.1:[0-9]+: refused: not from the networks gatherer_networks binds this name to, dropping connection" "$tmp/agg.log"
if send c11 oss6 1; then
	t_pass "a bound name from its network is taken"
else
	t_fail "a bound name from its network is taken" "$(cat "$tmp/c11")"
fi
t_summary
