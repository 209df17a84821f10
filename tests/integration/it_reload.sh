#!/usr/bin/env bash
# SIGHUP reloads the configuration of every role.  A gatherer sends a
# simulated OSS to an aggregator; a relay sits beside it.  Checked, from
# their -v logs:
#  - a file with a syntax error, a bad value or a key that needs a restart
#    is refused with one "file[:line]: reason" line; the daemon goes on
#    sweeping with the running configuration, without reconnecting;
#  - a good change applies at once: a new hosts map (a client becomes a
#    host) with the gatherer's connection kept; a gatherer's new server
#    (it connects to the second aggregator and its deltas go on there);
#  - a relay's routes changed: the client goes to its new downstream;
#  - a gatherer pointed at a server name that does not resolve sweeps on
#    unconnected, and delivers again once pointed back;
#  - a gatherer's new interval is refused with one line, and it keeps
#    sweeping at the running one.
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
sim=(python3 "$src/tests/sim/lustresim.py")
. "$src/tests/ganglia/sanitizer.sh"

R=$tmp/sim
"${sim[@]}" run --root "$R" --scenario "$src/tests/sim/scenarios/aggregator-site.json" \
	--clock wall --period 1 --align --steps 0 --quiet >"$tmp/sim.log" 2>&1 &
pids+=("$!")
wait_grep "$R/truth.jsonl" '"step": 0' 10 || { echo "the simulator did not start"; exit 1; }

make_keys "$tmp/keys" "it-reload-key-0123456789abcdef0123"
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = 9\n}\n' >"$tmp/send.conf"
printf '10.1.0.1\tnode01\n' >"$tmp/hosts"

# start NAME CONF: a daemon, its stderr in NAME.log; its pid in pid[NAME].
declare -A pid=()
start() {
	"$bin" -d -v -f "$2" 2>"$tmp/$1.log" &
	pid[$1]=$!
	pids+=("$!")
}
# lines NAME: the number of lines of NAME.log.
lines() { wc -l <"$tmp/$1.log"; }
# after NAME N PATTERN SECONDS: a line after the first N matches PATTERN.
after() {
	local i
	for ((i = 0; i < $4 * 10; i++)); do
		tail -n +$(($2 + 1)) "$tmp/$1.log" | grep -E -- "$3" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}
