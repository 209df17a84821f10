"""gwebcheck: what ganglia-web drew, compared with what the simulator
wrote.  Standard library only (a small PNG decoder on zlib: python3-pil
is not needed).  Prints "ok - ..." / "FAIL - ..." lines (details
indented), as the integration tests' replay() reads them.

  gwebcheck.py pixels PNG RRGGBB...        per colour: pixels, mean height
  gwebcheck.py check --probe-node JSON --probe-cluster JSON --reports DIR
      --truth TRUTH --hosts HOSTS --http URL --out DIR --nodes N1,N2,...
      --unknown HOST --cluster NAME --since EPOCH

The plot-area check draws each node's report again from the graph.php
URL the page holds, verbose (rrdtool graphv says where the plot area
is: only there are the series counted, not in the legend's swatches),
the last few minutes only and one fixed y scale
for every node: then a series' colour sits higher for a busier node,
and the order of the nodes by the height of that colour must be their
order by the rate the simulator wrote (the truth file)."""

import argparse
import json
import os
import struct
import sys
import urllib.parse
import urllib.request
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import aggtruth  # noqa: E402


def _unfilter(raw, w, h, bpp):
    stride = w * bpp
    out, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        ft, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + a) & 255
            elif ft == 2:
                line[x] = (line[x] + b) & 255
            elif ft == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.append(bytes(line))
        prev = line
    return out


