#!/usr/bin/env bash
# The test command: installs what it needs (Debian 12, as root), then
# builds and runs every test:
#   1. release build (gcc, warnings as errors): unit, fuzz-corpus replay,
#      simulator and integration tests through CTest;
#   2. lint: clang-format, module boundaries, clang-tidy, cppcheck;
#   3. ASan+UBSan build: the unit suites and the integration smoke subset;
#   4. libFuzzer build (clang): corpus replay, then a short fuzzing run
#      (LH_FUZZ_SECONDS per target, default 30).
# Build trees go to build/, build-asan/, build-fuzz/ in the checkout.
#
# LH_TEST_STRESS=1: the whole run with every core kept busy by
# `stress-ng --cpu N` (N = the cores), started after the dependencies and
# stopped at the end, to show that the tests hold on a loaded machine
# (docs/testing.md).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
jobs=$(nproc 2>/dev/null || echo 2)

scripts/deps.sh test || exit 1

stress_pid=
stop_stress() {
	[ -n "$stress_pid" ] || return 0
	kill -TERM "$stress_pid" 2>/dev/null
	wait "$stress_pid" 2>/dev/null
	stress_pid=
}
if [ "${LH_TEST_STRESS:-0}" != 0 ]; then
	command -v stress-ng >/dev/null || { echo "LH_TEST_STRESS: no stress-ng"; exit 1; }
	stress-ng --cpu "$jobs" --timeout 0 --quiet &
	stress_pid=$!
	trap stop_stress EXIT
	echo "=== under load: stress-ng --cpu $jobs (pid $stress_pid)"
fi

failed_stages=()
total_pass=0
total_fail=0

# ctest wrapper: runs, echoes CTest's own summary, adds up the counts.
run_ctest() { # build_dir, ctest args...
	local dir=$1 log
	shift
	log=$(mktemp)
	(cd "$dir" && ctest --output-on-failure -j"$jobs" "$@") 2>&1 | tee "$log"
	local line pass fail total
	line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
	rm -f "$log"
	if [ -z "$line" ]; then
		return 1
	fi
	fail=$(echo "$line" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
	total=$(echo "$line" | sed -E 's/.* failed out of ([0-9]+).*/\1/')
	pass=$((total - fail))
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	[ "$fail" -eq 0 ]
}

stage() { # name, command...
	local name=$1
	shift
	echo
	echo "=== $name"
	if ! "$@"; then
		failed_stages+=("$name")
	fi
}

build() { # dir, cmake args...
	local dir=$1
	shift
	cmake -S . -B "$dir" "$@" >"$dir.configure.log" 2>&1 ||
		{ cat "$dir.configure.log"; return 1; }
	cmake --build "$dir" -j"$jobs" 2>&1 | grep -vE '^\[ *[0-9]+%\]|^(Consolidate|Scanning|Built target)'
	return "${PIPESTATUS[0]}"
}

mkdir -p build build-asan build-fuzz
stage "release build" build build -DCMAKE_BUILD_TYPE=RelWithDebInfo
stage "release tests" run_ctest build -LE fuzzrun
stage "lint" scripts/lint.sh build
stage "sanitizer build" build build-asan -DCMAKE_BUILD_TYPE=Debug -DLH_SANITIZE=ON
stage "sanitizer tests (unit + smoke)" run_ctest build-asan -L smoke
stage "fuzz build" build build-fuzz -DCMAKE_C_COMPILER=clang \
	-DCMAKE_BUILD_TYPE=Debug -DLH_FUZZ=ON -DLH_DAEMON=OFF \
	-DLH_FUZZ_SECONDS="${LH_FUZZ_SECONDS:-30}"
stage "fuzz (corpus replay and fuzzing)" run_ctest build-fuzz -L '^fuzz'

echo
if [ ${#failed_stages[@]} -eq 0 ]; then
	echo "all stages passed"
else
	echo "FAILED stages: ${failed_stages[*]}"
fi
echo "tests: $total_pass passed, $total_fail failed"
if [ -n "$stress_pid" ]; then
	stop_stress
	echo "(with stress-ng --cpu $jobs running throughout)"
fi
[ ${#failed_stages[@]} -eq 0 ]
