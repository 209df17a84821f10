"""Tests of the simulator's scenarios: each event's effect, step by step,
and the wall clock's per-file truth read back from the files
(tests/sim/lustresim.py; helpers in simtestlib.py)."""

import unittest
import json
import os
import shutil
import tempfile

from simtestlib import (
    FIELDS, MDT_OPS, NS, STATE, TmpDirCase, iter_exports,
    lharvestd_values, load_expected, load_scenario, mdt_op_counts,
    new_sim, parse, read, recompute_expected, snapshot,
    temp_leftovers, truth_latest)


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


if __name__ == "__main__":
    unittest.main()