hup() { # NAME: SIGHUP, and the number of log lines before it
	local n
	n=$(lines "$1")
	kill -HUP "${pid[$1]}"
	echo "$n"
}
listen_of() { sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/$1.log" | head -n 1; }

agg_conf() { # NAME LISTEN
	install -d -m 700 "$tmp/state-$1"
	cat <<-EOF
		role = "aggregator"
		http { listen = "127.0.0.1:0" }
		interval = 2
		listen = "$2"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-$1"
		name = "$1"
		dns = no
		hosts_file = "$tmp/hosts"
		gmond_conf = "$tmp/send.conf"
	EOF
}
agg_conf agg1 127.0.0.1:0 >"$tmp/agg1.conf"
agg_conf agg2 127.0.0.1:0 >"$tmp/agg2.conf"
start agg1 "$tmp/agg1.conf"
start agg2 "$tmp/agg2.conf"
if ! wait_grep "$tmp/agg1.log" 'listening on' 10 || ! wait_grep "$tmp/agg2.log" 'listening on' 10; then
	echo "the aggregators did not start"
	exit 1
fi
a1=$(listen_of agg1)
a2=$(listen_of agg2)
agg_conf agg1 "$a1" >"$tmp/agg1.conf"

mkdir -m 700 "$tmp/state-g"
g_conf() { # SERVER
	cat <<-EOF
		role = "gatherer"
		interval = 2
		lustre_root = "$R/oss1"
		server = "$1"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-g"
		name = "oss1"
	EOF
}
g_conf "$a1" >"$tmp/g.conf"
start g "$tmp/g.conf"
# (node01 is in both filesystems: 2 (host, fs).)
after agg1 0 'sweep [0-9]+: 1 gatherers \(0 late\), [0-9]+ clients, 2 hosts' 20 ||
	t_fail "the aggregator counted the gatherer" "$(tail -n 5 "$tmp/agg1.log")"

# A bad value: refused, one line with file:line, the aggregator sweeps on.
cp "$tmp/agg1.conf" "$tmp/agg1.good"
printf 'deadline = 7\n' >>"$tmp/agg1.conf"
n=$(hup agg1)
if after agg1 "$n" "^lharvestd: $tmp/agg1.conf: deadline: 7 s is not below the interval \(2 s\); keeping the running configuration$" 5 &&
	after agg1 "$n" 'sweep [0-9]+: 1 gatherers \(0 late\)' 5; then
	t_pass "aggregator: a bad value is refused with one line; it sweeps on"
else
	t_fail "aggregator: a bad value is refused with one line; it sweeps on" "$(tail -n +$((n + 1)) "$tmp/agg1.log" | grep -v 'sweep' | head -n 5)"
fi

# A syntax error.
printf 'interval = 2\nrole = {\n' >"$tmp/agg1.conf"
n=$(hup agg1)
if after agg1 "$n" "^lharvestd: $tmp/agg1.conf:2: unexpected token '\\{'; keeping the running configuration$" 5; then
	t_pass "aggregator: a syntax error is refused with file:line"
else
	t_fail "aggregator: a syntax error is refused with file:line" "$(tail -n +$((n + 1)) "$tmp/agg1.log" | grep -v sweep | head -n 5)"
fi

# A key that needs a restart.
sed 's/interval = 2/interval = 4/' "$tmp/agg1.good" >"$tmp/agg1.conf"
n=$(hup agg1)
if after agg1 "$n" "interval: a change needs a restart; keeping the running configuration$" 5; then
	t_pass "aggregator: an interval change needs a restart and says so"
else
	t_fail "aggregator: an interval change needs a restart and says so" "$(tail -n +$((n + 1)) "$tmp/agg1.log" | grep -v sweep | head -n 5)"
fi

# A good change: a second client gets its host; the gatherer stays connected.
cp "$tmp/agg1.good" "$tmp/agg1.conf"
printf '10.1.0.1\tnode01\n10.1.0.2\tnode02\n' >"$tmp/hosts"
c=$(grep -c 'connected' "$tmp/g.log")
n=$(hup agg1)
if after agg1 "$n" "configuration reloaded from $tmp/agg1.conf" 5 &&
	after agg1 "$n" 'sweep [0-9]+: 1 gatherers \(0 late\), [0-9]+ clients, 3 hosts' 10 &&
	[ "$(grep -c 'connected' "$tmp/g.log")" -eq "$c" ]; then
	t_pass "aggregator: a new hosts map applies at the next sweep, the gatherer stays connected"
else
	t_fail "aggregator: a new hosts map applies at the next sweep, the gatherer stays connected" \
		"$(tail -n +$((n + 1)) "$tmp/agg1.log" | head -n 6)" "--- gatherer:" "$(tail -n 4 "$tmp/g.log")"
fi

# A gatherer: a bad file refused; then a new server.
printf 'interval = 0\n' >>"$tmp/g.conf"
n=$(hup g)
if after g "$n" "^lharvestd: $tmp/g.conf:8: interval: 0 is not between 1 and 3600 seconds; keeping the running configuration$" 5; then
	t_pass "gatherer: a bad value is refused with file:line"
else
	t_fail "gatherer: a bad value is refused with file:line" "$(tail -n +$((n + 1)) "$tmp/g.log" | head -n 5)"
fi
g_conf "$a2" >"$tmp/g.conf"
n=$(hup g)
m=$(lines agg2)
if after g "$n" "configuration reloaded from $tmp/g.conf: connecting to the aggregator again" 5 &&
	after agg2 "$m" 'sweep [0-9]+: 1 gatherers \(0 late\)' 15; then
	t_pass "gatherer: a new server: its sweeps go to the second aggregator"
else
	t_fail "gatherer: a new server: its sweeps go to the second aggregator" "$(tail -n +$((n + 1)) "$tmp/g.log" | head -n 5)"
fi
# An interval change: refused with one line (a restart applies it); the
# gatherer sweeps on every 2 s, as its -v sweep lines say.
sweeps_after() { tail -n +$(($2 + 1)) "$tmp/$1.log" | sed -nE 's/.*sweep ([0-9]+): [0-9]+ targets.*/\1/p'; }
sed 's/^interval = 2$/interval = 4/' "$tmp/g.conf" >"$tmp/g2.conf"
cp "$tmp/g2.conf" "$tmp/g.conf"
n=$(hup g)
for ((i = 0; i < 300; i++)); do
	[ "$(sweeps_after g "$n" | wc -l)" -ge 4 ] && break
	sleep 0.1
done
refused=$(tail -n +$((n + 1)) "$tmp/g.log" | grep -c "^lharvestd: $tmp/g.conf: interval: a change needs a restart; keeping the running configuration$")
if [ "$refused" -eq 1 ] &&
	sweeps_after g "$n" | awk 'NR > 1 && $1 - p == 2 { two = 1 } { p = $1 } END { exit !two }'; then
	t_pass "gatherer: an interval change needs a restart, says so once, and keeps the interval"
else
	t_fail "gatherer: an interval change needs a restart, says so once, and keeps the interval" \
		"refusals: $refused; sweeps: $(sweeps_after g "$n" | tr '\n' ' ')" "$(tail -n +$((n + 1)) "$tmp/g.log" | grep -v sweep | head -n 5)"
fi
g_conf "$a2" >"$tmp/g.conf"
sed 's#^state_dir = .*#state_dir = "/nonexistent"#' "$tmp/g.conf" >"$tmp/g2.conf"
cp "$tmp/g2.conf" "$tmp/g.conf"
n=$(hup g)
if after g "$n" "state_dir: a change needs a restart; keeping the running configuration$" 5; then
	t_pass "gatherer: a state_dir change needs a restart and says so"
else
	t_fail "gatherer: a state_dir change needs a restart and says so" "$(tail -n +$((n + 1)) "$tmp/g.log" | head -n 5)"
fi

# A server name that does not resolve: the gatherer keeps sweeping (not
# connected, its sweeps kept); back to agg2, they are delivered again.
g_conf "no-such-host.invalid:8022" >"$tmp/g.conf"
n=$(hup g)
unresolved=no
if after g "$n" "configuration reloaded from $tmp/g.conf: connecting to the aggregator again" 5 &&
	after g "$n" 'sweep [0-9]+: [0-9]+ targets.*\(aggregator not connected\)$' 10; then
	g_conf "$a2" >"$tmp/g.conf"
	m=$(lines agg2)
	n=$(hup g)
	unresolved=yes
fi
if [ "$unresolved" = yes ] && after g "$n" "configuration reloaded from $tmp/g.conf: connecting to the aggregator again" 5 &&
	after agg2 "$m" 'sweep [0-9]+: 1 gatherers \(0 late\)' 15 &&
	kill -0 "${pid[g]}" 2>/dev/null; then
	t_pass "gatherer: a server that does not resolve, then back: it sweeps on and delivers again"
else
	t_fail "gatherer: a server that does not resolve, then back: it sweeps on and delivers again" \
		"$(tail -n +$((n + 1)) "$tmp/g.log" | grep -v sweep | head -n 5)"
fi

# A relay (the gatherer moved to it): its route moves from agg1 to agg2.
mkdir -m 700 "$tmp/state-relay"
relay_conf() { # LISTEN DOWNSTREAM
	cat <<-EOF
		role = "relay"
		http { listen = "127.0.0.1:0" }
		interval = 2
		listen = "$1"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state-relay"
		name = "relay1"
		route "all" {
			networks = { "o2ib*", "tcp*", "gni*" }
			server = "$2"
		}
	EOF
}
relay_conf 127.0.0.1:0 "$a1" >"$tmp/relay.conf"
n=$(lines agg1)
start relay "$tmp/relay.conf"
wait_grep "$tmp/relay.log" 'listening on' 10 || t_fail "the relay started" "$(cat "$tmp/relay.log")"
r=$(listen_of relay)
relay_conf "$r" "$a1" >"$tmp/relay.conf"
g_conf "$r" >"$tmp/g.conf"
kill -HUP "${pid[g]}"
if ! after agg1 "$n" 'relay relay1 \(127\.0\.0\.1:[0-9]+\): connected' 15 ||
	! after agg1 "$n" 'sweep [0-9]+: 1 gatherers \(0 late\), [0-9]+ clients, 3 hosts' 15; then
	t_fail "the relay's data reached agg1" "$(tail -n 5 "$tmp/relay.log")"
fi
relay_conf "$r" "$a2" >"$tmp/relay.conf"
m=$(lines agg2)
n=$(hup relay)
if after relay "$n" "configuration reloaded from $tmp/relay.conf" 5 &&
	after agg2 "$m" 'relay relay1 \(127\.0\.0\.1:[0-9]+\): connected' 15 &&
	after agg2 "$m" 'sweep [0-9]+: 1 gatherers \(0 late\), [0-9]+ clients' 15; then
	t_pass "relay: a route's new server gets the clients from the next sweep"
else
	t_fail "relay: a route's new server gets the clients from the next sweep" \
		"$(tail -n +$((n + 1)) "$tmp/relay.log" | head -n 8)"
fi

# Still running, all of them; no unexpected complaint.
bad=()
for p in agg1 agg2 g relay; do
	kill -0 "${pid[$p]}" 2>/dev/null || bad+=("$p is not running")
done
if [ ${#bad[@]} -eq 0 ]; then
	t_pass "every daemon is still running"
else
	t_fail "every daemon is still running" "${bad[@]}"
fi
t_summary
