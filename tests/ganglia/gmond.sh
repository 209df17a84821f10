#!/usr/bin/env bash
# gmond.sh: a private gmond (Debian ganglia-monitor) for the tests, on
# 127.0.0.1 only.  Modelled on the shared ganglia helpers; self-contained.
#
#   gmond.sh start DIR UDP_PORT TCP_PORT   start one (config, pidfile, log in
#                                          DIR); prints its PID once the TCP
#                                          port answers
#   gmond.sh stop DIR                      stop the one DIR's pidfile names
#   gmond.sh xml TCP_PORT [MODE]           gmond's XML, or a digest:
#       --summary [RE]   "hosts=N metrics=M" (M: METRICs whose NAME matches RE)
#       --host NAME      one line per metric of host NAME:
#                        NAME VAL UNITS TYPE SLOPE TMAX DMAX GROUP=.. SPOOF_HOST=..
#       --hosts          one line per host: NAME IP #metrics
#       --values         one line per metric: HOST METRIC VAL
#
# The gmond only collects: no modules, no udp_send_channel (so it reports
# nothing about this machine and never touches a multicast channel).  A
# process is only ever signalled through the pidfile this script wrote, and
# only if /proc/PID/comm still says gmond.
#
# Environment: GMOND_BUFFER (udp_recv_channel buffer, bytes; gmond exits if
# above net.core.rmem_max), GMOND_HOST_DMAX (default 0), GMOND_CLEANUP
# (cleanup_threshold, default 300).
set -u
me=gmond.sh
die() {
	echo "$me: $*" >&2
	exit 1
}

# alive PID: exists and is not a zombie (a stopped orphan may linger as one
# where PID 1 does not reap).
alive() {
	local st
	st=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# pid_of PIDFILE: the gmond PID the pidfile names, if it is alive.
pid_of() {
	local pid c
	[ -r "$1" ] || return 1
	read -r pid <"$1" 2>/dev/null || return 1
	case $pid in '' | *[!0-9]*) return 1 ;; esac
	c=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
	[ "$c" = gmond ] && alive "$pid" && echo "$pid"
}

tcp_answers() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

port_busy() { # udp|tcp PORT
	local flag=-lnt
	[ "$1" = udp ] && flag=-lnu
	ss -H "$flag" "sport = :$2" 2>/dev/null | grep -q .
}

start() {
	[ $# -eq 3 ] || die "usage: $me start DIR UDP_PORT TCP_PORT"
	command -v gmond >/dev/null || die "gmond not found (apt-get install ganglia-monitor)"
	mkdir -p "$1" || die "cannot create $1"
	local dir udp=$2 tcp=$3 setuid=no user pid i launcher
	dir=$(cd "$1" && pwd)
	user=$(id -un)
	if [ "$(id -u)" -eq 0 ]; then
		setuid=yes
		user=nobody
	fi
	pid_of "$dir/gmond.pid" >/dev/null && die "a gmond already runs in $dir"
	rm -f "$dir/gmond.pid"
	port_busy udp "$udp" && die "UDP port $udp is in use"
	port_busy tcp "$tcp" && die "TCP port $tcp is in use"
	local buffer=
	[ -n "${GMOND_BUFFER:-}" ] && buffer="  buffer = $GMOND_BUFFER"
	cat >"$dir/gmond.conf" <<CONF
/* written by tests/ganglia/gmond.sh: a private collector, loopback only */
globals {
  daemonize = no
  setuid = $setuid
  user = $user
  debug_level = 0
  max_udp_msg_len = 1472
  mute = no
  deaf = no
  allow_extra_data = yes
  host_dmax = ${GMOND_HOST_DMAX:-0}
  host_tmax = 20
  cleanup_threshold = ${GMOND_CLEANUP:-300}
  gexec = no
  send_metadata_interval = 0
}
cluster {
  name = "lharvest-test"
  owner = "unspecified"
  latlong = "unspecified"
  url = "unspecified"
}
host {
  location = "unspecified"
}
udp_recv_channel {
  bind = 127.0.0.1
  port = $udp
  retry_bind = false
$buffer
}
tcp_accept_channel {
  bind = 127.0.0.1
  port = $tcp
  gzip_output = no
}
CONF
	# setsid: detached from the caller's session and pipes; -f: foreground
	# (we background it), -p: the pidfile we stop it by.
	setsid gmond -f -c "$dir/gmond.conf" -p "$dir/gmond.pid" \
		</dev/null >"$dir/gmond.log" 2>&1 &
	launcher=$!
	for ((i = 0; i < 200; i++)); do
		if pid=$(pid_of "$dir/gmond.pid") && tcp_answers "$tcp"; then
			echo "$pid"
			return 0
		fi
		alive "$launcher" || break
		sleep 0.05
	done
	# Only the process we just started, by its PID.
	kill "$launcher" 2>/dev/null
	echo "$me: gmond did not come up; its log:" >&2
	tail -n 20 "$dir/gmond.log" >&2
	return 1
}

stop() {
	[ $# -eq 1 ] || die "usage: $me stop DIR"
	local f=$1/gmond.pid pid i
	if pid=$(pid_of "$f"); then
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			alive "$pid" || break
			sleep 0.05
		done
		alive "$pid" && kill -KILL "$pid" 2>/dev/null
	fi
	rm -f "$f"
	return 0
}

xml() {
	[ $# -ge 1 ] || die "usage: $me xml TCP_PORT [--summary [RE] | --host NAME | --hosts | --values]"
	local port=$1
	shift
	if [ $# -eq 0 ]; then
		exec 3<>"/dev/tcp/127.0.0.1/$port" || die "nothing answers on 127.0.0.1:$port"
		cat <&3
		exec 3<&-
		return
	fi
	xml "$port" | python3 -c '
import re, sys, xml.etree.ElementTree as ET
mode = sys.argv[1]; arg = sys.argv[2] if len(sys.argv) > 2 else ""
rx = re.compile(arg) if mode == "--summary" and arg else None
hosts = metrics = 0
for ev, el in ET.iterparse(sys.stdin.buffer, events=("end",)):
    if el.tag != "HOST":
        continue
    hosts += 1
    ms = el.findall("METRIC")
    if mode == "--summary":
        metrics += sum(1 for m in ms if rx is None or rx.search(m.get("NAME")))
    elif mode == "--hosts":
        print(el.get("NAME"), el.get("IP"), len(ms))
    elif mode == "--values":
        for m in ms:
            print(el.get("NAME"), m.get("NAME"), m.get("VAL"))
    elif mode == "--host" and el.get("NAME") == arg:
        for m in sorted(ms, key=lambda m: m.get("NAME")):
            extra = " ".join("%s=%s" % (e.get("NAME"), e.get("VAL"))
                             for e in m.iter("EXTRA_ELEMENT"))
            print(m.get("NAME"), m.get("VAL"), m.get("UNITS"), m.get("TYPE"),
                  m.get("SLOPE"), m.get("TMAX"), m.get("DMAX"), extra)
    el.clear()
if mode == "--summary":
    print("hosts=%d metrics=%d" % (hosts, metrics))
' "$@"
}

[ $# -ge 1 ] || die "usage: $me start|stop|xml ..."
cmd=$1
shift
case $cmd in
start) start "$@" ;;
stop) stop "$@" ;;
xml) xml "$@" ;;
*) die "unknown command $cmd" ;;
esac
