# shellcheck shell=bash
# Helpers of it_gnode.sh: a gmond standing in for a compute node, a
# private gmetad, and what gmetad says of one host.  Sourced after
# dumplib.sh (its $tmp, t_pass, t_fail); everything runs inside the
# test's own network namespace, so the fixed ports below are free.
# shellcheck disable=SC2154 # $tmp is dumplib.sh's

# The load module of Debian's ganglia-monitor (gmond's own metrics).
gn_modload() {
	local f
	for f in /usr/lib/*/ganglia/modload.so /usr/lib*/ganglia/modload.so; do
		[ -r "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}

# gn_pid PIDFILE COMM: the live COMM the pidfile names.
gn_pid() {
	local pid
	{ read -r pid <"$1"; } 2>/dev/null || return 1
	[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && echo "$pid"
}

# gn_stop PIDFILE COMM: SIGTERM the process the pidfile names, if it is
# still COMM, and wait until it is gone.
gn_stop() {
	local pid i
	pid=$(gn_pid "$1" "$2") || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		[ -d "/proc/$pid" ] || break
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null
	rm -f "$1"
	return 0
}

# gn_node_start DIR NAME MGMT_IP COLLECTOR_UDP: a gmond that reports this
# machine's load as the compute node NAME at MGMT_IP (override_hostname,
# override_ip, as a node behind NAT or with several interfaces is set
# up), sending to the collector.  send_metadata_interval: a restarted
# collector learns the node's metrics again without a node restart.
gn_node_start() {
	local dir=$1 mod i
	mod=$(gn_modload) || { echo "no modload.so (ganglia-monitor)"; return 1; }
	mkdir -p "$dir"
	cat >"$dir/gmond.conf" <<-EOF
		globals {
		  daemonize = no
		  setuid = no
		  user = root
		  deaf = yes
		  mute = no
		  host_dmax = 0
		  send_metadata_interval = 2
		  override_hostname = "$2"
		  override_ip = "$3"
		}
		cluster { name = "lharvest-test" }
		udp_send_channel {
		  host = 127.0.0.1
		  port = $4
		}
		modules {
		  module { name = "core_metrics" }
		  module {
		    name = "load_module"
		    path = "$mod"
		  }
		}
		collection_group {
		  collect_once = yes
		  time_threshold = 2
		  metric { name = "heartbeat" }
		}
		collection_group {
		  collect_every = 1
		  time_threshold = 2
		  metric {
		    name = "load_one"
		    value_threshold = -1
		  }
		}
	EOF
	setsid gmond -f -c "$dir/gmond.conf" -p "$dir/gmond.pid" \
		</dev/null >"$dir/gmond.log" 2>&1 &
	for ((i = 0; i < 100; i++)); do
		gn_pid "$dir/gmond.pid" gmond >/dev/null && return 0
		sleep 0.05
	done
	cat "$dir/gmond.log"
	return 1
}

# gn_query PORT REQUEST: one answer of gmetad's interactive port.
gn_query() {
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf '%s\n' "$2" >&3
	cat <&3
	exec 3<&-
}

# gn_host PORT HOST: what gmetad serves for HOST of the cluster, as
# ganglia-web's host page asks it ("/cluster/host"): the host's IP, then
# one line per metric, "NAME VAL".  Nothing if gmetad has no such host.
gn_host() {
	gn_query "$1" "/lharvest-test/$2" | python3 -c '
import sys, xml.etree.ElementTree as ET
try:
    root = ET.fromstring(sys.stdin.buffer.read())
except ET.ParseError:
    sys.exit(0)
for h in root.iter("HOST"):
    if h.get("NAME") != sys.argv[1]:
        continue
    print("ip", h.get("IP"), "tn", h.get("TN"))
    for m in h.iter("METRIC"):
        print(m.get("NAME"), m.get("VAL"))
' "$2"
}

# gn_hosts_up PORT: the cluster's "hosts up" as gmetad sums it.
gn_hosts_up() {
	gn_query "$1" "/lharvest-test?filter=summary" |
		sed -n 's/.*<HOSTS UP="\([0-9]*\)".*/\1/p' | head -n 1
}

# gn_wait SECONDS CMD...: until CMD succeeds, at most SECONDS.  (Its
# locals have names no caller's CMD reads: bash scopes them dynamically.)
gn_wait() {
	local gn_tries=$(($1 * 10)) gn_i
	shift
	for ((gn_i = 0; gn_i < gn_tries; gn_i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
