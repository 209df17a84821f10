#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Check what `lharvestd --ganglia-reports DIR` wrote (it_greports.sh).

    greports_check.py --dir DIR --prefix P [--prefix P...] --totals HOST
                      [--extra] [--mdops OP,OP...] [--gmond VALUES]

Prints "ok - ..." / "FAIL - ..." lines (with "  " detail lines) and exits
1 on any failure.  It checks that:

  - DIR holds exactly, per prefix, <P>_lustre_io_report.json,
    <P>_lustre_ops_report.json, <P>_lustre_mdops_report.json (only with
    --mdops), view_lustre_<P>.json, and one default.json.example;
  - each report is ganglia-web 3.7.5 report JSON: only the keys graph.php
    reads, report_type "standard", report_name equal to the file's stem,
    which ends in "_report"; every series a metric, a 6-hex-digit colour
    distinct within the report, a label, line_width "2", type line or
    stack;
  - the series name exactly the metrics the aggregator sends for the
    prefix (read and write bytes; oss and mds ops, plus read and write
    RPCs with --extra; mds_<op> for each --mdops op);
  - each view is a standard view of aggregate graphs whose host regex
    matches the totals host exactly and whose metric regexes each match
    one of the prefix's metrics exactly;
  - default.json.example's included_reports are Debian's four, then
    every report written;
  - with --gmond (gmond.sh xml --values: "HOST METRIC VAL" lines from a
    real aggregator run): every metric a report or view names is one gmond
    has, for the totals host and for a client host; every Lustre metric
    gmond has (a name with one of the prefixes) is in a report; the view's
    host regex matches only the totals host among gmond's hosts.
