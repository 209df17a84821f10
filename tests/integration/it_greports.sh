#!/usr/bin/env bash
# lharvestd --ganglia-reports DIR -f FILE (docs/ganglia.md, "Dashboards in
# ganglia-web").  First the command alone, on aggregator configurations
# like conf/aggregator.conf with several filesystems and prefixes: the
# files written, their shape (greports_check.py), atomic replacement, and
# one line and status 1 for each thing that cannot be done (a bad
# configuration, a gatherer's, none of the filesystems named, a missing
# directory, a file that cannot be replaced).  Then a real run: the
# simulator (aggregator-site.json: filesystems scratch and home), a
# gatherer per server and an aggregator with extra_metrics and every
# metadata op, into a private gmond on 127.0.0.1; the reports must name
# exactly the metrics gmond received, for the totals host and the
# clients, and every Lustre metric gmond has must be in a report.  About
# 20 s.
#
#   bash it_greports.sh BUILD/daemon/lharvestd     (LH_SRCDIR = source tree)
set -uo pipefail
bin=$(realpath "$1")
. "$(dirname "$0")/dumplib.sh"
# shellcheck source=agglib.sh
. "$(dirname "$0")/agglib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
sim=(python3 "$src/tests/sim/lustresim.py")
chk=(python3 "$src/tests/integration/greports_check.py")
gm=$src/tests/ganglia/gmond.sh
scenario=$src/tests/sim/scenarios/aggregator-site.json
command -v gmond >/dev/null || { echo "no gmond: apt-get install ganglia-monitor"; exit 1; }
. "$src/tests/ganglia/sanitizer.sh"

interval=2
servers=(mds1 oss1 oss2)
R=$tmp/sim

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	"$gm" stop "$tmp/gmond" >/dev/null 2>&1
	rm -rf "$tmp"
}

abort() {
	t_fail "$@" "--- aggregator (last lines)" "$(tail -n 8 "$tmp/agg.log" 2>/dev/null)"
	t_summary
	exit 1
}

# reports NAME DIR CONF: run the command; its status in rc, its output in
# $tmp/NAME.out and .err.
reports() {
	"$bin" --ganglia-reports "$2" -f "$3" >"$tmp/$1.out" 2>"$tmp/$1.err"
	rc=$?
}

# one_line NAME PATTERN: the run NAME failed with status 1 and exactly one
# line on stderr, matching PATTERN.
one_line() {
	local n
	n=$(wc -l <"$tmp/$1.err")
	if [ "$rc" -eq 1 ] && [ "$n" -eq 1 ] && grep -qE -- "$2" "$tmp/$1.err"; then
		t_pass "$1: status 1, one line: $(cat "$tmp/$1.err")"
	else
		t_fail "$1: status 1, one line matching $2" "status $rc" "$(cat "$tmp/$1.err")"
	fi
}

# check NAME ARGS...: greports_check.py's lines through t_pass/t_fail.
check() {
	local name=$1
	shift
	"${chk[@]}" "$@" >"$tmp/$name.chk" 2>&1
	replay "$tmp/$name.chk"
}

# ------------------------------------------------------- the command alone

cat >"$tmp/hosts" <<'EOF'
10.1.0.1	node01
10.1.0.2	node02
10.1.0.3	node03
EOF
make_keys "$tmp/keys" "it-greports-key-0123456789abcdef0123"
# As conf/aggregator.conf, with two filesystems, one renamed, and a
# section for a third that is not wanted (filesystems lists two).
agg_conf() { # FILE GMOND_CONF
	cat >"$1" <<-EOF
		role = "aggregator"
		interval = $interval
		listen = "127.0.0.1:0"
		http { listen = "" }
		secret_file = "$tmp/keys"
		state_dir = "$tmp/agg-state"
		name = "agg"
		deadline = 0.5
		dns = no
		hosts_file = "$tmp/hosts"
		filesystems = { "scratch", "home" }
		extra_metrics = yes
		metadata_ops = { "all" }
		filesystem "scratch" { metric_prefix = "vu_short" }
		filesystem "work" { metric_prefix = "wk" }
		ganglia {
			gmond_conf = "$2"
			totals_host = "lustre-totals"
		}
	EOF
}
agg_conf "$tmp/agg.conf" "$tmp/send.conf"
mkdir "$tmp/out"
reports first "$tmp/out" "$tmp/agg.conf"
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/first.err" ] &&
	[ "$(grep -c "^wrote $tmp/out/" "$tmp/first.out")" -eq 9 ]; then
	t_pass "two filesystems: status 0, 9 files, one line each"
else
	t_fail "two filesystems: status 0, 9 files, one line each" "status $rc" \
		"$(cat "$tmp/first.out" "$tmp/first.err")"
fi
check first --dir "$tmp/out" --prefix vu_short --prefix home \
	--totals lustre-totals --extra --mdops all

# Only filesystem sections (every filesystem found), default totals host,
# a prefix with a dot, no metadata ops, no extra metrics: no mdops report,
# and the dot escaped in the view's regexes.
cat >"$tmp/sections.conf" <<-EOF
	role = "relay"
	secret_file = "$tmp/keys"
	route "a" { networks = { "o2ib" } server = "127.0.0.1:1" }
	filesystem "lfs1" { metric_prefix = "lfs.1" }
	filesystem "lfs2" { }
	ganglia { totals_host = "all.lustre" }
EOF
mkdir "$tmp/out2"
reports sections "$tmp/out2" "$tmp/sections.conf"
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/sections.err" ]; then
	t_pass "a relay's filesystem sections: status 0"
else
	t_fail "a relay's filesystem sections: status 0" "status $rc" "$(cat "$tmp/sections.err")"
