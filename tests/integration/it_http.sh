#!/usr/bin/env bash
# The HTTP listener (issue 17, daemon/httpd.h) of a real aggregator, fed
# by a gatherer reading the simulator, against clients honest and not:
#  - errors in the JSON envelope with their status: 404, 405 (with
#    Allow), 400 (a bad request line, a bad target, bad query strings),
#    414, 431 (a head over max_header_size, a huge one too); HEAD;
#  - the unix socket (a stale one replaced, mode 0660, removed at exit);
#  - the allow list: a client from 127.0.0.2 is closed unanswered;
#  - slowloris: a head a byte a second is closed at the timeout, while a
#    request beside it is answered at once;
#  - the cap: connections over max_connections are closed at once;
#  - a flood of thousands of connections: refused at once, no descriptor
#    kept, and every sweep meanwhile closes on time (the stamped log);
#  - -n: a socket in a missing directory;
#  - SIGHUP: a new listen address is bound and the old one closed; an
#    address that cannot be bound refuses the reload, the old one stays;
#  - the default address taken: one warning, the role runs on; the same
#    address written in the file: the start fails with one line.
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
# shellcheck source=agglib.sh
. "$(dirname "$0")/agglib.sh"
# shellcheck source=../ganglia/sanitizer.sh
. "$src/tests/ganglia/sanitizer.sh"
sim=(python3 "$src/tests/sim/lustresim.py")
probe=(python3 "$src/tests/integration/httpprobe.py")
interval=2

R=$tmp/sim
"${sim[@]}" run --root "$R" --scenario "$src/tests/sim/scenarios/aggregator-site.json" \
	--clock wall --period 1 --align --steps 0 --quiet >"$tmp/sim.log" 2>&1 &
pids+=("$!")
wait_grep "$R/truth.jsonl" '"step": 0' 10 || { echo "the simulator did not start"; exit 1; }

make_keys "$tmp/keys" "it-http-key-0123456789abcdef0123456"
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = 9\n}\n' >"$tmp/send.conf"
mkdir -m 700 "$tmp/state" "$tmp/state-g"

# A socket file left by a crash: replaced.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/http.sock"

agg_conf() { # HTTP-LISTEN
	cat <<-EOF
		role = "aggregator"
		interval = $interval
		listen = "127.0.0.1:0"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/state"
		name = "agg"
		dns = no
		ganglia {
			gmond_conf = "$tmp/send.conf"
		}
		http {
			listen = "$1"
			socket = "$tmp/http.sock"
			allow = { "127.0.0.1/32" }
			max_connections = 8
			max_header_size = 4096
			timeout = 3
		}
	EOF
}
# -n: the socket's directory must be there.
agg_conf 127.0.0.1:0 | sed "s|$tmp/http.sock|$tmp/nodir/http.sock|" >"$tmp/nodir.conf"
out=$("$bin" -n -f "$tmp/nodir.conf" 2>&1)
rc=$?
if [ "$rc" -ne 0 ] && grep -q "http: socket $tmp/nodir/http.sock: $tmp/nodir: not a directory" <<<"$out"; then
	t_pass "-n: a socket in a missing directory is one line"
else
	t_fail "-n: a socket in a missing directory is one line" "exit $rc: $out"
fi

agg_conf 127.0.0.1:0 >"$tmp/agg.conf"
"$bin" -d -v -f "$tmp/agg.conf" 2> >(stamp >"$tmp/agg.log") &
agg=$!
pids+=("$agg")
wait_grep "$tmp/agg.log" 'http: listening on 127' 10 || { cat "$tmp/agg.log"; exit 1; }
addr=$(sed -n 's/.* aggregator agg: .*listening on \(127\.0\.0\.1:[0-9]*\),.*/\1/p' "$tmp/agg.log")
web=$(sed -n 's/.* http: listening on \(127\.0\.0\.1:[0-9]*\)$/\1/p' "$tmp/agg.log")

cat >"$tmp/g.conf" <<EOF
role = "gatherer"
interval = $interval
lustre_root = "$R/oss1"
server = "$addr"
secret_file = "$tmp/keys"
state_dir = "$tmp/state-g"
name = "oss1"
EOF
"$bin" -d -f "$tmp/g.conf" 2>"$tmp/g.log" &
pids+=("$!")
wait_sweep "$tmp/agg.log" '1 gatherers' 20 || t_fail "the aggregator counted the gatherer" "$(tail -n 3 "$tmp/agg.log")"

