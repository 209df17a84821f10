#!/usr/bin/env python3
"""Helper of scripts/demo.sh: run `lharvestd --once` on every simulated
server and print what the gatherers read, or (with a previous reading)
the per-client rates between two readings, summed over servers the way
the aggregator sums them."""
import json
import os
import subprocess
import sys


def read_server(binary, server_dir):
    conf = os.path.join(server_dir, "..", os.path.basename(server_dir) + ".conf")
    with open(conf, "w") as f:
        f.write('role = "gatherer"\n'
                f'lustre_root = "{os.path.abspath(server_dir)}"\n')
    out = subprocess.run([binary, "--once", "-f", conf], check=True,
                         capture_output=True, text=True)
    if out.stderr:
        sys.stderr.write(out.stderr)
    return [json.loads(line) for line in out.stdout.splitlines()]


def human(n, unit=""):
    for prefix in ("", "K", "M", "G", "T", "P"):
        if abs(n) < 1000:
            return f"{n:.1f} {prefix}{unit}".strip() if prefix else f"{n:.0f} {unit}".strip()
        n /= 1000.0
    return f"{n:.1f} E{unit}"


def main():
    binary, root, state = sys.argv[1], sys.argv[2], sys.argv[3]
    servers = sorted(d for d in os.listdir(root)
                     if os.path.isfile(os.path.join(root, d, "expected-once.jsonl")))
    with open(os.path.join(root, "truth-latest.json")) as f:
        now = json.load(f)["time"]
    total = {}
    for s in servers:
        rows = read_server(binary, os.path.join(root, s))
        print(f"  {s}: {len(rows)} (filesystem, client) pairs")
        for r in rows:
            key = (r["fs"], r["nid"])
            acc = total.setdefault(key, dict.fromkeys(
                ("read_bytes", "write_bytes", "read_ops", "write_ops", "oss_ops", "mds_ops"), 0))
            for k in acc:
                acc[k] += r[k]
    prev = None
    if os.path.exists(state):
        with open(state) as f:
            prev = json.load(f)
    with open(state, "w") as f:
        json.dump({"time": now, "total": {"|".join(k): v for k, v in total.items()}}, f)

    print()
    if prev is None:
        print(f"  {'filesystem':<9} {'client NID':<22} {'read':>10} {'written':>10}"
              f" {'oss ops':>10} {'mds ops':>10}   (cumulative, all servers)")
        for (fs, nid), v in sorted(total.items()):
            print(f"  {fs:<9} {nid:<22} {human(v['read_bytes'], 'B'):>10}"
                  f" {human(v['write_bytes'], 'B'):>10} {human(v['oss_ops']):>10}"
                  f" {human(v['mds_ops']):>10}")
        return
    dt = now - prev["time"]
    print(f"  {'filesystem':<9} {'client NID':<22} {'read/s':>11} {'write/s':>11}"
          f" {'oss ops/s':>10} {'mds ops/s':>10}   (over {dt:.1f} s)")
    for (fs, nid), v in sorted(total.items()):
        old = prev["total"].get(f"{fs}|{nid}")
        if old is None:
            print(f"  {fs:<9} {nid:<22} {'(new: no rate yet)':>45}")
            continue
        # The demo runs no reset between its two readings.  The gatherer
        # proper takes deltas per export, so it survives resets exactly.
        rate = {k: max(v[k] - old[k], 0) / dt for k in v}
        print(f"  {fs:<9} {nid:<22} {human(rate['read_bytes'], 'B/s'):>11}"
              f" {human(rate['write_bytes'], 'B/s'):>11} {rate['oss_ops']:>10.1f}"
              f" {rate['mds_ops']:>10.1f}")


if __name__ == "__main__":
    main()
