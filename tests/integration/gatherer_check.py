#!/usr/bin/env python3
"""gatherer_check.py: compare what lharvestd gatherers delivered with the
simulator's ground truth (tests/integration/it_gatherer.sh).

    gatherer_check.py --baseline B.json --final truth-latest.json
        --dump out1.jsonl [--dump out2.jsonl ...] [--events events.jsonl]
        [--first-sweep SENDER=expected-once.jsonl ...]
    gatherer_check.py --self-test

B.json and truth-latest.json are lustresim truth snapshots
({"step", "time", "rows": [{"fs", "nid", read_bytes ..., "mdt_ops"}]}): B at the
gatherers' baseline sweep, the other after the last step.  Each --dump is
the stdout of one `lharvest-dump --listen --state` instance: one JSON
record per line.

Rules:
  * records are deduplicated by (sender, batch, fs, nid): a dump prints a
    batch before it records it as safe, so the batch in flight when a dump
    is SIGKILLed may be printed again by the next instance.  Only that one
    batch per sender may be printed by two instances, never twice by one,
    and a batch printed twice must have the same values;
  * for every (fs, nid) of the final truth, the sum of each of the six
    counters over all records equals final - baseline (a NID missing from
    the baseline counts from 0), exactly;
  * so does the sum of each metadata op (a record's "mdt_ops", the
    truth's "mdt_ops"; an op absent from either counts 0), when the final
    truth has "mdt_ops" (a simulator without it: ops are not checked);
  * every (fs, nid) of the final truth was reported at least once (a
    gatherer reports every client it knows, zero records included);
  * a reported (fs, nid) that is not in the truth (a stale server-peer
    dir, which a reader cannot tell from a stale client) sums to zero,
    op counts included;
  * no counter is negative, non-integer, or above 2^62; "mdt_ops" is an
    object of known op names with counts from 1 to 2^62;
  * --first-sweep SENDER=FILE: the lowest batch of SENDER (its baseline
    sweep) holds exactly the (fs, nid) of FILE (that server's
    expected-once.jsonl at the baseline step), all zero, without op
    counts.

A trailing line without a newline (a dump killed in the middle of writing)
is ignored.  Exit 0 when everything holds, 1 otherwise (with a table of the
first differences and the events that touched those clients), 2 on usage
errors.  Standard library only.
"""

import argparse
import json
import os
import sys
import tempfile

FIELDS = ("read_bytes", "write_bytes", "read_ops", "write_ops", "oss_ops",
          "mds_ops")
# The metadata ops, in common/lustre/mdops.h order (the names lharvest-dump and
# the simulator use).
OPS = ("open", "close", "mknod", "link", "unlink", "mkdir", "rmdir",
       "rename", "getattr", "setattr", "getxattr", "setxattr", "statfs",
       "sync", "punch", "migrate", "fallocate")
# What is compared per (fs, nid): the counters, then the ops.
COLUMNS = FIELDS + tuple("mdt_ops." + o for o in OPS)
NCOL = len(COLUMNS)
ABSURD = 1 << 62
MAX_ROWS = 20


class CheckError(Exception):
    """A file that cannot be read as what it should be."""


def _ops_list(ops):
    """[17 ints] of an {op: count} object; ValueError if it is not one."""
    if not isinstance(ops, dict):
        raise ValueError("mdt_ops is not an object")
    unknown = sorted(set(ops) - set(OPS))
    if unknown:
        raise ValueError("unknown op(s) %s" % ", ".join(unknown))
    return [ops.get(o, 0) for o in OPS]


def load_truth(path):
    """{(fs, nid): [counters, then ops]} of a truth-latest.json snapshot,
    its step, and whether its rows carry mdt_ops."""
    try:
        with open(path) as f:
            doc = json.load(f)
        out = {}
        with_ops = True
        for r in doc["rows"]:
            with_ops = with_ops and "mdt_ops" in r
            out[(r["fs"], r["nid"])] = [int(r[k]) for k in FIELDS] + [
                int(v) for v in _ops_list(r.get("mdt_ops", {}))]
        return out, doc.get("step"), with_ops
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CheckError("%s: not a truth snapshot: %s" % (path, e))


