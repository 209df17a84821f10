#!/usr/bin/env python3
"""compare_once.py LHARVESTD SERVER_DIR: run `lharvestd --once` on one
simulated server tree and compare its JSON lines with the simulator's
expected-once.jsonl (key order, line order and extra keys do not matter;
every value must be exact).  Prints one line, exits 0 when they match."""
import json
import os
import subprocess
import sys
import tempfile

KEYS = ("fs", "nid", "read_bytes", "write_bytes", "read_ops", "write_ops",
        "oss_ops", "mds_ops")


def rows(lines):
    out = {}
    for line in lines:
        if not line.strip():
            continue
        obj = json.loads(line)
        key = (obj["fs"], obj["nid"])
        if key in out:
            raise SystemExit(f"duplicate line for {key}")
        out[key] = tuple(obj[k] for k in KEYS)
    return out


def main():
    binary, server = sys.argv[1], sys.argv[2]
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        f.write(f'role = "gatherer"\nlustre_root = "{server}"\n')
        conf = f.name
    try:
        p = subprocess.run([binary, "--once", "-f", conf], capture_output=True,
                           text=True, check=False)
    finally:
        os.unlink(conf)
    if p.returncode != 0:
        raise SystemExit(f"{server}: exit {p.returncode}: {p.stderr.strip()}")
    if p.stderr.strip():
        raise SystemExit(f"{server}: unexpected log: {p.stderr.strip()}")
    got = rows(p.stdout.splitlines())
    with open(os.path.join(server, "expected-once.jsonl")) as f:
        want = rows(f)
    if got != want:
        for k in sorted(set(got) | set(want)):
            if got.get(k) != want.get(k):
                print(f"  {k}: got {got.get(k)} want {want.get(k)}")
        raise SystemExit(f"{server}: --once differs from expected-once.jsonl")
    print(f"{server}: {len(got)} clients match")


if __name__ == "__main__":
    main()
