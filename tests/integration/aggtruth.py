"""aggtruth: the simulator's ground truth as aggregator_check.py compares
gmond with it: the hosts file, the truth rows, the true rates and the
gmond contents they make.  Standard library only."""

import json

MDOPS = ("open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename",
         "getattr", "setattr", "getxattr", "setxattr", "statfs", "sync", "punch",
         "migrate", "fallocate")


class CheckError(Exception):
    pass


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


def truth_rates(steps, metrics, win=20):
    """rate[(fs, nid, field)], windows [(t0, t1, {key: rate})] of the
    metrics ((field, units) pairs)."""
    fields = [m for m, _ in metrics]
    rate = rates_between(steps[0], steps[-1], fields)
    wins = []
    for i in range(0, len(steps) - win, win // 2):
        wins.append((steps[i][0], steps[i + win][0], rates_between(steps[i], steps[i + win], fields)))
    return rate, wins


class Model:
    """The expected gmond contents: host -> {metric: (truth, max)}, IPs."""

    def __init__(self, rate, wins, by_ip, by_nid, prefix, totals_host, metrics):
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
            for fl, units in metrics:
                name = "%s_%s" % (prefix.get(fs, fs), fl)
                self.fs_of[name] = fs
                tr = sum(rate[(fs, n, fl)] for n in nids)
                # Constant rates: the maximum is the rate (checked below).
                self.want.setdefault(h, {})[name] = (tr, tr, units)
        self.nclients = len({k[:2] for k in rate if k[1] not in self.unmapped})
        self.nhostfs = len([k for k in self.nids if k[0] != totals_host])
