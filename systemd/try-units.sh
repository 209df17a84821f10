#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Runs the units of this folder under a real systemd, as PID 1 of private
# namespaces (pid, mount, network, uts, ipc), on the built binary: a
# gatherer on a simulated Lustre 2.15 server, an aggregator and a relay,
# all on one host, plus two probes (oneshot services with the gatherer's
# and the template's sandbox) that show what each sandbox can see.  Then it
# reloads, stops, kills and restarts them, and prints what systemd says.
# This is how the hardening of the units was checked (docs/systemd.md);
# it is not run by ctest.
#
#   sudo bash systemd/try-units.sh BUILD/daemon/lharvestd
#
# Needs root, unshare(1), overlayfs, a writable cgroup hierarchy and the
# systemd package (not running: PID 1 may be anything).  Nothing of the
# host is changed: /etc, /var/lib and /run are overlaid or private, /proc/sys
# is read-only for it, and its cgroups (lhtry-PID) are removed at the end.
# Run it on a scratch machine all the same: it is a whole service manager.
set -euo pipefail
[ "${1:-}" != --inside ] || { shift; inside=1; }

if [ -z "${inside:-}" ]; then
	bin=$(realpath "${1:?usage: try-units.sh BUILD/daemon/lharvestd}")
	src=$(cd "$(dirname "$0")/.." && pwd)
	R=$(mktemp -d /var/tmp/lhtry.XXXXXX)
	cg=lhtry-$$
	spid=
	# shellcheck disable=SC2317 # reached: the EXIT trap runs it
	cleanup() {
		[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
		sleep 0.5
		for h in systemd unified; do
			[ -d "/sys/fs/cgroup/$h/$cg" ] &&
				find "/sys/fs/cgroup/$h/$cg" -depth -type d \
					-exec rmdir {} + 2>/dev/null
		done
		rm -rf "$R"
	}
	trap cleanup EXIT
	mkdir -p "$R/units" "$R/etc/lharvestd" "$R/sysroot/etc" "$R/varlib"
	# A minimal set of targets: the services' default dependencies and
	# nothing else (no sysinit jobs touching the host).
	for t in sysinit basic sockets shutdown network-online network \
		nss-lookup multi-user local-fs; do
		printf '[Unit]\nDescription=%s\n' "$t" >"$R/units/$t.target"
	done
	cp /lib/systemd/system/systemd-journald{.service,.socket,-dev-log.socket} \
		"$R/units/"
	for f in 'lharvestd@.service' 'lharvestd@gatherer.service'; do
		sed "s|@LH_SBINDIR@/lharvestd|$bin|" "$src/systemd/$f.in" \
			>"$R/units/$f"
	done
	# A gatherer that shares its host with an aggregator and a relay
	# needs a state directory of its own (docs/systemd.md).
	mkdir "$R/units/lharvestd@gatherer.service.d"
	printf '[Service]\nStateDirectory=\nStateDirectory=lharvestd-gatherer\nStateDirectoryMode=0750\n' \
		>"$R/units/lharvestd@gatherer.service.d/state.conf"
	# The relay's watchdog made short enough to watch it work.
	mkdir "$R/units/lharvestd@relay.service.d"
	printf '[Service]\nWatchdogSec=2s\nTimeoutAbortSec=2s\n' \
		>"$R/units/lharvestd@relay.service.d/watchdog.conf"
	probe() { # NAME UNIT INSTANCE COMMAND: UNIT's sandbox, COMMAND
		sed -e 's/^Type=notify/Type=oneshot/' -e '/^WatchdogSec/d' \
			-e '/^Restart/d' -e '/^ExecReload/d' -e "s/%i/$3/g" \
			-e "s#^ExecStart=\(!\{0,1\}\).*#ExecStart=\1/bin/sh -c '$4'#" \
			-e '/^\[Install\]/,$d' "$R/units/$2" >"$R/units/$1.service"
	}
	# shellcheck disable=SC2016 # the probes' sh expands these, in the sandbox
	probe probe-gatherer 'lharvestd@gatherer.service' gatherer \
		'id; grep ^Cap /proc/self/status; ls -ld /sys/kernel/debug; ls /sys/kernel/debug | head -n 3; ls /proc/fs | head -n 3; touch /sys/kernel/debug/x /proc/fs/x /etc/x; echo processes seen: $(ls /proc | grep -c "^[0-9]")'
	# shellcheck disable=SC2016 # the probes' sh expands these, in the sandbox
	probe probe-template 'lharvestd@.service' aggregator \
		'id; grep ^Cap /proc/self/status; ls /sys/kernel/debug; ls /proc/fs; echo processes seen: $(ls /proc | grep -c "^[0-9]")'
	cat >"$R/units/lhtry.target" <<-EOT
		[Unit]
		Description=lharvestd units under test
		Wants=systemd-journald.service lharvestd@aggregator.service
		Wants=lharvestd@relay.service lharvestd@gatherer.service
		Wants=probe-gatherer.service probe-template.service
	EOT
	# The user, as systemd-sysusers makes it from lharvestd.sysusers.
	cp /etc/passwd /etc/group /etc/shadow /etc/gshadow "$R/sysroot/etc/"
	systemd-sysusers --root="$R/sysroot" "$src/systemd/lharvestd.sysusers"
	cp "$R/sysroot/etc/"{passwd,group,shadow,gshadow} "$R/etc/"
	key=try-units-key-0123456789abcdef0123
	# root's copy for the gatherer, lharvestd's for the others.
	(umask 077
	printf '%s\n' "$key" >"$R/etc/lharvestd/secret"
	printf '%s\n' "$key" >"$R/etc/lharvestd/secret-lh")
	printf 'udp_send_channel {\n  host = 127.0.0.1\n  port = 8649\n}\n' \
		>"$R/etc/lharvestd/gmond-send.conf"
	cat >"$R/etc/lharvestd/gatherer.conf" <<-EOT
		role = "gatherer"
		interval = 2
		lustre_root = "/var/lib/lhsim/oss1"
		server = "127.0.0.1:8023"
		name = "oss1"
		state_dir = "/var/lib/lharvestd-gatherer"
	EOT
	cat >"$R/etc/lharvestd/relay.conf" <<-EOT
		role = "relay"
		interval = 2
		listen = "127.0.0.1:8023"
		secret_file = "/etc/lharvestd/secret-lh"
		state_dir = "/var/lib/lharvestd/relay"
		name = "relay"
		dns = no
		route "all" {
		  networks = { "o2ib", "tcp" }
		  server = "127.0.0.1:8022"
		}
		default_route = "all"
	EOT
	cat >"$R/etc/lharvestd/aggregator.conf" <<-EOT
		role = "aggregator"
		interval = 2
		listen = "127.0.0.1:8022"
		secret_file = "/etc/lharvestd/secret-lh"
		state_dir = "/var/lib/lharvestd/aggregator"
		name = "agg"
		dns = no
		ganglia { gmond_conf = "/etc/lharvestd/gmond-send.conf" }
	EOT
	# Lustre 2.17: the export stats in a debugfs of root's, mode 0700,
	# which the gatherer's stats reader reads (lharvestd(8)).
	python3 "$src/tests/sim/lustresim.py" tree --root "$R/varlib/lhsim" \
		--version 2.17 >/dev/null
	chmod 700 "$R/varlib/lhsim/oss1/sys/kernel/debug"
	unshare --pid --fork --mount --propagation private --mount-proc \
		--uts --ipc --net bash "$0" --inside "$R" "$cg" \
		>"$R/inside.log" 2>&1 &
	upid=$!
	for ((i = 0; i < 100; i++)); do
		spid=$(pgrep -P "$upid" -x systemd || true)
		[ -n "$spid" ] && break
		sleep 0.1
	done
	[ -n "$spid" ] || { cat "$R/inside.log"; exit 1; }
	ins() { nsenter -t "$spid" -m -p -n -u -i "$@"; }
	sc() { ins systemctl --no-pager "$@"; }
	say() { printf '\n== %s\n' "$*"; }
	sleep 8
	say "units"
	sc list-units --no-legend 'lharvestd@*' 'probe-*' || true
	say "what the gatherer's sandbox sees"
	ins journalctl --no-pager -o cat -u probe-gatherer
	say "what the template's sandbox (aggregator, relay) sees"
	ins journalctl --no-pager -o cat -u probe-template
	say "the gatherer's processes: the network side and the stats reader"
	# shellcheck disable=SC2016 # the sh in the machine expands these
	ins sh -c 'for p in $(pgrep -x lharvestd; pgrep -x lharvestd-read); do
		printf "%s %s uid %s caps %s\n" "$p" "$(cat /proc/$p/comm)" \
			"$(awk "/^Uid:/ { print \$2 }" /proc/$p/status)" \
			"$(awk "/^CapEff:/ { print \$2 }" /proc/$p/status)"
	done'
	say "the daemons' log, with priorities"
	ins journalctl --no-pager -o short-monotonic -u 'lharvestd@*' \
		--output-fields=PRIORITY,MESSAGE | tail -n 20
	ins journalctl --no-pager -o json -u 'lharvestd@*' |
		python3 -c 'import json,sys,collections; print("priorities:", dict(collections.Counter(json.loads(l)["PRIORITY"] for l in sys.stdin)))'
	say "reload: systemctl reload lharvestd@aggregator"
	sc reload lharvestd@aggregator && echo "reload: exit 0"
	sleep 1
	ins journalctl --no-pager -o cat -u lharvestd@aggregator -n 2
	say "watchdog and state"
	for u in gatherer aggregator relay; do
		sc show -p Id,ActiveState,SubState,WatchdogUSec,WatchdogTimestampMonotonic,NRestarts,StatusErrno "lharvestd@$u" | tr '\n' ' '
		echo
	done
	say "state directories"
	ins sh -c 'ls -ld /var/lib/lharvestd /var/lib/lharvestd/* /var/lib/lharvestd-gatherer'
	say "the relay's watchdog (WatchdogSec=2s): pings, then SIGSTOP"
	for i in 1 2 3; do
		sc show -p WatchdogTimestampMonotonic lharvestd@relay
		sleep 1.1
	done
	sc kill -s STOP lharvestd@relay
	sleep 9
	sc show -p ActiveState,NRestarts,ExecMainPID lharvestd@relay | tr '\n' ' '
	echo
	ins journalctl --no-pager -o cat -u lharvestd@relay | grep -i watchdog || true
	say "SIGKILL of the relay: Restart=on-failure"
	sc kill -s KILL lharvestd@relay
	sleep 7
	sc show -p ActiveState,NRestarts,ExecMainPID lharvestd@relay | tr '\n' ' '
	echo
	say "stop: SIGTERM, STOPPING=1, exit 0"
	sc stop lharvestd@gatherer lharvestd@aggregator lharvestd@relay
	for u in gatherer aggregator relay; do
		sc show -p Id,ActiveState,Result,ExecMainStatus "lharvestd@$u" | tr '\n' ' '
		echo
	done
	say "failed units"
	sc list-units --failed --no-legend
	exit 0
fi

# Inside the namespaces: private /run, /etc and /var/lib overlaid on the
# host's, the journal in memory, read-only /proc/sys, our own cgroups.
R=$1 cg=$2
mount -t tmpfs -o mode=0755 tmpfs /run
for d in etc var/lib; do
	mkdir -p "$R/ov/$d/upper" "$R/ov/$d/work"
	mount -t overlay overlay \
		-o "lowerdir=/$d,upperdir=$R/ov/$d/upper,workdir=$R/ov/$d/work" "/$d"
done
cp -a "$R/etc/." /etc/
cp -a "$R/varlib/." /var/lib/
uid=$(awk -F: '$1 == "lharvestd" { print $3 }' /etc/passwd)
chown "$uid:$uid" /etc/lharvestd/secret-lh
mkdir -p /var/log/journal
mount -t tmpfs tmpfs /var/log/journal
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
hostname lhtry
ip link set lo up
for h in systemd unified; do
	mkdir -p "/sys/fs/cgroup/$h/$cg"
	echo $$ >"/sys/fs/cgroup/$h/$cg/cgroup.procs"
done
export container=lhtry SYSTEMD_UNIT_PATH=$R/units
exec /lib/systemd/systemd --system --unit=lhtry.target --show-status=no \
	--log-target=console </dev/null
