"""Tests for the Lustre /proc simulator (tests/sim/lustresim.py): its
formats and version trees, and the consistency of what it writes.

Run from the repository root:
    python3 -m unittest discover -s tests/sim -p 'test_*.py'

The checks that matter most for lharvestd:
* every stats block in the fixtures re-renders byte-for-byte with lsim's
  formatter (counter set/order/units/fields from the version profile);
* generated trees obey each version's counter table, header and layout;
* expected-once.jsonl equals an independent recomputation from the files;
* the ground truth is monotonic and consistent with the files across
  clear / reset / failover / idle / return / appear / unmount / mount
  (test_lustresim_events.py);
* writes are atomic and leave no temp files (test_lustresim_cli.py).
The independent reader they share: simtestlib.py.
"""

import os
import re
import unittest

from simtestlib import (
    FIELDS, MDT_OPS, NS, SCENARIOS, SUPPORTED, Sim, TESTDATA, TmpDirCase,
    formats, get_profile, iter_exports, load_expected, load_scenario,
    mdt_op_counts, new_sim, parse, read, recompute_expected, scenario,
    snapshot, temp_leftovers, truth_latest)


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


if __name__ == "__main__":
    unittest.main()
