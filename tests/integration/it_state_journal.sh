#!/usr/bin/env bash
# The gatherer's state journal under SIGKILL (common/gather/
# gstate_journal.h), against the simulator and a real lharvest-dump
# receiver (its batch ledger on) on 127.0.0.1.  Every client moves all the
# time (the simulator steps every 0.4 s, on the wall clock), the gatherers
# of an OSS and an MDS sweep every second and are killed at random points,
# ten times over in turn, many of their saves records appended to
# gatherer.journal; once each is stopped cleanly instead (a compaction).
# Then: every total (MDT op counts included) the receiver counted
# over all the runs equals the simulator's truth exactly (nothing counted
# twice, nothing lost), the journal was replayed at restarts, a torn last
# record (if a kill tore one) was dropped with one line and the state never
# refused.  About 25 s.
#
#   bash it_state_journal.sh BUILD/daemon/lharvestd   (LH_SRCDIR = source)
#
# LH_JOURNAL_SEED: the random points (default: $RANDOM, printed).
set -uo pipefail
bin=$1
. "$(dirname "$0")/dumplib.sh"
. "$(dirname "$0")/gstatelib.sh"
seed=${LH_JOURNAL_SEED:-$RANDOM}
RANDOM=$seed
echo "# seed $seed (LH_JOURNAL_SEED)"

make_keys "$tmp/keys" "it-state-journal-key-0123456789ab"
"${sim[@]}" tree --root "$R" --version 2.15 --servers 1 --clients 40 \
	>/dev/null || { echo "simulator failed"; exit 1; }
start_dump d1 -k "$tmp/keys" --state "$tmp/dstate"
for n in oss1 mds1; do
	gatherer_conf $n
done

saves() { cat "$tmp"/g-*.err | grep -c 'lharvestd: state: [0-9]* bytes appended'; }

start_g oss1 -v
start_g mds1 -v
baseline_then_move oss1 mds1

# Ten stops in turn (eight SIGKILLs, two clean), each after two more
# records appended, at a random point of the next second (a sweep, a
# save, or idle time).
for ((k = 1; k <= 10; k++)); do
	n=$(saves)
	for ((i = 0; i < 100 && $(saves) < n + 2; i++)); do sleep 0.1; done
	sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
	n=oss1
	((k % 2 == 0)) && n=mds1
	if ((k == 5 || k == 6)); then
		kill -TERM "${gp[$n]}"
		wait "${gp[$n]}" 2>/dev/null
	else
		kill -KILL "${gp[$n]}"
		wait "${gp[$n]}" 2>/dev/null
	fi
	start_g $n -v
done
wait_sweep oss1 mds1
# The simulator's last step, then a sweep that read it.
kill -TERM "$simpid"
wait "$simpid" 2>/dev/null
wait_sweep oss1 mds1
wait_sweep oss1 mds1

totals_exact "after eight SIGKILLs and two clean stops every total is the simulator's, exactly"
t_check "records were appended to the journal" test "$(saves)" -ge 20
t_check "the journal was replayed at a restart" \
	grep -q 'state restored: .* ([1-9][0-9]* journal records)' "$tmp"/g-*.err
t_check "a clean stop compacted: restored from the base alone" \
	grep -q 'state restored: .* (0 journal records)' "$tmp"/g-*.err
t_check "the state was never refused" \
	bash -c "! cat '$tmp'/g-*.err | grep -q 'damaged\|moved aside'"
t_check "... and set nothing aside" \
	bash -c "! ls '$tmp'/st-* | grep -q bad"
torn=$(cat "$tmp"/g-*.err | grep -c 'its last record is torn')
echo "# torn last records dropped: $torn"
kill -TERM "${gp[oss1]}" "${gp[mds1]}"
wait "${gp[oss1]}" "${gp[mds1]}"
t_summary
