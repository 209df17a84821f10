#!/usr/bin/env python3
"""Helper of scripts/demo.sh: a hosts map for the aggregator, naming the
simulated clients node01, node02, ...: an IPv4 NID by its address (which
matches it on every LNet), any other NID (gni, IPv6) by the NID itself."""
import json
import sys

nids = sorted({r["nid"] for r in json.load(open(sys.argv[1]))["rows"]})
for i, nid in enumerate(nids):
    addr = nid.split("@")[0]
    print(addr if addr.count(".") == 3 else nid, f"node{i + 1:02d}")