"""
import argparse
import json
import os
import re
import sys

REPORT_KEYS = {"report_name", "report_type", "title", "vertical_label",
               "series"}
SERIES_KEYS = {"metric", "color", "label", "line_width", "type"}
VIEW_KEYS = {"view_name", "view_type", "items"}
ITEM_KEYS = {"aggregate_graph", "title", "vertical_label", "host_regex",
             "metric_regex", "graph_type", "exclude_host_from_legend_label"}
DEBIAN = ["load_report", "mem_report", "cpu_report", "network_report"]
# enum mdops_op order (common/lustre/mdops.h)
MDOPS = ["open", "close", "mknod", "link", "unlink", "mkdir", "rmdir",
         "rename", "getattr", "setattr", "getxattr", "setxattr", "statfs",
         "sync", "punch", "migrate", "fallocate"]

failed = 0


def result(name, problems):
    global failed
    if problems:
        failed += 1
        print("FAIL - " + name)
        for p in problems[:20]:
            print("  " + p)
    else:
        print("ok - " + name)


def expected(prefix, extra, mdops):
    io = [prefix + "_read_bytes", prefix + "_write_bytes"]
    ops = [prefix + "_oss_ops", prefix + "_mds_ops"]
    if extra:
        ops += [prefix + "_read_ops", prefix + "_write_ops"]
    md = [prefix + "_mds_" + op for op in MDOPS if op in mdops]
    return {"io": io, "ops": ops, "mdops": md}


def load(path, problems):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        problems.append("%s: %s" % (path, e))
        return None


def check_report(path, want, problems):
    r = load(path, problems)
    if r is None:
        return []
    stem = os.path.basename(path)[:-len(".json")]
    if not isinstance(r, dict) or set(r) != REPORT_KEYS:
        problems.append("%s: keys %s" % (stem, sorted(r)))
        return []
    if r["report_name"] != stem or not stem.endswith("_report"):
        problems.append("%s: report_name %s" % (stem, r["report_name"]))
    if r["report_type"] != "standard":
        problems.append("%s: report_type %s" % (stem, r["report_type"]))
    colors = set()
    metrics = []
    for s in r["series"]:
        if set(s) != SERIES_KEYS:
            problems.append("%s: series keys %s" % (stem, sorted(s)))
            continue
        if not re.fullmatch(r"[0-9A-Fa-f]{6}", s["color"]):
            problems.append("%s: colour %r" % (stem, s["color"]))
        if s["color"].lower() in colors:
            problems.append("%s: colour %s twice" % (stem, s["color"]))
        colors.add(s["color"].lower())
        if s["line_width"] != "2" or s["type"] not in ("line", "stack"):
            problems.append("%s: %s line_width %s type %s" % (
                stem, s["metric"], s["line_width"], s["type"]))
        metrics.append(s["metric"])
    if metrics != want:
        problems.append("%s: series %s, expected %s" % (stem, metrics, want))
    return metrics


def check_view(path, prefix, totals, allowed, problems):
    v = load(path, problems)
    if v is None:
        return [], []
    name = os.path.basename(path)
    if set(v) != VIEW_KEYS or v["view_type"] != "standard" or \
            v["view_name"] != "lustre_" + prefix:
        problems.append("%s: %s" % (name, {k: v[k] for k in v
                                           if k != "items"}))
        return [], []
    hregs, mregs = [], []
    for item in v["items"]:
        if set(item) != ITEM_KEYS or item["aggregate_graph"] != "true":
            problems.append("%s: item keys %s" % (name, sorted(item)))
            continue
        for h in item["host_regex"]:
            hregs.append(h["regex"])
            if not re.search(h["regex"], totals, re.I) or \
                    re.search(h["regex"], totals + "x", re.I):
                problems.append("%s: host regex %s" % (name, h["regex"]))
        for m in item["metric_regex"]:
            mregs.append(m["regex"])
            hits = [a for a in allowed if re.search(m["regex"], a, re.I)]
            if len(hits) != 1:
                problems.append("%s: metric regex %s matches %s" % (
                    name, m["regex"], hits))
    return hregs, mregs


def check_gmond(path, prefixes, totals, shown, hregs, mregs):
    problems = []
    by_host = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                by_host.setdefault(parts[0], set()).add(parts[1])
    lustre = {m for ms in by_host.values() for m in ms
              if any(m.startswith(p + "_") for p in prefixes)}
    clients = [h for h in by_host if h != totals and
               by_host[h] & lustre]
    if totals not in by_host or not clients:
        problems.append("gmond has no totals host or no client: %s" %
                        sorted(by_host))
        return problems
    for m in sorted(shown):
        if m not in by_host[totals]:
            problems.append("%s: not sent for %s" % (m, totals))
        if not any(m in by_host[c] for c in clients):
            problems.append("%s: not sent for any client" % m)
    for m in sorted(lustre - set(shown)):
        problems.append("%s: sent, in no report" % m)
    for r in hregs:
        hits = [h for h in by_host if re.search(r, h, re.I)]
        if hits != [totals]:
            problems.append("host regex %s matches %s" % (r, hits))
    for r in mregs:
        if not any(re.search(r, m, re.I) for m in by_host[totals]):
            problems.append("metric regex %s matches nothing" % r)
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--prefix", action="append", required=True)
    ap.add_argument("--totals", required=True)
    ap.add_argument("--extra", action="store_true")
    ap.add_argument("--mdops", default="")
    ap.add_argument("--gmond")
    a = ap.parse_args()
    mdops = MDOPS if a.mdops == "all" else [o for o in a.mdops.split(",")
                                            if o]
    files = set(os.listdir(a.dir))
    want_files = {"default.json.example"}
    reports = []
    for p in a.prefix:
        for kind, ms in expected(p, a.extra, mdops).items():
            if ms:
                want_files.add("%s_lustre_%s_report.json" % (p, kind))
                reports.append(("%s_lustre_%s_report" % (p, kind), ms))
        want_files.add("view_lustre_%s.json" % p)
    problems = []
    if want_files - files:
        problems.append("missing: %s" % sorted(want_files - files))
    if files - want_files:
        problems.append("extra: %s" % sorted(files - want_files))
    result("the files written are exactly the expected ones", problems)
    problems, shown = [], []
    for name, ms in reports:
        shown += check_report(os.path.join(a.dir, name + ".json"), ms,
                              problems)
    result("every report is ganglia-web report JSON naming the sent metrics",
           problems)
    problems, hregs, mregs = [], [], []
    for p in a.prefix:
        allowed = [m for ms in expected(p, a.extra, mdops).values()
                   for m in ms]
        h, m = check_view(os.path.join(a.dir, "view_lustre_%s.json" % p),
                          p, a.totals, allowed, problems)
        hregs += h
        mregs += m
    result("every view's aggregate graphs match the totals host exactly",
           problems)
    problems = []
    d = load(os.path.join(a.dir, "default.json.example"), problems)
    if d is not None and d != {"included_reports":
                               DEBIAN + [n for n, _ in reports]}:
        problems.append("default.json.example: %s" % d)
    result("default.json.example includes Debian's and every report",
           problems)
    if a.gmond:
        result("the reports name exactly the metrics gmond received",
               check_gmond(a.gmond, a.prefix, a.totals, shown, hregs,
                           mregs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
