#!/usr/bin/env bash
# The systemd units of systemd/, checked offline (no running systemd
# needed): `systemd-analyze verify` says nothing about lharvestd@.service,
# its instances aggregator and relay, and lharvestd@gatherer.service (the
# instance file, which must win over the template); `systemd-analyze
# security --offline=true` rates every one at an exposure of 2.0 or below;
# systemd-sysusers makes the lharvestd system user from
# lharvestd.sysusers.  The units are installed in a temporary root with
# ExecStart= naming the built binary (verify wants it to exist), and
# man(1) finds the man pages of the source tree (verify checks
# Documentation=).  Skipped when systemd-analyze is missing (Debian
# package systemd).
#
#   bash it_units.sh BUILD/daemon/lharvestd      (LH_SRCDIR = source tree)
set -uo pipefail
bin=$(realpath "$1")
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
t_pass() { passed=$((passed + 1)); echo "ok - $1"; }
t_fail() {
	failed=$((failed + 1))
	echo "FAIL - $1"
	shift
	[ $# -eq 0 ] || printf '  %s\n' "$@"
}
# Exposure allowed, in tenths (systemd-analyze --threshold=).
max_exposure=20

if ! command -v systemd-analyze >/dev/null; then
	echo "skip: no systemd-analyze (Debian: apt-get install systemd)"
	echo "$passed passed, $failed failed"
	exit 0
fi

units=$tmp/root/usr/lib/systemd/system
mkdir -p "$units" "$tmp/man/man8" "$tmp/man/man5" "$tmp/sysroot/etc"
for f in 'lharvestd@.service' 'lharvestd@gatherer.service'; do
	sed "s|@LH_SBINDIR@/lharvestd|$bin|g" "$src/systemd/$f.in" >"$units/$f"
done
cp "$src/man/lharvestd.8" "$tmp/man/man8/"
cp "$src/man/lharvestd.conf.5" "$tmp/man/man5/"

left=$(grep -n '@[A-Z_]*@' "$units"/*.service)
if [ -z "$left" ]; then
	t_pass "every @VARIABLE@ of the units is substituted"
else
	t_fail "every @VARIABLE@ of the units is substituted" "$left"
fi

# verify: no output at all is clean.
man_opt=()
if ! command -v man >/dev/null; then
	echo "note: no man(1), Documentation= not checked"
	man_opt=(--man=no)
fi
verify() { # WHAT ARGS...
	local what=$1 out rc
	shift
	out=$(cd "$tmp" && MANPATH=$tmp/man SYSTEMD_UNIT_PATH=$units: \
		systemd-analyze verify "${man_opt[@]}" "$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ -z "$out" ]; then
		t_pass "systemd-analyze verify $what: clean"
	else
		t_fail "systemd-analyze verify $what: clean (exit $rc)" "$out"
	fi
}
verify "the template file" "$units/lharvestd@.service"
verify "the gatherer file" "$units/lharvestd@gatherer.service"
verify "lharvestd@aggregator, @relay, @gatherer" \
	lharvestd@aggregator.service lharvestd@relay.service \
	lharvestd@gatherer.service

# security: the exposure of each instance as systemd loads it from the
# root (so lharvestd@gatherer is the instance file, the others the
# template).
for i in aggregator relay gatherer; do
	out=$(cd "$tmp" && systemd-analyze security --offline=true \
		--root="$tmp/root" --threshold="$max_exposure" --no-pager \
		"lharvestd@$i.service" 2>&1)
	rc=$?
	score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' \
		<<<"$out")
	if [ $rc -eq 0 ] && [ -n "$score" ]; then
		t_pass "lharvestd@$i: exposure $score <= $((max_exposure / 10)).$((max_exposure % 10))"
	else
		t_fail "lharvestd@$i: exposure ${score:-?} <= $((max_exposure / 10)).$((max_exposure % 10))" \
			"$(grep -E '^✗|exposure' <<<"$out" | head -n 20)"
	fi
	eval "out_$i=\$out"
done
# shellcheck disable=SC2154 # set by eval above
if grep -q '✗ ProcSubset=' <<<"$out_gatherer" &&
	! grep -q '✗ ProcSubset=' <<<"$out_aggregator"; then
	t_pass "lharvestd@gatherer is its own unit (with /proc/fs), lharvestd@aggregator the template"
else
	t_fail "lharvestd@gatherer is its own unit (with /proc/fs), lharvestd@aggregator the template"
fi

# Privilege separation (issue 15 item 10): the gatherer starts as root
# only to fork its stats reader and become lharvestd (-u), with no
# capability but those two; secrets hidden in every unit.
g=$units/lharvestd@gatherer.service
if grep -qx "ExecStart=!$bin -u lharvestd -f /etc/lharvestd/%i.conf" "$g" &&
	grep -qx 'User=lharvestd' "$g" &&
	grep -qx 'CapabilityBoundingSet=CAP_SETUID CAP_SETGID' "$g"; then
	t_pass "lharvestd@gatherer starts as root (!) and becomes lharvestd (-u)"
else
	t_fail "lharvestd@gatherer starts as root (!) and becomes lharvestd (-u)" \
		"$(grep -E '^(ExecStart|User|CapabilityBoundingSet)=' "$g")"
fi
for f in "$units"/*.service; do
	missing=
	for p in /etc/shadow /etc/gshadow /etc/ssh /root /etc/krb5.keytab; do
		grep -E "^InaccessiblePaths=.*-$p( |\$)" "$f" >/dev/null ||
			missing="$missing $p"
	done
	if [ -z "$missing" ]; then
		t_pass "$(basename "$f"): InaccessiblePaths= hides the host's secrets"
	else
		t_fail "$(basename "$f"): InaccessiblePaths= hides the host's secrets" \
			"missing:$missing"
	fi
done

# sysusers: a system user lharvestd, its group, no login shell.
if command -v systemd-sysusers >/dev/null; then
	out=$(systemd-sysusers --root="$tmp/sysroot" \
		"$src/systemd/lharvestd.sysusers" 2>&1)
	if awk -F: '$1 == "lharvestd" && $3 > 0 && $3 < 1000 &&
			$6 == "/var/lib/lharvestd" && $7 ~ /nologin$/ { ok = 1 }
			END { exit !ok }' "$tmp/sysroot/etc/passwd" 2>/dev/null &&
		grep -q '^lharvestd:' "$tmp/sysroot/etc/group"; then
		t_pass "systemd-sysusers makes the system user and group lharvestd"
	else
		t_fail "systemd-sysusers makes the system user and group lharvestd" \
			"$out" "$(cat "$tmp/sysroot/etc/passwd" 2>/dev/null)"
	fi
else
	echo "note: no systemd-sysusers, lharvestd.sysusers not checked"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
