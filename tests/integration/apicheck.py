"""apicheck: the JSON API's answers against the simulator's truth and
against docs/api.md (it_api.sh, it_top.sh).  Standard library only.

  apicheck.py get URL                 status and body of one answer
  apicheck.py totals T0 T1 S0 S1 ...  counters' growth == truth's growth
  apicheck.py order LIVE GROWTH ...   a live listing in the true order
  apicheck.py doc DOC BASE [--write]  live answers have the examples' shapes
  apicheck.py errors BASE             the error answers
Each check prints "ok - NAME" or "FAIL - NAME" and indented details."""

import argparse
import json
import os
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aggtruth  # noqa: E402

COUNTERS = ("read_bytes", "write_bytes", "read_ops", "write_ops", "oss_ops", "mds_ops")


def get(url):
    """(HTTP status, parsed body) of a GET."""
    req = urllib.request.Request(url)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=20) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def report(name, problems):
    if problems:
        print("FAIL - " + name)
        for p in problems[:12]:
            print("  " + p)
        if len(problems) > 12:
            print("  ... %d more" % (len(problems) - 12))
    else:
        print("ok - " + name)
    return not problems


def truth_at(path, step):
    """{(fs, nid): row} of one step of truth.jsonl."""
    out = {}
    with open(path) as f:
        for line in f:
            if not line.endswith("\n"):
                break
            r = json.loads(line)
            if r["step"] == step:
                out[(r["fs"], r["nid"])] = r
    return out


def growth(truth, hosts, s0, s1):
    """{(host, fs): {counter or mds_<op>: gain}} from step s0 to s1."""
    by_ip, by_nid = aggtruth.load_hosts(hosts)
    a, b = truth_at(truth, s0), truth_at(truth, s1)
    out = {}
    for key, r in b.items():
        fs, nid = key
        h = aggtruth.host_of(nid, by_ip, by_nid)
        if h is None:
            continue
        base = a.get(key, {})
        g = out.setdefault((h, fs), {})
        for c in COUNTERS:
            g[c] = g.get(c, 0) + r[c] - base.get(c, 0)
        for op, v in r.get("mdt_ops", {}).items():
            g["mds_" + op] = g.get("mds_" + op, 0) + v - base.get("mdt_ops", {}).get(op, 0)
    return out


def rows(listing):
    return {(r["host"], r["fs"]): r for r in listing["data"]["hosts"]}


def cmd_totals(a):
    t0, t1 = (json.load(open(p)) for p in (a.t0, a.t1))
    want = growth(a.truth, a.hosts, a.s0, a.s1)
    r0, r1 = rows(t0), rows(t1)
    bad = []
    if set(r1) != set(want):
        bad.append("rows %s, truth %s" % (sorted(r1), sorted(want)))
    for key, g in sorted(want.items()):
        if key not in r1 or key not in r0:
            continue
        for c in COUNTERS:
            got = r1[key]["total"][c] - r0[key]["total"][c]
            if got != g[c]:
                bad.append("%s %s: totals grew by %d, the simulator wrote %d" % (key, c, got, g[c]))
    ok = report("every (host, fs) total grew by exactly what the simulator wrote (%d rows, steps %d to %d)"
                % (len(want), a.s0, a.s1), bad)
    bad = []
    for key, r in sorted(r1.items()):
        if any(r["rate"][c] != 0 for c in COUNTERS):
            bad.append("%s: current %s, rate %s" % (key, r["current"], r["rate"]))
    ok &= report("once the simulator stopped, every rate is 0", bad)
    if a.host_t0:
        ok &= check_mdops(a, want)
    return ok


def check_mdops(a, want):
    h0, h1 = (json.load(open(p))["data"] for p in (a.host_t0, a.host_t1))
    bad = []
    f0 = {f["fs"]: f for f in h0["filesystems"]}
    for f in h1["filesystems"]:
        g = want.get((h1["host"], f["fs"]), {})
        for k, v in g.items():
            if not k.startswith("mds_") or k == "mds_ops" or v == 0:
                continue
            op = k[4:]
            got = f["mdops"].get(op, {}).get("total", 0) - f0[f["fs"]]["mdops"].get(op, {}).get("total", 0)
            if got != v:
                bad.append("%s %s: grew by %d, the simulator wrote %d" % (f["fs"], op, got, v))
    return report("/v1/hosts/%s: each metadata operation's total grew by the truth" % h1["host"], bad)


def order_problems(live, want, a):
    counter = {"read": "read_bytes", "write": "write_bytes"}.get(a.sort, a.sort)
    got = [(r["host"], r["fs"]) for r in live["data"]["hosts"]]
    keys = [k for k in want if k[1] == a.fs] if a.fs else list(want)
    bad = [] if sorted(got) == sorted(keys) else ["live rows %s, true rows %s" % (sorted(got), sorted(keys))]
    # One sweep's rate is within a fraction of a percent of the truth:
    # rows whose true rates are 5% apart or more must be in order.
    for x, y in zip(got, got[1:]):
        if x in want and y in want and want[x][counter] < 0.95 * want[y][counter]:
            bad.append("%s (true %d) before %s (true %d)" % (x, want[x][counter], y, want[y][counter]))
    rates = [r["rate"][counter] for r in live["data"]["hosts"]]
    if rates != sorted(rates, reverse=True):
        bad.append("rates not descending: %s" % rates)
    return bad


def cmd_order(a):
    """Any one of the live listings (sweeps in a row) in the true order."""
    want = growth(a.truth, a.hosts, a.s0, a.s1)
    bad = []
    for path in a.live:
        bad = order_problems(json.load(open(path)), want, a)
        if not bad:
            break
    return report("/v1/hosts?fs=%s&sort=%s lists the hosts in the true order" % (a.fs or "", a.sort), bad)


