#!/usr/bin/env bash
# Build lharvestd's source rpm (works on Debian too: apt-get install rpm
# rpmlint), then check the spec and the source rpm with rpmlint.
# Usage: packaging/rpm/build-srpm.sh [-o OUTDIR] [--head] [--no-lint]
#   -o OUTDIR  where the tarball, the source rpm and rpmlint.log go
#              (default: build-srpm/ in the checkout)
#   --head     the tarball is `git archive HEAD` (a release); by default it
#              is the working tree's files that git tracks or would track
#              (uncommitted changes and new files included, ignored files
#              such as build trees left out)
#   --no-lint  skip rpmlint
# Exit status: 0 when the source rpm was built and rpmlint found no error
# (warnings are printed and allowed: docs/install.md lists the expected
# ones).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$src/build-srpm
head=0
lint=1
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	--head) head=1; shift ;;
	--no-lint) lint=0; shift ;;
	*) echo "usage: $0 [-o OUTDIR] [--head] [--no-lint]" >&2; exit 2 ;;
	esac
done
spec=$src/packaging/rpm/lharvestd.spec
command -v rpmbuild >/dev/null || { echo "build-srpm.sh: no rpmbuild (Debian: apt-get install rpm)" >&2; exit 1; }

# The spec's version must be the project's.
version=$(sed -n 's/^project(lharvestd VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
specversion=$(sed -n 's/^Version:[[:space:]]*//p' "$spec")
if [ -z "$version" ] || [ "$version" != "$specversion" ]; then
	echo "build-srpm.sh: CMakeLists.txt says version '$version', the spec '$specversion'" >&2
	exit 1
fi
name=lharvestd-$version

# The sysusers.d file that systemd/ installs as lharvestd.conf, also a
# source of its own (the spec says why).
sysusers=${LH_SYSUSERS:-}
if [ -z "$sysusers" ]; then
	for f in "$src"/systemd/lharvestd.sysusers "$src"/systemd/sysusers.conf \
		"$src"/systemd/lharvestd.conf "$src"/systemd/sysusers.d/lharvestd.conf; do
		if [ -f "$f" ]; then sysusers=$f; break; fi
	done
fi
if [ -z "$sysusers" ] || [ ! -f "$sysusers" ]; then
	echo "build-srpm.sh: no sysusers.d file in $src/systemd/" >&2
	exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
top=$(mktemp -d "$out/rpmbuild.XXXXXX")
trap 'rm -rf "$top"' EXIT
mkdir -p "$top/SOURCES" "$top/SPECS" "$top/SRPMS"
tarball=$top/SOURCES/$name.tar.gz

# The source tarball, lharvestd-VERSION/ inside, reproducible: sorted,
# owned by root, dated by the last commit.
if [ -d "$src/.git" ] && command -v git >/dev/null; then
	if [ $head -eq 1 ]; then
		git -C "$src" archive --format=tar --prefix="$name/" HEAD |
			gzip -n9 >"$tarball"
	else
		mtime=@$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)
		(cd "$src" && git ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do
				# Tracked files deleted in the working tree are left out.
				if [ -e "$f" ]; then printf '%s\0' "$f"; fi
			done |
			tar --no-recursion --sort=name --owner=0 --group=0 \
				--numeric-owner --mtime="$mtime" --transform="s,^,$name/," \
				--null -T - -cf -) | gzip -n9 >"$tarball"
	fi
else
	# Not a git checkout (an unpacked tarball): everything but build trees.
	(cd "$src" && tar --sort=name --owner=0 --group=0 --numeric-owner \
		--exclude='./build*' --exclude='__pycache__' --exclude='*.o' \
		--transform="s,^\.,$name," -cf - .) | gzip -n9 >"$tarball"
fi
cp "$sysusers" "$top/SOURCES/lharvestd.sysusers"
cp "$spec" "$top/SPECS/"

# -bs only packs the spec and the sources: the build dependencies are the
# build host's business (and Debian's rpm database knows none of them).
rpmbuild -bs --nodeps --define "_topdir $top" "$top/SPECS/lharvestd.spec" >"$top/rpmbuild.log" 2>&1 ||
	{ cat "$top/rpmbuild.log" >&2; exit 1; }
srpm=$(ls "$top"/SRPMS/*.src.rpm)
cp "$tarball" "$srpm" "$out/"
srpm=$out/$(basename "$srpm")
echo "build-srpm.sh: $srpm"

[ $lint -eq 1 ] || exit 0
command -v rpmlint >/dev/null || { echo "build-srpm.sh: no rpmlint (Debian: apt-get install rpmlint)" >&2; exit 1; }
# rpmlint exits 64 when it finds errors, 66 over the badness threshold,
# 0 with warnings only.
status=0
rpmlint -c "$src/packaging/rpm/rpmlint.toml" "$spec" "$srpm" >"$out/rpmlint.log" 2>&1 || status=$?
cat "$out/rpmlint.log"
if [ $status -ne 0 ]; then
	echo "build-srpm.sh: rpmlint found errors (exit $status)" >&2
	exit 1
fi
