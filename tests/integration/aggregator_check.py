#!/usr/bin/env python3
"""aggregator_check.py: what gmond shows, against the simulator's ground
truth (tests/integration/it_aggregator.sh).

    aggregator_check.py poll --port TCP --out FILE [--every 1]
    aggregator_check.py garbage --addr 127.0.0.1:PORT [--idle-max S]
    aggregator_check.py check --truth truth.jsonl --hosts FILE
        --samples FILE --faults FILE [--agg-log FILE ...]
        [--prefix FS=PREFIX ...] [--totals-host NAME] [--interval S]
        [--deadline S] [--tolerance F] [--gatherers N] [--from T]
        [--metadata-ops all|OP,OP...] [--only-mapped] [--only-fs FS,FS]
    aggregator_check.py totals --baseline B.json --final F.json --fs FS
        [--hosts FILE] --log FILE [--log FILE ...] [--label NAME]
    aggregator_check.py --self-test

poll: every --every seconds (at .5 past the second), read gmond's XML from
127.0.0.1:TCP and append one JSON line to FILE:
{"t": time, "hosts": {HOST: {"ip": IP, "m": {METRIC: [VAL, TN, UNITS,
GROUP, SPOOF_HOST]}}}} (or {"t": time, "error": text}).  Runs until
SIGTERM, then exits 0.

garbage: connections to an aggregator that are not gatherers: a port scan
(connect, close), junk bytes, a header announcing a 2 GiB frame, a HELLO
with an unknown key id and a random MAC, half a header then close, and an
idle connection that never says anything.  One JSON line per connection
on stdout: {"kind", "local": "127.0.0.1:PORT", "closed_after": seconds
until the aggregator closed it (null if we closed first), "error"}.

check: the true rate of every (fs, client NID) is taken from truth.jsonl
over the steps from --from on: what the simulator wrote, over the time it
wrote it over.  On the wall clock its rows carry, per target, the truth
that target's file accounts for and the snapshot time printed in it: the
rate is the sum over targets of (truth[last] - truth[first]) /
(snapshot[last] - snapshot[first]), which is what lharvestd computes from
the same files however late a busy machine let the simulator render them.
Rows without them (the fake clock, whose snapshots advance by exactly one
period per step) use the step times.  The scenario's rates are constant,
so the true maximum is that rate: checked over windows of 20 steps.
A host's truth is the sum over its NIDs (hosts file: an IPv4 address
matches it on every LNet, a full NID only itself, the first entry wins);
--totals-host's is the sum over every NID of the filesystem.  Then, for
every sample of gmond's XML:
  * every value >= 0, and <= true maximum * (1 + tolerance) + 0.005 (the
    XML has two decimals), a metadata op's give or take one request per
    file (NID and MDT) over the shortest span a sweep can have (op_grain);
  * in quiet samples (after the first fault window, which is the start-up,
    and outside every fault window [start - 0.2 s, end + settle], settle
    = 3 intervals + deadline + 1 s), within tolerance of the truth, and
    refreshed (TN <= 2 intervals + 1);
  * the hosts and metrics are exactly those expected, with units
    (bytes/sec, ops/sec), group lustre, the host's IP and SPOOF_HOST
    "ip:host" (ip: the smallest IPv4 address of the host's NIDs, else the
    host name);
  * per filesystem, the totals host equals the sum over hosts (samples in
    which every metric compared has the same TN).
The fault file has one line per fault: LABEL START END EXCLUDE (EXCLUDE 0:
recorded only, values must stay exact through it).  --agg-log: the
aggregator's stderr with -v, every line prefixed by the epoch time it was
written; its "sweep S: ..." lines are checked too (quiet sweeps complete,
sweeps closing all along, a late batch and a deadline close during the
faults meant to cause them).

totals: the six deltas of filesystem FS, summed over every "sweep S: fs
FS: ..." line (-v) of the given logs (every run of one aggregator or
relay), must equal exactly the truth of FS's NIDs (those --hosts maps, or
all) between B.json (lustresim's truth-latest.json when the gatherers took
their baseline) and F.json (after the simulator stopped and everything
was delivered): nothing lost, nothing counted twice.

Prints "ok - NAME" / "FAIL - NAME" lines (details indented by two
spaces) and "# " comments; exits 0 if nothing failed, 1 otherwise, 2 on
usage errors.  Standard library only; the truth is read in aggtruth.py,
poll and garbage are in aggprobe.py, the self-test in
aggcheck_selftest.py.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aggprobe import cmd_garbage, cmd_poll  # noqa: E402
from aggtruth import (CheckError, MDOPS, Model, host_of, load_hosts,  # noqa: E402
                      load_truth, truth_rates)

METRICS = (("read_bytes", "bytes/sec"), ("write_bytes", "bytes/sec"),
           ("oss_ops", "ops/sec"), ("mds_ops", "ops/sec"))
EPS = 0.005           # half of the XML's last decimal
MAX_DETAIL = 12


# ----------------------------------------------------------------- check

def load_faults(path):
    out = []
    with open(path) as f:
        for line in f:
            tok = line.split()
            if len(tok) == 4:
                out.append((tok[0], float(tok[1]), float(tok[2]), tok[3] == "1"))
    return out


def load_samples(path):
    out = []
    with open(path) as f:
        for line in f:
            if line.endswith("\n"):
                out.append(json.loads(line))
    return out


SWEEP_RE = re.compile(r"^(\d+\.\d+) lharvestd: sweep (\d+): (\d+) gatherers \((\d+) late\), "
                      r"(\d+) clients, (\d+) hosts, (\d+) unmapped, (\d+) awaiting DNS(, closed at the deadline)?$")


def load_sweeps(paths):
    """[(instance, t, sweep, gatherers, late, clients, hosts, unmapped, dns, deadline)]"""
    out = []
    for i, p in enumerate(paths):
        with open(p) as f:
            for line in f:
                m = SWEEP_RE.match(line.rstrip("\n"))
                if m:
                    g = m.groups()
                    out.append((i, float(g[0]), int(g[1])) + tuple(int(x) for x in g[2:8]) + (g[8] is not None,))
    return out


class Report:
    def __init__(self):
        self.failed = 0
        self.lines = []

    def ok(self, name):
        self.lines.append("ok - " + name)

    def fail(self, name, details=()):
        self.failed += 1
        self.lines.append("FAIL - " + name)
        ds = list(details)
        for d in ds[:MAX_DETAIL]:
            self.lines.append("  " + d)
        if len(ds) > MAX_DETAIL:
            self.lines.append("  ... and %d more" % (len(ds) - MAX_DETAIL))

    def check(self, name, bad):
        if bad:
            self.fail(name, bad)
        else:
            self.ok(name)

    def note(self, text):
        self.lines.append("# " + text)


def rel(v, t):
    return abs(v - t) / t if t else (0.0 if abs(v) <= EPS else float("inf"))


def op_grain(a, steps, mdl):
    """grain(host, metric): how far a metadata op's rate may be off for
    rounding alone.  A few requests per sweep: each file's count in one
    sweep is the true rate times the file's span give or take one
    request, a host sums one file per NID and MDT, and on a busy machine a
    read may see the simulator's step one period late, so that a sweep
    spans as little as the interval less one period."""
    gaps = sorted(y[0] - x[0] for x, y in zip(steps, steps[1:]))
    period = gaps[len(gaps) // 2]
    span = max(a.interval - period, period)
    mdts = {}                           # fs -> its MDTs (per-file truth)
    for (fs, _), r in steps[-1][1].items():
        mdts.setdefault(fs, set()).update(t for t in r.get("files", {}) if "-MDT" in t)
    cache = {}

    def grain(h, name):
        if (h, name) not in cache:
            g = 0.0
            if "_mds_" in name and name.rsplit("_mds_", 1)[1] in MDOPS:
                fs = mdl.fs_of[name]
                g = len(mdl.nids.get((h, fs), [])) * max(1, len(mdts.get(fs, ()))) / span
            cache[(h, name)] = g
        return cache[(h, name)]
    return grain


def check(a, rep):
    by_ip, by_nid = load_hosts(a.hosts)
    prefix = dict(p.split("=", 1) for p in a.prefix)
    steps = load_truth(a.truth, a.t_from)
    rate, wins = truth_rates(steps, METRICS)
    if a.only_fs:
        # A relay sees only the filesystems its gatherers serve.
        fss = set(a.only_fs.split(","))
        rate = {k: v for k, v in rate.items() if k[0] in fss}
        wins = [(u0, u1, {k: v for k, v in w.items() if k[0] in fss}) for u0, u1, w in wins]
    if a.only_mapped:
        # An aggregator that gets only some of a filesystem's clients (a
        # relay's downstream): the truth is that of the hosts it maps.
        keep = {k for k in rate if host_of(k[1], by_ip, by_nid) is not None}
        rate = {k: v for k, v in rate.items() if k in keep}
        wins = [(u0, u1, {k: v for k, v in w.items() if k in keep}) for u0, u1, w in wins]
    mdl = Model(rate, wins, by_ip, by_nid, prefix, a.totals_host, METRICS)
    faults = load_faults(a.faults)
    samples = load_samples(a.samples)
    settle = 3 * a.interval + a.deadline + 1.0
    tol = a.tolerance

    # The truth itself: constant rates, so that the true maximum is the
    # rate.  Taken over the snapshot times the files were written with (the
    # wall clock), a window's rate is off only by the simulator's rounding
    # to whole requests; over the step times (the fake clock) also by the
    # difference of the delays with which the simulator rendered its two
    # ends.
    spread, where = 0.0, ""
    for key, r in rate.items():
        for _, _, w in wins:
            e = rel(w[key], r) if r else abs(w[key])
            if e > spread:
                spread, where = e, "%s %s %s: %.6g vs %.6g" % (key + (w[key], r))
    rep.check("the simulator's true rates are constant over %.0f s (%d windows of 20 steps, "
              "largest deviation %.3f%%)" % (steps[-1][0] - steps[0][0], len(wins), 100 * spread),
              [where] if spread > 0.01 else [])
    if mdl.unmapped:
        rep.note("NIDs without a host in the hosts file: %s" % " ".join(mdl.unmapped))

    if not faults:
        raise CheckError("%s: no fault windows (the first one is the start-up)" % a.faults)
    quiet_from = faults[0][2] + settle

    def quiet(t):
        if t < quiet_from:
            return False
        return not any(ex and s - 0.2 <= t <= e + settle for _, s, e, ex in faults)

    good = [s for s in samples if "hosts" in s and s["t"] >= quiet_from]
    errs = [s for s in samples if "error" in s]
    rep.check("gmond answered every poll (%d samples, %d after the start-up)"
              % (len(samples), len(good)),
              ["%.3f: %s" % (s["t"], s["error"]) for s in errs])
    if not good:
        rep.fail("samples after the start-up", ["none"])
        return

    # Hosts and metrics: exactly the expected ones, in every sample.
    bad = []
    for s in good:
        hs = {h: set(v["m"]) for h, v in s["hosts"].items() if v["m"]}
        for h, ms in sorted(mdl.want.items()):
            miss = sorted(set(ms) - hs.get(h, set()))
            if miss:
                bad.append("%.3f: %s lacks %s" % (s["t"], h, " ".join(miss)))
        for h, ms in sorted(hs.items()):
            extra = sorted(ms - set(mdl.want.get(h, {})))
            if extra:
                bad.append("%.3f: unexpected %s %s" % (s["t"], h, " ".join(extra[:6])))
    nmet = sum(len(v) for v in mdl.want.values())
    rep.check("every sample shows the %d hosts x their metrics (%d), and nothing else"
              % (len(mdl.want), nmet), bad)

    # Units and group; one gmond host per host, with its IP (in the last
    # sample).
    last = good[-1]
    bad, bad_ip = [], []
    seen = set()
    for s in good:
        for h, ip in s.get("dups", []):
            if (h, ip) not in seen:
                seen.add((h, ip))
                bad_ip.append("%.3f: a second HOST NAME=\"%s\" IP=\"%s\" (the first has IP %s)"
                              % (s["t"], h, ip, s["hosts"][h]["ip"]))
    for h, ms in sorted(mdl.want.items()):
        hv = last["hosts"].get(h)
        if hv is None:
            continue
        if hv["ip"] != mdl.ip[h]:
            bad_ip.append("%s: IP %s, want %s" % (h, hv["ip"], mdl.ip[h]))
        for name, (_, _, units) in sorted(ms.items()):
            got = hv["m"].get(name)
            if got is None:
                continue
            if got[2:4] != [units, "lustre"]:
                bad.append("%s %s: units %s group %s, want %s lustre" % (h, name, got[2], got[3], units))
            if got[4] != "%s:%s" % (mdl.ip[h], h):
                bad_ip.append("%s %s: SPOOF_HOST %s, want %s:%s" % (h, name, got[4], mdl.ip[h], h))
    rep.check("every metric has its units (bytes/sec, ops/sec) and group lustre", bad)
    rep.check("each host is one gmond host: IP and SPOOF_HOST ip:host, ip the smallest IPv4 "
              "address of the host's NIDs (else the name), the same for every filesystem", bad_ip)

    # Values.
    grain_of = op_grain(a, steps, mdl)
    neg, over, off, stale = [], [], [], []
    nq = nv = 0
    worst = (0.0, "")
    worst_any = (0.0, "")
    for s in good + [x for x in samples if "hosts" in x and x["t"] < quiet_from]:
        q = quiet(s["t"])
        nq += q
        for h, ms in s["hosts"].items():
            for name, got in ms["m"].items():
                w = mdl.want.get(h, {}).get(name)
                if w is None:
                    continue
                tr, mx, _ = w
                v = float(got[0])
                grain = grain_of(h, name)
                nv += 1
                at = "%.3f %s %s = %s" % (s["t"], h, name, got[0])
                if v < 0:
                    neg.append(at)
                if v > mx * (1 + tol) + grain + EPS:
                    over.append("%s > true max %.2f (+%.3f%%)" % (at, mx, 100 * (v / mx - 1) if mx else float("inf")))
                if tr and v > tr:
                    e = (v - tr) / tr
                    if e > worst_any[0]:
                        worst_any = (e, "%s, truth %.2f" % (at, tr))
                if q:
                    e = rel(v, tr)
                    if e > worst[0]:
                        worst = (e, "%s, truth %.2f" % (at, tr))
                    if e > tol and abs(v - tr) > tol * tr + grain + EPS:
                        off.append("%s, truth %.2f (%+.3f%%)" % (at, tr, 100 * (v - tr) / tr if tr else float("inf")))
                    if got[1] > 2 * a.interval + 1:
                        stale.append("%s: TN %d" % (at, got[1]))
    rep.check("no value is negative (%d values in %d samples)" % (nv, len(samples)), neg)
    rep.check("no value is above the true maximum rate + %.1f%% (highest above the truth: "
              "%+.3f%%%s)" % (100 * tol, 100 * worst_any[0], ", " + worst_any[1] if worst_any[1] else ""),
              over)
    rep.check("every value of the %d quiet samples is within %.1f%% of the truth, metadata ops "
              "+- one request per file and sweep (worst %.4f%%: %s)"
              % (nq, 100 * tol, 100 * worst[0], worst[1] or "-"), off)
    if nq < 10:
        rep.fail("enough quiet samples", ["%d quiet samples" % nq])
    rep.check("every metric is refreshed every sweep in quiet samples (TN <= %d)"
              % (2 * a.interval + 1), stale)

    # What each fault did to the values (notes only: the bounds are
    # checked above): the lowest and highest value / truth in its window.
    for label, st, en, ex in faults:
        lo, hi = (float("inf"), ""), (0.0, "")
        for s in samples:
            if "hosts" not in s or not st - 0.2 <= s["t"] <= en + settle:
                continue
            for h, ms in s["hosts"].items():
                for name, got in ms["m"].items():
                    w = mdl.want.get(h, {}).get(name)
                    if not w or not w[0]:
                        continue
                    r = float(got[0]) / w[0]
                    if r < lo[0]:
                        lo = (r, "%s %s at %+.1f s" % (h, name, s["t"] - en))
                    if r > hi[0]:
                        hi = (r, "%s %s at %+.1f s" % (h, name, s["t"] - en))
        if lo[1]:
            rep.note("%-26s value/truth from %.4f (%s) to %.4f (%s)" % (label + ":", lo[0], lo[1], hi[0], hi[1]))

    # Quiet samples during the recorded-only (EXCLUDE 0) windows.
    for label, st, en, ex in faults:
        if ex:
            continue
        n = sum(1 for s in good if st <= s["t"] <= en + settle and quiet(s["t"]))
        if n == 0:
            rep.fail("quiet samples during %s" % label, ["none: the window overlaps a fault"])
        else:
            rep.note("%s: %d samples checked at %.1f%% during it and for %.1f s after" % (label, n, 100 * tol, settle))

    # Multi-rail: a host of several NIDs is their sum, not one of them.
    for (h, fs), nids in sorted(mdl.nids.items()):
        if h == a.totals_host or len(nids) < 2:
            continue
        name = "%s_read_bytes" % prefix.get(fs, fs)
        parts = ["%s %.0f" % (n, rate[(fs, n, "read_bytes")]) for n in nids]
        vals = [float(s["hosts"][h]["m"][name][0]) for s in good
                if quiet(s["t"]) and name in s["hosts"].get(h, {"m": {}})["m"]]
        bad = ["%s: sum %.2f, one NID alone would be %s" % (name, mdl.want[h][name][0], ", ".join(parts))
               for v in vals if any(rel(v, rate[(fs, n, "read_bytes")]) < 0.02 for n in nids)]
        if not vals:
            bad = ["no quiet sample of %s %s" % (h, name)]
        rep.check("multi-rail %s (%s: %s): its values are the sum of its NIDs (%d samples)"
                  % (h, fs, " + ".join(nids), len(vals)), bad)

    # Totals: the sum over hosts, in samples where they come from one sweep.
    bad = []
    ncmp = 0
    for s in good:
        tot = s["hosts"].get(a.totals_host, {"m": {}})["m"]
        for name, got in tot.items():
            fs = mdl.fs_of.get(name)
            vals = [(hv["m"][name][0], hv["m"][name][1]) for h, hv in s["hosts"].items()
                    if h != a.totals_host and name in hv["m"]]
            if {tn for _, tn in vals} != {got[1]}:
                continue
            ncmp += 1
            sm = sum(float(v) for v, _ in vals)
            if rel(float(got[0]), sm) > tol and abs(float(got[0]) - sm) > 0.01 * len(vals):
                bad.append("%.3f %s %s: %s, sum over %d hosts %.2f" % (s["t"], a.totals_host, name, got[0], len(vals), sm))
    if ncmp == 0:
        bad.append("no sample in which the totals and the hosts had the same TN")
    rep.check("%s equals the sum over hosts per filesystem (%d comparisons)" % (a.totals_host, ncmp), bad)

    # The aggregator's sweep lines.
    if not a.agg_log:
        return
    sw = load_sweeps(a.agg_log)
    if not sw:
        rep.fail("the aggregator logged its sweeps (-v)", ["no sweep line"])
        return
    rep.note("%d sweeps closed in %d aggregator runs" % (len(sw), len({x[0] for x in sw})))
    bad = []
    nquiet = 0
    for inst, t, sid, g, late, cl, hs, unm, dns, dl in sw:
        if not quiet(t):
            continue
        nquiet += 1
        want = (a.gatherers, 0, mdl.nclients, mdl.nhostfs, len(mdl.unmapped), 0)
        got = (g, late, cl, hs, unm, dns)
        if got != want:
            bad.append("%.3f sweep %d: %d gatherers (%d late), %d clients, %d hosts, %d unmapped, "
                       "%d awaiting DNS; want %d gatherers (0 late), %d clients, %d (host, fs), "
                       "%d unmapped" % ((t, sid) + got + (want[0], want[2], want[3], want[4])))
    rep.check("every quiet sweep (%d) had every gatherer on time, %d clients, %d (host, fs), "
              "%d unmapped" % (nquiet, mdl.nclients, mdl.nhostfs, len(mdl.unmapped)), bad)

    # A sweep every gatherer reported closes then, not at its deadline.
    # On time: a late batch folded into it is an older sweep's, which
    # does not complete it (common/sweep/sweeps_roster.c, reported()).
    swept = {}                          # (gatherer, sweep) -> when it swept
    for spec in a.gatherer_log:
        name, path = spec.split("=", 1)
        with open(path) as f:
            for line in f:
                m = re.match(r"^(\d+\.\d+) lharvestd: sweep (\d+): ", line)
                if m:
                    swept[(name, int(m.group(2)))] = float(m.group(1))
    bad = []
    for inst, t, sid, g, late, cl, hs, unm, dns, dl in sw:
        if g - late == a.gatherers and dl:
            when = ", ".join("%s swept it at %+.4f s" % (n, swept[(n, s)] - sid)
                             for n, s in sorted(swept) if s == sid)
            bad.append("sweep %d: all %d gatherers reported, closed at the deadline (%+.3f s)%s"
                       % (sid, g, t - sid, "; " + when if when else ""))
    rep.check("no sweep that every gatherer reported on time waited for its deadline", bad)
    bad = []
    by_inst = {}
    # While the aggregator's clock was stepped its sweeps carry that
    # clock's labels: they and the pairs around them are not compared
    # with the real time (the step's own lines are checked by the test).
    steps = []
    if a.clock_steps:
        with open(a.clock_steps) as f:
            steps = [tuple(float(x) for x in l.split()[:2]) for l in f if l.strip()]
    stepped = lambda t0, t1: any(t0 <= e + a.interval + a.deadline + 1 and t1 >= s for s, e in steps)
    for x in sw:
        by_inst.setdefault(x[0], []).append(x)
    for inst, xs in sorted(by_inst.items()):
        for p, n in zip(xs, xs[1:]):
            if stepped(p[1], n[1]):
                continue
            if n[2] != p[2] + a.interval:
                bad.append("run %d: sweep %d after sweep %d" % (inst, n[2], p[2]))
            if n[1] - p[1] > a.interval + a.deadline + 0.5:
                bad.append("run %d: sweep %d closed %.2f s after sweep %d" % (inst, n[2], n[1] - p[1], p[2]))
            if n[1] < n[2] or n[1] > n[2] + a.deadline + 0.5:
                bad.append("run %d: sweep %d closed at %.3f, %.3f s after its boundary"
                           % (inst, n[2], n[1], n[1] - n[2]))
    rep.check("each aggregator run closed every sweep, in order, by its deadline", bad)
    for label, st, en, ex in faults:
        if label.startswith("late"):
            hit = [x for x in sw if st <= x[1] <= en + settle and x[4] > 0]
            rep.check("a late batch was folded into a later sweep after %s" % label,
                      [] if hit else ["no sweep line with a late gatherer between %.3f and %.3f" % (st, en + settle)])
        if label.startswith("gatherer-kill"):
            hit = [x for x in sw if st <= x[1] <= en and x[9] and x[3] == a.gatherers - 1]
            rep.check("sweeps closed at the deadline without the killed gatherer (%s)" % label,
                      [] if hit else ["no deadline close with %d gatherers between %.3f and %.3f"
                                      % (a.gatherers - 1, st, en)])


def cmd_check(a):
    global METRICS
    if a.metadata_ops:
        ops = MDOPS if a.metadata_ops == "all" else a.metadata_ops.split(",")
        METRICS = METRICS + tuple(("mds_" + op, "ops/sec") for op in ops)
    rep = Report()
    try:
        check(a, rep)
    except (CheckError, OSError, ValueError, KeyError) as e:
        rep.fail("check could run", ["%s: %s" % (type(e).__name__, e)])
    print("\n".join(rep.lines))
    return 1 if rep.failed else 0


# ---------------------------------------------------------------- totals

FIELDS = ("read_bytes", "write_bytes", "read_ops", "write_ops", "oss_ops", "mds_ops")
TOTALS_RE = re.compile(r"lharvestd: sweep (\d+): fs (\S+): (\d+) clients, " +
                       " ".join(f + r" (\d+)" for f in FIELDS) + "$")


def cmd_totals(a):
    """What an aggregator or relay counted, summed over the sweeps of all
    its runs (its -v "sweep S: fs F: ..." lines), against the truth of the
    NIDs it gets: exactly."""
    rep = Report()
    try:
        by_ip, by_nid = load_hosts(a.hosts) if a.hosts else ({}, {})
        rows = {}
        for path, sign in ((a.final, 1), (a.baseline, -1)):
            with open(path) as f:
                for r in json.load(f)["rows"]:
                    if r["fs"] != a.fs:
                        continue
                    if a.hosts and host_of(r["nid"], by_ip, by_nid) is None:
                        continue
                    acc = rows.setdefault(r["nid"], [0] * len(FIELDS))
                    for i, fl in enumerate(FIELDS):
                        acc[i] += sign * r[fl]
        want = [sum(v[i] for v in rows.values()) for i in range(len(FIELDS))]
        got, sweeps = [0] * len(FIELDS), []
        for path in a.log:
            with open(path) as f:
                for line in f:
                    m = TOTALS_RE.search(line.rstrip("\n"))
                    if m and m.group(2) == a.fs:
                        sweeps.append(int(m.group(1)))
                        for i in range(len(FIELDS)):
                            got[i] += int(m.group(4 + i))
        dup = sorted({x for x in sweeps if sweeps.count(x) > 1})
        bad = ["%s: counted %d, truth %d (%+d)" % (fl, g, w, g - w)
               for fl, g, w in zip(FIELDS, got, want) if g != w]
        rep.check("%s: the deltas of fs %s over %d sweeps equal the truth of its %d NIDs exactly "
                  "(%d bytes read, %d written)" % (a.label, a.fs, len(sweeps), len(rows), got[0], got[1]),
                  bad + (["sweeps counted twice: %s" % dup] if dup else []))
    except (OSError, ValueError, KeyError) as e:
        rep.fail("%s: totals could be checked" % a.label, ["%s: %s" % (type(e).__name__, e)])
    print("\n".join(rep.lines))
    return 1 if rep.failed else 0


# ------------------------------------------------------------------ main

def parse_args(argv):
    if argv == ["--self-test"]:
        return argparse.Namespace(cmd="self-test")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("poll")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--every", type=float, default=1.0)
    p = sub.add_parser("garbage")
    p.add_argument("--addr", required=True)
    p.add_argument("--idle-max", type=float, default=15.0)
    p = sub.add_parser("totals")
    p.add_argument("--baseline", required=True, help="truth-latest.json at the gatherers' baseline")
    p.add_argument("--final", required=True, help="truth-latest.json after the last step")
    p.add_argument("--fs", required=True)
    p.add_argument("--hosts", default="", help="only the NIDs it maps (default: every NID)")
    p.add_argument("--log", action="append", default=[])
    p.add_argument("--label", default="aggregator")
    p = sub.add_parser("check")
    p.add_argument("--truth", required=True)
    p.add_argument("--hosts", required=True)
    p.add_argument("--samples", required=True)
    p.add_argument("--faults", required=True)
    p.add_argument("--agg-log", action="append", default=[])
    p.add_argument("--gatherer-log", action="append", default=[], metavar="NAME=FILE")
    p.add_argument("--prefix", action="append", default=[])
    p.add_argument("--totals-host", default="lustre-totals")
    p.add_argument("--interval", type=float, default=2.0)
    p.add_argument("--deadline", type=float, default=0.5)
    p.add_argument("--tolerance", type=float, default=0.005)
    p.add_argument("--gatherers", type=int, default=3)
    p.add_argument("--from", dest="t_from", type=float)
    p.add_argument("--only-fs", default="", help="FS,FS: the truth of these filesystems only")
    p.add_argument("--only-mapped", action="store_true",
                   help="the truth of the NIDs the hosts file maps only (a relay's downstream)")
    p.add_argument("--metadata-ops", default="", help="all, or op,op,...: the aggregator's metadata_ops")
    p.add_argument("--clock-steps", default="",
                   help="FILE of 'T0 T1' lines: the aggregator's wall clock was stepped "
                        "between T0 and T1 (its sweeps are labelled by that clock then)")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.cmd == "self-test":
        import aggcheck_selftest
        return 0 if aggcheck_selftest.self_test() else 1
    return {"poll": cmd_poll, "garbage": cmd_garbage, "check": cmd_check,
            "totals": cmd_totals}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
