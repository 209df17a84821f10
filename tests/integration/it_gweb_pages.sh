#!/usr/bin/env bash
# contrib/ganglia-web-php8.patch on its own: it applies to Debian's
# ganglia-web 3.7.5 and reverts to it byte for byte (patch -R -E); the
# unpatched copy fails on PHP 8 (upstream issues 361 and 384), and the
# patched one serves every page an operator reaches (main, cluster,
# host, views, aggregate graphs, search, mobile, graphs, the host API)
# with no PHP error in php -S's log.  gmond, gmetad and php -S in a
# network namespace of the test's own, two hosts spoofed with gmetric.
# About 15 s.
#
#   bash it_gweb_pages.sh BUILD/daemon/lharvestd   (LH_SRCDIR = source tree)
set -uo pipefail
src=${LH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck disable=SC2034 # read by lib.sh
LH_SRC=$src
# shellcheck source=../ganglia-web/lib.sh
. "$src/tests/ganglia-web/lib.sh"
for c in gmond gmetad php rrdtool gmetric patch curl; do
	command -v "$c" >/dev/null || { echo "no $c (scripts/deps.sh installs it)"; exit 1; }
done
gweb_netns "$0" "$@"
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
GW=$tmp
trap 'gweb_stop; cleanup' EXIT
orig=/usr/share/ganglia-webfrontend
patchf=$src/contrib/ganglia-web-php8.patch

# Applies, and reverts to Debian's files exactly.
mkdir "$GW/rt"
cp -a "$orig" "$GW/rt/gw"
if patch -s -p1 -d "$GW/rt/gw" <"$patchf" >"$GW/rt.log" 2>&1 &&
	patch -s -R -E -p1 -d "$GW/rt/gw" <"$patchf" >>"$GW/rt.log" 2>&1 &&
	diff -r "$orig" "$GW/rt/gw" >>"$GW/rt.log" 2>&1; then
	t_pass "the patch applies to $orig and reverts to it byte for byte"
else
	t_fail "the patch applies to $orig and reverts to it byte for byte" "$(head -n 5 "$GW/rt.log")"
fi

gweb_start || { t_fail "the stack started" "$(tail -n 5 "$GW"/*.log)"; t_summary; exit 1; }
gweb_copy stock unpatched || t_fail "an unpatched copy"
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' \
	"$GW_GMOND_UDP" >"$GW/send.conf"
for h in 10.1.0.1:node01 10.1.0.2:node02; do
	for m in scratch_read_bytes scratch_write_bytes; do
		gmetric -c "$GW/send.conf" -n "$m" -v 1000 -t double -u bytes/sec -S "$h"
	done
done
gweb_wait 30 test -e "$GW/rrds/$GW_CLUSTER/node02/scratch_write_bytes.rrd" ||
	t_fail "gmetad wrote the spoofed hosts' RRDs" "$(find "$GW/rrds" | head)"

closed_since() { tail -n +$(($1 + 1)) "$GW/php.log" | grep -q Closing; }

# fetch PATH: "STATUS TYPE" and the PHP errors it logged (none: empty).
fetch() {
	local n code
	n=$(wc -l <"$GW/php.log")
	code=$(curl -s -o "$GW/page.out" -w '%{http_code} %{content_type}' "http://127.0.0.1:$GW_HTTP/$1")
	# php -S logs the request after the answer: wait for its "Closing".
	gweb_wait 5 closed_since "$n"
	echo "$code"
	tail -n +$((n + 1)) "$GW/php.log" | grep -E 'PHP (Fatal|Parse|Warning)|\[500\]' | head -n 2
}

out=$(fetch "stock/index.php?c=$GW_CLUSTER&h=node01")
t_check "unpatched, PHP 8 stops the host page (upstream issues 361, 384)" \
	grep -q 'ganglia_api_error_handler' <<<"$out"
c="c=$GW_CLUSTER"
for p in "index.php" "index.php?$c" "index.php?$c&h=node01" "index.php?$c&h=nosuchhost" \
	"index.php?$c&m=scratch_read_bytes&s=descending" "index.php?$c&r=week" "index.php?$c&p=2" \
	"index.php?tab=v" "index.php?tab=v&vn=default" "index.php?tab=ch" "index.php?$c&tab=ch" \
	"index.php?tab=agg" "index.php?tab=ev" "index.php?$c&h=node01&tab=m" "mobile.php" \
	"aggregate_graphs.php" "search.php?q=node" "host_overview.php?$c&h=node01" \
	"graph_all_periods.php?$c&h=node01&m=scratch_read_bytes" "api/host.php?action=list" \
	"graph.php?$c&h=node01&m=scratch_read_bytes&r=hour&z=medium" \
	"graph.php?$c&h=node01&g=load_report&r=hour&z=medium" "graph.php?$c&g=cpu_report&r=hour&z=medium" \
	"graph.php?m=load_one&z=small&$c&h=node02&v=&r=hour&su=1&x=0&n=0"; do
	out=$(fetch "ganglia/$p")
	if [ "$(head -n 1 <<<"$out" | cut -d' ' -f1)" = 200 ] && [ "$(wc -l <<<"$out")" -eq 1 ]; then
		t_pass "patched: $p"
	else
		t_fail "patched: $p" "$out"
	fi
done
t_summary
