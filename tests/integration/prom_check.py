#!/usr/bin/env python3
"""prom_check: lharvestd's /metrics, as Prometheus scraped it, against the
simulator's truth (tests/integration/it_prom.sh), through Prometheus's own
HTTP query API.

  prom_check.py exact URL TRUTH HOSTS T0 STEP0 T1 STEP1
      For every (host, fs) of the truth and each of the six counters,
      `lustre_client_<c>_total @ T1 - lustre_client_<c>_total @ T0` equals
      the sum over the host's NIDs of what the simulator counted between
      its steps STEP0 and STEP1 (truth.jsonl), exactly; and the same for
      the filesystems' totals.
  prom_check.py rate URL TRUTH HOSTS T_END WINDOW INTERVAL
      rate(lustre_client_<bytes>_total[WINDOW s] @ T_END) against the true
      rate over the same window (what the simulator wrote, over the time
      its files say it was written in), within the quantisation docs/api.md
      states: r x 2 x INTERVAL / WINDOW.
  prom_check.py resets URL T_END SPAN
      No lustre_client_ or lustre_fs_ counter went back (resets() is 0
      over the SPAN seconds before T_END).
  prom_check.py scraped URL AFTER
      Exit 0 when Prometheus has a sample of the aggregator scraped after
      AFTER (seconds since the epoch); prints that sample's time.

Prints "ok - ..." / "FAIL - ..." lines (agglib.sh replay).  Standard
library only.
"""

import json
import os
import sys
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aggtruth  # noqa: E402

FIELDS = ("read_bytes", "write_bytes", "read_ops", "write_ops", "oss_ops", "mds_ops")


def query(url, q, t=None):
    args = {"query": q}
    if t is not None:
        args["time"] = "%.3f" % t
    with urllib.request.urlopen(url + "/api/v1/query?" + urllib.parse.urlencode(args),
                                timeout=20) as r:
        ans = json.load(r)
    if ans.get("status") != "success":
        raise aggtruth.CheckError("%s: %s" % (q, ans))
    return ans["data"]["result"]


def steps_of(path):
    """{step: {(fs, nid): row}} of truth.jsonl (complete lines only)."""
    out = {}
    with open(path) as f:
        for line in f:
            if not line.endswith("\n"):
                break
            r = json.loads(line)
            out.setdefault(r["step"], {})[(r["fs"], r["nid"])] = r
    return out


def report(name, problems, checked):
    if problems:
        print("FAIL - " + name)
        for p in problems[:20]:
            print("  " + p)
        if len(problems) > 20:
            print("  ... and %d more" % (len(problems) - 20))
    else:
        print("ok - %s (%d values)" % (name, checked))
    return not problems


def truth_diff(steps, s0, s1, hosts):
    """{(host or None, fs): {field: delta}} between steps s0 and s1; None:
    a filesystem's total."""
    by_ip, by_nid = aggtruth.load_hosts(hosts)
    a, b = steps[s0], steps[s1]
    want = {}
    for key, r in b.items():
        fs, nid = key
        base = a.get(key)
        host = aggtruth.host_of(nid, by_ip, by_nid)
        for fl in FIELDS:
            d = r[fl] - (base[fl] if base else 0)
            for k in ((host, fs), (None, fs)) if host else ((None, fs),):
                want.setdefault(k, dict.fromkeys(FIELDS, 0))[fl] += d
    return want


