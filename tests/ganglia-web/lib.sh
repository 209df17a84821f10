# shellcheck shell=bash
# The real Ganglia stack for the ganglia-web tests and scripts/dashboards.sh:
# a private gmond (tests/ganglia/gmond.sh), a gmetad writing RRDs in a
# temporary directory, a private copy of Debian's ganglia-web with
# contrib/ganglia-web-php8.patch applied, served by `php -S`, and headless
# Chromium.  Sourced, not run.
#
# gmetad binds every address (no bind option for its xml and interactive
# ports), so all of this runs in a network namespace the caller made
# (`unshare -n`, gweb_netns below).  Nothing else listens there, which is
# why the ports are fixed.
#
# The caller sets GW (a directory of its own) and LH_SRC (the source tree)
# and calls gweb_stop on exit.  Every process is started here and stopped
# by its own PID, recorded in $GW/pids.
# shellcheck disable=SC2154 # GW and LH_SRC are the caller's

GW_GMOND_UDP=8649
GW_GMOND_TCP=8650
GW_XML=8651
GW_INTERACTIVE=8652
GW_HTTP=8080
GW_CLUSTER=lharvest-test
GW_GRID=lharvest
GW_STEP=2 # gmetad's polling interval: the RRDs' step

# gweb_netns SCRIPT ARGS...: run SCRIPT again in a new network namespace
# with loopback up, unless it already runs in one (GW_NETNS=1).
gweb_netns() {
	[ "${GW_NETNS:-}" = 1 ] && return 0
	command -v unshare >/dev/null || {
		echo "unshare (util-linux) is needed"
		exit 1
	}
	GW_NETNS=1 exec unshare -n -- bash -c 'ip link set lo up && exec "$@"' gweb "$@"
}

gweb_log() { echo "# $*"; }

# gweb_wait SECONDS CMD...: until CMD succeeds, every 0.2 s.
gweb_wait() {
	local n=$(($1 * 5))
	shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.2
	done
}

gweb_tcp() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

gweb_gmond() {
	bash "$LH_SRC/tests/ganglia/gmond.sh" start "$GW/gmond" \
		"$GW_GMOND_UDP" "$GW_GMOND_TCP" >"$GW/gmond.pid.out"
}

gweb_gmetad() {
	mkdir -p "$GW/rrds"
	cat >"$GW/gmetad.conf" <<-EOF
		# written by tests/ganglia-web/lib.sh
		data_source "$GW_CLUSTER" $GW_STEP 127.0.0.1:$GW_GMOND_TCP
		gridname "$GW_GRID"
		rrd_rootdir "$GW/rrds"
		xml_port $GW_XML
		interactive_port $GW_INTERACTIVE
		setuid off
		case_sensitive_hostnames 1
	EOF
	# -d 1: stays in the foreground, so that its PID is ours.
	gmetad -d 1 -c "$GW/gmetad.conf" >"$GW/gmetad.log" 2>&1 &
	echo $! >>"$GW/pids"
	gweb_wait 20 gweb_tcp "$GW_INTERACTIVE"
}

