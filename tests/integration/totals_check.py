#!/usr/bin/env python3
"""totals_check: the aggregator's counters file (state_dir/totals, as
tests/tools/lhtotals prints it) against the simulator's truth.

    totals_check.py --baseline B.json --final F.json --hosts HOSTS --totals T.json

Every (host, filesystem) row must equal exactly, in each of the six
counters and each metadata op, the truth of the host's NIDs (those HOSTS
maps to it) between B.json (truth-latest.json when the gatherers took
their baseline) and F.json (after the simulator stopped and everything
was delivered); a row for every such (host, fs) that moved, and no other;
each filesystem's totals the truth of all its NIDs.  Nothing lost,
nothing counted twice, across the aggregator's restarts.

Prints "ok - NAME" / "FAIL - NAME" lines (details indented by two
spaces) like aggregator_check.py; exits 0 if nothing failed, 1 otherwise.
Standard library only."""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aggtruth import MDOPS, host_of, load_hosts  # noqa: E402

FIELDS = ("read_bytes", "write_bytes", "read_ops", "write_ops", "oss_ops", "mds_ops")


def counts(r):
    """The six counters and the ops of a truth row, as one dict."""
    out = {f: r[f] for f in FIELDS}
    for op in MDOPS:
        out["op_" + op] = r.get("mdt_ops", {}).get(op, 0)
    return out


def truth(baseline, final, by_ip, by_nid):
    """{(host, fs): counts}, {fs: counts}: final minus baseline."""
    rows, fss = {}, {}
    for path, sign in ((final, 1), (baseline, -1)):
        with open(path) as f:
            for r in json.load(f)["rows"]:
                c = counts(r)
                keys = [(fss, r["fs"])]
                h = host_of(r["nid"], by_ip, by_nid)
                if h is not None:
                    keys.append((rows, (h, r["fs"])))
                for d, k in keys:
                    acc = d.setdefault(k, {})
                    for name, v in c.items():
                        acc[name] = acc.get(name, 0) + sign * v
    moved = {k: v for k, v in rows.items() if any(v.values())}
    return moved, fss


def got_counts(r):
    out = {f: r[f] for f in FIELDS}
    for op in MDOPS:
        out["op_" + op] = r["ops"].get(op, 0)
    return out


def diff(label, want, got):
    return ["%s %s: counted %d, truth %d (%+d)" % (label, k, got[k], want[k], got[k] - want[k])
            for k in want if got[k] != want[k]]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--final", required=True)
    ap.add_argument("--hosts", required=True)
    ap.add_argument("--totals", required=True, help="lhtotals' output")
    a = ap.parse_args(argv)
    lines, failed = [], 0

    def check(name, bad):
        nonlocal failed
        if bad:
            failed += 1
            lines.append("FAIL - " + name)
            lines.extend("  " + b for b in bad[:20])
        else:
            lines.append("ok - " + name)

    by_ip, by_nid = load_hosts(a.hosts)
    want_rows, want_fs = truth(a.baseline, a.final, by_ip, by_nid)
    with open(a.totals) as f:
        t = json.load(f)
    got_rows = {}
    bad = []
    for r in t["rows"]:
        k = (r["host"], r["fs"])
        if k in got_rows:
            bad.append("%s %s: two rows" % k)
        got_rows[k] = got_counts(r)
    for k in sorted(set(want_rows) | set(got_rows)):
        if k not in got_rows:
            bad.append("%s %s: no row (truth %s)" % (k[0], k[1], want_rows[k]))
        elif k not in want_rows:
            bad.append("%s %s: a row the truth has not" % k)
        else:
            bad += diff("%s %s" % k, want_rows[k], got_rows[k])
    nbytes = sum(v["read_bytes"] + v["write_bytes"] for v in want_rows.values())
    check("the counters of %d (host, filesystem) rows equal the truth exactly "
          "(%d bytes, six counters and %d metadata ops each)" % (len(want_rows), nbytes, len(MDOPS)), bad)
    bad = []
    for fs in sorted(set(want_fs) | set(t["fs"])):
        if fs not in t["fs"]:
            bad.append("fs %s: no totals" % fs)
        elif fs not in want_fs:
            bad.append("fs %s: totals the truth has not" % fs)
        else:
            bad += diff("fs " + fs, want_fs[fs], got_counts(t["fs"][fs]))
    check("the totals of %d filesystems equal the truth exactly" % len(want_fs), bad)
    print("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
