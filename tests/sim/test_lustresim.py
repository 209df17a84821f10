"""Tests for the Lustre /proc simulator (tests/sim/lustresim.py).

Run from the repository root:
    python3 -m unittest discover -s tests/sim -p 'test_*.py'

The checks that matter most for lharvestd:
* every stats block in the fixtures re-renders byte-for-byte with lsim's
  formatter (counter set/order/units/fields from the version profile);
* generated trees obey each version's counter table, header and layout;
* expected-once.jsonl equals an independent recomputation from the files;
* the ground truth is monotonic and consistent with the files across
  clear / reset / failover / idle / return / appear / unmount / mount;
* writes are atomic and leave no temp files.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from lsim import formats, fsio, scenario  # noqa: E402
from lsim.engine import Sim  # noqa: E402
from lsim.versions import SUPPORTED, get_profile  # noqa: E402

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


# ---------------------------------------------------------------- formats

FIXTURES = [
    # (file, version, ttype, full_header)
    ("2.5/ost-export-stats.txt", "2.5", "ost", True),
    ("2.5/mdt-export-stats.txt", "2.5", "mdt", True),
    ("2.7/ost-export-stats.txt", "2.7", "ost", True),
    ("2.7/mdt-export-stats.txt", "2.7", "mdt", True),
    ("2.10/ost-export-stats.txt", "2.10", "ost", True),
    ("2.10/ost-export-stats-mds-peer.txt", "2.10", "ost", True),
    ("2.10/mdt-export-stats.txt", "2.10", "mdt", True),
    ("2.10/mdt-export-stats-header-only.txt", "2.10", "mdt", True),
    ("2.12/ost-export-stats.txt", "2.12", "ost", True),
    ("2.12/mdt-export-stats.txt", "2.12", "mdt", True),
    ("2.14/ost-export-stats.txt", "2.14", "ost", True),
    ("2.14/ost-export-stats-sumsq-wrapped.txt", "2.14", "ost", True),
    ("2.14/mdt-export-stats.txt", "2.14", "mdt", True),
    ("2.15/ost-export-stats.txt", "2.15", "ost", True),
    ("2.15/mdt-export-stats.txt", "2.15", "mdt", True),
    ("2.15/ost-export-stats-2.15.0.txt", "2.15.0", "ost", True),
    ("2.16/ost-export-stats.txt", "2.16", "ost", True),
    ("2.16/mdt-export-stats.txt", "2.16", "mdt", True),
    ("2.16/ost-export-stats-no-header.txt", "2.16", "ost", False),
]


def rerender(text, version, ttype, full_header):
    """Values from the fixture, everything else from lsim's profile."""
    prof = get_profile(version)
    header, lines = formats.parse_stats(text)
    counters = formats.counters_from_lines(prof, ttype, lines)
    start = header.get("start_time", (0, None))[0]
    return formats.render_stats(prof, ttype, counters, header["snapshot_time"][0], start, full_header)


class FormatFixtureTests(unittest.TestCase):
    def test_fixture_files_rerender_byte_for_byte(self):
        for name, version, ttype, full in FIXTURES:
            with self.subTest(fixture=name):
                text = read(os.path.join(TESTDATA, name))
                self.assertEqual(rerender(text, version, ttype, full), text)

    def test_lctl_multi_block_fixtures_rerender(self):
        # 83 blocks incl. 63 real DDN 2.14 captures, peers and 0@lo inline form
        total = 0
        for version in ("2.12", "2.14", "2.15", "2.16"):
            text = read(os.path.join(TESTDATA, version, "lctl-get_param-exports-stats.txt"))
            blocks = []
            for line in text.splitlines(keepends=True):
                m = re.match(r"^(obdfilter|mdt)\.[^=]*\.stats=(.*\n?)$", line)
                if m:
                    blocks.append([m.group(1), m.group(2) if m.group(2).strip() else ""])
                else:
                    blocks[-1][1] += line
            for typ, body in blocks:
                with self.subTest(version=version, block=body[:60]):
                    tt = "ost" if typ == "obdfilter" else "mdt"
                    self.assertEqual(rerender(body, version, tt, True), body)
            total += len(blocks)
        self.assertGreaterEqual(total, 80)

    def test_usecs_are_unpadded_and_nsecs_padded(self):
        p25, p10 = get_profile("2.5"), get_profile("2.10")
        t = 1497639750 * NS + 12141 * 1000          # .012141 s
        self.assertEqual(formats.render_header(p25, t), "snapshot_time             1497639750.12141 secs.usecs\n")
        self.assertEqual(formats.render_header(p10, t), "snapshot_time             1497639750.012141000 secs.nsecs\n")

    def test_sumsq_wraps_and_zero_counters_are_omitted(self):
        p = get_profile("2.15")
        ctr = {"read_bytes": [3, 4096, 4194304, 3 * 4194304, 3 * 4194304 ** 2 + (1 << 64)],
               "write_bytes": [0, 0, 0, 0, 0]}
        out = formats.render_counters(p.tables["ost"], ctr)
        self.assertEqual(out, "read_bytes                3 samples [bytes] 4096 4194304 12582912 52776558133248\n")

    def test_mono_header_2_15_0(self):
        p = get_profile("2.15.0")
        self.assertEqual(formats.render_header(p, 3456789 * NS + 123456789, 555),
                         "snapshot_time             3456789.123456789 secs.nsecs\n"
                         "start_time                0.000000000 secs.nsecs\n"
                         "elapsed_time              3456789.123456789 secs.nsecs\n")

    def test_version_strings(self):
        self.assertEqual(get_profile("2.15.1").key, "2.15.0")
        self.assertEqual(get_profile("2.15.4").key, "2.15")
        self.assertEqual(get_profile("2.15").full, "2.15.4")
        self.assertEqual(get_profile("2.9.0").key, "2.7")
        self.assertEqual(get_profile("2.12.9_12.llnl").full, "2.12.9_12.llnl")
        for bad in ("3.0", "2.4", "x"):
            with self.assertRaises(ValueError):
                get_profile(bad)


# ---------------------------------------------------------------- versions

