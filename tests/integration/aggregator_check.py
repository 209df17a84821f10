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
    XML has two decimals);
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
usage errors.  Standard library only.
"""

import argparse
import bisect
import json
import os
import re
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

METRICS = (("read_bytes", "bytes/sec"), ("write_bytes", "bytes/sec"),
           ("oss_ops", "ops/sec"), ("mds_ops", "ops/sec"))
MDOPS = ("open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename",
         "getattr", "setattr", "getxattr", "setxattr", "statfs", "sync", "punch",
         "migrate", "fallocate")
EPS = 0.005           # half of the XML's last decimal
MAX_DETAIL = 12


class CheckError(Exception):
    pass


# ------------------------------------------------------------------ poll

def read_xml(port, timeout=5.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        chunks = []
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks)


def parse_xml(data):
    """({host: {"ip": ip, "m": {metric: [val, tn, units, group, spoof]}}},
    [[host, ip], ...] of every HOST element whose NAME an earlier one had:
    its metrics are merged into the first one's)."""
    hosts, dups = {}, []
    root = ET.fromstring(data)
    for h in root.iter("HOST"):
        ms = {}
        for m in h.findall("METRIC"):
            extra = {e.get("NAME"): e.get("VAL") for e in m.iter("EXTRA_ELEMENT")}
            ms[m.get("NAME")] = [m.get("VAL"), int(m.get("TN", "0")), m.get("UNITS"),
                                 extra.get("GROUP"), extra.get("SPOOF_HOST")]
        name = h.get("NAME")
        if name in hosts:
            dups.append([name, h.get("IP")])
            for k, v in ms.items():
                hosts[name]["m"].setdefault(k, v)
        else:
            hosts[name] = {"ip": h.get("IP"), "m": ms}
    return hosts, dups


def cmd_poll(a):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    with open(a.out, "a") as out:
        while not stop:
            now = time.time()
            due = (int(now / a.every) + 1) * a.every + a.every / 2
            if due - now > a.every:
                due -= a.every
            while not stop and time.time() < due:
                time.sleep(min(0.05, max(0.0, due - time.time())))
            if stop:
                break
            t = time.time()
            try:
                hosts, dups = parse_xml(read_xml(a.port))
                rec = {"t": round(t, 3), "hosts": hosts, "dups": dups}
            except (OSError, ET.ParseError) as e:
                rec = {"t": round(t, 3), "error": str(e)}
            out.write(json.dumps(rec, sort_keys=True) + "\n")
            out.flush()
    return 0


# --------------------------------------------------------------- garbage

def _hdr(typ, length, key_id=b"\0" * 4, sender=b"\0" * 8, seq=1, sweep=0,
         magic=b"LHVD", version=2, flags=0):
    return (magic + bytes([version, typ]) + struct.pack(">HI", flags, length) +
            key_id + sender + struct.pack(">QQ", seq, sweep))


def _one(addr, kind, send=b"", close_first=False, wait=5.0):
    host, port = addr.rsplit(":", 1)
    r = {"kind": kind, "local": None, "closed_after": None, "error": None}
    try:
        s = socket.create_connection((host, int(port)), timeout=wait)
    except OSError as e:
        r["error"] = str(e)
        return r
    r["local"] = "%s:%d" % s.getsockname()[:2]
    t0 = time.monotonic()
    try:
        if close_first:
            if send:
                s.sendall(send)
            return r
        if send:
            s.sendall(send)
        s.settimeout(0.2)
        while time.monotonic() - t0 < wait:
            try:
                b = s.recv(4096)
            except socket.timeout:
                continue
            except OSError:          # reset by the peer: closed too
                b = b""
            if not b:
                r["closed_after"] = round(time.monotonic() - t0, 3)
                break
    except OSError as e:
        r["error"] = str(e)
    finally:
        s.close()
    return r


def cmd_garbage(a):
    out = []
    idle = {}
    th = threading.Thread(target=lambda: idle.update(_one(a.addr, "idle", wait=a.idle_max)))
    th.start()
    out.append(_one(a.addr, "scan", close_first=True))
    out.append(_one(a.addr, "scan", close_first=True))
    out.append(_one(a.addr, "junk", send=b"GET / HTTP/1.0\r\n\r\n" + os.urandom(300)))
    out.append(_one(a.addr, "huge", send=_hdr(2, 0x7FFFFFF0)))
    body = os.urandom(80)
    out.append(_one(a.addr, "badmac", send=_hdr(2, len(body), key_id=os.urandom(4),
                                                 sender=os.urandom(8)) + body + os.urandom(32)))
    out.append(_one(a.addr, "midframe", send=_hdr(2, 500)[:20], close_first=True))
    th.join()
    out.append(idle)
    for r in out:
        print(json.dumps(r, sort_keys=True))
    return 0


# ----------------------------------------------------------------- check

def load_hosts(path):
    """(ip -> host, full NID -> host), first entry wins."""
    by_ip, by_nid = {}, {}
    with open(path) as f:
        for line in f:
            tok = line.split("#", 1)[0].split()
            if len(tok) < 2:
                continue
            d = by_nid if "@" in tok[0] else by_ip
            d.setdefault(tok[0], tok[1])
    return by_ip, by_nid


def ipv4(addr):
    parts = addr.split(".")
    if len(parts) != 4 or not all(p.isdigit() and int(p) < 256 for p in parts):
        return None
    return tuple(int(p) for p in parts)


def host_of(nid, by_ip, by_nid):
    if nid in by_nid:
        return by_nid[nid]
    addr = nid.split("@", 1)[0]
    if ipv4(addr) and addr in by_ip:
        return by_ip[addr]
    return None


def _expand_ops(r):
    """r["mds_<op>"] for every metadata op, from r["mdt_ops"]."""
    ops = r.get("mdt_ops", {})
    for op in MDOPS:
        r["mds_" + op] = ops.get(op, 0)


def load_truth(path, t_from=None):
    """[(time_s, {(fs, nid): {field: value}})] per step, steps from t_from.
    A row's "files" (wall clock) maps each target to its share of the row
    and "snapshot_ns", the snapshot time printed in its file."""
    steps = {}
    with open(path) as f:
        for line in f:
            if not line.endswith("\n"):
                break
            r = json.loads(line)
            _expand_ops(r)
            for per in r.get("files", {}).values():
                _expand_ops(per)
            steps.setdefault(r["step"], [r["time_ns"] / 1e9, {}])[1][(r["fs"], r["nid"])] = r
    out = [tuple(v) for _, v in sorted(steps.items())]
    if t_from is not None:
        out = [s for s in out if s[0] >= t_from]
    if len(out) < 12:
        raise CheckError("%s: %d steps from %s on, need at least 12" % (path, len(out), t_from))
    return out


def rates_between(first, last, fields):
    """rate[(fs, nid, field)] from step first to step last, each a
    (time_s, rows) of load_truth().  Per target when the rows say what each
    file held and when (the wall clock): its gain over the time between its
    two snapshot times, summed over targets, as lharvestd divides.  Else
    (or for a target not written since first) over the step times."""
    (u0, x), (u1, y) = first, last
    out = {}
    for key, r in y.items():
        base = x.get(key)
        now, was = r.get("files"), (base or {}).get("files")
        for fl in fields:
            if now is None or was is None:
                out[key + (fl,)] = (r[fl] - (base[fl] if base else 0)) / (u1 - u0)
                continue
            tot = 0.0
            for tgt, n in now.items():
                w = was.get(tgt)
                span = (n["snapshot_ns"] - w["snapshot_ns"]) / 1e9 if w else n["snapshot_ns"] / 1e9 - u0
                gain = n[fl] - (w[fl] if w else 0)
                if gain:
                    tot += gain / (span if span > 0 else u1 - u0)
            out[key + (fl,)] = tot
    return out


def truth_rates(steps, win=20):
    """rate[(fs, nid, field)], windows [(t0, t1, {key: rate})]"""
    fields = [m for m, _ in METRICS]
    rate = rates_between(steps[0], steps[-1], fields)
    wins = []
    for i in range(0, len(steps) - win, win // 2):
        wins.append((steps[i][0], steps[i + win][0], rates_between(steps[i], steps[i + win], fields)))
    return rate, wins


class Model:
    """The expected gmond contents: host -> {metric: (truth, max)}, IPs."""

    def __init__(self, rate, wins, by_ip, by_nid, prefix, totals_host):
        self.unmapped = sorted({k[1] for k in rate if host_of(k[1], by_ip, by_nid) is None})
        self.nids = {}                       # (host, fs) -> [nid]
        for fs, nid, _ in rate:
            h = host_of(nid, by_ip, by_nid)
            if h is not None and nid not in self.nids.setdefault((h, fs), []):
                self.nids[(h, fs)].append(nid)
        fss = sorted({k[0] for k in rate})
        for fs in fss:
            self.nids[(totals_host, fs)] = sorted({k[1] for k in rate if k[0] == fs})
        self.ip = {}
        for (h, fs), nids in self.nids.items():
            if h == totals_host:
                self.ip[h] = h
                continue
            for nid in nids:
                v4 = ipv4(nid.split("@", 1)[0])
                if v4 and (self.ip.get(h) is None or ipv4(self.ip[h]) is None or v4 < ipv4(self.ip[h])):
                    self.ip[h] = nid.split("@", 1)[0]
            self.ip.setdefault(h, h)
        self.want = {}                       # host -> metric -> (truth, max, units)
        self.fs_of = {}                      # metric -> fs
        for (h, fs), nids in sorted(self.nids.items()):
            for fl, units in METRICS:
                name = "%s_%s" % (prefix.get(fs, fs), fl)
                self.fs_of[name] = fs
                tr = sum(rate[(fs, n, fl)] for n in nids)
                # Constant rates: the maximum is the rate (checked below).
                self.want.setdefault(h, {})[name] = (tr, tr, units)
        self.nclients = len({k[:2] for k in rate if k[1] not in self.unmapped})
        self.nhostfs = len([k for k in self.nids if k[0] != totals_host])


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


def check(a, rep):
    by_ip, by_nid = load_hosts(a.hosts)
    prefix = dict(p.split("=", 1) for p in a.prefix)
    steps = load_truth(a.truth, a.t_from)
    rate, wins = truth_rates(steps)
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
    mdl = Model(rate, wins, by_ip, by_nid, prefix, a.totals_host)
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
                # A metadata op of a few requests per sweep: its count
                # in one sweep is the true rate's, give or take one.
                per_op = "_mds_" in name and name.rsplit("_mds_", 1)[1] in MDOPS
                grain = 1.0 / a.interval if per_op else 0.0
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
              "+- one request per sweep (worst %.4f%%: %s)"
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
        if g == a.gatherers and dl:
            when = ", ".join("%s swept it at %+.4f s" % (n, swept[(n, s)] - sid)
                             for n, s in sorted(swept) if s == sid)
            bad.append("sweep %d: all %d gatherers reported, closed at the deadline (%+.3f s)%s"
                       % (sid, g, t - sid, "; " + when if when else ""))
    rep.check("no sweep that every gatherer reported waited for its deadline", bad)
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


# ------------------------------------------------------------- self-test

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
        return 0 if self_test() else 1
    return {"poll": cmd_poll, "garbage": cmd_garbage, "check": cmd_check,
            "totals": cmd_totals}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