def exact(url, truth, hosts, t0, s0, t1, s1):
    steps = steps_of(truth)
    want = truth_diff(steps, int(s0), int(s1), hosts)
    problems, checked = [], 0
    for fl in FIELDS:
        for kind, labels in (("client", ("host", "fs")), ("fs", ("fs",))):
            name = "lustre_%s_%s_total" % (kind, fl)
            q = "%s @ %s - %s @ %s" % (name, t1, name, t0)
            got = {tuple(m["metric"].get(x) for x in labels): int(float(m["value"][1]))
                   for m in query(url, q)}
            for k, v in want.items():
                if (kind == "fs") != (k[0] is None):
                    continue
                gk = (k[1],) if kind == "fs" else k
                checked += 1
                if got.get(gk) != v[fl]:
                    problems.append("%s%s: Prometheus %s, the simulator %d"
                                    % (name, dict(zip(labels, gk)), got.get(gk), v[fl]))
    return report("x @ t1 - x @ t0 equals the simulator's truth exactly, "
                  "per (host, fs) and per fs, every counter", problems, checked)


def true_rates(truth, t_start, t_end, hosts):
    """{(host, fs): {field: rate}} over the truth's steps inside the window."""
    steps = [s for s in aggtruth.load_truth(truth) if t_start <= s[0] <= t_end]
    if len(steps) < 2:
        raise aggtruth.CheckError("no truth steps in [%s, %s]" % (t_start, t_end))
    rate = aggtruth.rates_between(steps[0], steps[-1], ("read_bytes", "write_bytes"))
    by_ip, by_nid = aggtruth.load_hosts(hosts)
    out = {}
    for (fs, nid, fl), r in rate.items():
        host = aggtruth.host_of(nid, by_ip, by_nid)
        if host:
            out.setdefault((host, fs), {"read_bytes": 0.0, "write_bytes": 0.0})[fl] += r
    return out


def rate(url, truth, hosts, t_end, window, interval):
    t_end, window, interval = float(t_end), float(window), float(interval)
    want = true_rates(truth, t_end - window, t_end, hosts)
    tol = 2 * interval / window
    problems, checked, worst = [], 0, 0.0
    for fl in ("read_bytes", "write_bytes"):
        q = "rate(lustre_client_%s_total[%ds] @ %.3f)" % (fl, window, t_end)
        got = {(m["metric"]["host"], m["metric"]["fs"]): float(m["value"][1])
               for m in query(url, q)}
        for k, v in want.items():
            r = v[fl]
            if r == 0:
                continue
            checked += 1
            g = got.get(k)
            err = abs(g - r) / r if g is not None else float("inf")
            worst = max(worst, err)
            if err > tol:
                problems.append("%s %s: rate() %s, true %.0f (%.1f%% off, %.1f%% allowed)"
                                % (k, fl, g, r, 100 * err, 100 * tol))
    print("# rate() over %g s: worst %.2f%% off the true rate (%.1f%% allowed)"
          % (window, 100 * worst, 100 * tol))
    return report("rate() over %g s agrees with the true rate within 2 x interval / window"
                  % window, problems, checked)


def resets(url, t_end, span):
    problems, checked = [], 0
    for fam in ("lustre_client_read_bytes_total", "lustre_client_write_bytes_total",
                "lustre_client_mds_ops_total", "lustre_fs_read_bytes_total"):
        for m in query(url, "resets(%s[%ds] @ %s)" % (fam, int(float(span)), t_end)):
            checked += 1
            if float(m["value"][1]) != 0:
                problems.append("%s%s: %s resets" % (fam, m["metric"], m["value"][1]))
    return report("no counter went back over the run (resets() = 0)", problems, checked)


def scraped(url, after):
    res = query(url, "timestamp(lharvestd_sweeps_closed_total)")
    ts = [float(m["value"][1]) for m in res]
    if ts and max(ts) > float(after):
        print("%.3f" % max(ts))
        return True
    return False


def main(argv):
    cmds = {"exact": (exact, 7), "rate": (rate, 6), "resets": (resets, 3), "scraped": (scraped, 2)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    fn = cmds[argv[1]][0]
    try:
        return 0 if fn(argv[2].rstrip("/"), *argv[3:]) else 1
    except (aggtruth.CheckError, OSError, ValueError, KeyError) as ex:
        if argv[1] != "scraped":
            print("FAIL - %s: %s" % (argv[1], ex))
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