class VersionTreeTests(TmpDirCase):
    """Generate a tree per version and check it against the spec."""

    def build(self, version, **kw):
        root = os.path.join(self.tmp, version + ("-nh" if kw.get("stats_header") == 0 else ""))
        scn = scenario.normalise(scenario.tree_scenario(
            version=version, servers=2, osts_per_server=2, clients=24, seed=3,
            start_time=1700000000.25, history=86400, **kw))
        sim = new_sim(root, scn)
        sim.run_step()
        return root, sim

    def check_tree(self, version, root, sim, full_header=True):
        prof = sim.profile
        names_seen = set()
        dup_seen = False
        for srv in sim.servers:
            sroot = os.path.join(root, srv)
            for ttype, tgt, nid, d in iter_exports(sroot):
                table = prof.tables[ttype]
                text = read(os.path.join(d, "stats"))
                header, lines = parse(text)
                # header form
                hnames = [ln.split()[0] for ln in text.splitlines()[:3] if ln.split()[0].endswith("_time")]
                if prof.header in ("nsecs3", "mono3") and full_header:
                    self.assertEqual(hnames, ["snapshot_time", "start_time", "elapsed_time"])
                    self.assertEqual(header["elapsed_time"], header["snapshot_time"] - header["start_time"])
                else:
                    self.assertEqual(hnames, ["snapshot_time"])
                unitword = "secs.usecs" if prof.header == "usecs" else "secs.nsecs"
                self.assertIn(unitword, text.splitlines()[0])
                if prof.header == "mono3":
                    self.assertEqual(header["start_time"], 0)
                    self.assertLess(header["snapshot_time"], 10 ** 8 * NS)   # time since boot
                # counter lines: known names, table order, units, field counts
                by_name = {}
                for c in table:
                    by_name.setdefault(c.name, []).append(c)
                occ, last_idx = {}, -1
                for name, count, unit, vals, raw in lines:
                    self.assertIn(name, by_name, raw)
                    i = occ.get(name, 0)
                    occ[name] = i + 1
                    cdef = by_name[name][i]
                    idx = table.index(cdef)
                    self.assertGreater(idx, last_idx, "order: " + raw)
                    last_idx = idx
                    self.assertEqual(unit, cdef.unit, raw)
                    self.assertEqual(len(vals), {"C": 0, "MMS": 3, "FULL": 4}[cdef.flags], raw)
                    self.assertTrue(raw.startswith("%-25s " % name), raw)
                    self.assertGreater(count, 0)
                    if vals:
                        mn, mx, s = vals[:3]
                        self.assertLessEqual(mn, mx, raw)
                        self.assertLessEqual(count * mn, s, raw)
                        self.assertLessEqual(s, count * mx, raw)
                    if len(vals) == 4:
                        self.assertLess(vals[3], 1 << 64)
                    names_seen.add((ttype, name))
                if occ.get("statfs", 0) > 1:
                    dup_seen = True
                cnt = {n: c for n, c, *_ in lines}
                if ttype == "ost" and prof.v >= (2, 14):
                    for d_ in ("read", "write"):
                        self.assertEqual(cnt.get(d_), cnt.get(d_ + "_bytes"))
                if ttype == "ost" and "preprw" in cnt:
                    self.assertEqual(cnt["preprw"], cnt.get("read_bytes", 0) + cnt.get("write_bytes", 0))
                if "rename" in cnt:
                    self.assertEqual(cnt["rename"], cnt.get("samedir_rename", 0) + cnt.get("crossdir_rename", 0))
                # uuid classes
                uuids = read(os.path.join(d, "uuid")).splitlines()
                for u in uuids:
                    self.assertTrue(re.match(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", u)
                                    or re.match(r"^\w+-(MDT|OST)[0-9a-f]{4}-(mdtlov|lwp-(MDT|OST)[0-9a-f]{4})_UUID$", u), u)
            self.assertEqual(load_expected(sroot), recompute_expected(sroot))
        return names_seen, dup_seen

    def test_every_version(self):
        for version in SUPPORTED:
            with self.subTest(version=version):
                root, sim = self.build(version)
                names, dup = self.check_tree(version, root, sim)
                v = sim.profile.v
                self.assertEqual(("mdt", "read_bytes") in names, v >= (2, 11))
                self.assertEqual(("mdt", "parallel_rename_file") in names, v >= (2, 16))
                self.assertEqual(("mdt", "rename_trylocks") in names, v >= (2, 17))
                self.assertEqual(("ost", "preprw") in names, v <= (2, 11))
                self.assertEqual(("ost", "read") in names, v >= (2, 14))
                self.assertEqual(dup, (2, 6) <= v <= (2, 11), "statfs twice in one file")
                if v in ((2, 12), (2, 13)):
                    self.assertEqual(sim.profile.keys["mdt"]["read_bytes"].unit, "reqs")
                nidnames = {nid for s in sim.servers for _, _, nid, _ in iter_exports(os.path.join(root, s))}
                self.assertEqual(any(":" in n for n in nidnames), v >= (2, 16))   # IPv6 NIDs
                self.assertTrue(any(n.endswith("@o2ib2") for n in nidnames))
                self.assertTrue(any(n.endswith("@tcp102") for n in nidnames))
                self.assertTrue(any(n.endswith("@gni") for n in nidnames))
                self.check_layout(root, sim)

    def test_no_stats_header_2_16(self):
        root, sim = self.build("2.16", stats_header=0)
        self.check_tree("2.16", root, sim, full_header=False)
        self.assertEqual(read(os.path.join(root, "oss1/sys/fs/lustre/enable_stats_header")), "0\n")

    def check_layout(self, root, sim):
        prof = sim.profile
        for srv in sim.servers:
            sroot = os.path.join(root, srv)
            if prof.v >= (2, 10):
                self.assertEqual(read(os.path.join(sroot, "sys/fs/lustre/version")), prof.full + "\n")
            else:
                self.assertTrue(read(os.path.join(sroot, "proc/fs/lustre/version")).startswith("lustre: 2."))
        for t in sim.targets.values():
            typ = "obdfilter" if t.ttype == "ost" else "mdt"
            proc_t = os.path.join(root, t.server, "proc/fs/lustre", typ, t.name)
            dbg_t = os.path.join(root, t.server, "sys/kernel/debug/lustre", typ, t.name)
            self.assertTrue(os.path.isdir(proc_t))      # job_stats stays in /proc
            edir = os.path.join(dbg_t if prof.v >= (2, 17) else proc_t, "exports")
            self.assertTrue(os.path.isdir(edir))
            self.assertFalse(os.path.exists(os.path.join(proc_t if prof.v >= (2, 17) else dbg_t, "exports")))
            clear = os.path.join(edir, "clear")
            self.assertTrue(os.path.isfile(clear))
            self.assertEqual(os.path.getsize(clear), 0)
            ne = (os.path.join(root, t.server, "sys/fs/lustre", typ, t.name, "num_exports")
                  if prof.v >= (2, 13) else os.path.join(proc_t, "num_exports"))
            live = sum(len(read(os.path.join(edir, n, "uuid")).splitlines())
                       for n in os.listdir(edir) if n != "clear")
            self.assertEqual(read(ne), "%d\n" % live)


# ---------------------------------------------------------------- scenario

class ScenarioEventTests(TmpDirCase):
    """Step the all-events scenario one step at a time and check each effect."""

    @classmethod
    def setUpClass(cls):
        cls.tmpc = tempfile.mkdtemp(prefix="lustresim-events-")
        cls.root = os.path.join(cls.tmpc, "r")
        scn = load_scenario("small-all-events.json")
        cls.sim = sim = new_sim(cls.root, scn)
        cls.snaps, cls.truth, cls.expected, cls.T = [], [], [], []
        cls.leftovers, cls.recompute_ok = [], []
        for k in range(scn["steps"]):
            sim.run_step()
            sim.save()
            cls.snaps.append(snapshot(cls.root, sim.servers))
            cls.truth.append(truth_latest(cls.root)[1])
            cls.T.append(sim.last_T)
            exp = {s: load_expected(os.path.join(cls.root, s)) for s in sim.servers}
            cls.expected.append(exp)
            cls.recompute_ok.append(all(exp[s] == recompute_expected(os.path.join(cls.root, s))
                                        for s in sim.servers))
            cls.leftovers += temp_leftovers(cls.root)
        cls.events = [json.loads(x) for x in read(os.path.join(cls.root, "events.jsonl")).splitlines()]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmpc, ignore_errors=True)

    # helpers
    def stats(self, k, server, tgt, nid):
        typ = "obdfilter" if "-OST" in tgt else "mdt"
        p = "%s/proc/fs/lustre/%s/%s/exports/%s/stats" % (server, typ, tgt, nid)
        t = self.snaps[k].get(p)
        return None if t is None else parse(t)

    def uuid(self, k, server, tgt, nid):
        typ = "obdfilter" if "-OST" in tgt else "mdt"
        t = self.snaps[k].get("%s/proc/fs/lustre/%s/%s/exports/%s/uuid" % (server, typ, tgt, nid))
        return None if t is None else t.splitlines()

    def counts(self, k, server, tgt, nid):
        return {n: (c, v) for n, c, _, v, _ in self.stats(k, server, tgt, nid)[1]}

    def test_expected_once_matches_files_every_step(self):
        self.assertEqual(self.recompute_ok, [True] * len(self.snaps))

    def test_no_temp_files(self):
        self.assertEqual(self.leftovers, [])
        self.assertEqual(os.listdir(os.path.join(self.root, STATE, "trash")), [])

    def test_truth_monotonic_and_covers_current_view(self):
        for k in range(1, len(self.truth)):
            for key, row in self.truth[k].items():
                prev = self.truth[k - 1].get(key)
                if prev:
                    for f in FIELDS:
                        self.assertGreaterEqual(row[f], prev[f], (k, key, f))
        for k, exp in enumerate(self.expected):
            tot = {}
            for rows in exp.values():
                for key, r in rows.items():
                    t = tot.setdefault(key, dict.fromkeys(FIELDS, 0))
                    for f in FIELDS:
                        t[f] += r[f]
            for key, t in tot.items():
                if key not in self.truth[k]:
                    # only a former server peer left stale (logged by the event)
                    self.assertIn(key[1], self.stale_peers(k), (k, key))
                    continue
                for f in FIELDS:
                    self.assertLessEqual(t[f], self.truth[k][key][f], (k, key, f))

    def stale_peers(self, k):
        return {sp.split()[1] for e in self.events if e["step"] <= k
                for sp in e["result"].get("stale_peers", [])}

    def test_truth_deltas_equal_file_deltas_between_quiet_steps(self):
        event_steps = {e["step"] for e in self.events}
        checked = 0
        for k in range(1, len(self.truth)):
            if k in event_steps:
                continue
            for key, row in self.truth[k].items():
                if key not in self.truth[k - 1]:
                    continue
                for f in FIELDS:
                    now = sum(rows.get(key, {}).get(f, 0) for rows in self.expected[k].values())
                    before = sum(rows.get(key, {}).get(f, 0) for rows in self.expected[k - 1].values())
                    self.assertEqual(now - before, row[f] - self.truth[k - 1][key][f], (k, key, f))
                    checked += 1
        self.assertGreater(checked, 500)

    def test_mdt_ops_deltas_equal_file_deltas_between_quiet_steps(self):
        event_steps = {e["step"] for e in self.events}
        files = [mdt_op_counts(snap) for snap in self.snaps]
        checked = moved = 0
        for k in range(1, len(self.truth)):
            if k in event_steps:
                continue
            for key, row in self.truth[k].items():
                if key not in self.truth[k - 1]:
                    continue
                prev = self.truth[k - 1][key]["mdt_ops"]
                for op in MDT_OPS:
                    d_file = files[k].get(key, {}).get(op, 0) - files[k - 1].get(key, {}).get(op, 0)
                    d_truth = row["mdt_ops"].get(op, 0) - prev.get(op, 0)
                    self.assertEqual(d_file, d_truth, (k, key, op))
                    checked += 1
                    moved += d_truth > 0
        self.assertGreater(checked, 1500)
        self.assertGreater(moved, 200)

    def test_mdt_ops_within_mds_ops(self):
        rows = [json.loads(x) for x in read(os.path.join(self.root, "truth.jsonl")).splitlines()]
        self.assertEqual(len(rows), sum(len(t) for t in self.truth))
        for r in rows + [r for t in self.truth for r in t.values()]:
            ops = r["mdt_ops"]
            self.assertEqual(list(ops), [op for op in MDT_OPS if op in ops], r)     # in order
            self.assertTrue(all(isinstance(v, int) and v > 0 for v in ops.values()), r)
            self.assertLessEqual(sum(ops.values()), r["mds_ops"], r)
        for k in range(1, len(self.truth)):
            for key, row in self.truth[k].items():
                prev = self.truth[k - 1].get(key)
                for op, v in (prev["mdt_ops"].items() if prev else ()):
                    self.assertGreaterEqual(row["mdt_ops"].get(op, 0), v, (k, key, op))
        self.assertEqual(self.truth[0][("scratch", "12@gni")]["mdt_ops"], {})         # idle profile
        self.assertIn("rename", self.truth[5][("home", "10.1.0.2@o2ib")]["mdt_ops"])  # meta profile

    def test_fake_clock_snapshot_advances_by_period(self):
        for k in (1, 2, 5):
            for path, text in self.snaps[k].items():
                if path.endswith("/stats") and path in self.snaps[k - 1]:
                    a = parse(self.snaps[k - 1][path])[0]["snapshot_time"]
                    b = parse(text)[0]["snapshot_time"]
                    self.assertEqual(b - a, 5 * NS, path)

    def test_rates_follow_the_script(self):
        # 10.1.0.2@o2ib reads 200 MB/s striped over 2 of the 4 scratch OSTs
        osts = [("oss1", "scratch-OST0000"), ("oss1", "scratch-OST0001"),
                ("oss2", "scratch-OST0002"), ("oss2", "scratch-OST0003")]
        deltas = []
        for srv, tgt in osts:
            a = self.counts(1, srv, tgt, "10.1.0.2@o2ib").get("read_bytes", (0, [0, 0, 0]))[1]
            b = self.counts(2, srv, tgt, "10.1.0.2@o2ib").get("read_bytes", (0, [0, 0, 0]))[1]
            deltas.append(b[2] - a[2] if a else b[2])
        busy = [d for d in deltas if d]
        self.assertEqual(len(busy), 2)
        for d in busy:
            self.assertAlmostEqual(d / 5.0, 1e8, delta=4 * 2 ** 20 / 5.0 + 1)

    def test_clear(self):
        # step 3: clear scratch-OST0000 on oss1
        T = self.T[3]
        self.assertIsNotNone(self.stats(2, "oss1", "scratch-OST0000", "10.1.0.9@o2ib"))
        self.assertEqual(self.uuid(2, "oss1", "scratch-OST0000", "10.1.0.9@o2ib"), [])
        self.assertIsNone(self.stats(3, "oss1", "scratch-OST0000", "10.1.0.9@o2ib"))     # stale: removed
        self.assertIsNotNone(self.stats(3, "oss1", "scratch-OST0001", "10.1.0.9@o2ib"))  # other OST: kept
        for nid in ("10.1.0.1@o2ib", "10.0.0.1@o2ib"):                                   # live: zeroed
            self.assertEqual(self.stats(3, "oss1", "scratch-OST0000", nid)[0]["start_time"], T)
        w2 = self.counts(2, "oss1", "scratch-OST0000", "10.1.0.1@o2ib")["write_bytes"][0]
        w3 = self.counts(3, "oss1", "scratch-OST0000", "10.1.0.1@o2ib").get("write_bytes", (0,))[0]
        w4 = self.counts(4, "oss1", "scratch-OST0000", "10.1.0.1@o2ib")["write_bytes"][0]
        self.assertLess(w3, w2)
        self.assertLess(w4, w2)
        self.assertEqual(self.stats(4, "oss1", "scratch-OST0000", "10.1.0.1@o2ib")[0]["start_time"], T)
        self.assertLess(self.stats(3, "oss1", "scratch-OST0001", "10.1.0.1@o2ib")[0]["start_time"], T)
        # step 22: clear scratch-MDT0000 removes the stale NID there too
        self.assertIsNotNone(self.stats(21, "mds1", "scratch-MDT0000", "10.1.0.9@o2ib"))
        self.assertIsNone(self.stats(22, "mds1", "scratch-MDT0000", "10.1.0.9@o2ib"))

    def test_reset_export(self):
        T = self.T[6]
        self.assertEqual(self.stats(6, "mds1", "scratch-MDT0000", "10.1.0.1@o2ib")[0]["start_time"], T)
        self.assertLess(self.stats(6, "mds1", "scratch-MDT0000", "10.1.0.2@o2ib")[0]["start_time"], T)
        self.assertLess(self.stats(6, "mds1", "home-MDT0000", "10.2.0.1@o2ib2")[0]["start_time"], T)

    def test_client_appear(self):
        for srv, tgt in (("oss1", "scratch-OST0000"), ("mds1", "scratch-MDT0000"), ("oss2", "home-OST0001")):
            self.assertIsNone(self.stats(3, srv, tgt, "10.1.0.10@o2ib"))
            h, _ = self.stats(4, srv, tgt, "10.1.0.10@o2ib")
            self.assertEqual(h["start_time"], self.T[4])
            self.assertEqual(len(self.uuid(4, srv, tgt, "10.1.0.10@o2ib")), 1)
        self.assertNotIn(("scratch", "10.1.0.10@o2ib"), self.truth[3])
        self.assertGreater(self.truth[6][("scratch", "10.1.0.10@o2ib")]["read_bytes"], 0)
        # a NID unknown to the scenario, with a profile, on scratch only
        self.assertIsNotNone(self.stats(20, "oss1", "scratch-OST0000", "10.1.0.12@o2ib"))
        self.assertIsNone(self.stats(20, "oss1", "home-OST0000", "10.1.0.12@o2ib"))

    def test_client_idle_and_return(self):
        nid = "10.2.0.1@o2ib2"
        self.assertEqual(len(self.uuid(7, "oss1", "scratch-OST0000", nid)), 2)      # mounts: 2
        for k in range(8, 14):
            self.assertEqual(self.uuid(k, "oss1", "scratch-OST0000", nid), [])
            self.assertEqual(self.uuid(k, "mds1", "home-MDT0000", nid), [])
        frozen = self.counts(8, "oss1", "scratch-OST0001", nid)
        self.assertTrue(frozen)
        for k in range(9, 14):
            self.assertEqual(self.counts(k, "oss1", "scratch-OST0001", nid), frozen)
            self.assertEqual(self.truth[k][("scratch", nid)], dict(self.truth[8][("scratch", nid)], state="idle"))
        # return: new UUIDs, counters continue (no reset)
        u = self.uuid(14, "oss1", "scratch-OST0001", nid)
        self.assertEqual(len(u), 2)
        self.assertNotEqual(u, self.uuid(7, "oss1", "scratch-OST0001", nid))
        self.assertEqual(self.stats(14, "oss1", "scratch-OST0001", nid)[0]["start_time"],
                         self.stats(8, "oss1", "scratch-OST0001", nid)[0]["start_time"])
        after = self.counts(15, "oss1", "scratch-OST0001", nid)
        for name, (c, _) in frozen.items():
            self.assertGreaterEqual(after[name][0], c)
        self.assertGreater(after["read_bytes"][0], frozen["read_bytes"][0])

    def test_failover_with_gap(self):
        tgt = "scratch-OST0003"
        path = lambda s: "%s/proc/fs/lustre/obdfilter/%s/exports/clear" % (s, tgt)  # noqa: E731
        self.assertIn(path("oss2"), self.snaps[9])
        for k in (10, 11):
            self.assertNotIn(path("oss2"), self.snaps[k])
            self.assertNotIn(path("oss1"), self.snaps[k])
        self.assertIn(path("oss1"), self.snaps[12])
        self.assertEqual(self.stats(12, "oss1", tgt, "10.1.0.1@o2ib")[0]["start_time"], self.T[12])
        c13 = self.counts(13, "oss1", tgt, "10.1.0.1@o2ib")["write_bytes"][0]
        c14 = self.counts(14, "oss1", tgt, "10.1.0.1@o2ib")["write_bytes"][0]
        self.assertGreater(c14, c13)
        # the MDT's lwp peer export for OST0003 moves from oss2's NID to oss1's
        self.assertIn("scratch-MDT0000-lwp-OST0003_UUID", self.uuid(9, "mds1", "scratch-MDT0000", "10.0.0.12@o2ib"))
        self.assertIn("scratch-MDT0000-lwp-OST0003_UUID", self.uuid(12, "mds1", "scratch-MDT0000", "10.0.0.11@o2ib"))
        self.assertNotIn("scratch-MDT0000-lwp-OST0003_UUID", self.uuid(12, "mds1", "scratch-MDT0000", "10.0.0.12@o2ib"))
        # the MDS's OSP export exists on the new server
        self.assertEqual(self.uuid(12, "oss1", tgt, "10.0.0.1@o2ib"), ["scratch-MDT0000-mdtlov_UUID"])

    def test_unmount_and_mount(self):
        p = "oss2/proc/fs/lustre/obdfilter/home-OST0001/exports/clear"
        self.assertIn(p, self.snaps[15])
        self.assertNotIn(p, self.snaps[16])
        self.assertNotIn("oss2/sys/fs/lustre/obdfilter/home-OST0001/num_exports", self.snaps[16])
        self.assertIn(p, self.snaps[18])
        self.assertEqual(self.stats(18, "oss2", "home-OST0001", "10.1.0.2@o2ib")[0]["start_time"], self.T[18])

    def test_peers_and_0_at_lo_present_and_excluded(self):
        snap = self.snaps[0]
        self.assertEqual(self.uuid(0, "oss1", "scratch-OST0000", "10.0.0.1@o2ib"), ["scratch-MDT0000-mdtlov_UUID"])
        self.assertIn("create", dict((n, c) for n, c, *_ in self.stats(0, "oss1", "scratch-OST0000", "10.0.0.1@o2ib")[1]))
        self.assertEqual(self.uuid(0, "mds1", "scratch-MDT0000", "0@lo"), ["scratch-MDT0000-lwp-MDT0000_UUID"])
        self.assertIn("mds1/proc/fs/lustre/mdt/scratch-MDT0000/exports/10.0.0.11@o2ib/uuid", snap)
        for exp in self.expected[0].values():
            for fs, nid in exp:
                self.assertFalse(nid.startswith("10.0.0.") or nid == "0@lo", nid)

    def test_event_log(self):
        types = [e["type"] for e in self.events]
        for t in ("clear", "reset_export", "failover", "mount", "unmount", "client_appear",
                  "client_idle", "client_return"):
            self.assertIn(t, types)
        mount = [e for e in self.events if e["type"] == "mount" and e.get("cause") == "failover"][0]
        self.assertEqual(mount["step"], 12)
        self.assertEqual(mount["time_ns"], self.T[12])


