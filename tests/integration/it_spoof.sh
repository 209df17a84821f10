#!/usr/bin/env bash
# The whole path from a SWEEP to gmond's XML, short enough for the
# sanitizer build (label smoke): lhclient, speaking the protocol as a
# gatherer, sends one sweep of known deltas to a real aggregator, which
# maps the NIDs through a hosts file and spoofs the rates into a real
# gmond on 127.0.0.1; gmond must show every host's exact rates and the
# totals.  In the sanitizer build this is the run that exercises
# libganglia's send path (tests/ganglia/sanitizer.sh says why it needs
# libtirpc preloaded there).
#   bash it_spoof.sh BUILD/daemon/lharvestd      (LH_SRCDIR = source tree)
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
gm=$src/tests/ganglia/gmond.sh
command -v gmond >/dev/null || { echo "no gmond: apt-get install ganglia-monitor"; exit 1; }
# shellcheck source=../ganglia/sanitizer.sh
. "$src/tests/ganglia/sanitizer.sh"
agg_pid=''
trap 'kill "$agg_pid" 2>/dev/null; wait 2>/dev/null; "$gm" stop "$tmp/gmond" >/dev/null; cleanup' EXIT

for ((i = 0; i < 20; i++)); do
	u=$((20000 + RANDOM % 30000))
	if "$gm" start "$tmp/gmond" "$u" $((u + 1)) >/dev/null 2>"$tmp/gmond.err"; then
		gm_udp=$u
		gm_tcp=$((u + 1))
		break
	fi
done
[ -n "${gm_tcp:-}" ] || { cat "$tmp/gmond.err"; echo "gmond did not start"; exit 1; }

make_keys "$tmp/keys" "it-spoof-key-0123456789abcdef0123456789"
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' \
	"$gm_udp" >"$tmp/send.conf"
printf '10.1.0.1\tnode01\n10.1.0.2\tnode02\n12@gni\tnode03\n' >"$tmp/hosts"
mkdir -m 700 "$tmp/state"
interval=2
cat >"$tmp/agg.conf" <<EOF
role = "aggregator"
http { listen = "127.0.0.1:0" }
interval = $interval
listen = "127.0.0.1:0"
secret_file = "$tmp/keys"
state_dir = "$tmp/state"
name = "agg"
gatherers = { "oss1" }
hosts_file = "$tmp/hosts"
dns = no
gmond_conf = "$tmp/send.conf"
EOF
"$bin" -d -v -f "$tmp/agg.conf" 2>"$tmp/agg.log" &
agg_pid=$!
wait_grep "$tmp/agg.log" 'listening on' 10 || { cat "$tmp/agg.log"; exit 1; }
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/agg.log" | head -n 1)

# Deltas over the default span (the interval): the rates are these / 2.
cat >"$tmp/recs" <<'EOR'
scratch 10.1.0.1@o2ib 2000000 4000000 20 40 60 0
scratch 10.1.0.2@o2ib 6000 0 2 0 2 0
scratch 12@gni 0 0 0 0 0 900
EOR
# The sweep just begun, so that the aggregator takes it as current.
now=${EPOCHREALTIME%.*}
sweep=$((now / interval * interval))
if timeout 30 "$bindir/lhclient" -c "$addr" -k "$tmp/keys" -n oss1 --records "$tmp/recs" \
	--interval "$interval" --sweep-id "$sweep" --batch 1 >"$tmp/client.out" 2>&1; then
	t_pass "the aggregator acknowledged the sweep"
else
	t_fail "the aggregator acknowledged the sweep" "$(cat "$tmp/client.out")" "$(tail -n 5 "$tmp/agg.log")"
fi

# gmond's values, once node03 and the totals are there.
want() {
	cat <<-'EOW'
		lustre-totals scratch_mds_ops 450.00
		lustre-totals scratch_oss_ops 31.00
		lustre-totals scratch_read_bytes 1003000.00
		lustre-totals scratch_write_bytes 2000000.00
		node01 scratch_mds_ops 0.00
		node01 scratch_oss_ops 30.00
		node01 scratch_read_bytes 1000000.00
		node01 scratch_write_bytes 2000000.00
		node02 scratch_mds_ops 0.00
		node02 scratch_oss_ops 1.00
		node02 scratch_read_bytes 3000.00
		node02 scratch_write_bytes 0.00
		node03 scratch_mds_ops 450.00
		node03 scratch_oss_ops 0.00
		node03 scratch_read_bytes 0.00
		node03 scratch_write_bytes 0.00
	EOW
}
got() { "$gm" xml "$gm_tcp" --values | awk '{printf "%s %s %.2f\n", $1, $2, $3}' | sort; }
ok=0
for ((i = 0; i < 100; i++)); do
	if diff <(want) <(got) >"$tmp/diff" 2>&1; then
		ok=1
		break
	fi
	sleep 0.1
done
if [ "$ok" = 1 ]; then
	t_pass "gmond shows every host's exact rates and the totals"
else
	t_fail "gmond shows every host's exact rates and the totals" "$(cat "$tmp/diff")" "$(tail -n 5 "$tmp/agg.log")"
fi

kill -TERM "$agg_pid"
if wait "$agg_pid"; then
	t_pass "the aggregator exits cleanly on SIGTERM (no sanitizer report)"
else
	t_fail "the aggregator exits cleanly on SIGTERM (no sanitizer report)" "$(tail -n 20 "$tmp/agg.log")"
fi
agg_pid=''
t_check "no sanitizer report in the aggregator's log" \
	bash -c "! grep -qE 'Sanitizer|runtime error' '$tmp/agg.log'"
t_summary
