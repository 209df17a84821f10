#!/usr/bin/env bash
# One page per node, under its current name (docs/ganglia.md, "One page
# per node, and renames").  A compute node's own gmond reports it under
# its management address; the aggregator spoofs its Lustre rates under
# the address of its NID.  Here two gmonds stand in for compute nodes
# (override_hostname, override_ip: 10.9.0.x, while their NIDs are
# 10.1.0.x@o2ib), the simulator, three gatherers and an aggregator feed
# the collector gmond they all send to; gmetad and the PHP 8-patched
# ganglia-web are tests/ganglia-web/lib.sh's.  Checked, through gmetad's
# answers to ganglia-web's host query and its RRDs:
#  - gmond keeps two entries named node01 (one per address); gmetad keys
#    hosts by name and makes them one host: node01's own load and its
#    Lustre rates on one page, their RRDs in one directory;
#  - a renamed node (hosts map and the node's gmond: node02 -> cn02,
#    aggregator SIGHUP): gmond keeps filing the NID's rates under the
#    name it first saw, so cn02's page has no Lustre graphs;
#  - the documented step, a restart of the collector gmond: cn02's page
#    has its own and its Lustre graphs, with the rates the simulator
#    wrote;
# and then in headless Chromium: cn02's and node01's ganglia-web pages
# hold their load and Lustre graphs, loaded, each Lustre graph's area
# drawn (tests/integration/gnode_page.py).  The pages, their screenshots
# and the graphs stay in LH_GNODE_OUT (default ./it_gnode.out).  About
# 30 s.
# gmetad binds every address: the whole test runs in a network namespace
# of its own (unshare -n), where nothing else listens.
#   bash it_gnode.sh BUILD/daemon/lharvestd      (LH_SRCDIR = source tree)
set -uo pipefail
src=${LH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck disable=SC2034 # read by lib.sh
LH_SRC=$src
# shellcheck source=../ganglia-web/lib.sh
. "$src/tests/ganglia-web/lib.sh"
for c in gmond gmetad php chromium rrdtool; do
	command -v "$c" >/dev/null || { echo "no $c (scripts/deps.sh installs it)"; exit 1; }
done
gweb_netns "$0" "$@"
bin=$(realpath "$1")
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
# shellcheck source=gnodelib.sh
. "$(dirname "$0")/gnodelib.sh"
gm=$src/tests/ganglia/gmond.sh
sim=(python3 "$src/tests/sim/lustresim.py")
GW=$tmp
col_udp=$GW_GMOND_UDP col_tcp=$GW_GMOND_TCP query_port=$GW_INTERACTIVE
out=${LH_GNODE_OUT:-$PWD/it_gnode.out}
rm -rf "$out" && mkdir -p "$out"

stop_all() {
	gn_stop "$tmp/node01/gmond.pid" gmond
	gn_stop "$tmp/node02/gmond.pid" gmond
	gweb_stop >/dev/null
	cp -f "$GW"/*.log "$out"/ 2>/dev/null
	cleanup
}
trap stop_all EXIT

R=$tmp/sim
"${sim[@]}" run --root "$R" --scenario "$src/tests/sim/scenarios/aggregator-site.json" \
	--clock wall --period 1 --align --steps 0 --quiet >"$tmp/sim.log" 2>&1 &
pids+=("$!")
wait_grep "$R/truth.jsonl" '"step": 0' 10 || { echo "the simulator did not start"; exit 1; }

# The collector gmond, gmetad and the patched ganglia-web.
gweb_start || { echo "the stack did not start: $(tail -n 5 "$GW"/*.log)"; exit 1; }
gn_node_start "$tmp/node01" node01 10.9.0.1 "$col_udp" || exit 1
gn_node_start "$tmp/node02" node02 10.9.0.2 "$col_udp" || exit 1

make_keys "$tmp/keys" "it-gnode-key-0123456789abcdef01234567"
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' \
	"$col_udp" >"$tmp/send.conf"
printf '10.1.0.1\tnode01\n10.1.0.2\tnode02\n' >"$tmp/hosts"
mkdir -m 700 "$tmp/state-agg"
cat >"$tmp/agg.conf" <<EOF
role = "aggregator"
interval = 2
listen = "127.0.0.1:0"
secret_file = "$tmp/keys"
state_dir = "$tmp/state-agg"
name = "agg"
gatherers = { "oss1", "oss2", "mds1" }
hosts_file = "$tmp/hosts"
dns = no
ganglia {
	gmond_conf = "$tmp/send.conf"
	metadata_interval = 4
}
EOF
"$bin" -d -v -f "$tmp/agg.conf" 2>"$tmp/agg.log" &
agg=$!
pids+=("$agg")
wait_grep "$tmp/agg.log" 'listening on' 10 || { cat "$tmp/agg.log"; exit 1; }
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/agg.log" | head -n 1)
for g in oss1 oss2 mds1; do
	mkdir -m 700 "$tmp/state-$g"
	cat >"$tmp/$g.conf" <<-EOF
		role = "gatherer"
		interval = 2
		lustre_root = "$R/$g"
		server = "$addr"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-$g"
		name = "$g"
	EOF
	"$bin" -d -f "$tmp/$g.conf" 2>"$tmp/$g.log" &
	pids+=("$!")
done

lustre="scratch_read_bytes scratch_write_bytes scratch_oss_ops scratch_mds_ops"
# page HOST METRIC...: gmetad serves HOST with every METRIC, and has an
# RRD for each in HOST's directory (what ganglia-web draws the page from).
page() {
	local h=$1 m
	shift
	gn_host "$query_port" "$h" >"$tmp/page.$h" || return 1
	for m in "$@"; do
		grep -q "^$m " "$tmp/page.$h" || return 1
		[ -s "$GW/rrds/$GW_CLUSTER/$h/$m.rrd" ] || return 1
	done
}
# gmond_entries NAME: the collector's entries named NAME, "IP #metrics".
gmond_entries() { "$gm" xml "$col_tcp" --hosts | awk -v n="$1" '$1 == n { print $2, $3 }' | sort; }

# shellcheck disable=SC2086 # $lustre: one metric a word
if gn_wait 40 page node01 load_one $lustre home_read_bytes; then
	t_pass "node01's own load and its Lustre rates on one page in gmetad"
else
	t_fail "node01's own load and its Lustre rates on one page in gmetad" \
		"$(cat "$tmp/page.node01")" "$(ls "$GW/rrds/$GW_CLUSTER/node01" 2>&1)" \
		"$(tail -n 3 "$tmp/agg.log")"
fi
e=$(gmond_entries node01)
if [ "$(echo "$e" | awk '{ print $1 }' | tr '\n' ' ')" = "10.1.0.1 10.9.0.1 " ]; then
	t_pass "gmond keeps node01 as two entries, its NID's and its management address"
else
	t_fail "gmond keeps node01 as two entries, its NID's and its management address" "$e"
fi
# gmetad counts HOST elements, not names: node01 and node02 twice each,
# and lustre-totals.
five_up() { [ "$(gn_hosts_up "$query_port")" = 5 ]; }
if gn_wait 10 five_up; then
	t_pass "gmetad's summary counts each of gmond's entries: 5 up for 3 names"
else
	t_fail "gmetad's summary counts each of gmond's entries: 5 up for 3 names" \
		"hosts up: $(gn_hosts_up "$query_port")" "$("$gm" xml "$col_tcp" --hosts)"
fi
# shellcheck disable=SC2086
gn_wait 20 page node02 load_one $lustre ||
	t_fail "node02's page before the rename" "$(cat "$tmp/page.node02")"

# The rename: the node's gmond comes back as cn02, the hosts map says so.
gn_stop "$tmp/node02/gmond.pid" gmond
gn_node_start "$tmp/node02" cn02 10.9.0.2 "$col_udp" || exit 1
printf '10.1.0.1\tnode01\n10.1.0.2\tcn02\n' >"$tmp/hosts"
n=$(wc -l <"$tmp/agg.log")
kill -HUP "$agg"
wait_reload() { [ "$(tail -n +$((n + 1)) "$tmp/agg.log" | grep -c 'configuration reloaded')" -gt 0 ]; }
gn_wait 10 wait_reload || t_fail "the aggregator reloaded the hosts map" "$(tail -n 5 "$tmp/agg.log")"
# Two sweeps and a metadata interval of packets as cn02.
sleep_sweeps() { [ "$(tail -n +$((n + 1)) "$tmp/agg.log" | grep -c 'sweep [0-9]*: 3 gatherers')" -ge 4 ]; }
gn_wait 20 sleep_sweeps || t_fail "the aggregator sweeps on after the reload" "$(tail -n 5 "$tmp/agg.log")"
e=$(gmond_entries node02)
if [ "$(echo "$e" | awk '{ print $1 }' | tr '\n' ' ')" = "10.1.0.2 10.9.0.2 " ] &&
	[ "$(gn_host "$query_port" cn02 | grep -c '^scratch_')" -eq 0 ]; then
	t_pass "after the rename gmond still files both addresses as node02; cn02's page has no Lustre graphs"
else
	t_fail "after the rename gmond still files both addresses as node02; cn02's page has no Lustre graphs" \
		"$e" "$(gn_host "$query_port" cn02)"
fi

# The documented step: restart the collector gmond.
"$gm" stop "$GW/gmond" >/dev/null
restarted=$(date +%s)
"$gm" start "$GW/gmond" "$col_udp" "$col_tcp" >/dev/null || exit 1
# Every entry of the restarted gmond is new: cn02's Lustre rates are
# there as soon as the aggregator's metadata is (metadata_interval).
cn02_whole() {
	# shellcheck disable=SC2086
	page cn02 load_one $lustre &&
		[ "$(gmond_entries cn02 | awk '{ print $1 }' | tr '\n' ' ')" = "10.1.0.2 10.9.0.2 " ]
}
if gn_wait 30 cn02_whole; then
	t_pass "after a restart of the collector gmond, cn02's page has its own and its Lustre graphs"
else
	t_fail "after a restart of the collector gmond, cn02's page has its own and its Lustre graphs" \
		"$(cat "$tmp/page.cn02")" "$(gmond_entries cn02)"
fi
# shellcheck disable=SC2086
if gn_wait 10 page node01 load_one $lustre home_read_bytes; then
	t_pass "node01 is still one page after the restart"
else
	t_fail "node01 is still one page after the restart" "$(cat "$tmp/page.node01")"
fi
# near TRUTH PAGE: the page's value within 3 % of the simulator's truth.
near() { awk -v t="$1" -v v="$2" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(t > 0 && d <= 0.03 * t) }'; }
for hn in node01:10.1.0.1@o2ib cn02:10.1.0.2@o2ib; do
	h=${hn%%:*} nid=${hn#*:}
	for f in read_bytes write_bytes; do
		want=$(python3 "$src/tests/integration/gnode_truth.py" "$R/truth.jsonl" scratch "$nid" "$f")
		got=$(gn_host "$query_port" "$h" | awk -v m="scratch_$f" '$1 == m { print $2 }')
		if near "$want" "$got"; then
			t_pass "$h's page: scratch_$f is what the simulator wrote ($got, truth $want)"
		else
			t_fail "$h's page: scratch_$f is what the simulator wrote" "page $got, truth $want"
		fi
	done
done
# The pages themselves: Chromium loads each node's ganglia-web page;
# every image loaded, the graphs of the node's load and of its Lustre
# metrics among them, and each Lustre graph, drawn again since the
# restart, has its area filled (and an unknown host's has not).
web_page() {
	local h=$1
	shift
	gweb_probe "/ganglia/index.php?c=$GW_CLUSTER&h=$h&r=hour" "$out/probe-$h.json" || return 1
	python3 "$src/tests/integration/gnode_page.py" "$out/probe-$h.json" \
		"http://127.0.0.1:$GW_HTTP/ganglia/" "$out/$h" "$h" "$restarted" "$(date +%s)" "$@" \
		>"$out/page-$h.out" 2>&1
}
for h in cn02 node01; do
	gweb_shot "http://127.0.0.1:$GW_HTTP/ganglia/index.php?c=$GW_CLUSTER&h=$h&r=hour" "$out/$h.png"
	# shellcheck disable=SC2086
	if web_page "$h" load_one ${lustre//scratch/+scratch}; then
		t_pass "ganglia-web: $h's page shows its own load and its Lustre graphs, drawn"
	else
		t_fail "ganglia-web: $h's page shows its own load and its Lustre graphs, drawn" \
			"$(cat "$out/page-$h.out" 2>/dev/null)" "$(tail -n 3 "$GW/chromium.log")"
	fi
done
errs=$(grep -E 'PHP (Fatal|Parse|Warning)|\[500\]' "$GW/php.log" | head -n 5)
t_check "no PHP error in php -S's log" test -z "$errs"
echo "# gmetad's node02 after the restart: $(gn_host "$query_port" node02 | head -n 1)"
echo "# pages probed: $out"
t_summary
