"""Tests of the simulator's atomic writes and of its command line
(tests/sim/lustresim.py; helpers in simtestlib.py)."""

import unittest
import json
import os
import signal
import subprocess
import sys
import threading
import time

from simtestlib import (
    NS, SCENARIOS, SIM, TmpDirCase, fsio, iter_exports, load_expected,
    load_scenario, new_sim, parse, read, recompute_expected, snapshot,
    temp_leftovers, truth_latest)


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
