#!/usr/bin/env bash
# A relay route whose merged batch is larger than max_frame (issue 15,
# items 9 and 11).  Three gatherers (lhclient) each send one valid SWEEP
# that fits the relay's frame limit (64 KiB) in the same sweep; merged for
# the route they do not.  The relay must split the route's batch before
# sending it, deliver every part, and let later batches flow.  Then the
# same after a restart: a relay with a large max_frame and its downstream
# down saves one big batch in flight, and is restarted with the small
# limit: the restored batch (never sent) is split and delivered.
#
# The downstream is lharvest-dump --listen (a real receiver that acks each
# SWEEP and prints its records), with --state so that a resend is never
# printed twice.  Checked: every client arrives exactly once per round
# with exactly the counters sent (summed per NID over all batches), in
# several batches, none larger than the limit; the relay logs the split
# and never "batch larger than max_frame".  About 30 s.
#
#   bash it_relay_split.sh BUILD/daemon/lharvestd      (LH_SRCDIR unused)
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
# shellcheck source=agglib.sh
. "$(dirname "$0")/agglib.sh"

interval=2
small=65536
per=2500 # records per gatherer: one SWEEP fits $small, three do not
big=4000 # records per gatherer after the restart: one SWEEP does not
make_keys "$tmp/keys" "it-relay-split-key-0123456789abcdef"
mkdir -m 700 "$tmp/state-relay" "$tmp/state-dump"

abort() {
	t_fail "$@" "--- relay (last lines)" "$(tail -n 8 "$tmp"/relay*.err 2>/dev/null)"
	[ -n "${LH_SPLIT_KEEP:-}" ] && cp -r "$tmp"/. "$LH_SPLIT_KEEP"/
t_summary
	exit 1
}

# gen G N ROUND: N records of gatherer G (clients 10.G.x.y@o2ib).
gen() {
	awk -v g="$1" -v n="$2" -v r="$3" 'BEGIN {
		for (i = 0; i < n; i++) {
			k = g * 100000 + i + 1 + r * 7
			printf "scratch 10.%d.%d.%d@o2ib %.0f %.0f %.0f %.0f %.0f 0\n",
			    g, int(i / 256), i % 256, k * 4096, k * 512, k, 2 * k, 3 * k + 1
		}
	}'
}

relay_runs=0
# relay_start MAX_FRAME SERVER: the relay, on its state_dir.
relay_start() {
	relay_runs=$((relay_runs + 1))
	cat >"$tmp/relay.conf" <<-EOF
		role = "relay"
		http { listen = "127.0.0.1:0" }
		interval = $interval
		listen = "${relay_addr:-127.0.0.1:0}"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-relay"
		name = "relay1"
		deadline = 1.5
		max_frame = $1
		route "all" {
			networks = { "o2ib" }
			server = "$2"
		}
	EOF
	"$bin" -d -v -f "$tmp/relay.conf" >"$tmp/relay$relay_runs.out" 2>"$tmp/relay$relay_runs.err" &
	relay_pid=$!
	pids+=("$relay_pid")
	wait_grep "$tmp/relay$relay_runs.err" 'listening on 127\.0\.0\.1:[0-9]+' 10 ||
		abort "relay run $relay_runs started" "$(cat "$tmp/relay$relay_runs.err")"
	relay_addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/relay$relay_runs.err" | head -n 1)
}

# send ROUND N MAX: the three gatherers' SWEEPs (N records each, frames of
# at most MAX), all at once 100 ms after a boundary, for the sweep of that
# boundary; true when the relay acknowledged all three.
send() {
	local g sweep ok=0 cpids=()
	for g in 1 2 3; do
		gen "$g" "$2" "$1" >"$tmp/r$g-$1"
	done
	at_boundary 100
	sweep=$(($(date +%s) / interval * interval))
	for g in 1 2 3; do
		timeout 60 "$client" -c "$relay_addr" -k "$tmp/keys" -n "g$g" \
			--records "$tmp/r$g-$1" --sweep-id "$sweep" --batch $(($1 + 1)) \
			--interval "$interval" --max-frame "$3" --timeout 30 \
			>"$tmp/c$g-$1.out" 2>&1 &
		cpids+=("$!")
	done
	for g in "${cpids[@]}"; do
		wait "$g" || ok=1
	done
	return $ok
}

# want ROUNDS...: the sums per NID of what the gatherers sent.
want() {
	local r
	for r in "$@"; do cat "$tmp"/r[123]-"$r"; done |
		awk '{ rb[$2] += $3; wb[$2] += $4; ro[$2] += $5; wo[$2] += $6; oo[$2] += $7 }
		END { for (n in rb) printf "%s %.0f %.0f %.0f %.0f %.0f\n", n, rb[n], wb[n], ro[n], wo[n], oo[n] }' |
		sort
}

# got: the sums per NID of what the downstream printed, and its batches.
got() {
	python3 - "$tmp/dump.out" <<-'EOF'
		import json, sys
		s, batches = {}, set()
		for line in open(sys.argv[1]):
		    r = json.loads(line)
		    batches.add(r["batch"])
		    t = s.setdefault(r["nid"], [0] * 5)
		    for i, k in enumerate(("read_bytes", "write_bytes", "read_ops",
		                           "write_ops", "oss_ops")):
		        t[i] += r[k]
		for n in sorted(s):
		    print(n, *s[n])
		print("batches", len(batches), file=sys.stderr)
	EOF
}

