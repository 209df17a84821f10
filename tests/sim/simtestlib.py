"""simtestlib: what the simulator's tests (test_lustresim*.py) share: an
independent reader of the files, written from the spec and not from lsim's
code, the scenarios and a temporary directory per test."""

import json
import os
import re
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from lsim import formats, fsio, scenario  # noqa: E402,F401 (formats, fsio: for the tests)
from lsim.engine import Sim  # noqa: E402
from lsim.versions import SUPPORTED, get_profile  # noqa: E402,F401 (for the tests)

TESTDATA = os.path.join(HERE, "testdata")
SCENARIOS = os.path.join(HERE, "scenarios")
SIM = os.path.join(HERE, "lustresim.py")
NS = 10 ** 9
FIELDS = ("read_bytes", "write_bytes", "read_ops", "write_ops", "oss_ops", "mds_ops")
MDT_OPS = ("open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename",
           "getattr", "setattr", "getxattr", "setxattr", "statfs", "sync", "punch",
           "migrate", "fallocate")


# ---------------------------------------------------------------- helpers
# An independent reader, written from the spec, not from lsim's code.

HEADER_RE = re.compile(r"^(snapshot_time|start_time|elapsed_time) {12,}(\d+)\.(\d+) (secs\.usecs|secs\.nsecs)$")


def parse(text):
    header, lines = {}, []
    for raw in text.split("\n")[:-1]:
        m = HEADER_RE.match(raw)
        if m:
            frac = int(m.group(3)) * (1000 if m.group(4) == "secs.usecs" else 1)
            header[m.group(1)] = int(m.group(2)) * NS + frac
            continue
        tok = raw.split()
        assert tok[2] == "samples" and tok[3][0] == "[" and tok[3][-1] == "]", raw
        assert len(tok) in (4, 7, 8), raw
        lines.append((tok[0], int(tok[1]), tok[3][1:-1], [int(x) for x in tok[4:]], raw))
    return header, lines


OST_SKIP = {"ping", "read", "write", "preprw", "commitrw"}
MDT_SKIP = {"ping", "read", "write", "samedir_rename", "crossdir_rename",
            "parallel_rename_file", "parallel_rename_dir", "rename_trylocks"}


def lharvestd_values(ttype, lines):
    v = dict.fromkeys(FIELDS, 0)
    seen = set()
    for name, count, _unit, vals, _ in lines:
        if name in seen:
            continue
        seen.add(name)
        if name in ("read_bytes", "write_bytes"):
            d = name[:-6]
            v[name] += vals[2]
            v[d + "_ops"] += count
            if ttype == "ost":
                v["oss_ops"] += count
        elif ttype == "ost" and name not in OST_SKIP:
            v["oss_ops"] += count
        elif ttype == "mdt" and name not in MDT_SKIP:
            v["mds_ops"] += count
    return v


def iter_exports(server_root):
    """(ttype, target, nid, export_dir) for every NID dir in a server tree."""
    for base in ("proc/fs/lustre", "sys/kernel/debug/lustre"):
        for typ, ttype in (("obdfilter", "ost"), ("mdt", "mdt")):
            tdir = os.path.join(server_root, base, typ)
            if not os.path.isdir(tdir):
                continue
            for tgt in sorted(os.listdir(tdir)):
                edir = os.path.join(tdir, tgt, "exports")
                if not os.path.isdir(edir):
                    continue
                for nid in sorted(os.listdir(edir)):
                    d = os.path.join(edir, nid)
                    if os.path.isdir(d):
                        yield ttype, tgt, nid, d


def read(path):
    with open(path) as f:
        return f.read()


def recompute_expected(server_root):
    rows = {}
    for ttype, tgt, nid, d in iter_exports(server_root):
        uuids = read(os.path.join(d, "uuid")).split()
        if nid == "0@lo" or any(u.endswith("_UUID") for u in uuids):
            continue
        _, lines = parse(read(os.path.join(d, "stats")))
        fs = tgt.rsplit("-", 1)[0]
        acc = rows.setdefault((fs, nid), dict.fromkeys(FIELDS, 0))
        for k, x in lharvestd_values(ttype, lines).items():
            acc[k] += x
    return rows


MDT_STATS_RE = re.compile(r"^[^/]+/(?:proc/fs/lustre|sys/kernel/debug/lustre)/mdt/"
                          r"([^/]+)-MDT[0-9a-f]{4}/exports/([^/]+)/stats$")


def mdt_op_counts(snap):
    """{(fs, nid): {op: samples}} from a snapshot(): the MDT_OPS lines of the
    MDT client exports (not 0@lo, not a *_UUID uuid), first line of a name
    only, summed over the MDTs of the fs."""
    out = {}
    for path, text in snap.items():
        m = MDT_STATS_RE.match(path)
        if not m:
            continue
        uuids = snap[path[:-len("stats")] + "uuid"].split()
        if m.group(2) == "0@lo" or any(u.endswith("_UUID") for u in uuids):
            continue
        acc = out.setdefault((m.group(1), m.group(2)), {})
        seen = set()
        for name, count, _unit, _vals, _ in parse(text)[1]:
            if name in seen:
                continue
            seen.add(name)
            if name in MDT_OPS:
                acc[name] = acc.get(name, 0) + count
    return out


def load_expected(server_root):
    rows = {}
    for line in read(os.path.join(server_root, "expected-once.jsonl")).splitlines():
        r = json.loads(line)
        rows[(r["fs"], r["nid"])] = {k: r[k] for k in FIELDS}
    return rows


def snapshot(root, servers):
    """{relative path: content} of every regular file in the server trees."""
    out = {}
    for s in servers:
        for dp, _dn, fns in os.walk(os.path.join(root, s)):
            for fn in fns:
                p = os.path.join(dp, fn)
                out[os.path.relpath(p, root)] = read(p)
    return out


def temp_leftovers(root):
    bad = []
    for dp, dns, fns in os.walk(root):
        if STATE in dp.split(os.sep):
            continue
        bad += [os.path.join(dp, n) for n in dns + fns if n.startswith(".") and n != STATE]
    return bad


STATE = ".lustresim"


def load_scenario(name, **over):
    with open(os.path.join(SCENARIOS, name)) as f:
        return scenario.normalise(json.load(f), over)


def new_sim(root, scn):
    os.makedirs(root, exist_ok=True)
    return Sim(root, scn)


def truth_latest(root):
    d = json.loads(read(os.path.join(root, "truth-latest.json")))
    return d, {(r["fs"], r["nid"]): r for r in d["rows"]}


class TmpDirCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="lustresim-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