def load_jsonl(path):
    """Objects of a JSON-lines file; a last line without a newline is
    dropped (returned as the second value)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise CheckError("%s: %s" % (path, e))
    lines = text.split("\n")
    partial = lines.pop()           # "" when the file ends in a newline
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError as e:
            raise CheckError("%s:%d: not JSON: %s" % (path, i, e))
    return out, partial


def load_once(path):
    """{(fs, nid): [six ints]} of an expected-once.jsonl."""
    objs, _ = load_jsonl(path)
    return {(o["fs"], o["nid"]): [int(o[k]) for k in FIELDS] for o in objs}


def _is_count(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= ABSURD


def _pad(vals):
    """A truth's values as NCOL columns (six counters: no ops)."""
    return list(vals) + [0] * (NCOL - len(vals))


def _rec_ops(r):
    """[17] op counts of a record, or None if its mdt_ops is malformed
    (lharvest-dump prints known names with non-zero counts only)."""
    ops = r.get("mdt_ops", {})
    try:
        vals = _ops_list(ops)
    except ValueError:
        return None
    if "mdt_ops" in r and not ops:
        return None
    if not all(_is_count(v) and (v > 0 or o not in ops)
               for o, v in zip(OPS, vals)):
        return None
    return vals


def check(baseline, final, dumps, events=(), first_sweep=None,
          with_ops=True):
    """The comparison proper.  baseline, final: {(fs, nid): [6 counters,
    then (optionally) 17 ops]}; dumps: [(name, [record dicts],
    partial_tail)]; events: [event dicts]; first_sweep: {sender: {(fs,
    nid): [6]}}; with_ops: compare the op counts too.  Returns (ok,
    lines)."""
    ncol = NCOL if with_ops else len(FIELDS)
    baseline = {k: _pad(v)[:ncol] for k, v in baseline.items()}
    final = {k: _pad(v)[:ncol] for k, v in final.items()}
    out = []
    problems = 0
    seen = {}           # (sender, batch, fs, nid) -> (dump index, values)
    in_dump = {}        # (sender, batch) -> set of dump indexes
    sums = {}
    nrec = ndup = nops = 0
    bad_values = []
    for di, (dname, recs, partial) in enumerate(dumps):
        if partial.strip():
            out.append("note: %s: ignored an unterminated last line (%d bytes)"
                       % (dname, len(partial)))
        for r in recs:
            try:
                key = (r["sender"], r["batch"], r["fs"], r["nid"])
                vals = [r[k] for k in FIELDS]
                r["sweep"]
            except (KeyError, TypeError):
                bad_values.append("%s: record without sender/batch/sweep/fs/"
                                  "nid/counters: %s" % (dname, json.dumps(r)))
                continue
            nrec += 1
            ops = _rec_ops(r)
            if not all(_is_count(v) for v in vals) or ops is None:
                bad_values.append("%s: sender %s batch %s %s %s: %s" % (
                    dname, key[0], key[1], key[2], key[3],
                    " ".join("%s=%r" % kv for kv in
                             list(zip(FIELDS, vals)) +
                             [("mdt_ops", r.get("mdt_ops"))])))
                continue
            vals = (vals + ops)[:ncol]
            nops += "mdt_ops" in r
            in_dump.setdefault(key[:2], set()).add(di)
            prev = seen.get(key)
            if prev is not None:
                ndup += 1
                if prev[0] == di:
                    bad_values.append(
                        "%s: sender %s batch %s %s %s printed twice by one "
                        "receiver" % (dname, key[0], key[1], key[2], key[3]))
                elif prev[1] != vals:
                    bad_values.append(
                        "sender %s batch %s %s %s printed twice with "
                        "different values: %s then %s" % (
                            key[0], key[1], key[2], key[3], prev[1], vals))
                continue
            seen[key] = (di, vals)
            acc = sums.setdefault(key[2:], [0] * ncol)
            for i, v in enumerate(vals):
                acc[i] += v
    if bad_values:
        problems += len(bad_values)
        out.append("FAIL: %d bad record(s):" % len(bad_values))
        out.extend("  " + b for b in bad_values[:MAX_ROWS])
    twice = {}
    for (sender, batch), where in in_dump.items():
        if len(where) > 1:
            twice.setdefault(sender, []).append(batch)
    for sender, batches in sorted(twice.items()):
        if len(batches) > 1:
            problems += 1
            out.append("FAIL: sender %s: batches %s printed by two receivers "
                       "(only the one in flight at a receiver crash may be)"
                       % (sender, sorted(batches)))

    diffs = []          # (fs, nid, field, expected, got)
    never = []
    for key in sorted(final):
        want = [f - b for f, b in zip(final[key],
                                      baseline.get(key, [0] * ncol))]
        got = sums.get(key)
        if got is None:
            never.append(key)
            got = [0] * ncol
        for i, field in enumerate(COLUMNS[:ncol]):
            if want[i] != got[i]:
                diffs.append((key[0], key[1], field, want[i], got[i]))
    stray = []
    for key in sorted(set(sums) - set(final)):
        for i, field in enumerate(COLUMNS[:ncol]):
            if sums[key][i] != 0:
                stray.append((key[0], key[1], field, 0, sums[key][i]))
    first_bad = []
    for sender, once in sorted((first_sweep or {}).items()):
        batches = sorted(b for (s, b) in in_dump if s == sender)
        if not batches:
            first_bad.append("sender %s: no batch printed" % sender)
            continue
        first = {k[2:]: v[1] for k, v in seen.items()
                 if k[0] == sender and k[1] == batches[0]}
        missing = sorted(set(once) - set(first))
        extra = sorted(set(first) - set(once))
        nonzero = sorted(k for k, v in first.items() if any(v))
        if missing:
            first_bad.append("sender %s batch %d (baseline): missing %s" % (
                sender, batches[0], ", ".join("%s %s" % k for k in missing)))
        if extra:
            first_bad.append("sender %s batch %d (baseline): not on that "
                             "server: %s" % (sender, batches[0], ", ".join(
                                 "%s %s" % k for k in extra)))
        if nonzero:
            first_bad.append("sender %s batch %d (baseline): non-zero "
                             "deltas for %s" % (sender, batches[0], ", ".join(
                                 "%s %s" % k for k in nonzero)))

    rows = diffs + stray
    if rows:
        problems += len(rows)
        out.append("FAIL: %d counter(s) differ (%d of truth clients, %d of "
                   "NIDs not in the truth, which must sum to 0); first %d:"
                   % (len(rows), len(diffs), len(stray), min(len(rows),
                                                             MAX_ROWS)))
        out.append("  %-8s %-22s %-17s %20s %20s %21s" % (
            "fs", "nid", "counter", "expected", "got", "got-expected"))
        for fs, nid, field, want, got in rows[:MAX_ROWS]:
            out.append("  %-8s %-22s %-17s %20d %20d %+21d" % (
                fs, nid, field, want, got, got - want))
        touched = []
        for fs, nid, _, _, _ in rows[:MAX_ROWS]:
            if (fs, nid) not in touched:
                touched.append((fs, nid))
        for fs, nid in touched:
            evs = events_for(events, fs, nid)
            base = "in the baseline" if (fs, nid) in baseline else \
                "not in the baseline (counts from 0)"
            if (fs, nid) not in final:
                base = "not in the truth (a server peer?)"
            out.append("  events touching %s %s (%s): %s" % (
                fs, nid, base, "none" if not evs else ""))
            out.extend("    " + e for e in evs)
    if never:
        problems += len(never)
        out.append("FAIL: %d client(s) of the truth never reported: %s" % (
            len(never), ", ".join("%s %s" % k for k in never[:MAX_ROWS])))
    if first_bad:
        problems += len(first_bad)
        out.append("FAIL: baseline sweep:")
        out.extend("  " + b for b in first_bad)
    out.append("%d records (%d with op counts, %d duplicates dropped), %d "
               "truth clients, %d other NIDs reported: %s" % (
                   nrec, nops, ndup, len(final), len(set(sums) - set(final)),
                   "all exact" if not problems else
                   "%d problem(s)" % problems))
    return problems == 0, out


