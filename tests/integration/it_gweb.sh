#!/usr/bin/env bash
# ganglia-web on PHP 8 with the real stack, seen by a real browser: in a
# network namespace of its own (gmetad binds every address), the
# simulator's aggregator-site feeds 3 gatherers and an aggregator, which
# spoofs into a private gmond; gmetad writes RRDs every 2 s; Debian's
# ganglia-web, copied and patched with contrib/ganglia-web-php8.patch,
# is served by php -S with the reports `lharvestd --ganglia-reports`
# writes attached through default.json's included_reports.  Headless Chromium loads a node's page
# and the cluster view: every graph loaded, no PHP error, and in each
# report's plot area each series' colour sits where the rates the
# simulator wrote put it (a busier node higher), and is absent for an
# unknown host (tests/ganglia-web/gwebcheck.py).  The cluster view's
# "Stacked Graph" (stacked.php) is not counted: ganglia-web 3.7.5 quotes
# its rrdtool command into HTML entities on any PHP, so it never draws.
# About 55 s.
#
#   bash it_gweb.sh BUILD/daemon/lharvestd     (LH_SRCDIR = source tree)
#
# The screenshots and the graphs it drew stay in LH_GWEB_OUT (default
# ./it_gweb.out, in ctest's build/tests); the path is printed.
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
# shellcheck source=agglib.sh
. "$(dirname "$0")/agglib.sh"
GW=$tmp
out=${LH_GWEB_OUT:-$PWD/it_gweb.out}
rm -rf "$out" && mkdir -p "$out"
trap 'gweb_stop; cp -f "$GW"/*.log "$out"/ 2>/dev/null; cleanup' EXIT
abort() {
	t_fail "$@"
	t_summary
	exit 1
}

gweb_start || abort "the stack started" "$(tail -n 5 "$GW"/*.log)"
t_pass "gmond, gmetad and the patched ganglia-web started in the namespace"
gweb_gen_reports "$bin" "$GW/reports" ||
	abort "lharvestd --ganglia-reports wrote the reports" "$(cat "$GW/reports.log")"
t_pass "lharvestd --ganglia-reports wrote $(find "$GW/reports" -name '*_report.json' | wc -l) reports"
gweb_reports "$GW/reports"
cp "$GW"/reports/*.json "$out/"
gweb_feed "$bin" || abort "the simulator, gatherers and aggregator started" "$(tail -n 5 "$GW/agg.log")"
# The first sweeps have no rate yet; the graphs are compared from here on.
gweb_wait 30 grep -q 'sweep [0-9]*: 3 gatherers' "$GW/agg.log" ||
	abort "the aggregator closed a sweep with its 3 gatherers" "$(tail -n 5 "$GW/agg.log")"
since=$(($(date +%s) + 4))
rrd=$GW/rrds/$GW_CLUSTER/node04/scratch_read_bytes.rrd
gweb_wait 40 test -e "$rrd" || abort "gmetad wrote node04's RRD" "$(find "$GW/rrds" | head)"
# 30 s of points after $since: enough of a line to see where it sits.
gweb_wait 90 gweb_has_points "$rrd" "$since" 15 ||
	abort "node04's RRD has 15 points" "$(gweb_points "$rrd" "$since")"
now=$(date +%s)

base=http://127.0.0.1:$GW_HTTP
page_node="/ganglia/index.php?c=$GW_CLUSTER&h=node04&r=hour"
page_cluster="/ganglia/index.php?c=$GW_CLUSTER&r=hour"
t_check "Chromium loads a node's page and saves it" gweb_shot "$base$page_node" "$out/node04.png"
t_check "Chromium loads the cluster view and saves it" gweb_shot "$base$page_cluster" "$out/cluster.png"
gweb_probe "$page_node" "$out/probe-node.json" || abort "the probe read the node page" "$(tail -n 3 "$GW/chromium.log")"
gweb_probe "$page_cluster" "$out/probe-cluster.json" || abort "the probe read the cluster view"
python3 "$src/tests/ganglia-web/gwebcheck.py" check --probe-node "$out/probe-node.json" \
	--probe-cluster "$out/probe-cluster.json" --reports "$GW/reports" \
	--truth "$GW/sim/truth.jsonl" --hosts "$GW/hosts" --http "$base" --out "$out" \
	--nodes node01,node02,node04,node05,node06,node09 --unknown nosuchnode --since "$since" --now "$now" \
	>"$out/check.out" 2>&1
replay "$out/check.out"
errs=$(grep -E 'PHP (Fatal|Parse|Warning)|\[500\]' "$GW/php.log" | head -n 5)
t_check "no PHP error in php -S's log" test -z "$errs"
[ -n "$errs" ] && echo "$errs"
echo "# screenshots and graphs: $out"
t_summary