def png_decode(data):
    """(width, height, rows of (r, g, b) tuples); 8-bit RGB, RGBA or
    palette, not interlaced: what rrdtool writes."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, plte, hdr = 8, b"", None, None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            plte = [tuple(body[i:i + 3]) for i in range(0, len(body), 3)]
        elif kind == b"IDAT":
            idat += body
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or interlace or ctype not in (2, 3, 6):
        raise ValueError("PNG kind not handled: depth %d type %d" % (depth, ctype))
    bpp = {2: 3, 3: 1, 6: 4}[ctype]
    rows = _unfilter(zlib.decompress(idat), w, h, bpp)
    if ctype == 3:
        return w, h, [[plte[v] for v in r] for r in rows]
    return w, h, [[tuple(r[i:i + 3]) for i in range(0, len(r), bpp)] for r in rows]


def colour_stats(img, rgb, box=None, tol=24):
    """(pixels of colour rgb within tol per channel, their mean height
    above the box's bottom); box (left, top, width, height) is the plot
    area, else the whole image."""
    w, h, rows = img
    left, top, bw, bh = box or (0, 0, w, h)
    n = tot = 0
    for y in range(top, min(top + bh, h)):
        for p in rows[y][left:left + bw]:
            if all(abs(p[i] - rgb[i]) <= tol for i in range(3)):
                n += 1
                tot += top + bh - y
    return n, (tot / n if n else 0.0)


def graphv(data):
    """rrdtool graphv's answer: ({key: value}, PNG bytes)."""
    info, pos = {}, 0
    while True:
        end = data.index(b"\n", pos)
        line = data[pos:end].decode("ascii", "replace")
        pos = end + 1
        k, _, v = line.partition(" = ")
        if k == "image":
            return info, data[pos:pos + int(v.split(":")[1])]
        info[k] = v


def hexrgb(s):
    s = s.lstrip("#")
    return tuple(int(s[i:i + 2], 16) for i in (0, 2, 4))


def fetch(url, path):
    with urllib.request.urlopen(url, timeout=30) as r:
        data = r.read()
    with open(path, "wb") as f:
        f.write(data)
    return data


class Out:
    def __init__(self):
        self.failed = 0

    def check(self, name, good, *details):
        print(("ok - " if good else "FAIL - ") + name)
        if not good:
            self.failed += 1
            for d in details:
                print("  " + str(d))


def load_reports(d):
    """[(name, [(metric, rgb, stacked)])] of the standard reports in d."""
    out = []
    for fn in sorted(os.listdir(d)):
        if not fn.endswith("_report.json"):
            continue
        r = json.load(open(os.path.join(d, fn)))
        ser = [(s["metric"], hexrgb(s["color"]), s.get("type") == "stack")
               for s in r.get("series", []) if "metric" in s and "color" in s]
        out.append((r.get("report_name", fn[:-5]), ser))
    return out


def host_rates(a, fields):
    """host -> {(fs, field): rate the simulator wrote}, over the truth
    file's steps since --since."""
    steps = aggtruth.load_truth(a.truth, a.since)
    rate = aggtruth.rates_between(steps[0], steps[-1], fields)
    by_ip, by_nid = aggtruth.load_hosts(a.hosts)
    out = {}
    for (fs, nid, fl), v in rate.items():
        h = aggtruth.host_of(nid, by_ip, by_nid)
        if h is not None:
            d = out.setdefault(h, {})
            d[(fs, fl)] = d.get((fs, fl), 0.0) + v
    return out


def levels(series, rates, fss):
    """metric -> (its rate, the height its colour's pixels centre on: a
    line's value, or the middle of its band in a stack), and the top of
    the graph's highest series."""
    out, stack, top = {}, 0.0, 0.0
    for metric, _, stacked in series:
        fs, v = next(((f, rates.get((f, metric[len(f) + 1:]), 0.0)) for f in fss
                      if metric.startswith(f + "_")), (None, 0.0))
        mid = v
        if stacked:
            mid = stack + v / 2
            stack += v
        out[metric] = (v, mid)
        top = max(top, stack if stacked else v)
    return out, top


def images_loaded(o, probe, what):
    p = json.load(open(probe))
    g = [i for i in p["images"] if "graph.php" in i["src"]]
    bad = [i["src"] for i in g if not i["complete"] or i["naturalWidth"] <= 0]
    o.check("%s: %d graphs, every one loaded (naturalWidth > 0)" % (what, len(g)),
            len(g) > 0 and not bad, *bad)
    return g


def redraw(a, src, host, top, tag):
    """The report at src, for host, since --since, with the y axis fixed
    at 0..top; (path, decoded image, plot area)."""
    u = urllib.parse.urlsplit(urllib.parse.urljoin(a.http + "/ganglia/", src))
    q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
    # verbose: rrdtool graphv, which says where the plot area is.
    q.update(h=host, z="medium", cs=str(int(a.since)), ce=str(int(a.now)),
             x="%.6g" % top, n="-0.000001", verbose="1")
    q.pop("r", None)
    url = urllib.parse.urlunsplit(u._replace(query=urllib.parse.urlencode(q)))
    path = os.path.join(a.out, "%s-%s.png" % (tag, host))
    info, png = graphv(fetch(url, path + ".graphv"))
    with open(path, "wb") as f:
        f.write(png)
    box = tuple(int(info["graph_" + k]) for k in ("left", "top", "width", "height"))
    return path, png_decode(png), box


def check_report(o, a, name, series, src, rates, fss):
    """One report: each node's series where the simulator's rates put
    them, and none for the unknown host."""
    nodes = a.nodes.split(",")
    lv, tops = {}, [1.0]
    for h in nodes:
        d, t = levels(series, rates.get(h, {}), fss)
        lv[h] = {m: d[m][1] for m in d}
        lv[h].update({("rate", m): d[m][0] for m in d})
        tops.append(t)
    top = 1.25 * max(tops)
    got = {}
    for h in nodes + [a.unknown]:
        path, img, box = redraw(a, src, h, top, name)
        got[h] = {m: colour_stats(img, rgb, box) for m, rgb, _ in series}
        got[h]["path"] = path
    for m, rgb, _ in series:
        busy = [h for h in nodes if lv[h][("rate", m)] > 0.05 * top]
        miss = ["%s: %s none in %s" % (h, m, got[h]["path"]) for h in busy if got[h][m][0] == 0]
        o.check("%s: %s's colour drawn for every node that has it (%s)" % (name, m, ",".join(busy)),
                not miss, *miss)
        order = sorted(busy, key=lambda h: lv[h][m])
        wrong = ["%s (%.3g, height %.1f px) not below %s (%.3g, height %.1f px)"
                 % (x, lv[x][m], got[x][m][1], y, lv[y][m], got[y][m][1])
                 for x, y in zip(order, order[1:])
                 if lv[y][m] > 1.1 * lv[x][m] and not got[x][m][1] < got[y][m][1]]
        o.check("%s: %s higher for a busier node, in the simulator's order %s"
                % (name, m, " < ".join(order)), not wrong, *wrong)
        o.check("%s: %s absent for the unknown host %s" % (name, m, a.unknown),
                got[a.unknown][m][0] == 0,
                "%d pixels in %s" % (got[a.unknown][m][0], got[a.unknown]["path"]))


def cmd_check(a):
    o = Out()
    reports = load_reports(a.reports)
    node = images_loaded(o, a.probe_node, "node page")
    images_loaded(o, a.probe_cluster, "cluster view")
    fields = sorted({s[0].split("_", 1)[1] for _, ser in reports for s in ser})
    fss = sorted({s[0].split("_", 1)[0] for _, ser in reports for s in ser})
    rates = host_rates(a, fields)
    for name, series in reports:
        src = [i["src"] for i in node if "g=%s&" % name in i["src"] + "&"]
        o.check("node page: report %s present and loaded" % name, bool(src))
        if src and series:
            check_report(o, a, name, series, src[0], rates, fss)
    return 1 if o.failed else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    px = sub.add_parser("pixels")
    px.add_argument("png")
    px.add_argument("colours", nargs="+")
    ck = sub.add_parser("check")
    for k in ("probe-node", "probe-cluster", "reports", "truth", "hosts", "http", "out",
              "nodes", "unknown"):
        ck.add_argument("--" + k, required=True)
    ck.add_argument("--since", type=float, required=True)
    ck.add_argument("--now", type=float, required=True)
    a = ap.parse_args()
    if a.cmd == "pixels":
        img = png_decode(open(a.png, "rb").read())
        for c in a.colours:
            n, ht = colour_stats(img, hexrgb(c))
            print("%s %d %.1f" % (c, n, ht))
        return 0
    return cmd_check(a)


if __name__ == "__main__":
    sys.exit(main())
