# shellcheck shell=bash
# Helpers of the JSON API tests (it_api.sh, it_top.sh): the simulator
# (tests/sim, scenario aggregator-site.json: every host with its own
# constant rates), one lharvestd gatherer per simulated server and one
# aggregator with its HTTP listener on a port the kernel picks.  Sourced
# after dumplib.sh and agglib.sh; the caller sets bin, src and abort().
# shellcheck disable=SC2154,SC2034 # bin, src, tmp, pids: the caller's; api, lharvest, base, http: for the caller

interval=2
servers=(mds1 oss1 oss2)
R=$tmp/sim
sim=(python3 "$src/tests/sim/lustresim.py")
api=(python3 "$src/tests/integration/apicheck.py")
lharvest=$(dirname "$bin")/lharvest
# Wherever a test runs, the commands must not go through a proxy.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

# sim_run: the simulator on the wall clock, a step each second (a new
# scenario, or resuming the one stopped in $R).
sim_run() {
	local scen=()
	[ -d "$R" ] || scen=(--scenario "$src/tests/sim/scenarios/aggregator-site.json")
	"${sim[@]}" run --root "$R" "${scen[@]}" --clock wall --period 1 \
		--align --steps 0 --quiet >>"$tmp/sim.log" 2>&1 &
	sim_pid=$!
	pids+=("$sim_pid")
}

# sim_last: the last step the simulator finished.
sim_last() {
	tail -n 1 "$R/truth.jsonl" | python3 -c 'import json, sys; print(json.loads(sys.stdin.read())["step"])'
}

# sim_stop: SIGTERM; it finishes its step and exits.
sim_stop() {
	kill -TERM "$sim_pid"
	wait "$sim_pid"
	forget "$sim_pid"
}

# api_start: the simulator, the aggregator ($agg_log, $agg_pid, the
# gatherers' address $addr, the API's base URL $base) and the gatherers.
api_start() {
	local n
	sim_run
	wait_grep "$R/truth.jsonl" '"step": 0' 20 || abort "the simulator wrote its first step" "$(tail "$tmp/sim.log")"
	make_keys "$tmp/keys" "it-api-key-0123456789abcdef0123456789"
	cat >"$tmp/hosts" <<-'EOF'
		10.1.0.1	node01
		10.1.0.2	node02
		10.1.0.3	node03
		10.1.0.4	node04
		10.1.0.5	node05
		10.2.0.5	node05
		10.2.0.6	node06
		192.168.1.7	node07
		12@gni		node09
	EOF
	# Ganglia's values go to the discard port: nobody reads them here.
	printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = 9\n}\n' >"$tmp/send.conf"
	mkdir -m 700 "$tmp/agg-state"
	cat >"$tmp/agg.conf" <<-EOF
		role = "aggregator"
		interval = $interval
		listen = "127.0.0.1:0"
		secret_file = "$tmp/keys"
		state_dir = "$tmp/agg-state"
		name = "agg"
		deadline = 0.7
		hosts_file = "$tmp/hosts"
		dns = no
		ganglia { gmond_conf = "$tmp/send.conf" }
		gatherers = { "mds1", "oss1", "oss2" }
		metadata_ops = { "all" }
		http {
			listen = "127.0.0.1:0"
			socket = "$tmp/http.sock"
		}
	EOF
	agg_log=$tmp/agg.log
	"$bin" -d -v -f "$tmp/agg.conf" >"$tmp/agg.out" 2>"$agg_log" &
	agg_pid=$!
	pids+=("$agg_pid")
	wait_grep "$agg_log" 'http: listening on 127\.0\.0\.1:[0-9]+' 10 ||
		abort "the aggregator's HTTP listener started" "$(cat "$agg_log")"
	wait_grep "$agg_log" 'aggregator agg: .*listening on 127\.0\.0\.1:[0-9]+' 10 ||
		abort "the aggregator started" "$(cat "$agg_log")"
	addr=$(sed -n 's/.*aggregator agg: .*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$agg_log" | head -n 1)
	http=$(sed -n 's/.*http: listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$agg_log" | head -n 1)
	base=http://$http
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
	# Counted once every gatherer reported a sweep with deltas in it.
	wait_sweep "$agg_log" '3 gatherers' 30 || abort "a sweep with the three gatherers closed" "$(tail -n 5 "$agg_log")"
	wait_sweep "$agg_log" '3 gatherers' 30 || abort "a second sweep with the three gatherers closed" "$(tail -n 5 "$agg_log")"
}

# api_get PATH FILE: the answer's body into FILE; true on HTTP 200.
api_get() {
	local code
	code=$(curl -s --noproxy '*' -o "$2" -w '%{http_code}' "$base$1") && [ "$code" = 200 ]
}
