#!/usr/bin/env python3
"""Helper of scripts/demo.sh: from what the gatherer daemons delivered to
lharvest-dump (its JSON lines), print each client's rates over the last
sweep that every gatherer delivered, summed over servers as the aggregator
sums them: for each counter, the sum over gatherers of delta / span."""
import json
import sys

from demo_show import human

COUNTERS = ("read_bytes", "write_bytes", "read_ops", "write_ops",
            "oss_ops", "mds_ops")


def main():
    recs, seen = [], set()
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                if not line.endswith("\n"):
                    continue
                r = json.loads(line)
                key = (r["sender"], r["batch"], r["fs"], r["nid"])
                if key not in seen:
                    seen.add(key)
                    recs.append(r)
    if not recs:
        print("  nothing delivered")
        return 1
    senders = sorted({r["sender"] for r in recs})
    by_sweep = {}
    for r in recs:
        by_sweep.setdefault(r["sweep"], set()).add(r["sender"])
    complete = [s for s, who in by_sweep.items() if len(who) == len(senders)]
    sweep = max(complete) if complete else max(by_sweep)
    print(f"  {len(senders)} gatherers ({', '.join(senders)}), "
          f"{len({r['batch'] for r in recs})} batches, "
          f"{len(recs)} records; the last sweep, {sweep}:")
    rate = {}
    for r in recs:
        if r["sweep"] != sweep:
            continue
        acc = rate.setdefault((r["fs"], r["nid"]), dict.fromkeys(COUNTERS, 0.0))
        spans = r.get("cspan_us") or [r["span_us"]] * len(COUNTERS)
        for i, c in enumerate(COUNTERS):
            if r[c]:
                acc[c] += r[c] / (spans[i] / 1e6)
    print(f"  {'filesystem':<9} {'client NID':<22} {'read/s':>11} {'write/s':>11}"
          f" {'oss ops/s':>10} {'mds ops/s':>10}")
    for (fs, nid), a in sorted(rate.items()):
        print(f"  {fs:<9} {nid:<22} {human(a['read_bytes'], 'B/s'):>11}"
              f" {human(a['write_bytes'], 'B/s'):>11} {a['oss_ops']:>10.1f}"
              f" {a['mds_ops']:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
