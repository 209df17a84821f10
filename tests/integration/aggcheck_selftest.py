"""aggcheck_selftest: aggregator_check.py's checks against made-up truth,
samples and logs (aggregator_check.py --self-test).  Standard library
only."""

import json
import os
import tempfile

from aggregator_check import METRICS, Report, check, parse_args
from aggtruth import CheckError


def self_test():
    """The checks against made-up truth, samples and logs: a correct run
    passes, and each kind of mistake is caught."""
    ok = True
    with tempfile.TemporaryDirectory() as d:
        def p(name):
            return os.path.join(d, name)
        with open(p("hosts"), "w") as f:
            f.write("10.1.0.1 n1\n10.1.0.2 n2  # multi-rail\n10.2.0.2 n2\n12@gni n9\n10.1.0.1 other\n")
        rates = {("s", "10.1.0.1@o2ib"): 100.0, ("s", "10.1.0.2@o2ib"): 200.0,
                 ("s", "10.2.0.2@o2ib2"): 50.0, ("s", "12@gni"): 70.0}
        def write_truth(path, late=None, say=True):
            """Step k at 1000 + k; late: {k: seconds}, the wall clock on a
            busy machine: step k's files rendered (and stamped) that much
            after its step time, in two targets of a quarter and three
            quarters of each client's I/O (say: the rows say so)."""
            with open(path, "w") as f:
                for k in range(40):
                    for (fs, nid), r in rates.items():
                        T = (1000 + k) * 10 ** 9
                        row = {"step": k, "time": T / 1e9, "time_ns": T, "fs": fs, "nid": nid}
                        snap = T + int((late or {}).get(k, 0) * 1e9) + 10 ** 6
                        files = {"t0": {"snapshot_ns": snap}, "t1": {"snapshot_ns": snap + 10 ** 6}}
                        for i, (fl, _) in enumerate(METRICS):
                            q = (r + i) * 1000 * ((snap - 1000 * 10 ** 9) / 1e9) / 4
                            files["t0"][fl] = int(round(q)) + 5
                            files["t1"][fl] = int(round(3 * q))
                            row[fl] = files["t0"][fl] + files["t1"][fl]
                        if late is not None and say:
                            row["files"] = files
                        f.write(json.dumps(row) + "\n")
        write_truth(p("truth"))
        late = {0: 0.4, 1: 0.4, 2: 0.35, 21: 0.3}
        write_truth(p("truth-late"), late)
        write_truth(p("truth-late-steps"), late, say=False)
        with open(p("faults"), "w") as f:
            f.write("startup 1000 1001 1\ngatherer-kill 1020 1022 1\ngarbage 1030 1031 0\n")
        ip = {"n1": "10.1.0.1", "n2": "10.1.0.2", "n9": "n9", "tot": "tot"}

        def sample(t, tweak=None):
            hosts = {}
            want = {"n1": [100.0], "n2": [250.0], "n9": [70.0], "tot": [420.0]}
            for h, (r,) in want.items():
                ms = {}
                for i, (fl, units) in enumerate(METRICS):
                    ms["x_" + fl] = ["%.2f" % ((r + i * {"n2": 2, "tot": 4}.get(h, 1)) * 1000),
                                     1, units, "lustre", "%s:%s" % (ip[h], h)]
                hosts[h] = {"ip": ip[h], "m": ms}
            if tweak:
                tweak(t, hosts)
            return {"t": t, "hosts": hosts}

        def run(name, want_ok, tweak=None, log_lines=None, dups=(), truth="truth"):
            with open(p("samples"), "w") as f:
                for t in range(1000, 1040):
                    f.write(json.dumps(dict(sample(t + 0.5, tweak), dups=list(dups))) + "\n")
            logs = []
            if log_lines is not None:
                with open(p("agg.log"), "w") as f:
                    f.write("".join(log_lines))
                logs = [p("agg.log")]
            a = parse_args(["check", "--truth", p(truth), "--hosts", p("hosts"), "--samples", p("samples"),
                            "--faults", p("faults"), "--prefix", "s=x", "--totals-host", "tot",
                            "--interval", "1", "--deadline", "0.3", "--gatherers", "2"]
                           + sum((["--agg-log", x] for x in logs), []))
            rep = Report()
            try:
                check(a, rep)
            except CheckError as e:
                rep.fail("error", [str(e)])
            good = rep.failed == 0
            print("%s - self-test: %s" % ("ok" if good == want_ok else "FAIL", name))
            if good != want_ok:
                print("\n".join("  " + x for x in rep.lines))
            return good == want_ok

        def setv(host, metric, val, when=lambda t: True):
            def tw(t, hosts):
                if when(t):
                    hosts[host]["m"][metric][0] = val
            return tw

        def sweeps(extra=None):
            out = []
            for s in range(1000, 1040):
                g, late, dl = 2, 0, ""
                if s == 1021:
                    g, dl = 1, ", closed at the deadline"
                out.append("%.3f lharvestd: sweep %d: %d gatherers (%d late), 4 clients, 3 hosts, "
                           "0 unmapped, 0 awaiting DNS%s\n" % (s + 0.05, s, g, late, dl))
            if extra:
                out = extra(out)
            return out

        ok &= run("a correct run", True)
        ok &= run("a correct run with its sweep lines", True, log_lines=sweeps())
        ok &= run("a correct run, the simulator rendering up to 0.4 s late (wall clock)", True,
                  truth="truth-late")
        ok &= run("the same taken over the step times: rates off by the delays", False,
                  truth="truth-late-steps")
        ok &= run("a value 0.6% off, the simulator late", False,
                  setv("n1", "x_write_bytes", "100390.00", lambda t: 1027 < t < 1028), truth="truth-late")
        ok &= run("a negative value", False, setv("n1", "x_read_bytes", "-1.00", lambda t: t > 1020))
        ok &= run("a value above the maximum during a fault", False,
                  setv("n9", "x_oss_ops", "72500.00", lambda t: 1020 < t < 1022))
        ok &= run("a value 0.6% off in a quiet sample", False,
                  setv("n1", "x_write_bytes", "100390.00", lambda t: 1027 < t < 1028))
        def low(t, hosts):              # and the totals with it
            if 1020 < t < 1024:
                setv("n1", "x_write_bytes", "50000.00")(t, hosts)
                setv("tot", "x_write_bytes", "373000.00")(t, hosts)
        ok &= run("a value low during a fault", True, low)
        ok &= run("a value low during recorded-only garbage", False,
                  setv("n1", "x_write_bytes", "50000.00", lambda t: 1030 < t < 1031))
        ok &= run("one rail of a multi-rail host", False, setv("n2", "x_read_bytes", "200000.00"))
        ok &= run("a missing metric", False,
                  lambda t, h: h["n9"]["m"].pop("x_mds_ops") if t > 1030 else None)
        ok &= run("an unexpected host", False,
                  lambda t, h: h.update({"10.9.9.9": {"ip": "10.9.9.9", "m": {"x_oss_ops": ["1", 1, "", "", ""]}}}))
        ok &= run("a wrong spoofed IP", False,
                  lambda t, h: h["n2"].update(ip="10.2.0.2"))
        ok &= run("a host under two IPs", False,
                  lambda t, h: None, dups=[["n2", "10.2.0.2"]])
        ok &= run("a wrong unit", False,
                  lambda t, h: h["n1"]["m"]["x_oss_ops"].__setitem__(2, "bytes/sec"))
        ok &= run("a stale metric", False,
                  lambda t, h: h["n1"]["m"]["x_oss_ops"].__setitem__(1, 9) if 1032 < t < 1034 else None)
        ok &= run("totals not the sum", False,
                  setv("tot", "x_read_bytes", "430000.00", lambda t: t > 1035))
        ok &= run("a sweep skipped", False,
                  log_lines=sweeps(lambda ls: [x for x in ls if " sweep 1030:" not in x]))
        ok &= run("no deadline close while a gatherer is down", False,
                  log_lines=sweeps(lambda ls: [x.replace(", closed at the deadline", "") for x in ls]))
        ok &= run("a sweep every gatherer reported, closed at the deadline", False,
                  log_lines=sweeps(lambda ls: [x.replace("0 awaiting DNS\n", "0 awaiting DNS, closed at the deadline\n")
                                               if " sweep 1003:" in x else x for x in ls]))
        ok &= run("a quiet sweep with a gatherer missing", False,
                  log_lines=sweeps(lambda ls: [x.replace("sweep 1035: 2 gatherers", "sweep 1035: 1 gatherers")
                                               for x in ls]))
    return ok
