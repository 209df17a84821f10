#!/usr/bin/env bash
# Install what lharvestd needs to build, test and demo on Debian 12.
# Usage: scripts/deps.sh [build|demo|test]
#   demo adds gmond; test adds gmond, clang and the linters
# Runs apt-get only when something is missing, so it is cheap to repeat.
set -euo pipefail

build_pkgs=(build-essential cmake pkg-config python3
	libevent-dev libssl-dev libconfuse-dev check
	libganglia1-dev libtirpc-dev libjansson-dev libncurses-dev
	libcurl4-openssl-dev)
# gmond (never started as a service: see policy-rc.d below) for the demo
# and the tests that read its XML; iproute2 for ss.
demo_pkgs=(ganglia-monitor iproute2)
# clang + libclang-rt-14-dev: libFuzzer and the sanitizer runtimes
# (clang only recommends the latter, so it is named).  dpkg-dev
# (dpkg-shlibdeps, which needs file) for the .deb's Depends; rpm
# (rpmbuild) and rpmlint for the source rpm (it_package.sh); systemd for
# systemd-analyze and systemd-sysusers (it_units.sh); shellcheck for
# scripts/lint.sh; stress-ng to load the cores (LH_TEST_STRESS=1
# scripts/test.sh, docs/testing.md).
test_pkgs=("${demo_pkgs[@]}" clang libclang-rt-14-dev clang-tidy
	clang-format cppcheck shellcheck dpkg-dev file rpm rpmlint systemd
	stress-ng prometheus tmux)
# The ganglia-web tests (tests/ganglia-web, it_gweb*.sh) and
# scripts/dashboards.sh: gmetad and rrdtool, ganglia-web on php-cli,
# patch for contrib/ganglia-web-php8.patch, Chromium to look at it.
test_pkgs+=(gmetad rrdtool ganglia-webfrontend php-cli patch chromium)

want=("${build_pkgs[@]}")
case ${1:-build} in
demo) want+=("${demo_pkgs[@]}") ;;
test) want+=("${test_pkgs[@]}") ;;
esac

missing=()
for p in "${want[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}; run as root or install them" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Never let a package start a system daemon here (ganglia-monitor would
# join Ganglia's default multicast channel): policy-rc.d answers 101.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
