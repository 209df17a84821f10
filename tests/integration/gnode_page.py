"""gnode_page PROBE BASE OUTDIR HOST SINCE NOW [+]METRIC...: what
ganglia-web's page of HOST holds, from tests/ganglia-web/probe.html's
JSON (PROBE): every image loaded, and for each METRIC a graph of HOST's
METRIC among them.  The graph of each +METRIC is drawn again from BASE
for SINCE..NOW (epoch seconds), and once more for a host that does not
exist: HOST's must have far more pixels of ganglia-web's metric colour
(graph.d/metric.php fills the area under the value with it; the legend's
swatch is in both).  Prints what it saw and what is missing; exit status
1 then."""

import json
import os
import sys
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ganglia-web"))
import gwebcheck  # noqa: E402

METRIC_COLOUR = (0x55, 0x55, 0x55)   # conf_default.php's default_metric_color


def graph_of(images, host, metric):
    for im in images:
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(im["src"]).query)
        if q.get("h") == [host] and q.get("m") == [metric] and "g" not in q:
            return im
    return None


def area(base, src, host, since, now, png):
    """Pixels of the metric colour in src's graph redrawn for host."""
    u = urllib.parse.urlsplit(urllib.parse.urljoin(base, src))
    q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
    # n: the y axis from 0 (rrdtool would start it just under a constant
    # value, and the area would be a sliver); "0" itself is false to PHP.
    q.update(h=host, z="medium", cs=since, ce=now, n="-0.000001")
    q.pop("r", None)
    url = urllib.parse.urlunsplit(u._replace(query=urllib.parse.urlencode(q)))
    with urllib.request.urlopen(url) as r:
        data = r.read()
    open(png, "wb").write(data)
    return gwebcheck.colour_stats(gwebcheck.png_decode(data), METRIC_COLOUR, tol=8)[0]


def main():
    probe, base, outdir, host, since, now = sys.argv[1:7]
    args = sys.argv[7:]
    metrics = [m.lstrip("+") for m in args]
    p = json.load(open(probe))
    bad = ["not loaded: %s" % im["src"] for im in p["images"]
           if not im["complete"] or im["naturalWidth"] == 0]
    bad += ["no graph of %s" % m for m in metrics if graph_of(p["images"], host, m) is None]
    os.makedirs(outdir, exist_ok=True)
    for m in (a[1:] for a in args if a.startswith("+")):
        g = graph_of(p["images"], host, m)
        if g is None:
            continue
        n = area(base, g["src"], host, since, now, os.path.join(outdir, m + ".png"))
        z = area(base, g["src"], "nosuchhost", since, now,
                 os.path.join(outdir, m + "-nosuchhost.png"))
        print("%s: %d pixels of the metric colour, %d for nosuchhost" % (m, n, z))
        if n < z + 200:
            bad.append("%s: no area drawn (%d pixels, %d for nosuchhost)" % (m, n, z))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
