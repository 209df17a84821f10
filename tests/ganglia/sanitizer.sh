# shellcheck shell=bash
# Sourced by the integration tests that run libganglia (the aggregator,
# the relay, lhspoof): what a sanitizer build needs to run it.  $src is
# the source tree.  Harmless for a release build.
#
# - libconfuse memory that libganglia cannot free (docs/ganglia.md):
#   suppressed, and the slow unwinder sees through libganglia's frames,
#   which have no frame pointers.
# - GCC 12's ASan intercepts xdrmem_create and looks the real one up when
#   the process starts; libtirpc is only mapped later, when gapi.c opens
#   libganglia, so the interceptor calls address 0 at the first send.
#   Preloading libtirpc gives it the real function; ASan then must not
#   insist on being first in the link order.  Only for an ASan build
#   ($bin, the daemon under test, linked with libasan).
: "${src:?sanitizer.sh: set src to the source tree first}"
export LSAN_OPTIONS="suppressions=$src/tests/ganglia/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0:verify_asan_link_order=0"
lh_tirpc=$(ldconfig -p 2>/dev/null | awk '/libtirpc\.so\.3 .*x86-64|libtirpc\.so\.3 \(/ {print $NF; exit}')
# (ldd's output taken whole: "ldd | grep -q" under pipefail fails when
# grep exits at its first match and ldd gets SIGPIPE.)
if [ -n "$lh_tirpc" ] && [ -n "${bin:-}" ] &&
	[[ "$(ldd "$bin" 2>/dev/null)" == *libasan* ]]; then
	export LD_PRELOAD="$lh_tirpc${LD_PRELOAD:+ $LD_PRELOAD}"
fi
unset lh_tirpc