# get NAME CURL-ARGS...: status in NAME.code, headers NAME.head, body NAME.body.
get() {
	local n=$1
	shift
	curl -s -o "$tmp/$n.body" -D "$tmp/$n.head" -w '%{http_code}' --max-time 5 "$@" >"$tmp/$n.code"
}
# answer NAME STATUS MESSAGE-REGEX: the envelope of an error.
answer() {
	local code body
	code=$(cat "$tmp/$1.code")
	body=$(cat "$tmp/$1.body")
	if [ "$code" = "$2" ] && grep -qi '^content-type: application/json' "$tmp/$1.head" &&
		python3 -c 'import json, re, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"success", "message", "data"}, d
assert d["success"] is False and d["data"] is None, d
assert re.search(sys.argv[2], d["message"]), d' "$tmp/$1.body" "$3"; then
		t_pass "$4: $2 in the envelope"
	else
		t_fail "$4: $2 in the envelope" "got $code: $body"
	fi
}

get e404 "http://$web/metrics-not"
answer e404 404 'no such path: /metrics-not' "an unknown path"
get e405 -X POST -d x=1 "http://$web/"
answer e405 405 'only GET and HEAD' "POST"
t_check "a 405 says Allow: GET, HEAD" grep -qi '^allow: GET, HEAD' "$tmp/e405.head"
"${probe[@]}" raw "$web" 'garbage\r\n\r\n' >"$tmp/raw.out"
t_check "not a request line: 400 in the envelope" grep -q '^HTTP/1.1 400 .*' "$tmp/raw.out"
t_check "not a request line: its reason" grep -q '"message":"not an HTTP/1.x request line"' "$tmp/raw.out"
# What evhttp would refuse with a page of its own: refused before it
# parses, in the envelope.
for req in 'GET / HTTP/1.1\r\nA header without colon\r\n\r\n' \
	'GET / HTTP/1.1\r\n continued first\r\n\r\n' 'GET / HTTP/2.0\r\n\r\n' \
	'GET / HTTP/1.1 x\r\n\r\n' 'GET / HTTP/1.1\r\nA: \x01\r\n\r\n'; do
	out=$("${probe[@]}" raw "$web" "$req" | tr '\n' ' ')
	case $out in
	"HTTP/1.1 400 Bad Request {\"success\":false,\"message\":\""*) t_pass "400 in the envelope: $req" ;;
	*) t_fail "400 in the envelope: $req" "$out" ;;
	esac
done
get dots --path-as-is "http://$web/v1/../metrics"
answer dots 400 "'\\.' or '\\.\\.' in the path" "a path with .."
get twice "http://$web/v1/hosts?fs=a&fs=b"
answer twice 400 "query parameter 'fs' given twice" "a parameter twice"
get esc "http://$web/v1/hosts?fs=%zz"
answer esc 400 'malformed percent escape' "a bad escape"
get nul "http://$web/v1/hosts?fs=a%00b"
answer nul 400 'control character or NUL' "an escaped NUL"
get long "http://$web/$(head -c 3000 /dev/zero | tr '\0' a)"
answer long 414 'longer than 2048' "a 3000-byte target"
get big -H "X-Big: $(head -c 5000 /dev/zero | tr '\0' a)" "http://$web/"
answer big 431 'max_header_size' "a 5000-byte head"
printf 'X-Huge: %s\n' "$(head -c 200000 /dev/zero | tr '\0' a)" >"$tmp/huge.hdr"
get huge -H "@$tmp/huge.hdr" "http://$web/"
answer huge 431 'max_header_size' "a 200000-byte head"
get head -I "http://$web/metrics-not"
"${probe[@]}" raw "$web" 'HEAD /metrics-not HTTP/1.1\r\nHost: x\r\n\r\n' >"$tmp/head.raw"
if [ "$(cat "$tmp/head.code")" = 404 ] && [ "$(sed -n 2p "$tmp/head.raw")" = "" ] &&
	grep -qi "^content-length: $(wc -c <"$tmp/e404.body")" "$tmp/head.head"; then
	t_pass "HEAD: the status and length of a GET, no body"
else
	t_fail "HEAD: the status and length of a GET, no body" "$(cat "$tmp/head.head")"
fi

get unix --unix-socket "$tmp/http.sock" "http://lharvest/v1/nothing"
answer unix 404 'no such path: /v1/nothing' "the unix socket (a stale one replaced)"
t_check "the unix socket's mode is 0660" test "$(stat -c %a "$tmp/http.sock")" = 660

out=$("${probe[@]}" from "$web" 127.0.0.2)
if [ "$out" = closed ]; then
	t_pass "a client from 127.0.0.2, outside allow: closed unanswered"
else
	t_fail "a client from 127.0.0.2, outside allow: closed unanswered" "$out"