class ConsistencyTests(TmpDirCase):
    def test_truth_equals_files_without_resets(self):
        # no events at all: the files always show everything the clients did
        scn = load_scenario("v2.16-ipv6-stats-header.json")
        scn["events"] = []
        root = os.path.join(self.tmp, "r")
        sim = new_sim(root, scn)
        for _ in range(4):
            sim.run_step()
            _, truth = truth_latest(root)
            tot = {}
            for s in sim.servers:
                for key, r in load_expected(os.path.join(root, s)).items():
                    t = tot.setdefault(key, dict.fromkeys(FIELDS, 0))
                    for f in FIELDS:
                        t[f] += r[f]
            self.assertEqual(tot, {key: {f: r[f] for f in FIELDS} for key, r in truth.items()})

    def test_mdt_ops_equal_files_every_version(self):
        # every one of the 17 ops requested, 2 MDTs, colocated (0@lo peers), no resets
        for version in ("2.5", "2.10", "2.12", "2.15", "2.17"):
            with self.subTest(version=version):
                scn = scenario.normalise({
                    "version": version, "seed": 3, "period": 5, "history": 600,
                    "filesystems": [{"name": "fs1", "osts": 2, "mdts": 2}],
                    "layout": {"colocate": True},
                    "clients": [{"nid": "10.1.0.1@o2ib", "profile": "mixed"},
                                {"nid": "10.1.0.2@o2ib", "phases": [
                                    {"from_step": 0, "mds_ops": {op: 1.5 for op in MDT_OPS},
                                     "oss_ops": {"getattr": 2, "statfs": 1, "punch": 1}}]},
                                {"nid": "10.1.0.3@o2ib", "profile": "idle"}]})
                root = os.path.join(self.tmp, version)
                sim = new_sim(root, scn)
                table = {c.name for c in get_profile(version).tables["mdt"]}
                for _ in range(3):
                    sim.run_step()
                    _, truth = truth_latest(root)
                    files = mdt_op_counts(snapshot(root, sim.servers))
                    self.assertEqual({key: r["mdt_ops"] for key, r in truth.items()},
                                     {key: files.get(key, {}) for key in truth})
                    ops = truth[("fs1", "10.1.0.2@o2ib")]["mdt_ops"]
                    self.assertEqual(set(ops), {op for op in MDT_OPS if op in table})
                    self.assertEqual(truth[("fs1", "10.1.0.3@o2ib")]["mdt_ops"], {})
                    for r in truth.values():
                        self.assertLessEqual(sum(r["mdt_ops"].values()), r["mds_ops"])

    def test_state_saved_before_mdt_ops_resumes(self):
        scn = load_scenario("v2.10-colocated.json")
        a, b = os.path.join(self.tmp, "a"), os.path.join(self.tmp, "b")
        for root in (a, b):
            sim = new_sim(root, scn)
            sim.run_step()
            if root == b:
                for acc in sim.truth.values():
                    del acc[len(FIELDS):]          # the 6-int truth lists of older states
            sim.save()
        for root in (a, b):
            sim = Sim.load(root)
            sim.run_step()
            sim.save()
            Sim.load(root).run_step()
        (da, ta), (db, tb) = truth_latest(a), truth_latest(b)
        self.assertEqual((da["step"], db["step"]), (2, 2))
        self.assertEqual({k: {f: r[f] for f in FIELDS} for k, r in ta.items()},
                         {k: {f: r[f] for f in FIELDS} for k, r in tb.items()})
        self.assertTrue(any(r["mdt_ops"] for r in tb.values()))
        for key, r in tb.items():
            for op, v in r["mdt_ops"].items():
                self.assertLess(v, ta[key]["mdt_ops"][op], (key, op))    # counted from the resume
        for s in sim.servers:
            self.assertEqual(read(os.path.join(a, s, "expected-once.jsonl")),
                             read(os.path.join(b, s, "expected-once.jsonl")))

    def test_every_example_scenario_runs(self):
        for name in sorted(os.listdir(SCENARIOS)):
            with self.subTest(scenario=name):
                scn = load_scenario(name)
                root = os.path.join(self.tmp, name)
                sim = new_sim(root, scn)
                for _ in range(scn["steps"]):
                    sim.run_step()
                    for s in sim.servers:
                        self.assertEqual(load_expected(os.path.join(root, s)),
                                         recompute_expected(os.path.join(root, s)), (name, sim.step))
                self.assertEqual(temp_leftovers(root), [])

    def test_2_17_exports_only_in_debugfs(self):
        scn = load_scenario("v2.17-debugfs.json")
        root = os.path.join(self.tmp, "r")
        sim = new_sim(root, scn)
        sim.run_step()
        for s in sim.servers:
            for ttype, tgt, nid, d in iter_exports(os.path.join(root, s)):
                self.assertIn("/sys/kernel/debug/lustre/", d)
        self.assertTrue(os.path.isfile(os.path.join(root, "mds1/proc/fs/lustre/mdt/fs17-MDT0000/job_stats")))

    def test_2_12_idle_disconnect(self):
        scn = load_scenario("v2.12-idle-disconnect.json")
        root = os.path.join(self.tmp, "r")
        sim = new_sim(root, scn)
        ost = lambda i: os.path.join(root, "oss%d" % (i % 2 + 1), "proc/fs/lustre/obdfilter/lquake-OST%04x" % i,  # noqa: E731
                                     "exports/10.1.0.1@o2ib")
        striped = sim.clients["10.1.0.1@o2ib"].stripe_off["lquake"]
        other = (striped + 1) % 4
        for k in range(scn["steps"]):
            sim.run_step()
            if k == 1:      # 5 s: all connected
                self.assertNotEqual(read(ost(other) + "/uuid"), "")
            if k == 5:      # 25 s: I/O only on its one striped OST; the others idle > 20 s
                self.assertNotEqual(read(ost(striped) + "/uuid"), "")
                self.assertEqual(read(ost(other) + "/uuid"), "")
                self.assertTrue(os.path.isdir(ost(other)))                    # NID dir stays
            if k == 9:      # writes stopped at step 4: the striped one went idle too
                self.assertEqual(read(ost(striped) + "/uuid"), "")
            if k == 13:     # writes resumed at step 12: reconnected, counters continue
                self.assertNotEqual(read(ost(striped) + "/uuid"), "")
        self.assertNotEqual(read(os.path.join(root, "mds1/proc/fs/lustre/mdt/lquake-MDT0000/exports/10.1.0.1@o2ib/uuid")), "")

    def test_2_15_0_reset_keeps_start_time_zero(self):
        scn = load_scenario("small-all-events.json", version="2.15.0")
        root = os.path.join(self.tmp, "r")
        sim = new_sim(root, scn)
        for _ in range(4):
            sim.run_step()
        h, _ = parse(read(os.path.join(root, "oss1/proc/fs/lustre/obdfilter/scratch-OST0000/exports/10.1.0.1@o2ib/stats")))
        self.assertEqual(h["start_time"], 0)
        self.assertEqual(h["elapsed_time"], h["snapshot_time"])

    def test_deterministic(self):
        a, b = os.path.join(self.tmp, "a"), os.path.join(self.tmp, "b")
        for root in (a, b):
            sim = new_sim(root, load_scenario("v2.10-colocated.json"))
            for _ in range(3):
                sim.run_step()
        self.assertEqual(snapshot(a, sim.servers), snapshot(b, sim.servers))
        self.assertEqual(read(os.path.join(a, "truth.jsonl")), read(os.path.join(b, "truth.jsonl")))

    def test_forked_build_matches_serial(self):
        def build(root, jobs, keep):
            scn = scenario.normalise(scenario.big_scenario(osts=3, clients=150, start_time=1712345678))
            sim = new_sim(root, scn)
            sim.jobs, sim.keep_state, sim.fork_min_exports = jobs, keep, 0
            sim.run_step()
            return sim
        s1 = build(os.path.join(self.tmp, "serial"), 1, True)
        s2 = build(os.path.join(self.tmp, "forked"), 2, True)
        build(os.path.join(self.tmp, "forked-nostate"), 2, False)
        snaps = [snapshot(os.path.join(self.tmp, d), ["oss1"]) for d in ("serial", "forked", "forked-nostate")]
        self.assertEqual(snaps[0], snaps[1])
        self.assertEqual(snaps[0], snaps[2])
        for d in ("forked", "forked-nostate"):
            self.assertEqual(read(os.path.join(self.tmp, "serial", "truth-latest.json")),
                             read(os.path.join(self.tmp, d, "truth-latest.json")))
        s1.run_step()
        s2.run_step()        # state shipped back from the child continues identically
        self.assertEqual(snapshot(os.path.join(self.tmp, "serial"), ["oss1"]),
                         snapshot(os.path.join(self.tmp, "forked"), ["oss1"]))


