#!/usr/bin/env bash
# dashboards.sh: see lharvestd's Ganglia dashboards in a minute or two,
# without a cluster.  Starts the whole stack in a network namespace of
# its own (gmetad binds every address, so nothing here may listen on the
# machine's): the Lustre simulator (tests/sim, 3 servers, 9 clients on 8
# nodes), a gatherer per server, an aggregator, a private gmond and
# gmetad, Debian's ganglia-web copied to a temporary directory and
# patched for PHP 8 (contrib/ganglia-web-php8.patch; the system copy is
# not touched) with the report definitions `lharvestd --ganglia-reports`
# writes, served by php -S; then headless Chromium saves a node's page
# and the cluster view, and everything is stopped.
#
#   scripts/dashboards.sh [-b BUILD_DIR] [-o OUT_DIR] [-s SECONDS] [-n NODE]
#
#   -b  the build directory with daemon/lharvestd (default: build)
#   -o  where the screenshots go (default: dashboards.out)
#   -s  seconds of data before the screenshots (default: 60)
#   -n  the node whose page is saved (default: node04, the busiest reader)
#
# Needs root (unshare -n) and scripts/deps.sh test's packages (gmetad,
# rrdtool, ganglia-webfrontend, php-cli, chromium).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build out=$PWD/dashboards.out secs=60 node=node04
while getopts b:o:s:n:h o; do
	case $o in
	b) build=$(realpath "$OPTARG") ;;
	o) out=$(realpath -m "$OPTARG") ;;
	s) secs=$OPTARG ;;
	n) node=$OPTARG ;;
	*)
		sed -n '2,21s/^# \{0,1\}//p' "$0"
		exit 2
		;;
	esac
done
bin=$build/daemon/lharvestd
[ -x "$bin" ] || { echo "dashboards.sh: no $bin (build first, or -b BUILD_DIR)" >&2; exit 1; }
for c in unshare gmond gmetad rrdtool php chromium patch; do
	command -v "$c" >/dev/null || { echo "dashboards.sh: no $c (scripts/deps.sh test installs it)" >&2; exit 1; }
done
# shellcheck disable=SC2034 # LH_SRC is read by lib.sh
LH_SRC=$src
# shellcheck source=../tests/ganglia-web/lib.sh
. "$src/tests/ganglia-web/lib.sh"
gweb_netns "$0" -b "$build" -o "$out" -s "$secs" -n "$node"

GW=$(mktemp -d)
trap 'gweb_stop; rm -rf "$GW"' EXIT
mkdir -p "$out" || exit 1
fail() {
	echo "dashboards.sh: $*" >&2
	for f in "$GW"/*.log; do
		echo "--- ${f##*/}" >&2
		tail -n 5 "$f" >&2
	done
	exit 1
}

echo "# starting gmond, gmetad and ganglia-web (in a network namespace)"
gweb_start || fail "the Ganglia stack did not start"
gweb_gen_reports "$bin" "$GW/reports" || fail "no report definitions"
gweb_reports "$GW/reports"
echo "# starting the simulator, 3 gatherers and an aggregator"
gweb_feed "$bin" || fail "the simulator or lharvestd did not start"
gweb_wait 30 grep -q 'sweep [0-9]*: 3 gatherers' "$GW/agg.log" || fail "no sweep from the 3 gatherers"
start=$(date +%s)
rrd=$GW/rrds/$GW_CLUSTER/$node
echo "# collecting $secs s of data for $node"
gweb_wait $((secs + 60)) test -n "$(find "$rrd" -name '*.rrd' 2>/dev/null | head -n 1)" ||
	fail "gmetad wrote no RRD for $node"
while [ $(($(date +%s) - start)) -lt "$secs" ]; do
	sleep 1
done
# The graphs over the minutes there is data for, not the last hour.
range="cs=$((start - 10))&ce=$(date +%s)"
base=http://127.0.0.1:$GW_HTTP/ganglia/index.php
gweb_shot "$base?c=$GW_CLUSTER&h=$node&$range" "$out/$node.png" || fail "no screenshot of $node's page"
gweb_shot "$base?c=$GW_CLUSTER&$range" "$out/cluster.png" || fail "no screenshot of the cluster view"
cp "$GW/reports"/*.json "$out/" 2>/dev/null
echo "$node's page:     $out/$node.png"
echo "the cluster view: $out/cluster.png"
echo "the reports:      $out/*_report.json"
