"""Sim's outputs after each step: expected-once.jsonl, the ground truth
(truth.jsonl, truth-latest.json) and events.jsonl."""

import json
import os

from . import formats, fsio, nids
from .formats import CNT, NS, SUM


class OutputsMixin:
    """Part of engine.Sim (a mixin: it uses Sim's state)."""

    # ------------------------------------------------------------ outputs

    def _expected_acc(self, targets):
        """{(server, fs, nid): [NACC values]}: current counters of the given
        targets' client exports with the lharvestd rules.  Peers are
        recognised the way a reader can: NID 0@lo, or a uuid file naming a
        server (`*_UUID`); stale dirs (empty uuid) count as clients.

        Keyed classification equals the name-based "first printed line"
        rule because a duplicate (obd_statfs) never prints without the first
        statfs line (see _advance); the tests re-derive it from the files."""
        rows = {}
        for tgt in targets:
            kc = self._key_class[tgt.ttype]
            for nid, exp in tgt.exports.items():
                if nid == nids.LOCAL_NID or any(u.endswith("_UUID") for u in exp.uuids):
                    continue
                key = (tgt.server, tgt.fs, nid)
                acc = rows.get(key)
                if acc is None:
                    acc = rows[key] = [0] * formats.NACC
                for ckey, c in exp.ctr.items():
                    n = c[CNT]
                    if n:
                        cf, sf = kc[ckey]
                        for f in cf:
                            acc[f] += n
                        if sf is not None:
                            acc[sf] += c[SUM]
        return rows

    def expected_once(self, server, partial=None):
        """What `lharvestd --once` must print for this server: current
        counters summed per (fs, nid) over the server's targets.
        partial: precomputed sums for targets this process does not hold
        (forked fresh build)."""
        mine = [t for t in self.targets.values() if t.server == server
                and (partial is None or t.name not in partial["targets"])]
        rows = self._expected_acc(mine)
        if partial is not None:
            for key, v in partial["rows"].items():
                if key[0] == server:
                    tot = rows.setdefault(key, [0] * formats.NACC)
                    for i, x in enumerate(v):
                        tot[i] += x
        # zip() keeps the six fields only: no per-op counts in expected-once
        return [dict([("fs", fs), ("nid", nid)] + list(zip(formats.FIELDS, acc)))
                for (_, fs, nid), acc in sorted(rows.items(), key=lambda kv: (kv[0][1].encode(), kv[0][2].encode()))]

    def truth_rows(self):
        out = []
        for (fs, nid), acc in sorted(self.truth.items(), key=lambda kv: (kv[0][0].encode(), kv[0][1].encode())):
            row = dict([("fs", fs), ("nid", nid), ("state", self.clients[nid].state)]
                       + list(zip(formats.FIELDS, acc)) + [("mdt_ops", formats.mdt_ops(acc))])
            files = self.truth_files.get((fs, nid)) if self.clock == "wall" else None
            if files:
                row["files"] = {
                    t: dict([("snapshot_ns", rec[0])] + list(zip(formats.FIELDS, rec[1:]))
                            + [("mdt_ops", formats.mdt_ops(rec[1:]))])
                    for t, rec in sorted(files.items()) if rec[0]}
            out.append(row)
        return out

    def write_expected(self, servers=None, partial=None):
        for srv in (servers or self.servers):
            rows = self.expected_once(srv, partial)
            self._write(os.path.join(self.server_root(srv), "expected-once.jsonl"),
                        "".join(json.dumps(r) + "\n" for r in rows))

    def _finish_step(self, k, T, log, partial=None):
        """After all stats files of the step: expected-once, truth, events."""
        self.write_expected(partial=partial)
        rows = self.truth_rows()
        head = {"step": k, "time": T / NS, "time_ns": T}
        lines = "".join(json.dumps(dict(head, **r)) + "\n" for r in rows)
        fsio.append_line_block(os.path.join(self.root, "truth.jsonl"), lines)
        fsio.atomic_write(os.path.join(self.root, "truth-latest.json"),
                          json.dumps(dict(head, rows=rows), indent=1) + "\n")
        self.log_events(log)

    @staticmethod
    def _log_entry(ev, k, T, res):
        e = {key: v for key, v in ev.items() if key != "spec"}
        e.update(step=k, time_ns=T, time=T / NS, result=res)
        return e

    def log_events(self, log):
        if log:
            fsio.append_line_block(os.path.join(self.root, "events.jsonl"),
                                   "".join(json.dumps(e, sort_keys=True) + "\n" for e in log))