class WallClockTruthTests(TmpDirCase):
    """On the wall clock each file is stamped when it is rendered, so the
    truth rows say, per target, what that file accounts for and the
    snapshot time printed in it: read back, the files must agree."""

    def run_wall(self, version):
        scn = load_scenario("small-all-events.json", version=version, clock="wall")
        root = os.path.join(self.tmp, version)
        sim = new_sim(root, scn)
        event_steps = {e["step"] for e in scn["events"]}
        prev, checked, stamped = None, 0, 0
        for k in range(scn["steps"]):
            sim.run_step()
            _, truth = truth_latest(root)
            files = {}                  # (fs, nid, target) -> (snapshot, values)
            for s in sim.servers:
                for ttype, tgt, nid, d in iter_exports(os.path.join(root, s)):
                    header, lines = parse(read(os.path.join(d, "stats")))
                    files[(tgt.rsplit("-", 1)[0], nid, tgt)] = (
                        header["snapshot_time"], lharvestd_values(ttype, lines))
            for key, row in truth.items():
                per = row["files"]
                for f in FIELDS:
                    self.assertEqual(sum(x[f] for x in per.values()), row[f], (k, key, f))
                ops = {}
                for x in per.values():
                    for op, n in x["mdt_ops"].items():
                        ops[op] = ops.get(op, 0) + n
                self.assertEqual(ops, row["mdt_ops"], (k, key))
                for tgt, x in per.items():
                    got = files.get(key + (tgt,))
                    if got is None:         # unmounted, cleared away
                        continue
                    self.assertEqual(got[0], x["snapshot_ns"], (k, key, tgt))
                    stamped += 1
                    was = prev and prev[0].get(key, {}).get("files", {}).get(tgt)
                    old = prev and prev[1].get(key + (tgt,))
                    if k in event_steps or not was or not old:
                        continue
                    for f in FIELDS:
                        self.assertEqual(got[1][f] - old[1][f], x[f] - was[f], (k, key, tgt, f))
                        checked += 1
            prev = (truth, files)
        self.assertGreater(stamped, 300)
        self.assertGreater(checked, 1000)

    def test_files_are_what_the_truth_says_2_15(self):
        self.run_wall("2.15")

    def test_files_are_what_the_truth_says_2_10_usecs_and_disconnects(self):
        self.run_wall("2.10")

    def test_fake_clock_rows_have_no_files(self):
        root = os.path.join(self.tmp, "f")
        sim = new_sim(root, load_scenario("small-all-events.json"))
        sim.run_step()
        self.assertFalse(any("files" in r for r in truth_latest(root)[0]["rows"]))


