#!/usr/bin/env bash
# The packages.  cpack makes the .deb from the build tree of $1; it must
# hold exactly the expected files, declare its dependencies and conffiles,
# and the daemon unpacked from it must pass -n on the configurations it
# ships.  Then, when rpmbuild is installed, packaging/rpm/build-srpm.sh
# must make the source rpm and rpmlint find no error in it or the spec.
# Nothing is installed on this host: everything happens in a temp dir.
set -uo pipefail
bin=$1
src=${LH_SRCDIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

t_pass() { passed=$((passed + 1)); echo "ok - $1"; }
t_fail() {
	failed=$((failed + 1))
	echo "FAIL - $1"
	shift
	[ $# -eq 0 ] || printf '%s\n' "$@" | sed 's/^/  /'
}
t_summary() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# The build tree: the nearest directory above the binary with CPack's
# configuration.
build=$(cd "$(dirname "$bin")" && pwd)
while [ "$build" != / ] && [ ! -f "$build/CPackConfig.cmake" ]; do
	build=$(dirname "$build")
done
if [ ! -f "$build/CPackConfig.cmake" ]; then
	t_fail "no CPackConfig.cmake above $bin"
	t_summary
	exit 1
fi
for tool in cpack dpkg-deb; do
	command -v "$tool" >/dev/null || { t_fail "no $tool"; t_summary; exit 1; }
done

# 1. The .deb, made into the temp dir (-B), not the build tree.
if ! (cd "$build" && cpack -G DEB -B "$tmp/cpack") >"$tmp/cpack.log" 2>&1; then
	t_fail "cpack -G DEB" "$(cat "$tmp/cpack.log")"
	t_summary
	exit 1
fi
debs=("$tmp"/cpack/*.deb)
if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then
	t_fail "cpack made one .deb" "${debs[*]}"
	t_summary
	exit 1
fi
deb=${debs[0]}
t_pass "cpack -G DEB made $(basename "$deb")"

# 2. Its files (directories aside), exactly.
dpkg-deb -c "$deb" >"$tmp/contents"
awk '$1 !~ /^d/ { sub(/^\.\//, "", $6); print $6 }' "$tmp/contents" |
	sort >"$tmp/got"
{
	printf '%s\n' etc/lharvestd/gatherer.conf etc/lharvestd/aggregator.conf \
		etc/lharvestd/relay.conf usr/sbin/lharvestd usr/bin/lharvest-dump \
		usr/bin/lharvest usr/share/man/man1/lharvest.1 \
		usr/share/man/man8/lharvestd.8 usr/share/man/man5/lharvestd.conf.5 \
		usr/share/doc/lharvestd/README.md usr/share/doc/lharvestd/LICENSE
	for f in "$src"/docs/*.md; do
		echo "usr/share/doc/lharvestd/$(basename "$f")"
	done
	echo usr/share/doc/lharvestd/grafana-dashboard.json
	# The units and the sysusers.d file, once systemd/ has them, in /lib
	# or /usr/lib, whichever systemd/CMakeLists.txt chose.
	for f in "$src"/systemd/*.service "$src"/systemd/*.service.in; do
		[ -f "$f" ] || continue
		unit=$(basename "$f" .in)
		grep -xE "(usr/)?lib/systemd/system/${unit//./\\.}" "$tmp/got" ||
			echo "usr/lib/systemd/system/$unit"
	done
	for f in "$src"/systemd/*.sysusers; do
		[ -f "$f" ] || continue
		grep -xE '(usr/)?lib/sysusers\.d/lharvestd\.conf' "$tmp/got" ||
			echo usr/lib/sysusers.d/lharvestd.conf
	done
} | sort >"$tmp/want"
if diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"; then
	t_pass "dpkg-deb -c: exactly the $(wc -l <"$tmp/want") expected files"
else
	t_fail "dpkg-deb -c: the expected files (- missing, + unexpected)" \
		"$(tail -n +3 "$tmp/diff")"
fi
bad=$(awk '$2 != "root/root" { print $6 " " $2 }
	$6 ~ /^\.\/etc\// && $1 !~ /^d/ && $1 != "-rw-r--r--" { print $6 " " $1 }
	$6 ~ /^\.\/usr\/s?bin\// && $1 !~ /^d/ && $1 != "-rwxr-xr-x" { print $6 " " $1 }' \
	"$tmp/contents")
if [ -z "$bad" ]; then
	t_pass "owned by root, configurations 0644, programs 0755"
else
	t_fail "owners and modes" "$bad"
fi

# 3. The control fields.
field() { dpkg-deb -f "$deb" "$1"; }
probs=()
[ "$(field Package)" = lharvestd ] || probs+=("Package: $(field Package)")
case $(field Section) in
admin | net) ;;
*) probs+=("Section: $(field Section)") ;;
esac
for f in Maintainer Homepage Description Version Architecture; do
	[ -n "$(field "$f")" ] || probs+=("no $f")
done
depends=$(field Depends)
# dpkg-shlibdeps ran: the libraries the daemon links are there.
for lib in libc6 libevent-core libconfuse libganglia1 libssl; do
	case $depends in
	*"$lib"*) ;;
	*) probs+=("Depends lacks $lib: '$depends'") ;;
	esac
done
# ... and not libsystemd: notify.c speaks sd_notify itself (issue 9).
case $depends in
*libsystemd*) probs+=("Depends names libsystemd: '$depends'") ;;
esac
if [ ${#probs[@]} -eq 0 ]; then
	t_pass "dpkg-deb -I: control fields (Depends: $depends)"
else
	t_fail "dpkg-deb -I: control fields" "${probs[@]}"
fi

dpkg-deb -e "$deb" "$tmp/control"
printf '%s\n' /etc/lharvestd/aggregator.conf /etc/lharvestd/gatherer.conf \
	/etc/lharvestd/relay.conf >"$tmp/conffiles.want"
if [ -f "$tmp/control/conffiles" ] &&
	sort "$tmp/control/conffiles" | diff -u "$tmp/conffiles.want" - >"$tmp/diff"; then
	t_pass "conffiles: the three configurations"
else
	t_fail "conffiles" "$(cat "$tmp/control/conffiles" 2>/dev/null)" \
		"$(cat "$tmp/diff" 2>/dev/null)"
fi
probs=()
for s in postinst prerm postrm; do
	if [ ! -x "$tmp/control/$s" ]; then
		probs+=("no executable $s")
	elif ! sh -n "$tmp/control/$s" 2>"$tmp/sh.err"; then
		probs+=("$s: $(cat "$tmp/sh.err")")
	fi
done
if [ ${#probs[@]} -eq 0 ]; then
	t_pass "maintainer scripts postinst, prerm, postrm parse"
else
	t_fail "maintainer scripts" "${probs[@]}"
fi

# 4. The daemon unpacked from the .deb, on the configurations it ships
#    (their secret_file does not exist yet: -n passes nevertheless).
root=$tmp/root
dpkg-deb -x "$deb" "$root"
v=$("$root/usr/sbin/lharvestd" -V 2>&1)
want_v=$(field Version)
want_v=${want_v%-*}
if [ "$v" = "lharvestd $want_v" ]; then
	t_pass "unpacked lharvestd -V: $v"
else
	t_fail "unpacked lharvestd -V" "got '$v', want 'lharvestd $want_v'"
fi
for role in gatherer aggregator relay; do
	conf=$root/etc/lharvestd/$role.conf
	out=$("$root/usr/sbin/lharvestd" -n -f "$conf" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^configuration OK$' <<<"$out"; then
		t_pass "unpacked lharvestd -n -f etc/lharvestd/$role.conf"
	else
		t_fail "unpacked lharvestd -n -f etc/lharvestd/$role.conf (exit $rc)" "$out"
	fi
done

# The units start the daemon the package holds (a path configured for
# another prefix would leave every instance failing).
units=()
for u in "$root"/lib/systemd/system/*.service "$root"/usr/lib/systemd/system/*.service; do
	[ -f "$u" ] && units+=("$u")
done
if [ ${#units[@]} -gt 0 ]; then
	probs=()
	for u in "${units[@]}"; do
		exe=$(sed -n 's/^ExecStart=[-@:+!]*\([^ ]*\).*/\1/p' "$u")
		if [ -z "$exe" ]; then
			probs+=("$(basename "$u"): no ExecStart=")
		elif [ ! -x "$root$exe" ]; then
			probs+=("$(basename "$u"): ExecStart=$exe, not in the package")
		fi
	done
	if [ ${#probs[@]} -eq 0 ]; then
		t_pass "the units' ExecStart= programs are in the package"
	else
		t_fail "the units' ExecStart=" "${probs[@]}"
	fi
fi

# 5. The source rpm and rpmlint, when this host has rpmbuild.
spec=$src/packaging/rpm/lharvestd.spec
# The spec's %config files are the .deb's conffiles.
sed -n 's|^%config(noreplace) %{_sysconfdir}/%{name}/|/etc/lharvestd/|p' "$spec" |
	sort >"$tmp/spec.conf"
if diff -u "$tmp/conffiles.want" "$tmp/spec.conf" >"$tmp/diff"; then
	t_pass "the spec's %config(noreplace) files are the conffiles"
else
	t_fail "the spec's %config(noreplace) files" "$(cat "$tmp/diff")"
fi
# The spec's units are the .deb's (once it has any: the file list above
# already says when it lacks them).
if [ ${#units[@]} -gt 0 ]; then
	sed -n 's|^%{_unitdir}/%{name}|lharvestd|p' "$spec" | sort >"$tmp/spec.units"
	for u in "${units[@]}"; do basename "$u"; done | sort >"$tmp/deb.units"
	if diff -u "$tmp/deb.units" "$tmp/spec.units" >"$tmp/diff"; then
		t_pass "the spec's %{_unitdir} files are the .deb's units"
	else
		t_fail "the spec's %{_unitdir} files (- in the .deb only, + in the spec only)" \
			"$(tail -n +3 "$tmp/diff")"
	fi
fi
if ! command -v rpmbuild >/dev/null; then
	echo "skip - source rpm: rpmbuild is not installed (scripts/deps.sh test installs rpm and rpmlint)"
else
	if bash "$src/packaging/rpm/build-srpm.sh" -o "$tmp/srpm" >"$tmp/srpm.log" 2>&1; then
		srpm=$(ls "$tmp"/srpm/*.src.rpm)
		t_pass "build-srpm.sh: $(basename "$srpm"), rpmlint: $(sed -n 's/^ *[0-9]* packages\{0,1\} and [0-9]* specfiles\{0,1\} checked; \(.*\); has taken.*/\1/p' "$tmp/srpm.log")"
		rpm -qpl "$srpm" >"$tmp/srpm.list" 2>&1
		printf '%s\n' lharvestd-"$want_v".tar.gz lharvestd.spec \
			lharvestd.sysusers >"$tmp/srpm.want"
		if sort "$tmp/srpm.list" | diff -u "$tmp/srpm.want" - >"$tmp/diff"; then
			t_pass "the source rpm holds the tarball, the spec and the sysusers file"
		else
			t_fail "the source rpm's files" "$(cat "$tmp/diff")"
		fi
		tar -tzf "$tmp/srpm/lharvestd-$want_v.tar.gz" >"$tmp/tarball.list"
		if grep -qx "lharvestd-$want_v/CMakeLists.txt" "$tmp/tarball.list"; then
			t_pass "the tarball unpacks into lharvestd-$want_v/"
		else
			t_fail "the tarball's top directory"
		fi
	else
		t_fail "build-srpm.sh" "$(cat "$tmp/srpm.log")"
	fi
fi

t_summary
