#!/usr/bin/env bash
# The gatherer's state directory under faults, against the simulator and
# a real lharvest-dump receiver on 127.0.0.1:
#
#  1. the state cannot be saved (its journal moved away, and the new base
#     it then needs cannot be written: its temporary name is taken by a
#     directory): new deltas are held back, not sent; the gatherer is then
#     killed and restarted from its older state, and every total is still
#     exactly the simulator's truth: nothing that could not be saved was
#     counted, nothing was lost;
#  2. the state file is damaged: refused with one line, a baseline, and
#     batches numbered above every earlier one, so the receiver counts
#     them instead of taking them for resends;
#  3. without -d: start-up problems reach the terminal and the exit status
#     before the daemon detaches; a good configuration detaches, exit 0.
set -uo pipefail
bin=$1
. "$(dirname "$0")/dumplib.sh"
. "$(dirname "$0")/gstatelib.sh"

make_keys "$tmp/keys" "it-gatherer-state-key-0123456789"
"${sim[@]}" tree --root "$R" --version 2.15 --servers 1 --clients 8 \
	>/dev/null || { echo "simulator failed"; exit 1; }
start_dump d1 -k "$tmp/keys" --state "$tmp/dstate"

step() { "${sim[@]}" run --root "$R" --steps 1 >/dev/null; }

gatherer_conf oss1
gatherer_conf mds1
start_g oss1
start_g mds1
if ! wait_sweep oss1 mds1; then
	t_fail "the gatherers delivered their baseline" "$(tail -5 "$tmp"/g-*.err)"
	t_summary
	exit 1
fi
cp "$R/truth-latest.json" "$tmp/baseline.json"
step
wait_sweep oss1 mds1

# 1. Saves fail: deltas held back.  Once the first failure is logged, two
#    more steps and sweeps go by (time let pass on purpose: nothing must
#    come of them).
# The journal is moved away too: a save then writes a new base, which
# fails (the journal is put back before the restart below).
mkdir "$tmp/st-oss1/gatherer.state.tmp"
mv "$tmp/st-oss1/gatherer.journal" "$tmp/journal-oss1"
wait_grep "$tmp/g-oss1.err" 'holding new deltas back' 20
sleep 1.2 # what was on the wire before the failure lands
held=$(max_batch oss1)
step
sleep 2.2
step
sleep 2.2
t_check "a failed save is logged once" \
	test "$(grep -c 'holding new deltas back' "$tmp/g-oss1.err")" -eq 1
t_check "nothing is sent while the state cannot be saved" \
	test "$(max_batch oss1)" -eq "$held"
kill -KILL "${gp[oss1]}"
wait "${gp[oss1]}" 2>/dev/null
rmdir "$tmp/st-oss1/gatherer.state.tmp"
mv "$tmp/journal-oss1" "$tmp/st-oss1/gatherer.journal"
start_g oss1
step
wait_sweep oss1 mds1
totals_exact "after the restart from the older state every total is exact"

# 2. A damaged state file.
before=$(max_batch oss1)
dups=$(grep -c 'as a duplicate' "$tmp/d1.err")
kill -TERM "${gp[oss1]}"
wait "${gp[oss1]}"
t_check "SIGTERM: exit 0" test $? -eq 0
printf 'garbage' | dd of="$tmp/st-oss1/gatherer.state" bs=1 seek=100 \
	conv=notrunc 2>/dev/null
cp "$tmp/st-oss1/gatherer.state" "$tmp/damaged"
start_g oss1
step
wait_sweep oss1
wait_grep "$tmp/g-oss1.err" 'gatherer.state: damaged' 20
sleep 1.5 # time for a duplicate to show, were there one
t_check "a damaged state is refused with one line" \
	grep -q 'gatherer.state: damaged: checksum mismatch; moved aside to .*/gatherer.state.bad.[0-9]*, starting afresh' \
	"$tmp/g-oss1.err"
bads=("$tmp"/st-oss1/gatherer.state.bad.*)
t_check "... moved aside as it was, never overwritten" \
	cmp -s "$tmp/damaged" "${bads[0]}"
after=$(max_batch oss1)
t_check "batches after a lost state are numbered above the old ones" \
	test "$after" -gt "$before"
t_check "the receiver counted them (no duplicate)" \
	test "$(grep -c 'as a duplicate' "$tmp/d1.err")" -eq "$dups"

# 3. Without -d.
kill -TERM "${gp[oss1]}" "${gp[mds1]}"
wait "${gp[oss1]}" "${gp[mds1]}"
chmod 644 "$tmp/keys"
out=$("$bin" -f "$tmp/oss1.conf" 2>&1)
rc=$?
t_check "without -d, a refused key file: exit 1" test "$rc" -eq 1
t_check "without -d, the reason is on the terminal" \
	grep -q 'mode 0644 gives group or other access' <<<"$out"
chmod 600 "$tmp/keys"
"$bin" -f "$tmp/oss1.conf" >"$tmp/detach.out" 2>&1
rc=$?
t_check "without -d, a good configuration detaches with exit 0" \
	test "$rc" -eq 0
dpid=$(pgrep -f -x "$bin -f $tmp/oss1.conf" | head -1)
t_check "the detached gatherer runs" test -n "$dpid"
[ -n "$dpid" ] && pids+=("$dpid")
out=$(timeout 10 "$bin" -d -f "$tmp/oss1.conf" 2>&1)
rc=$?
t_check "a second instance on its state_dir is refused: exit 1" \
	test "$rc" -eq 1
t_check "... with the reason" \
	grep -q 'another lharvestd uses this state_dir' <<<"$out"
[ -n "$dpid" ] && kill -TERM "$dpid"
t_summary