# gweb_copy [NAME [unpatched]]: Debian's ganglia-web copied to
# /NAME (default ganglia), patched unless told, and configured for this
# directory only (the system copy and /var/lib/ganglia-web are never
# written).
gweb_copy() {
	local src=/usr/share/ganglia-webfrontend w=$GW/www/${1:-ganglia} c=$GW/conf-${1:-ganglia}
	[ -r "$src/index.php" ] || {
		echo "no ganglia-web in $src (apt-get install ganglia-webfrontend)"
		return 1
	}
	mkdir -p "$GW/www" "$c/conf" "$c/dwoo/compiled" "$c/dwoo/cache"
	cp -a "$src" "$w" || return 1
	if [ "${2:-}" != unpatched ]; then
		patch -s -p1 -d "$w" <"$LH_SRC/contrib/ganglia-web-php8.patch" || return 1
	fi
	[ -e "$GW/www/javascript" ] || ln -s /usr/share/javascript "$GW/www/javascript"
	cp /var/lib/ganglia-web/conf/*.json "$c/conf/"
	# Debian's conf.php: the JavaScript paths; then this directory's.
	sed '/^?>/d' "$src/conf.php" >"$w/conf.php"
	cat >>"$w/conf.php" <<-EOF
		\$conf['gweb_confdir'] = "$c";
		\$conf['conf_dir'] = "$c/conf";
		\$conf['views_dir'] = "$c/conf";
		\$conf['dwoo_compiled_dir'] = "$c/dwoo/compiled";
		\$conf['dwoo_cache_dir'] = "$c/dwoo/cache";
		\$conf['cachefile'] = "$c/conf/ganglia_metrics.cache";
		\$conf['overlay_events_file'] = "$c/conf/events.json";
		\$conf['overlay_events_color_map_file'] = "$c/conf/event_color.json";
		\$conf['rrds'] = "$GW/rrds";
		\$conf['ganglia_ip'] = "127.0.0.1";
		\$conf['ganglia_port'] = $GW_INTERACTIVE;
		?>
	EOF
	cp "$LH_SRC/tests/ganglia-web/probe.html" "$GW/www/"
}

# gweb_reports DIR: DIR's *_report.json into graph.d, its views into the
# conf directory, and default.json includes the reports after Debian's.
gweb_reports() {
	local f names=()
	cp "$1"/view_*.json "$GW/conf-ganglia/conf/" 2>/dev/null
	for f in "$1"/*_report.json; do
		[ -e "$f" ] || continue
		cp "$f" "$GW/www/ganglia/graph.d/"
		f=${f##*/}
		names+=("${f%.json}")
	done
	python3 - "$GW/conf-ganglia/conf/default.json" "${names[@]}" <<-'EOF'
		import json, sys
		path, names = sys.argv[1], sys.argv[2:]
		d = json.load(open(path))
		d["included_reports"] = d.get("included_reports", []) + names
		json.dump(d, open(path, "w"), indent=1)
	EOF
}

# gweb_gen_reports BIN DIR: the report definitions lharvestd writes
# for the aggregator's configuration ($GW/agg.conf, written here first).
gweb_gen_reports() {
	mkdir -p "$2"
	[ -e "$GW/agg.conf" ] || gweb_conf_agg >"$GW/agg.conf"
	"$1" --ganglia-reports "$2" -f "$GW/agg.conf" >"$GW/reports.log" 2>&1 &&
		compgen -G "$2/*_report.json" >/dev/null
}

gweb_php() {
	(cd "$GW/www" && exec php -S "127.0.0.1:$GW_HTTP" -t "$GW/www") \
		>"$GW/php.log" 2>&1 &
	echo $! >>"$GW/pids"
	gweb_wait 20 gweb_tcp "$GW_HTTP"
}

# gweb_start: gmond, gmetad, ganglia-web; 1 and a log line if one fails.
gweb_start() {
	: >"$GW/pids"
	gweb_gmond || { gweb_log "gmond did not start"; return 1; }
	gweb_gmetad || { gweb_log "gmetad did not start: $(tail -n 5 "$GW/gmetad.log")"; return 1; }
	gweb_copy ganglia || { gweb_log "ganglia-web could not be copied and patched"; return 1; }
	gweb_php || { gweb_log "php -S did not start: $(tail -n 5 "$GW/php.log")"; return 1; }
}