def events_for(events, fs, nid):
    """One line per event that touched (fs, nid): by NID, by a clear that
    removed or zeroed it, or by a target of its filesystem."""
    out = []
    for e in events:
        res = e.get("result") or {}
        tgt = e.get("target") or ""
        why = None
        if e.get("nid") == nid:
            why = "nid"
        elif nid in (res.get("removed") or []):
            why = "removed its dir"
        elif nid in (res.get("zeroed") or []):
            why = "zeroed it"
        elif tgt.startswith(fs + "-"):
            why = "target of %s" % fs
        elif any(p.endswith(" " + nid) for p in res.get("stale_peers") or []):
            why = "left it a stale peer dir"
        elif e.get("type") == "stats_header":
            why = "all files"
        if why is None:
            continue
        args = " ".join("%s=%s" % (k, e[k]) for k in
                        ("target", "nid", "from", "to", "server", "gap",
                         "value") if k in e)
        out.append("step %s%s %s %s (%s)" % (
            e.get("step"), " --now" if e.get("immediate") else "",
            e.get("type"), args, why))
    return out


def run(args):
    baseline, bstep, _ = load_truth(args.baseline)
    final, fstep, with_ops = load_truth(args.final)
    dumps = []
    for p in args.dump:
        recs, partial = load_jsonl(p)
        dumps.append((os.path.basename(p), recs, partial))
    events = []
    if args.events and os.path.exists(args.events):
        events, _ = load_jsonl(args.events)
    first = {}
    for spec in args.first_sweep or []:
        sender, sep, path = spec.partition("=")
        if not sep:
            raise CheckError("--first-sweep wants SENDER=FILE, not %r" % spec)
        first[sender] = load_once(path)
    ok, lines = check(baseline, final, dumps, events, first, with_ops)
    print("gatherer_check: truth steps %s..%s, %d dump file(s)%s" % (
        bstep, fstep, len(dumps),
        "" if with_ops else " (no mdt_ops in the truth: ops not checked)"))
    for line in lines:
        print(line)
    return 0 if ok else 1