fi
t_check "the refusal is logged" grep -q 'http: connection refused: not in http { allow }' "$tmp/agg.log"

# Slowloris beside an honest client.
"${probe[@]}" slow "$web" --every 1 --max 20 >"$tmp/slow.out" &
slow=$!
sleep 1.5
t0=$(now_us)
get beside "http://$web/x"
t1=$(now_us)
wait "$slow"
read -r secs what <"$tmp/slow.out"
if awk -v s="$secs" 'BEGIN { exit !(s >= 2.5 && s <= 6) }' && [ "$what" = closed ]; then
	t_pass "a head a byte a second: closed unanswered at the 3 s timeout ($secs s)"
else
	t_fail "a head a byte a second: closed unanswered at the 3 s timeout" "$(cat "$tmp/slow.out")"
fi
if [ "$(cat "$tmp/beside.code")" = 404 ] && [ $((t1 - t0)) -lt 1500000 ]; then
	t_pass "meanwhile a request is answered at once ($(((t1 - t0) / 1000)) ms)"
else
	t_fail "meanwhile a request is answered at once" "$(cat "$tmp/beside.code") after $(((t1 - t0) / 1000)) ms"
fi

# The cap: 12 idle connections, 8 kept, 4 closed at once.
out=$("${probe[@]}" idle "$web" 12)
if [ "$out" = "closed 4 kept 8" ]; then
	t_pass "max_connections 8: of 12 idle connections, 4 closed at once"
else
	t_fail "max_connections 8: of 12 idle connections, 4 closed at once" "$out"
fi

# A flood, while sweeps close.
sleep 3.5 # the idle ones gone (timeout 3 s)
fd0=$(find "/proc/$agg/fd" -mindepth 1 | wc -l)
f0=$EPOCHREALTIME
# (A sanitizer build unwinds the stack at every malloc: a tenth of it.)
flood=3000
[[ "$(ldd "$bin" 2>/dev/null)" == *libasan* ]] && flood=300
out=$("${probe[@]}" flood "$web" "$flood" --within 8)
f1=$EPOCHREALTIME
read -r _ closed _ <<<"$out"
# All but those the cap admits (their time limit is 3 s, past 8 s they
# are gone too).
if [ "$closed" -ge $((flood - 8)) ]; then
	t_pass "$flood connections at once: refused and closed ($out)"
else
	t_fail "$flood connections at once: refused and closed" "$out"
fi
wait_sweep "$tmp/agg.log" '1 gatherers' 10 || true
get after "http://$web/x"
t_check "after the flood a request is answered" test "$(cat "$tmp/after.code")" = 404
for ((i = 0; i < 30; i++)); do
	fd1=$(find "/proc/$agg/fd" -mindepth 1 | wc -l)
	[ "$fd1" -le "$fd0" ] && break
	sleep 0.1