# gweb_feed BIN: the simulator's aggregator-site (3 servers, 9 NIDs on
# 8 hosts) with a gatherer per server and an aggregator spoofing into
# the gmond; the hosts file is $GW/hosts.
gweb_feed() {
	local bin=$1 n
	local sim=(python3 "$LH_SRC/tests/sim/lustresim.py")
	"${sim[@]}" run --root "$GW/sim" --scenario "$LH_SRC/tests/sim/scenarios/aggregator-site.json" \
		--clock wall --period 1 --align --steps 1 --quiet >>"$GW/sim.log" 2>&1 || return 1
	printf 'gweb-test-key-0123456789abcdef0123456789abcdef\n' >"$GW/keys"
	chmod 600 "$GW/keys"
	printf '%s\t%s\n' 10.1.0.1 node01 10.1.0.2 node02 10.1.0.3 node03 10.1.0.4 node04 \
		10.1.0.5 node05 10.2.0.5 node05 10.2.0.6 node06 192.168.1.7 node07 12@gni node09 >"$GW/hosts"
	printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = %s\n}\n' \
		"$GW_GMOND_UDP" >"$GW/send.conf"
	mkdir -m 700 "$GW/agg-state"
	gweb_conf_agg >"$GW/agg.conf"
	# -v: the sweep lines, which the callers wait on.
	"$bin" -d -v -f "$GW/agg.conf" >"$GW/agg.log" 2>&1 &
	echo $! >>"$GW/pids"
	gweb_wait 20 grep -q 'listening on 127.0.0.1:8690' "$GW/agg.log" || return 1
	for n in mds1 oss1 oss2; do
		mkdir -m 700 "$GW/state-$n"
		gweb_conf_gatherer "$n" >"$GW/$n.conf"
		"$bin" -d -f "$GW/$n.conf" >"$GW/g-$n.log" 2>&1 &
		echo $! >>"$GW/pids"
	done
	"${sim[@]}" run --root "$GW/sim" --steps 0 --quiet >>"$GW/sim.log" 2>&1 &
	echo $! >>"$GW/pids"
}

gweb_conf_agg() {
	cat <<-EOF
		role = "aggregator"
		interval = 2
		listen = "127.0.0.1:8690"
		secret_file = "$GW/keys"
		state_dir = "$GW/agg-state"
		name = "agg"
		hosts_file = "$GW/hosts"
		dns = no
		gmond_conf = "$GW/send.conf"
		filesystems = { "scratch", "home" }
		metadata_ops = { "open", "close", "getattr" }
		http {
		  listen = "127.0.0.1:0"
		}
	EOF
}

gweb_conf_gatherer() {
	cat <<-EOF
		role = "gatherer"
		interval = 2
		lustre_root = "$GW/sim/$1"
		server = "127.0.0.1:8690"
		secret_file = "$GW/keys"
		state_dir = "$GW/state-$1"
		name = "$1"
	EOF
}

# gweb_points RRD START: how many rows of RRD since START (an rrdtool
# time: epoch seconds, or -60 for the last minute) hold a value (gmetad
# writes one row per step).
gweb_points() {
	rrdtool fetch "$1" AVERAGE -s "$2" 2>/dev/null |
		awk -F: 'NF == 2 && $2 !~ /nan/ { n++ } END { print n + 0 }'
}

# gweb_has_points RRD START N: at least N points.
gweb_has_points() {
	[ "$(gweb_points "$1" "$2")" -ge "$3" ]
}

# gweb_chromium ARGS... URL: headless Chromium with a profile of its own;
# its stderr (D-Bus complaints in a namespace) goes to the log.
gweb_chromium() {
	mkdir -p "$GW/chromium"
	timeout 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$GW/chromium" --window-size=1280,1600 "$@" 2>>"$GW/chromium.log"
}

# gweb_shot URL PNG: a screenshot once the page's scripts have run.
gweb_shot() {
	gweb_chromium --virtual-time-budget=8000 --screenshot="$2" "$1" >/dev/null &&
		[ -s "$2" ]
}

# gweb_probe PATH_AND_QUERY OUT: probe.html loads the page in a frame of
# the same origin and writes, for each image, its src, complete and
# naturalWidth; OUT gets that JSON.
gweb_probe() {
	local q
	q=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1")
	gweb_chromium --virtual-time-budget=15000 --dump-dom \
		"http://127.0.0.1:$GW_HTTP/probe.html?u=$q" >"$2.html" || return 1
	python3 -c '
import html, re, sys
m = re.search(r"<pre id=\"result\">(.*?)</pre>", open(sys.argv[1]).read(), re.S)
sys.exit(1 if not m else print(html.unescape(m.group(1))))' "$2.html" >"$2"
}

gweb_stop() {
	local p
	[ -r "$GW/pids" ] || return 0
	while read -r p; do
		kill -TERM "$p" 2>/dev/null
	done <"$GW/pids"
	while read -r p; do
		wait "$p" 2>/dev/null
	done <"$GW/pids"
	bash "$LH_SRC/tests/ganglia/gmond.sh" stop "$GW/gmond"
	: >"$GW/pids"
}