# ------------------------------------------------------------- self-test

def _rec(sender, batch, fs, nid, vals, sweep=1700000000, ops=None):
    r = {"sender": sender, "sweep": sweep, "batch": batch, "fs": fs,
         "nid": nid}
    r.update(zip(FIELDS, vals))
    r.update(span_us=1000000)
    if ops:
        r["mdt_ops"] = dict(ops)
    r.update(start_ns=sweep * 10**9)
    return r


def _v(counters, ops=None):
    """Truth values: six counters, then the ops of {op: count}."""
    return list(counters) + _ops_list(ops or {})


def self_test():
    """The checker on synthetic data: returns the number of failures."""
    base = {("scratch", "10.1.0.1@o2ib"): _v([100, 200, 1, 2, 3, 4],
                                             {"open": 2, "close": 2}),
            ("scratch", "12@gni"): _v([5, 0, 1, 0, 1, 0])}
    final = dict(base)
    final[("scratch", "10.1.0.1@o2ib")] = _v([1100, 1200, 11, 12, 23, 9],
                                             {"open": 4, "close": 3,
                                              "getattr": 1})
    final[("scratch", "12@gni")] = _v([5, 0, 1, 0, 1, 0])          # idle
    final[("home", "10.1.0.7@o2ib")] = _v([(1 << 40) + 7, 0, 9, 0, 9, 2],
                                          {"mkdir": 1})             # new
    mt = {"open": 2, "close": 1, "getattr": 1}
    peer = ("scratch", "10.0.0.11@o2ib")
    d1 = [_rec("oss1", 1, "scratch", "10.1.0.1@o2ib", [0] * 6),
          _rec("oss1", 1, "scratch", "12@gni", [0] * 6),
          _rec("oss1", 2, "scratch", "10.1.0.1@o2ib", [600, 500, 6, 5, 13, 0]),
          _rec("oss1", 2, "scratch", "12@gni", [0] * 6),
          _rec("mds1", 1, "scratch", "10.1.0.1@o2ib", [0] * 6),
          _rec("mds1", 1, "scratch", "12@gni", [0] * 6),
          _rec("mds1", 1, "scratch", peer[1], [0] * 6)]
    # Batch 3 was printed by the first dump, then it was killed before
    # recording it: the second prints it again (dedupe), then batch 4.
    b3 = [_rec("oss1", 3, "scratch", "10.1.0.1@o2ib", [400, 500, 4, 5, 7, 0]),
          _rec("oss1", 3, "home", "10.1.0.7@o2ib", [1 << 40, 0, 4, 0, 4, 0])]
    d1 += b3
    d2 = [dict(r) for r in b3] + [
        _rec("oss1", 4, "home", "10.1.0.7@o2ib", [7, 0, 5, 0, 5, 0]),
        _rec("mds1", 2, "home", "10.1.0.7@o2ib", [0, 0, 0, 0, 0, 2],
             ops={"mkdir": 1}),
        _rec("mds1", 2, "scratch", "10.1.0.1@o2ib", [0, 0, 0, 0, 0, 5],
             ops=mt),
        _rec("mds1", 2, "scratch", peer[1], [0] * 6)]
    events = [{"step": 3, "type": "clear", "target": "scratch-OST0000",
               "immediate": True,
               "result": {"removed": [], "zeroed": ["10.1.0.1@o2ib"]}},
              {"step": 4, "type": "client_appear", "nid": "10.1.0.7@o2ib"}]
    once = {"oss1": {("scratch", "10.1.0.1@o2ib"): [0] * 6,
                     ("scratch", "12@gni"): [0] * 6}}
    failures = 0

    def expect(name, want_ok, dumps, base_=base, final_=final, first=None,
               must=(), with_ops=True):
        nonlocal failures
        ok, lines = check(base_, final_, dumps, events, first, with_ops)
        text = "\n".join(lines)
        good = ok == want_ok and all(m in text for m in must)
        print("%s - self-test: %s" % ("ok" if good else "FAIL", name))
        if not good:
            failures += 1
            print("  " + text.replace("\n", "\n  "))

    def mutate(recs, sender, batch, nid, field, value):
        out = [dict(r) for r in recs]
        for r in out:
            if (r["sender"], r["batch"], r["nid"]) == (sender, batch, nid):
                r[field] = value
        return out

    expect("exact, with the batch printed by both receivers counted once",
           True, [("d1", d1, ""), ("d2", d2, "")], first=once,
           must=["2 with op counts"])
    expect("a wrong op count", False,
           [("d1", d1, ""), ("d2", mutate(d2, "mds1", 2, "10.1.0.1@o2ib",
                                          "mdt_ops", dict(mt, getattr=2)),
                              "")],
           must=["mdt_ops.getattr", "+1"])
    expect("op counts missing", False,
           [("d1", d1, ""), ("d2", mutate(d2, "mds1", 2, "10.1.0.7@o2ib",
                                          "mdt_ops", {"rmdir": 1}), "")],
           must=["mdt_ops.mkdir", "-1", "mdt_ops.rmdir", "+1"])
    expect("op counts not checked without them in the truth", True,
           [("d1", d1, ""), ("d2", mutate(d2, "mds1", 2, "10.1.0.7@o2ib",
                                          "mdt_ops", {"rmdir": 1}), "")],
           with_ops=False)
    expect("an unknown op", False,
           [("d1", d1, ""), ("d2", mutate(d2, "mds1", 2, "10.1.0.1@o2ib",
                                          "mdt_ops", dict(mt, chmod=1)), "")],
           must=["bad record", "chmod"])
    expect("an op printed with count 0", False,
           [("d1", d1, ""), ("d2", mutate(d2, "mds1", 2, "10.1.0.1@o2ib",
                                          "mdt_ops", dict(mt, sync=0)), "")],
           must=["bad record"])
    expect("op counts on a NID that is not in the truth", False,
           [("d1", d1, ""), ("d2", mutate(d2, "mds1", 2, peer[1],
                                          "mdt_ops", {"statfs": 3}), "")],
           must=["10.0.0.11@o2ib", "mdt_ops.statfs", "not in the truth"])
    expect("a baseline sweep with op counts", False,
           [("d1", mutate(d1, "oss1", 1, "12@gni", "mdt_ops", {"open": 1}),
             ""), ("d2", d2, "")], first=once,
           must=["non-zero deltas for scratch 12@gni"])
    expect("a batch counted twice would not match (dedupe is needed)",
           False, [("d1", d1, ""),
                   ("d2", mutate(d2, "oss1", 3, "10.1.0.1@o2ib", "batch", 5),
                    "")],
           must=["10.1.0.1@o2ib", "read_bytes", "+400"])
    expect("a wrong delta is shown with the events that touched the client",
           False, [("d1", mutate(d1, "oss1", 2, "10.1.0.1@o2ib",
                                 "write_ops", 8), ""), ("d2", d2, "")],
           must=["write_ops", "13", "+3", "clear target=scratch-OST0000",
                 "zeroed it"])
    expect("a missing batch (lost delivery)", False,
           [("d1", d1, ""), ("d2", d2[:2] + d2[3:], "")],
           must=["home", "10.1.0.7@o2ib", "-7"])
    expect("a non-zero NID that is not in the truth", False,
           [("d1", d1, ""), ("d2", mutate(d2, "mds1", 2, peer[1],
                                          "oss_ops", 3), "")],
           must=["10.0.0.11@o2ib", "not in the truth"])
    expect("a negative value", False,
           [("d1", mutate(d1, "oss1", 1, "12@gni", "read_ops", -1), ""),
            ("d2", d2, "")], must=["bad record"])
    expect("an absurd value", False,
           [("d1", mutate(d1, "oss1", 1, "12@gni", "read_bytes",
                          (1 << 62) + 1), ""), ("d2", d2, "")],
           must=["bad record"])
    expect("one batch printed twice by the same receiver", False,
           [("d1", d1 + [dict(d1[2])], ""), ("d2", d2, "")],
           must=["printed twice by one receiver"])
    expect("the same batch printed with different values", False,
           [("d1", d1, ""), ("d2", mutate(d2, "oss1", 3, "10.1.0.1@o2ib",
                                          "read_bytes", 401), "")],
           must=["different values"])
    d1b = d1 + [_rec("oss1", 4, "home", "10.1.0.7@o2ib", [7, 0, 5, 0, 5, 0])]
    expect("two batches printed by both receivers", False,
           [("d1", d1b, ""), ("d2", d2, "")],
           must=["printed by two receivers"])
    expect("a truth client never reported", False,
           [("d1", [r for r in d1 if r["nid"] != "12@gni"], ""),
            ("d2", d2, "")], must=["never reported", "12@gni"])
    expect("a baseline sweep without every client of its server", False,
           [("d1", d1, ""), ("d2", d2, "")],
           first={"oss1": {**once["oss1"],
                           ("scratch", "10.9.9.9@o2ib"): [0] * 6}},
           must=["missing scratch 10.9.9.9@o2ib"])
    expect("a baseline sweep with a non-zero delta", False,
           [("d1", mutate(d1, "oss1", 1, "12@gni", "oss_ops", 1), ""),
            ("d2", d2, "")], first=once,
           must=["non-zero deltas for scratch 12@gni"])

    # Through files: a dump killed mid-line leaves an unterminated line.
    with tempfile.TemporaryDirectory() as d:
        def write(name, obj, lines=None, tail=""):
            p = os.path.join(d, name)
            with open(p, "w") as f:
                if lines is None:
                    json.dump(obj, f)
                else:
                    f.write("".join(json.dumps(r) + "\n" for r in lines))
                f.write(tail)
            return p

        def truth(rows, step):
            return {"step": step, "time": 0, "time_ns": 0, "rows": [
                dict(fs=k[0], nid=k[1], state="active",
                     mdt_ops={o: c for o, c in zip(OPS, v[6:]) if c},
                     **dict(zip(FIELDS, v)))
                for k, v in rows.items()]}

        args = ["--baseline", write("b.json", truth(base, 0)),
                "--final", write("f.json", truth(final, 9)),
                "--dump", write("d1.out", None, d1, '{"sender":"oss1","swe'),
                "--dump", write("d2.out", None, d2),
                "--events", write("e.jsonl", None, events),
                "--first-sweep", "oss1=" + write("o.jsonl", None, [
                    dict(fs=k[0], nid=k[1], **dict(zip(FIELDS, v)))
                    for k, v in once["oss1"].items()])]
        rc = run(parse_args(args))
        good = rc == 0
        print("%s - self-test: files, with an unterminated last line"
              % ("ok" if good else "FAIL"))
        failures += not good
    print("self-test: %d failure(s)" % failures)
    return failures


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Compare gatherer deliveries (lharvest-dump JSON lines) "
                    "with lustresim's truth.")
    p.add_argument("--baseline", help="truth-latest.json at the baseline")
    p.add_argument("--final", help="truth-latest.json after the last step")
    p.add_argument("--dump", action="append", default=[],
                   help="stdout of one lharvest-dump --listen (repeat)")
    p.add_argument("--events", help="the simulator's events.jsonl")
    p.add_argument("--first-sweep", action="append", metavar="SENDER=FILE",
                   help="expected-once.jsonl of SENDER's server at the "
                        "baseline: its first batch must list exactly "
                        "those clients, all zero")
    p.add_argument("--self-test", action="store_true",
                   help="check this checker on synthetic data")
    a = p.parse_args(argv)
    if not a.self_test and not (a.baseline and a.final and a.dump):
        p.error("--baseline, --final and at least one --dump are required")
    return a


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.self_test:
        return 1 if self_test() else 0
    try:
        return run(a)
    except CheckError as e:
        print("gatherer_check: %s" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main())
