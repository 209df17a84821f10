#!/usr/bin/env bash
# House checks: formatting, module boundaries, banned functions,
# clang-tidy, cppcheck and shellcheck.  Usage: scripts/lint.sh BUILD_DIR
# (BUILD_DIR holds compile_commands.json).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
fail=0
note() { echo "lint: $*" >&2; fail=1; }

mapfile -t srcs < <(git ls-files '*.c' '*.h' 2>/dev/null || find common daemon gmetric tests -name '*.[ch]')

# 1. Formatting.
for f in "${srcs[@]}"; do
	clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || note "$f: not clang-formatted"
done

# 2. Module boundaries (STYLE.md 2.3): each library header appears only
#    where it is allowed.
check_only_in() { # pattern, allowed path regex
	local hits
	hits=$(grep -lE "#include <$1" "${srcs[@]}" | grep -vE "$2" || true)
	[ -z "$hits" ] || note "<$1> included outside $2: $hits"
}
check_only_in 'confuse\.h' '^common/config/'
check_only_in 'ganglia\.h|apr' '^gmetric/'
check_only_in 'event2/' '^(daemon|tests/tools)/|^tests/unit/test_notify\.c$'
# sd_notify is spoken directly (docs/systemd.md): no libsystemd header.
check_only_in 'systemd/' '^$'
check_only_in 'openssl/' '^common/(proto/frame|proto/keyfile|util/hmac)\.c$'
hits=$(grep -lE 'log\.h"|syslog\(|exit\(|abort\(' common/*/*.c gmetric/*.c || true)
[ -z "$hits" ] || note "common/ and gmetric/ must not log or exit: $hits"

# 2b. Layers of common/ (common/CMakeLists.txt, docs/architecture.md): a
#     folder includes headers from itself and from the folders listed for
#     it, never from a later one.  CMake links the same way, so a breach
#     fails twice: here by name, and in the build.
declare -A layer_ok=(
	[util]="util"
	[lustre]="lustre util"
	[proto]="proto lustre util"
	[gather]="gather proto lustre util"
	[sweep]="sweep proto lustre util"
	[config]="config sweep lustre util"
	[web]="web util")
declare -A header_dir=()
for h in common/*/*.h; do
	d=${h#common/}
	header_dir[$(basename "$h")]=${d%%/*}
done
for f in common/*/*.[ch]; do
	d=${f#common/}
	d=${d%%/*}
	[ -n "${layer_ok[$d]:-}" ] || { note "$f: common/$d/ has no layer in lint.sh"; continue; }
	while read -r inc; do
		hd=${header_dir[$inc]:-}
		[ -n "$hd" ] || continue
		case " ${layer_ok[$d]} " in
		*" $hd "*) ;;
		*) note "$f includes $inc from common/$hd/, outside what common/$d/ may use (${layer_ok[$d]})" ;;
		esac
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
# daemon/ and gmetric/ headers are never included from common/.
hits=$(grep -lE '#include "(aggregator|gatherer|relay|receiver|sender|log|loop|resolver|sink|gapi|gcache|names)\.h"' common/*/*.[ch] || true)
[ -z "$hits" ] || note "common/ includes daemon/ or gmetric/ headers: $hits"

# 3. Banned functions (STYLE.md section 3).
hits=$(grep -nE '\b(atoi|atol|sprintf|strcpy|strcat|strtok|gets|alloca)\s*\(' "${srcs[@]}" || true)
[ -z "$hits" ] || note "banned functions: $hits"

# 4. Static analysis over the project's own sources.
mapfile -t csrcs < <(printf '%s\n' "${srcs[@]}" | grep -E '^(common|daemon|gmetric)/.*\.c$')
if ! clang-tidy -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option "${csrcs[@]}" >"$build/clang-tidy.log" 2>&1; then
	cat "$build/clang-tidy.log" >&2
	note "clang-tidy found problems"
fi
incdirs=()
for d in common/*/; do incdirs+=(-I "${d%/}"); done
if ! cppcheck --quiet --error-exitcode=1 --inline-suppr \
	--enable=warning,style,performance,portability \
	--suppress=missingIncludeSystem --std=c11 -D_GNU_SOURCE \
	"${incdirs[@]}" -I daemon -I gmetric "${csrcs[@]}" 2>"$build/cppcheck.log"; then
	cat "$build/cppcheck.log" >&2
	note "cppcheck found problems"
fi

# 5. Shell: every *.sh and every script that runs bash, with what they
#    source followed from their own directory (a `# shellcheck source=`
#    line names it).  A `# shellcheck disable=` says why on its line.
shell_scripts() {
	if git rev-parse --git-dir >/dev/null 2>&1; then
		git ls-files '*.sh'
		git ls-files -z | xargs -0 awk 'FNR == 1 && /^#!.*bash/ { print FILENAME } { nextfile }' 2>/dev/null || true
	else
		find scripts tests systemd -name '*.sh'
	fi
}
mapfile -t shs < <(shell_scripts | sort -u)
if ! shellcheck -x -P SCRIPTDIR "${shs[@]}" >"$build/shellcheck.log" 2>&1; then
	cat "$build/shellcheck.log" >&2
	note "shellcheck found problems"
fi

if [ $fail -eq 0 ]; then echo "lint: clean"; fi
exit $fail