fi
check sections --dir "$tmp/out2" --prefix lfs.1 --prefix lfs2 --totals all.lustre

# Written again over the same files: replaced whole, no temporary left.
ino=$(stat -c %i "$tmp/out2/lfs2_lustre_io_report.json")
reports again "$tmp/out2" "$tmp/sections.conf"
if [ "$rc" -eq 0 ] && [ "$(stat -c %i "$tmp/out2/lfs2_lustre_io_report.json")" != "$ino" ] &&
	[ "$(find "$tmp/out2" -type f | wc -l)" -eq 7 ] &&
	[ "$(stat -c %a "$tmp/out2/view_lustre_lfs2.json")" = 644 ]; then
	t_pass "written again: each file replaced by a rename, mode 644, nothing else left"
else
	t_fail "written again: each file replaced by a rename, mode 644, nothing else left" \
		"status $rc" "$(ls -la "$tmp/out2")"
fi

# Errors: one line each, status 1.
printf 'role = "aggregator"\nfilesystems = { "scratch" \n' >"$tmp/bad.conf"
reports badconf "$tmp/out" "$tmp/bad.conf"
one_line badconf "^$tmp/bad.conf"
reports noconf "$tmp/out" "$tmp/none.conf"
one_line noconf "^$tmp/none.conf"
printf 'role = "gatherer"\nsecret_file = "%s"\nserver = "127.0.0.1:1"\n' "$tmp/keys" >"$tmp/g.conf"
reports gatherer "$tmp/out" "$tmp/g.conf"
one_line gatherer "^$tmp/g.conf: --ganglia-reports needs an aggregator"
printf 'role = "aggregator"\nsecret_file = "%s"\n' "$tmp/keys" >"$tmp/nofs.conf"
reports nofs "$tmp/out" "$tmp/nofs.conf"
one_line nofs "^$tmp/nofs.conf: no filesystem named"
reports nodir "$tmp/missing" "$tmp/agg.conf"
one_line nodir "^$tmp/missing: No such file or directory$"
reports notdir "$tmp/keys" "$tmp/agg.conf"
one_line notdir "^$tmp/keys: Not a directory$"
# A file that cannot be replaced (a directory in its place, which even
# root cannot rename a file over): that one line, the others written.
mkdir "$tmp/out3" "$tmp/out3/home_lustre_ops_report.json"
reports blocked "$tmp/out3" "$tmp/agg.conf"
one_line blocked "^$tmp/out3/home_lustre_ops_report.json: Is a directory$"
if [ "$(grep -c '^wrote ' "$tmp/blocked.out")" -eq 8 ] &&
	[ -z "$(find "$tmp/out3" -name '*.json.??????')" ]; then
	t_pass "the 8 other files written, no temporary left"
else
	t_fail "the 8 other files written, no temporary left" "$(cat "$tmp/blocked.out")" "$(ls "$tmp/out3")"
fi

# ---------------------------------------- against a real aggregator run

"${sim[@]}" run --root "$R" --scenario "$scenario" --clock wall --period 1 \
	--align --steps 0 --quiet >>"$tmp/sim.log" 2>&1 &
pids+=("$!")
wait_grep "$R/truth.jsonl" '"step": 0' 10 || abort "the simulator wrote its first step" "$(tail "$tmp/sim.log")"
for ((i = 0; i < 20; i++)); do
	u=$((20000 + RANDOM % 30000))
	if "$gm" start "$tmp/gmond" "$u" $((u + 1)) >/dev/null 2>"$tmp/gmond-start.err"; then
		gm_udp=$u
		gm_tcp=$((u + 1))
		break
	fi
done
[ -n "${gm_tcp:-}" ] || abort "gmond started" "$(cat "$tmp/gmond-start.err")"
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' \
	"$gm_udp" >"$tmp/send.conf"
mkdir -m 700 "$tmp/agg-state"
"$bin" -d -v -f "$tmp/agg.conf" >"$tmp/agg.out" 2>"$tmp/agg.log" &
pids+=("$!")
wait_grep "$tmp/agg.log" 'listening on 127\.0\.0\.1:[0-9]+' 10 || abort "the aggregator started"
addr=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/agg.log" | head -n 1)
for n in "${servers[@]}"; do
	mkdir -m 700 "$tmp/state-$n"
	cat >"$tmp/$n.conf" <<-EOF
		role = "gatherer"
		interval = $interval
		lustre_root = "$R/$n"
		server = "$addr"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-$n"
		name = "$n"
	EOF
	"$bin" -d -f "$tmp/$n.conf" >"$tmp/g-$n.out" 2>"$tmp/g-$n.log" &
	pids+=("$!")
done
# Every metric of both filesystems for the totals host, 2 x (6 + 17),
# and for node01, a client of both.
got() { grep -cE "^$1 (vu_short|home)_" "$tmp/gmond.values"; }
for ((i = 0; i < 400; i++)); do
	"$gm" xml "$gm_tcp" --values >"$tmp/gmond.values" 2>/dev/null
	[ "$(got lustre-totals)" -ge 46 ] && [ "$(got node01)" -ge 46 ] && break
	sleep 0.1
done
if [ "$(got lustre-totals)" -ge 46 ] && [ "$(got node01)" -ge 46 ]; then
	t_pass "gmond received the 46 metrics of both filesystems for lustre-totals and node01"
else
	abort "gmond received the 46 metrics of both filesystems for lustre-totals and node01" \
		"$(cut -d' ' -f1 "$tmp/gmond.values" | sort | uniq -c)"
fi
check gmond --dir "$tmp/out" --prefix vu_short --prefix home \
	--totals lustre-totals --extra --mdops all --gmond "$tmp/gmond.values"

t_summary
