#!/usr/bin/env python3
# perf_decode.py TMPDIR PERF_FILE
#
# Where the aggregator's decode phase goes, from a profiled run of
# tests/bench/agg_load.sh kept on disk:
#
#   LH_BENCH_KEEP=1 LH_BENCH_PERF=/tmp/agg.perf tests/bench/agg_load.sh build 6
#   tests/bench/perf_decode.py /tmp/lhaggload.XXXXXX /tmp/agg.perf
#
# The decode phase of sweep T is the time from T + 200 ms (the frames go
# out) until the aggregator starts closing it (its "closing took" line,
# less the close's wall time).  Each sample in those windows goes to the
# first category found walking its stack up from the leaf; the shares are
# printed as a Markdown table (docs/performance.md, issue 19).
import collections
import re
import subprocess
import sys

OFFSET_S = 0.2
CATS = [
    ("HMAC (SHA-256)", ["sha256", "SHA256", "EVP_", "hmac"]),
    ("hash lookups (the client, its entry in the sweep)",
     ["sw_client_key_get", "hindex_find", "client_match", "sw_group_get",
      "sw_client_get", "client_get"]),
    ("staging the records", ["msg_stage_rec_add", "msg_stage_group",
                             "msg_stage_ops"]),
    ("the decoding pass",
     ["sweep_pass", "get_record", "get_span", "get_counter_spans",
      "get_address", "group_begin", "sweep_header", "ops_",
      "msg_sweep_stage", "msg_sweep_decode", "rbuf_get", "nid_format"]),
    ("sums (deltas, rates, the sweep's entries)",
     ["sw_acc_hinted", "sw_acc_get", "acc_get", "add_ops", "add_stage",
      "add_group", "add_rec", "sweeps_add"]),
    ("socket reads, reassembly, frame checks",
     ["evbuffer", "bufferevent", "peer_read_cb", "tcp_", "readv",
      "session_", "frame_", "on_frame", "event_base_loop", "epoll",
      "do_syscall"]),
]
COPY = "the payload kept for resends (malloc, copy)"


def windows(tmp):
    out = []
    for line in open(tmp + "/agg.log"):
        m = re.match(r"(\S+) lharvestd: sweep (\d+): closing took \S+ s CPU "
                     r"\((\S+) s wall\)", line)
        if m:
            start = int(m.group(2)) + OFFSET_S
            end = float(m.group(1)) - float(m.group(3))
            if end - start < 1:  # a sweep that had frames
                out.append((start, end))
    return out


def samples(perf):
    out = subprocess.run(["perf", "script", "-i", perf, "-F", "time,ip,sym",
                          "--no-inline"], capture_output=True, text=True,
                         check=True).stdout
    res, cur = [], None
    for line in out.splitlines() + [""]:
        if not line.strip():
            if cur:
                res.append(cur)
            cur = None
        elif cur is None:
            m = re.match(r"\s*(\d+\.\d+):", line)
            cur = (float(m.group(1)) if m else 0.0, [])
        else:
            p = line.split(None, 1)
            cur[1].append((p[1] if len(p) > 1 else "?").split("+")[0])
    return res


def classify(stack):
    for i, fr in enumerate(stack):
        if fr == "sweeps_add" and i > 0 and any(
                k in stack[i - 1] for k in ("memmove", "memcpy", "malloc",
                                            "page", "fault")):
            return COPY
        for name, keys in CATS:
            if any(k in fr for k in keys):
                return name
    return "other"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: perf_decode.py TMPDIR PERF_FILE")
    win = windows(sys.argv[1])
    inwin = [s for s in samples(sys.argv[2])
             if any(a <= s[0] <= b for a, b in win)]
    if not inwin:
        sys.exit("no samples in the decode windows")
    cnt = collections.Counter(classify(st) for _, st in inwin)
    print("%d decode phases, %d samples" % (len(win), len(inwin)))
    print("| share | where |\n|---|---|")
    for name, v in cnt.most_common():
        print("| %.1f %% | %s |" % (100 * v / len(inwin), name))


main()