# wait_all N SECONDS: until the downstream printed N records.
wait_all() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(wc -l <"$tmp/dump.out")" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# ------------------------------------------------- 1. split, then flowing

start_dump d -k "$tmp/keys" --max-frame "$small" --state "$tmp/state-dump"
ln -sf "$tmp/d.out" "$tmp/dump.out"
relay_start "$small" "$dump_addr"

if send 0 "$per" "$small"; then
	t_pass "the relay acknowledged the three SWEEPs of one sweep"
else
	abort "the relay acknowledged the three SWEEPs of one sweep" "$(cat "$tmp"/c*-0.out)"
fi
wait_all $((3 * per)) 40 ||
	abort "every record of the merged batch arrived downstream" "$(wc -l <"$tmp/dump.out") of $((3 * per))"
# Later batches flow: a second sweep of the same clients.
send 1 "$per" "$small" || abort "the relay acknowledged the second sweep" "$(cat "$tmp"/c*-1.out)"
wait_all $((6 * per)) 40 ||
	abort "the second sweep arrived downstream" "$(wc -l <"$tmp/dump.out") of $((6 * per))"
sleep $((interval + 1)) # anything sent twice would show now
want 0 1 >"$tmp/want1"
got >"$tmp/got1" 2>"$tmp/batches1"
if diff -q "$tmp/want1" "$tmp/got1" >/dev/null && [ "$(wc -l <"$tmp/dump.out")" -eq $((6 * per)) ]; then
	t_pass "every client arrived downstream exactly once, counters exact ($(cat "$tmp/batches1"))"
else
	t_fail "every client arrived downstream exactly once, counters exact" \
		"$(wc -l <"$tmp/dump.out") records printed, want $((6 * per))" "$(diff "$tmp/want1" "$tmp/got1" | head -n 6)"
fi
nb=$(awk '{ print $2 }' "$tmp/batches1")
t_check "the route's batches were split (more than 2 batches: $nb)" test "$nb" -gt 2
t_check "the relay said it split a batch larger than max_frame" \
	grep -q 'route all: batch [0-9]* larger than max_frame (65536 bytes): [0-9]* client records in it' "$tmp/relay1.err"
t_check "the downstream took every frame (none refused as too large)" \
	bash -c "! grep -Eq 'dropping|too large|larger' '$tmp/d.err'"
term "$relay_pid" relay1 || t_fail "relay run 1 exited 0 on SIGTERM" "$term_msg"
stop_dump || t_fail "the downstream exited 0"

# ----------------------------- 2. a batch too large restored after restart

# The downstream is down (its port refuses): the relay holds the route's
# deltas, sealed in one batch that fits 1 MiB, and saves them.
down=$dump_addr
: >"$tmp/dump2.out"
relay_start 1048576 "$down"
send 2 "$big" 1048576 || abort "the relay (large max_frame) acknowledged the three SWEEPs" "$(cat "$tmp"/c*-2.out)"
wait_grep "$tmp/relay2.err" "route all $down: .*retrying" 10 || true
term "$relay_pid" relay2 || t_fail "relay run 2 exited 0 on SIGTERM" "$term_msg"
# Back with the small limit, its downstream up on the same address.
start_dump_on "$down" d2 -k "$tmp/keys" --max-frame "$small" --state "$tmp/state-dump" ||
	abort "the downstream restarted on $down"
ln -sf "$tmp/d2.out" "$tmp/dump.out"
relay_start "$small" "$down"
wait_all $((3 * big)) 40 ||
	abort "the restored batch arrived downstream" "$(wc -l <"$tmp/dump.out") of $((3 * big))"
sleep $((interval + 1))
want 2 >"$tmp/want2"
got >"$tmp/got2" 2>"$tmp/batches2"
if diff -q "$tmp/want2" "$tmp/got2" >/dev/null && [ "$(wc -l <"$tmp/dump.out")" -eq $((3 * big)) ]; then
	t_pass "after a restart, the restored batch arrived exactly once ($(cat "$tmp/batches2"))"
else
	t_fail "after a restart, the restored batch arrived exactly once" \
		"$(wc -l <"$tmp/dump.out") records printed, want $((3 * big))" "$(diff "$tmp/want2" "$tmp/got2" | head -n 6)"
fi
t_check "the relay said the restored batch was split" \
	grep -q 'route all: batch [0-9]* in flight larger than max_frame (65536 bytes): split' "$tmp/relay3.err"
t_check "no relay run retried a batch larger than max_frame" \
	bash -c "! grep -q 'batch larger than max_frame' '$tmp'/relay*.err"
term "$relay_pid" relay3 || t_fail "relay run 3 exited 0 on SIGTERM" "$term_msg"
[ -n "${LH_SPLIT_KEEP:-}" ] && cp -r "$tmp"/. "$LH_SPLIT_KEEP"/
t_summary
