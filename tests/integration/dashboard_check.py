#!/usr/bin/env python3
"""dashboard_check: contrib/grafana-dashboard.json against what /metrics
serves (Grafana is not a Debian package, so this is its test).

  dashboard_check.py DASHBOARD METRICS_PAGE [PROMETHEUS_URL]

Checks: the JSON and the Grafana dashboard shape (title, uid, panels
with unique ids inside the 24-column grid, a datasource, targets with
unique refIds and an expression); every metric name a query or a
template variable uses is a family the page has; every panel's unit is
the one its queries' values have (rate() of *_bytes_total: binBps, of
another _total: ops, *_seconds or time(): s, anything else a count:
short).  With PROMETHEUS_URL, every query (Grafana's variables replaced)
is evaluated there and must succeed.  Prints "ok - ..." and
"FAIL - ..." lines (agglib.sh replay).  Standard library only.
"""

import json
import re
import sys
import urllib.parse
import urllib.request

PANEL_TYPES = {"timeseries", "stat", "bargauge", "table", "row"}
NAME = re.compile(r"\b((?:lustre|lharvestd)_[a-z0-9_]+)\b")
VARS = {"$__rate_interval": "1m", "$instance": ".*", "$fs": ".*", "$host": ".*",
        "${datasource}": ""}

results = []


def check(name, ok, detail=""):
    results.append((name, ok, detail))


def families(page):
    """The families a page has, from its TYPE lines."""
    return {line.split()[2] for line in page.splitlines() if line.startswith("# TYPE ")}


def unit_of(expr):
    """The unit the values of expr have."""
    if "rate(" in expr:
        return "binBps" if "_bytes_total" in expr else "ops"
    if "_seconds" in expr or "time()" in expr:
        return "s"
    return "short"


def panels_of(dash):
    out = []
    for p in dash.get("panels", []):
        out.append(p)
        out.extend(p.get("panels", []))
    return out


def check_shape(dash):
    bad = [k for k in ("title", "uid", "schemaVersion", "panels", "templating") if k not in dash]
    check("the dashboard has title, uid, schemaVersion, panels, templating", not bad, " ".join(bad))
    ids, problems = set(), []
    for p in panels_of(dash):
        t = p.get("title", "?")
        if p.get("id") in ids:
            problems.append("%s: id %s twice" % (t, p.get("id")))
        ids.add(p.get("id"))
        if p.get("type") not in PANEL_TYPES:
            problems.append("%s: type %r" % (t, p.get("type")))
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "xywh") or g["x"] + g["w"] > 24:
            problems.append("%s: gridPos %r" % (t, g))
        if p.get("type") == "row":
            continue
        if p.get("datasource", {}).get("uid") != "${datasource}":
            problems.append("%s: datasource is not the ${datasource} variable" % t)
        refs = [x.get("refId") for x in p.get("targets", [])]
        if not refs or len(set(refs)) != len(refs):
            problems.append("%s: targets %r" % (t, refs))
        if any(not x.get("expr") for x in p.get("targets", [])):
            problems.append("%s: a target without an expression" % t)
    check("every panel is well formed (%d panels)" % len(ids), not problems, "\n".join(problems))


def exprs_of(dash):
    """(where, expression) of every query and template variable."""
    out = []
    for p in panels_of(dash):
        for x in p.get("targets", []):
            out.append((p.get("title", "?"), x.get("expr", "")))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query", "")
        if v.get("type") == "query":
            out.append(("variable " + v.get("name", "?"), q or ""))
    return out


def check_names(dash, served):
    missing = []
    used = set()
    for where, e in exprs_of(dash):
        for n in NAME.findall(e):
            used.add(n)
            if n not in served:
                missing.append("%s: %s" % (where, n))
    check("every metric the dashboard queries is served by /metrics (%d names)" % len(used),
          not missing and used, "\n".join(missing))


def check_units(dash):
    wrong = []
    for p in panels_of(dash):
        if p.get("type") == "row":
            continue
        unit = p.get("fieldConfig", {}).get("defaults", {}).get("unit")
        want = {unit_of(x.get("expr", "")) for x in p.get("targets", [])}
        if len(want) != 1 or unit not in want:
            wrong.append("%s: unit %r, its queries' values are %s" % (p.get("title"), unit, sorted(want)))
    check("every panel's unit is its queries' (binBps, ops, s, short)", not wrong, "\n".join(wrong))


def substitute(e):
    for k, v in VARS.items():
        e = e.replace(k, v)
    m = re.fullmatch(r"label_values\((.*),\s*\w+\)", e.strip())
    return m.group(1) if m else e


def check_queries(dash, url):
    failed = []
    for where, e in exprs_of(dash):
        q = substitute(e)
        try:
            with urllib.request.urlopen(url + "/api/v1/query?" + urllib.parse.urlencode({"query": q}),
                                        timeout=10) as r:
                ans = json.load(r)
            if ans.get("status") != "success":
                failed.append("%s: %s: %s" % (where, q, ans))
        except Exception as ex:  # the reason is what the test shows
            body = getattr(ex, "read", lambda: b"")().decode(errors="replace")
            failed.append("%s: %s: %s %s" % (where, q, ex, body))
    check("Prometheus evaluates every query of the dashboard", not failed, "\n".join(failed))


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1]) as f:
            dash = json.load(f)
        check("the dashboard is JSON", True)
    except ValueError as ex:
        check("the dashboard is JSON", False, str(ex))
        dash = {}
    with open(sys.argv[2]) as f:
        served = families(f.read())
    check_shape(dash)
    check_names(dash, served)
    check_units(dash)
    if len(sys.argv) == 4:
        check_queries(dash, sys.argv[3].rstrip("/"))
    for name, ok, detail in results:
        print(("ok - " if ok else "FAIL - ") + name)
        for line in (detail or "").splitlines() if not ok else []:
            print("  " + line)
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