class AtomicityTests(TmpDirCase):
    def test_atomic_write_cleans_up(self):
        p = os.path.join(self.tmp, "f")
        fsio.atomic_write(p, "x\n")
        self.assertEqual(read(p), "x\n")

        class Boom(Exception):
            pass
        real = os.write
        try:
            os.write = lambda fd, data: (_ for _ in ()).throw(Boom())
            with self.assertRaises(Boom):
                fsio.atomic_write(p, "y\n")
        finally:
            os.write = real
        self.assertEqual(read(p), "x\n")
        self.assertEqual(os.listdir(self.tmp), ["f"])

    def test_concurrent_reader_never_sees_partial_files(self):
        scn = load_scenario("small-all-events.json")
        root = os.path.join(self.tmp, "r")
        sim = new_sim(root, scn)
        sim.run_step()
        stop, problems, reads = [], [], [0]

        def reader():
            while not stop:
                for s in sim.servers:
                    for _ttype, _tgt, _nid, d in iter_exports(os.path.join(root, s)):
                        for fn in ("stats", "uuid"):
                            try:
                                t = read(os.path.join(d, fn))
                            except FileNotFoundError:
                                continue          # export/target removed meanwhile: fine
                            reads[0] += 1
                            if fn == "stats" and not (t.startswith("snapshot_time") and t.endswith("\n")):
                                problems.append((d, t[:80]))
                            if fn == "uuid" and t and not t.endswith("\n"):
                                problems.append((d, t))
        th = threading.Thread(target=reader)
        th.start()
        try:
            for _ in range(scn["steps"] - 1):
                sim.run_step()
        finally:
            stop.append(1)
            th.join()
        self.assertEqual(problems, [])
        self.assertGreater(reads[0], 100)
        self.assertEqual(temp_leftovers(root), [])