done
t_check "no descriptor kept after the flood ($fd0, then $fd1)" test "$fd1" -le "$fd0"
# Every sweep closed during the flood: at most 1.5 s after its boundary
# (its deadline is 0.5 s).
late=$(awk -v a="$f0" -v b="$f1" '
	$2 == "lharvestd:" && $3 == "sweep" && $5 ~ /^[0-9]+$/ && $1 >= a && $1 <= b + 2 {
		id = $4; sub(/:$/, "", id); n++
		if ($1 - id > 1.5) { printf "sweep %s closed %.2f s after its boundary\n", id, $1 - id }
	}
	END { if (n == 0) print "no sweep closed" }' "$tmp/agg.log")
if [ -z "$late" ]; then
	t_pass "every sweep during the flood closed on time"
else
	t_fail "every sweep during the flood closed on time" "$late"
fi
t_check "the cap refusals are logged" grep -q 'http: connection refused: http { max_connections } open' "$tmp/agg.log"

# The Prometheus page on this listener (daemon/prom.c): served, and its
# listener families count what happened above.
get metrics "http://$web/metrics"
if [ "$(cat "$tmp/metrics.code")" = 200 ] &&
	grep -qi '^content-type: text/plain; version=0.0.4' "$tmp/metrics.head"; then
	t_pass "GET /metrics: 200, the Prometheus text format"
else
	t_fail "GET /metrics: 200, the Prometheus text format" "$(cat "$tmp/metrics.code") $(head -n 3 "$tmp/metrics.head")"
fi
val() { awk -v m="$1" '$1 == m { print $2 }' "$tmp/metrics.body"; }
refused=$(val lharvestd_http_connections_refused_total)
timeouts=$(val lharvestd_http_timeouts_total)
errors=$(val lharvestd_http_errors_total)
if [ "${refused:-0}" -ge $((flood - 8 + 4 + 1)) ] && [ "${timeouts:-0}" -ge 1 ] && [ "${errors:-0}" -ge 15 ]; then
	t_pass "/metrics counts the listener's refusals ($refused), time-outs ($timeouts), errors ($errors)"
else
	t_fail "/metrics counts the listener's refusals, time-outs, errors" "refused=$refused timeouts=$timeouts errors=$errors"
fi
get umetrics --unix-socket "$tmp/http.sock" "http://lharvest/metrics"
t_check "/metrics through the unix socket" test "$(cat "$tmp/umetrics.code")" = 200
# And the JSON API's status (daemon/api.c) on it: the envelope, with the
# gatherer of this test connected.
get status "http://$web/v1/status"
if [ "$(cat "$tmp/status.code")" = 200 ] && python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["success"] is True and d["message"] == "", d
assert d["data"]["role"] == "aggregator", d
assert d["data"]["gatherers"]["connected"] == 1, d["data"]["gatherers"]' "$tmp/status.body"; then
	t_pass "GET /v1/status: 200, the envelope, one gatherer connected"
else
	t_fail "GET /v1/status: 200, the envelope, one gatherer connected" "$(cat "$tmp/status.code") $(head -c 300 "$tmp/status.body")"
fi

# SIGHUP: a new address.
n=$(wc -l <"$tmp/agg.log")
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
agg_conf "127.0.0.1:$port" >"$tmp/agg.conf"
kill -HUP "$agg"
if wait_grep "$tmp/agg.log" "http: listening on 127\\.0\\.0\\.1:$port\$" 10; then
	get moved "http://127.0.0.1:$port/x"
	if [ "$(cat "$tmp/moved.code")" = 404 ] &&
		! curl -s --max-time 3 "http://$web/x" >/dev/null; then
		t_pass "SIGHUP: listen moved to :$port, the old address closed"
	else
		t_fail "SIGHUP: listen moved" "new: $(cat "$tmp/moved.code")"
	fi
else
	t_fail "SIGHUP: listen moved" "$(tail -n +$((n + 1)) "$tmp/agg.log" | grep -v sweep)"
fi
n=$(wc -l <"$tmp/agg.log")
agg_conf "$addr" >"$tmp/agg.conf"
kill -HUP "$agg"
if wait_grep "$tmp/agg.log" "not reloaded; keeping the running configuration" 10 &&
	tail -n +$((n + 1)) "$tmp/agg.log" | grep -q "http: listen $addr: Address already in use"; then
	get stays "http://127.0.0.1:$port/x"
	t_check "SIGHUP to an address in use: refused with its reason, the listener stays" \
		test "$(cat "$tmp/stays.code")" = 404
else
	t_fail "SIGHUP to an address in use: refused" "$(tail -n +$((n + 1)) "$tmp/agg.log" | grep -v sweep)"
fi

if term "$agg" aggregator && [ ! -e "$tmp/http.sock" ]; then
	t_pass "SIGTERM: exit 0, the unix socket removed"
else
	t_fail "SIGTERM: exit 0, the unix socket removed" "$term_msg"
fi

# The default address: taken, one warning and the role runs; written in
# the file, the start fails with one line.  (Whoever holds 8023 now, a
# holder of ours keeps it taken.)
python3 -c 'import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", 8023)); s.listen(1)
except OSError:
    pass
time.sleep(30)' &
holder=$!
pids+=("$holder")
sleep 0.5
agg_conf 127.0.0.1:8023 | sed '/listen = "127.0.0.1:8023"/d' >"$tmp/def.conf"
"$bin" -d -v -f "$tmp/def.conf" 2>"$tmp/def.log" &
def=$!
pids+=("$def")
if wait_grep "$tmp/def.log" 'http: 127\.0\.0\.1:8023 in use; no HTTP over TCP' 10 &&
	wait_grep "$tmp/def.log" 'sweep [0-9]+: ' 10 && kill -0 "$def"; then
	t_pass "the default address taken: one warning, the role runs"
else
	t_fail "the default address taken: one warning, the role runs" "$(cat "$tmp/def.log")"
fi
term "$def" aggregator >/dev/null
agg_conf 127.0.0.1:8023 >"$tmp/set.conf"
timeout 10 "$bin" -d -f "$tmp/set.conf" 2>"$tmp/set.log"
rc=$?
if [ "$rc" -ne 0 ] && grep -q 'http: listen 127\.0\.0\.1:8023: Address already in use' "$tmp/set.log"; then
	t_pass "the same address written: the start fails with one line"
else
	t_fail "the same address written: the start fails with one line" "exit $rc: $(cat "$tmp/set.log")"
fi

t_summary