def shape(v):
    """The keys and types of a JSON value (lists: their first element's)."""
    if isinstance(v, dict):
        return {k: shape(x) for k, x in v.items()}
    if isinstance(v, list):
        return [shape(v[0])] if v else []
    if isinstance(v, bool) or v is None:
        return type(v).__name__
    if isinstance(v, (int, float)):
        return "number"
    return type(v).__name__


def same_shape(doc, live, where, bad):
    if isinstance(doc, dict) and isinstance(live, dict):
        # mdops is keyed by the operations a host did: a map, not a shape.
        if set(doc) != set(live) and not where.endswith(".mdops"):
            bad.append("%s: keys %s in the doc, %s live" % (where, sorted(doc), sorted(live)))
        for k in set(doc) & set(live):
            same_shape(doc[k], live[k], where + "." + k, bad)
    elif isinstance(doc, list) and isinstance(live, list):
        if doc and live:
            same_shape(doc[0], live[0], where + "[0]", bad)
    elif doc != live and "NoneType" not in (doc, live):
        bad.append("%s: %s in the doc, %s live" % (where, doc, live))


MARK = "<!-- example: "


def examples(text):
    """[(path, start, end)] of each example block's body in text."""
    out, pos = [], 0
    while True:
        i = text.find(MARK, pos)
        if i < 0:
            return out
        path = text[i + len(MARK):text.index(" -->", i)]
        s = text.index("```json\n", i) + len("```json\n")
        e = text.index("```", s)
        out.append((path, s, e))
        pos = e


def cmd_doc(a):
    text = open(a.doc).read()
    ok, new, last = True, [], 0
    for path, s, e in examples(text):
        routes = path.startswith("/v1/routes")
        if (a.only and path != a.only) or (routes and not a.relay and a.write):
            continue  # left as it is
        status, body = get((a.relay if routes and a.relay else a.base) + path)
        new.append(text[last:s] + json.dumps(body, indent=2, sort_keys=True) + "\n")
        last = e
        if a.write:
            continue
        bad = []
        try:
            doc = json.loads(text[s:e])
        except ValueError as err:
            bad.append("the example is not JSON: %s" % err)
            doc = None
        if doc is not None:
            same_shape(shape(doc), shape(body), path, bad)
        if status != 200 or body.get("success") is not True:
            bad.append("HTTP %d %s" % (status, body))
        ok &= report("docs/api.md: %s has the shape of the live answer" % path, bad)
    if a.write:
        open(a.doc, "w").write("".join(new) + text[last:])
        print("ok - docs/api.md: examples written from the live answers")
    return ok


ERRORS = [
    ("/v1/hosts?sortt=read", 400, 'unknown parameter "sortt"'),
    ("/v1/hosts?sort=bytes", 400, "sort: must be one of read, write, read_ops, write_ops, oss_ops, mds_ops, host"),
    ("/v1/hosts?limit=0", 400, "limit: must be an integer from 1 to 10000"),
    ("/v1/hosts?limit=10001", 400, "limit: must be an integer from 1 to 10000"),
    ("/v1/hosts?limit=12abc", 400, "limit: must be an integer from 1 to 10000"),
    ("/v1/hosts?fs=", 400, "fs: empty"),
    ("/v1/status?verbose=1", 400, 'unknown parameter "verbose"'),
    ("/v1/gatherers?x", 400, 'unknown parameter "x"'),
    ("/v1/hosts/node99", 404, 'unknown host "node99"'),
    ("/v1/hosts/node01?fs=scratch", 400, 'unknown parameter "fs"'),
    ("/v1/hosts/node01/scratch", 404, "no such path: /v1/hosts/node01/scratch"),
    ("/v1/routes", 404, "no routes: this is an aggregator, not a relay"),
]


def cmd_errors(a):
    ok = True
    for path, code, msg in ERRORS:
        status, body = get(a.base + path)
        want = {"success": False, "message": msg, "data": None}
        bad = [] if (status, body) == (code, want) else ["HTTP %d %s" % (status, json.dumps(body))]
        ok &= report("%s: %d %s" % (path, code, msg), bad)
    return ok


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("get")
    g.add_argument("url")
    t = sub.add_parser("totals")
    for n in ("t0", "t1"):
        t.add_argument(n)
    t.add_argument("s0", type=int)
    t.add_argument("s1", type=int)
    t.add_argument("--truth", required=True)
    t.add_argument("--hosts", required=True)
    t.add_argument("--host-t0")
    t.add_argument("--host-t1")
    o = sub.add_parser("order")
    o.add_argument("live", nargs="+")
    o.add_argument("s0", type=int)
    o.add_argument("s1", type=int)
    o.add_argument("--truth", required=True)
    o.add_argument("--hosts", required=True)
    o.add_argument("--fs")
    o.add_argument("--sort", default="read")
    d = sub.add_parser("doc")
    d.add_argument("doc")
    d.add_argument("base")
    d.add_argument("--relay")
    d.add_argument("--write", action="store_true")
    d.add_argument("--only", help="only the example of this path")
    e = sub.add_parser("errors")
    e.add_argument("base")
    a = p.parse_args()
    if a.cmd == "get":
        status, body = get(a.url)
        print(json.dumps({"status": status, "body": body}))
        return 0
    return 0 if {"totals": cmd_totals, "order": cmd_order, "doc": cmd_doc,
                 "errors": cmd_errors}[a.cmd](a) else 1


if __name__ == "__main__":
    sys.exit(main())