# ---------------------------------------------------------------- CLI

def cli(*args, check=True, **kw):
    r = subprocess.run([sys.executable, SIM] + list(args), capture_output=True, text=True, timeout=120, **kw)
    if check and r.returncode != 0:
        raise AssertionError("lustresim %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr))
    return r


class CliTests(TmpDirCase):
    def test_tree_and_status(self):
        root = os.path.join(self.tmp, "t")
        cli("tree", "--root", root, "--version", "2.14", "--servers", "1", "--clients", "5",
            "--colocate", "--time", "1700000000")
        self.assertEqual(read(os.path.join(root, "oss1/proc/fs/lustre/obdfilter/scratch-OST0000/exports/0@lo/uuid")),
                         "scratch-MDT0000-mdtlov_UUID\n")
        st = json.loads(cli("status", "--root", root).stdout)
        self.assertEqual(st["next_step"], 1)
        r = cli("tree", "--root", root, "--clients", "5", check=False)
        self.assertEqual(r.returncode, 2)            # refuses to overwrite without --force
        cli("tree", "--root", root, "--clients", "5", "--force")

    def test_manual_stepping_with_events(self):
        root = os.path.join(self.tmp, "r")
        sc = os.path.join(SCENARIOS, "small-all-events.json")
        cli("run", "--root", root, "--scenario", sc, "--steps", "1")
        self.assertEqual(cli("run", "--root", root, "--scenario", sc, "--steps", "1", check=False).returncode, 2)
        cli("run", "--root", root, "--steps", "1")
        cli("event", "--root", root, "clear", "--target", "scratch-OST0001")
        cli("run", "--root", root, "--steps", "1")
        ev = [json.loads(x) for x in read(os.path.join(root, "events.jsonl")).splitlines()]
        self.assertEqual([(e["type"], e["step"]) for e in ev], [("clear", 2)])
        steps = {json.loads(x)["step"] for x in read(os.path.join(root, "truth.jsonl")).splitlines()}
        self.assertEqual(steps, {0, 1, 2})
        # immediate event: only the reset export's file changes
        before = snapshot(root, ["oss1", "oss2", "mds1"])
        out = json.loads(cli("event", "--root", root, "reset_export", "--target", "scratch-OST0002",
                             "--nid", "10.1.0.1@o2ib", "--now").stdout)
        self.assertEqual(out["applied"], "reset_export")
        after = snapshot(root, ["oss1", "oss2", "mds1"])
        changed = sorted(p for p in after if after[p] != before.get(p))
        self.assertEqual(changed, ["oss2/expected-once.jsonl",
                                   "oss2/proc/fs/lustre/obdfilter/scratch-OST0002/exports/10.1.0.1@o2ib/stats"])
        h, lines = parse(after[changed[1]])
        self.assertEqual(lines, [])
        self.assertEqual(h["start_time"], h["snapshot_time"])
        # a new client via the CLI, scheduled for a later step
        cli("event", "--root", root, "client_appear", "--nid", "10.9.0.1@o2ib", "--profile", "reader",
            "--fs", "scratch", "--step", "4")
        cli("run", "--root", root, "--steps", "1")
        self.assertFalse(os.path.exists(os.path.join(root, "oss1/proc/fs/lustre/obdfilter/scratch-OST0000/exports/10.9.0.1@o2ib")))
        cli("run", "--root", root, "--steps", "1")
        self.assertTrue(os.path.exists(os.path.join(root, "oss1/proc/fs/lustre/obdfilter/scratch-OST0000/exports/10.9.0.1@o2ib")))
        self.assertEqual(temp_leftovers(root), [])

    def test_external_write_to_exports_clear(self):
        root = os.path.join(self.tmp, "r")
        cli("run", "--root", root, "--scenario", os.path.join(SCENARIOS, "small-all-events.json"), "--steps", "1")
        with open(os.path.join(root, "oss2/proc/fs/lustre/obdfilter/scratch-OST0002/exports/clear"), "w") as f:
            f.write("1\n")
        cli("run", "--root", root, "--steps", "1")
        self.assertFalse(os.path.exists(os.path.join(root, "oss2/proc/fs/lustre/obdfilter/scratch-OST0002/exports/10.1.0.9@o2ib")))
        ev = json.loads(read(os.path.join(root, "events.jsonl")).splitlines()[0])
        self.assertEqual((ev["type"], ev["source"], ev["step"]), ("clear", "external", 1))

    def test_sigterm_stops_cleanly(self):
        root = os.path.join(self.tmp, "r")
        p = subprocess.Popen([sys.executable, SIM, "run", "--root", root, "--scenario",
                              os.path.join(SCENARIOS, "v2.17-debugfs.json"), "--clock", "wall",
                              "--period", "0.2", "--steps", "0", "--quiet"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.time() + 30
            while time.time() < deadline:
                tl = os.path.join(root, "truth-latest.json")
                if os.path.exists(tl) and json.loads(read(tl))["step"] >= 2:
                    break
                time.sleep(0.05)
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("stopped by signal", out)
        st = json.loads(cli("status", "--root", root).stdout)
        self.assertGreaterEqual(st["next_step"], 3)
        self.assertEqual(temp_leftovers(root), [])
        d, _ = truth_latest(root)
        self.assertEqual(d["step"], st["next_step"] - 1)
        # wall clock: snapshot_time is close to real time
        h, _ = parse(read(os.path.join(root, "mds1/sys/kernel/debug/lustre/mdt/fs17-MDT0000/exports/0@lo/stats")))
        self.assertLess(abs(h["snapshot_time"] / NS - time.time()), 60)

    def test_big_small_scale(self):
        root = os.path.join(self.tmp, "b")
        r = cli("big", "--root", root, "--osts", "2", "--clients", "300", "--time", "1712345678")
        self.assertIn("tree generated in", r.stdout)
        sroot = os.path.join(root, "oss1")
        exports = list(iter_exports(sroot))
        self.assertEqual(len(exports), 3 * 301)        # 2 OSTs + MDT, each 300 clients + 0@lo
        self.assertEqual(load_expected(sroot), recompute_expected(sroot))
        sizes = sorted(os.path.getsize(os.path.join(d, "stats")) for t, _, _, d in exports if t == "ost")
        active = [s for s in sizes if s > 300]
        self.assertTrue(830 <= active[len(active) // 2] <= 1250, active[len(active) // 2])


if __name__ == "__main__":
    unittest.main()
