#!/usr/bin/env bash
# lharvestd -n: "configuration OK" and exit 0 for the shipped examples
# (a secret or state directory not there yet is a warning), one
# "file[:line]: reason" line and exit 1 for what is wrong: a syntax error,
# a bad value, a secret that cannot be used, a bad hosts map line, a bad
# rewrite rule, a gmond.conf libganglia refuses.
set -uo pipefail
bin=$1
# shellcheck source=dumplib.sh
. "$(dirname "$0")/dumplib.sh"
src=${LH_SRCDIR:?set LH_SRCDIR to the source tree}
# libconfuse memory libganglia cannot free (docs/ganglia.md); only matters
# in the sanitizer build.
. "$src/tests/ganglia/sanitizer.sh"

# ncheck NAME WANT_STATUS CONF PATTERN...: -n on CONF exits WANT_STATUS and
# its output matches every PATTERN (extended regexps).
ncheck() {
	local name=$1 want=$2 conf=$3 out rc p bad=()
	shift 3
	out=$("$bin" -n -f "$conf" 2>&1)
	rc=$?
	[ "$rc" -eq "$want" ] || bad+=("exit $rc, want $want")
	for p in "$@"; do
		grep -qE -- "$p" <<<"$out" || bad+=("no line matching: $p")
	done
	if [ ${#bad[@]} -eq 0 ]; then
		t_pass "$name"
	else
		t_fail "$name" "${bad[@]}" "--- output:" "$out"
	fi
}

for role in gatherer aggregator relay; do
	ncheck "shipped $role.conf: configuration OK" 0 "$src/conf/$role.conf" \
		'^configuration OK$'
done

make_keys "$tmp/keys" "it-check-key-0123456789abcdef0123"
mkdir -m 700 "$tmp/state"
printf 'globals {\n  daemonize = no\n}\nudp_send_channel {\n  host = 127.0.0.1\n  port = 39999\n}\n' >"$tmp/gmond.conf"
base() { # ROLE: a configuration whose files are all there
	printf 'role = "%s"\ninterval = 20\nsecret_file = "%s"\nstate_dir = "%s"\n' \
		"$1" "$tmp/keys" "$tmp/state"
	[ "$1" = gatherer ] && printf 'lustre_root = "%s"\n' "$tmp"
	[ "$1" = aggregator ] && printf 'ganglia {\n  gmond_conf = "%s"\n}\ndns = no\n' "${gmond:-$tmp/gmond.conf}"
	[ "$1" = relay ] && printf 'route "a" {\n  networks = { "o2ib" }\n  server = "127.0.0.1"\n}\n'
	return 0
}

base gatherer >"$tmp/g.conf"
ncheck "a gatherer whose files are there: no warning" 0 "$tmp/g.conf" '^configuration OK$'
if "$bin" -n -f "$tmp/g.conf" 2>&1 | grep warning >/dev/null; then
	t_fail "no warning when every file is there" "$("$bin" -n -f "$tmp/g.conf" 2>&1)"
else
	t_pass "no warning when every file is there"
fi

{ base gatherer; printf 'secret_file = "%s"\nstate_dir = "%s"\nlustre_root = "%s"\n' \
	"$tmp/nokeys" "$tmp/nostate" "$tmp/nolustre"; } >"$tmp/g2.conf"
ncheck "files not there yet are warnings" 0 "$tmp/g2.conf" \
	"warning: secret_file $tmp/nokeys: not there yet" \
	"warning: state_dir $tmp/nostate: not there yet" \
	"warning: lustre_root $tmp/nolustre: not there yet" '^configuration OK$'

printf 'short\n' >"$tmp/badkeys"
chmod 600 "$tmp/badkeys"
{ base gatherer; printf 'secret_file = "%s"\n' "$tmp/badkeys"; } >"$tmp/g3.conf"
ncheck "a secret that cannot be used is an error" 1 "$tmp/g3.conf" "^$tmp/g3.conf: secret_file: "

{ base gatherer; printf 'interval = 0\n'; } >"$tmp/g4.conf"
ncheck "a bad value: file:line: reason" 1 "$tmp/g4.conf" \
	"^$tmp/g4.conf:6: interval: 0 is not between 1 and 3600 seconds"

{ base gatherer; printf 'interval = 20 20\n'; } >"$tmp/g5.conf"
ncheck "a syntax error: file:line" 1 "$tmp/g5.conf" "^$tmp/g5.conf:6: "

base aggregator >"$tmp/a.conf"
ncheck "an aggregator whose files are there" 0 "$tmp/a.conf" '^configuration OK$'

printf '10.1.0.1 node01\n10.1.0.2\n' >"$tmp/hosts"
{ base aggregator; printf 'hosts_file = "%s"\n' "$tmp/hosts"; } >"$tmp/a2.conf"
ncheck "a bad hosts map line: file:line" 1 "$tmp/a2.conf" "^$tmp/hosts:2: "

{ base aggregator; printf 'hosts_file = "%s"\n' "$tmp/nohosts"; } >"$tmp/a3.conf"
ncheck "a hosts map not there yet is a warning" 0 "$tmp/a3.conf" \
	"warning: hosts_file $tmp/nohosts: not there yet" '^configuration OK$'

{ base aggregator; printf "rewrite = { 's/(/x/' }\n"; } >"$tmp/a4.conf"
ncheck "a bad rewrite rule is an error" 1 "$tmp/a4.conf" "^$tmp/a4.conf: rewrite 's/\(/x/': "

printf 'udp_send_channel {\n  host = 127.0.0.1\n  port = "nope"\n' >"$tmp/badgmond.conf"
gmond=$tmp/badgmond.conf base aggregator >"$tmp/a5.conf"
ncheck "a gmond.conf libganglia refuses is one line" 1 "$tmp/a5.conf" \
	"^$tmp/a5.conf: gmond_conf $tmp/badgmond.conf: "

# Keys of the ganglia section at their old place (issue 16): they work,
# with one line each naming file:line, the key and the new form; the
# section form has no such line; both at once is an error.
if "$bin" -n -f "$tmp/a.conf" 2>&1 | grep deprecated >/dev/null; then
	t_fail "the ganglia section: no deprecation line" "$("$bin" -n -f "$tmp/a.conf" 2>&1)"
else
	t_pass "the ganglia section: no deprecation line"
fi
{ base relay; printf 'spoof = yes\ngmond_conf = "%s"\ntmax = 30\n' "$tmp/gmond.conf"; } >"$tmp/a6.conf"
ncheck "a Ganglia key at the top level: one deprecation line" 0 "$tmp/a6.conf" \
	"^$tmp/a6.conf:10: gmond_conf: deprecated at the top level; write it in ganglia \\{ gmond_conf = \\.\\.\\. \\}$" \
	"^$tmp/a6.conf:11: tmax: deprecated at the top level; write it in ganglia \\{ tmax = \\.\\.\\. \\}$" \
	'^configuration OK$'
n=$("$bin" -n -f "$tmp/a6.conf" 2>&1 | grep -c deprecated)
if [ "$n" -eq 2 ]; then
	t_pass "one line per deprecated key"
else
	t_fail "one line per deprecated key" "$n lines"
fi
{ base relay; printf 'tmax = 30\nganglia { tmax = 40 }\n'; } >"$tmp/a7.conf"
ncheck "a key at both places is an error" 1 "$tmp/a7.conf" \
	"^$tmp/a7.conf:9: tmax: also set in ganglia \\{ \\}; keep one$"

base relay >"$tmp/r.conf"
ncheck "a relay" 0 "$tmp/r.conf" '^configuration OK$'
{ base relay; printf 'route "b" {\n  networks = { "o2ib*" }\n  server = "127.0.0.2"\n}\n'; } >"$tmp/r2.conf"
ncheck "overlapping routes are an error" 1 "$tmp/r2.conf" \
	"route 'b': 'o2ib\\*' overlaps 'o2ib' of another route"

t_summary
