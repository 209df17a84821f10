#!/usr/bin/env bash
# --once on the tree-2.15 fixture: what a 2.15 OSS+MDS shows, with the
# 0@lo and server-peer exports left out and the stale NID kept.
set -euo pipefail
bin=$1
src=${LH_SRCDIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/g.conf" <<EOC
lustre_root = "$src/tests/fixtures/lustre/tree-2.15"
EOC
"$bin" --once -f "$tmp/g.conf" >"$tmp/out" 2>"$tmp/err"
sort "$tmp/out" >"$tmp/got"
# Expected values added up by hand from the fixture files: oss_ops of
# 10.1.2.130 = setattr 6 + punch 22 + sync 33 + statfs 3 + set_info 6
# + read 98824 + write 185640; mds_ops of 10.1.2.3 = every MDT counter
# but samedir_rename and crossdir_rename.
sort >"$tmp/want" <<'EOW'
{"fs":"scratch","nid":"10.1.2.130@o2ib","read_bytes":352624746496,"write_bytes":760541192192,"read_ops":98824,"write_ops":185640,"oss_ops":284534,"mds_ops":0}
{"fs":"scratch","nid":"10.1.2.17@o2ib","read_bytes":0,"write_bytes":0,"read_ops":0,"write_ops":0,"oss_ops":0,"mds_ops":0}
{"fs":"scratch","nid":"10.1.2.3@o2ib","read_bytes":176312373248,"write_bytes":380270596096,"read_ops":49412,"write_ops":92820,"oss_ops":142302,"mds_ops":136736}
{"fs":"scratch","nid":"192.168.0.4@tcp102","read_bytes":0,"write_bytes":0,"read_ops":0,"write_ops":0,"oss_ops":3,"mds_ops":0}
EOW
cat "$tmp/got"
cat "$tmp/err" >&2
diff -u "$tmp/want" "$tmp/got"

# A filesystem filter that matches nothing: exit 0, no output, one line.
cat >"$tmp/none.conf" <<EOC
lustre_root = "$src/tests/fixtures/lustre/tree-2.15"
filesystems = {"other"}
EOC
"$bin" --once -f "$tmp/none.conf" >"$tmp/out2" 2>"$tmp/err2"
[ ! -s "$tmp/out2" ] || { echo "output for an unknown fs"; exit 1; }
[ "$(wc -l <"$tmp/err2")" -eq 1 ] || { cat "$tmp/err2"; exit 1; }
echo "2 passed, 0 failed"
