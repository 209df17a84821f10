"""Sim's topology and events: mounting and failing over targets, peers,
clears, resets, clients appearing, going idle and returning."""

import os
import time

from . import formats, fsio, nids
from .model import Export, SimError, bump, new_uuid


class EventsMixin:
    """Part of engine.Sim (a mixin: it uses Sim's state)."""

    # ------------------------------------------------------------ topology

    def _peer_map(self, tgt):
        """{nid: [uuids]} of the server-to-server exports a target should have."""
        out = {}
        srv = tgt.server
        fs_t = [t for t in self.targets.values() if t.fs == tgt.fs and t.server]
        if tgt.ttype == "ost":
            for m in fs_t:
                if m.ttype == "mdt":
                    nid = nids.LOCAL_NID if m.server == srv else self.servers[m.server].nid
                    out.setdefault(nid, []).append("%s-mdtlov_UUID" % m.name)
        else:
            for x in sorted(fs_t, key=lambda t: (t.ttype != "mdt", t.index)):
                nid = nids.LOCAL_NID if x.server == srv else self.servers[x.server].nid
                out.setdefault(nid, []).append("%s-lwp-%s_UUID" % (tgt.name, x.label))
                if x.ttype == "mdt" and x is not tgt:
                    out[nid].append("%s-mdtlov_UUID" % x.name)
        return out

    def _sync_peers(self, T):
        """Bring every mounted target's peer exports in line with placement.
        A peer NID that loses all its connections stays as a stale dir with
        an empty uuid, exactly like a stale client (a reader cannot tell them
        apart).  Returns those ["target nid"] for the event log."""
        stale = []
        for tgt in self.targets.values():
            if not tgt.server:
                continue
            want = self._peer_map(tgt)
            for nid, uuids in want.items():
                exp = tgt.exports.get(nid)
                if exp is None:
                    tgt.exports[nid] = Export(nid, None, uuids, T)
                elif exp.client is None and exp.uuids != uuids:
                    exp.uuids = list(uuids)
                    exp.uuid_dirty = True
            for nid, exp in tgt.exports.items():
                if exp.client is None and nid not in want and exp.uuids:
                    exp.uuids = []
                    exp.uuid_dirty = True
                    stale.append("%s %s" % (tgt.name, nid))
        return stale

    def _connect_clients(self, tgt, T):
        """Active clients of the target's fs get an export (recovery/connect)."""
        for client in self.clients.values():
            if client.state == "active" and tgt.fs in client.fss and client.nid not in tgt.exports:
                tgt.exports[client.nid] = Export(client.nid, client.nid, client.uuids, T)

    def _mount(self, tgt, server, T):
        if server not in self.servers:
            raise SimError("unknown server %s" % server)
        if tgt.server:
            raise SimError("%s already mounted on %s" % (tgt.name, tgt.server))
        tgt.server = server
        tgt.mount_ns = T
        tgt.exports = {}
        tgt.num_exports_written = None
        self._create_target_dirs(tgt)
        self._connect_clients(tgt, T)

    def _unmount(self, tgt):
        if not tgt.server:
            raise SimError("%s is not mounted" % tgt.name)
        srv = tgt.server
        paths = [self.target_dir(srv, tgt), os.path.dirname(self.exports_dir(srv, tgt)),
                 os.path.dirname(self.num_exports_path(srv, tgt))]
        for p in dict.fromkeys(paths):
            if os.path.basename(p) == tgt.name:
                fsio.atomic_rmtree(p, self.trash)
        tgt.last_server = srv
        tgt.server = None
        tgt.exports = {}

    def _create_target_dirs(self, tgt):
        srv = tgt.server
        tdir = self.target_dir(srv, tgt)
        os.makedirs(tdir, exist_ok=True)
        # job_stats always stays in /proc (§1); no jobs are simulated.
        self._write(os.path.join(tdir, "job_stats"),
                    "" if self.profile.v >= (2, 17) else "job_stats:\n")
        edir = self.exports_dir(srv, tgt)
        os.makedirs(edir, exist_ok=True)
        clear = os.path.join(edir, "clear")
        if not os.path.exists(clear):
            # Write-only action file in Lustre; an empty regular file here.
            self._write(clear, b"", 0o644)
        if self.profile.num_exports_in_sys:
            sdir = os.path.dirname(self.num_exports_path(srv, tgt))
            os.makedirs(sdir, exist_ok=True)
            self._write(os.path.join(sdir, "job_cleanup_interval"), "600\n")

    # ------------------------------------------------------------ events

    def _target(self, name):
        t = self.targets.get(name)
        if t is None:
            raise SimError("unknown target %r" % name)
        return t

    def _client(self, nid):
        c = self.clients.get(nid)
        if c is None:
            raise SimError("unknown client nid %r" % nid)
        return c

    def _settle(self, tgt, T, step, only=None):
        if only is not None:
            exp = tgt.exports.get(only)
            if exp is not None:
                self._advance(tgt, exp, T, step)
            return
        for exp in tgt.exports.values():
            self._advance(tgt, exp, T, step)

    def apply_event(self, ev, T, step, settle=True):
        """Apply one event at time T.  Returns a dict describing the effect
        (logged to events.jsonl).  With settle=False (immediate CLI events
        between steps) counters are not advanced first."""
        typ = ev.get("type")
        res = {}
        st = (lambda tgt, only=None: self._settle(tgt, T, step, only)) if settle else (lambda *a, **k: None)
        if typ == "clear":
            tgt = self._target(ev["target"])
            if not tgt.server:
                raise SimError("clear: %s is not mounted" % tgt.name)
            st(tgt)
            removed, zeroed = [], []
            edir = self.exports_dir(tgt.server, tgt)
            for nid in sorted(tgt.exports):
                exp = tgt.exports[nid]
                if exp.uuids:
                    exp.zero(T)
                    zeroed.append(nid)
                else:
                    fsio.atomic_rmtree(os.path.join(edir, nid), self.trash)
                    del tgt.exports[nid]
                    removed.append(nid)
            res = {"server": tgt.server, "removed": removed, "zeroed": zeroed}
        elif typ == "reset_export":
            tgt = self._target(ev["target"])
            exp = tgt.exports.get(ev["nid"])
            if exp is None:
                raise SimError("reset_export: no export %s on %s" % (ev["nid"], tgt.name))
            st(tgt, ev["nid"])
            exp.zero(T)
            res = {"server": tgt.server}
        elif typ == "unmount":
            tgt = self._target(ev["target"])
            st(tgt)
            res = {"server": tgt.server}
            self._unmount(tgt)
            res["stale_peers"] = self._sync_peers(T)
        elif typ == "mount":
            tgt = self._target(ev["target"])
            server = ev.get("server") or tgt.last_server or self.placement.get(tgt.name)
            self._mount(tgt, server, T)
            res = {"server": server, "stale_peers": self._sync_peers(T)}
        elif typ == "failover":
            tgt = self._target(ev["target"])
            frm = ev.get("from")
            if frm and frm != tgt.server:
                raise SimError("failover: %s is on %s, not %s" % (tgt.name, tgt.server, frm))
            to = ev["to"]
            if to not in self.servers:
                raise SimError("failover: unknown server %s" % to)
            st(tgt)
            res = {"from": tgt.server, "to": to}
            self._unmount(tgt)
            gap = int(ev.get("gap", 0))
            if gap <= 0:
                self._mount(tgt, to, T)
                res["mounted_step"] = step
            else:
                self.scheduled.append({"step": step + gap, "type": "mount",
                                       "target": tgt.name, "server": to,
                                       "cause": "failover"})
                res["mounted_step"] = step + gap
            res["stale_peers"] = self._sync_peers(T)
        elif typ == "client_appear":
            nid = ev["nid"]
            if nid not in self.clients:
                spec = ev.get("spec")
                if spec is None:
                    raise SimError("client_appear: unknown nid %s and no profile given" % nid)
                self.clients[nid] = self._make_client(spec)
            c = self.clients[nid]
            if c.state == "active":
                raise SimError("client_appear: %s is already active" % nid)
            self._activate(c, T)
        elif typ == "client_idle":
            c = self._client(ev["nid"])
            if c.state != "active":
                raise SimError("client_idle: %s is not active" % c.nid)
            for tgt in self._client_targets(c):
                exp = tgt.exports.get(c.nid)
                if exp is None:
                    continue
                st(tgt, c.nid)
                exp.uuids = []
                exp.uuid_dirty = True
                if tgt.ttype == "ost" and "disconnect" in self.profile.keys["ost"]:
                    # <= 2.11 count the disconnect obd-op on the export
                    s = bump(exp.ctr, "disconnect", 1, 1, 1, 1)
                    self._credit(self.truth[(tgt.fs, c.nid)], self._key_class["ost"],
                                 "disconnect", 1, s)
                    facc = self._file_truth(tgt, c.nid)
                    if facc is not None:
                        self._credit(facc, self._key_class["ost"], "disconnect", 1, s, 1)
                    exp.stats_dirty = True
            c.state = "idle"
        elif typ == "client_return":
            c = self._client(ev["nid"])
            if c.state != "idle":
                raise SimError("client_return: %s is not idle" % c.nid)
            self._activate(c, T)
        elif typ == "stats_header":
            if not self.profile.has_stats_header_switch:
                raise SimError("stats_header: enable_stats_header needs Lustre 2.16+")
            self.stats_header = bool(int(ev.get("value", 1)))
            for srv in self.servers:
                self._write_version_files(srv)
        else:
            raise SimError("unknown event type %r" % typ)
        return res

    def _client_targets(self, c):
        return [t for t in self.targets.values() if t.server and t.fs in c.fss]

    def _activate(self, c, T):
        """Connect (first appearance or return): a new mount gets new export
        UUIDs; an existing NID dir is reused, so its counters continue."""
        c.state = "active"
        c.uuids = [new_uuid(self.rng) for _ in range(c.mounts)]
        if not c.seen:
            c.seen = True
            for fs in c.fss:
                self.truth.setdefault((fs, c.nid), [0] * formats.NACC)
        for tgt in self._client_targets(c):
            exp = tgt.exports.get(c.nid)
            if exp is None:
                tgt.exports[c.nid] = Export(c.nid, c.nid, c.uuids, T)
            else:
                exp.uuids = list(c.uuids)
                exp.uuid_dirty = True
                exp.last_ns = max(exp.last_ns, T)   # no I/O while idle
                exp.stats_dirty = True
                exp.last_act_ns = T

    def apply_now(self, ev):
        """Apply a CLI event immediately between steps (no counter advance):
        rewrite the affected targets with snapshot = now."""
        if self.last_T is None:
            raise SimError("no step has run yet; queue the event for step 0 instead")
        if self.clock == "fake":
            T = self.last_T + self.period_ns // 2
        else:
            T = self._q(time.time_ns())
        T = self._q(T)
        res = self.apply_event(ev, T, self.step - 1, settle=False)
        for tgt in sorted(self.targets.values(), key=lambda t: t.name):
            if tgt.server:
                self._write_target(tgt, T, self.step - 1, integrate=False)
        self.write_expected()
        self.log_events([dict(self._log_entry(ev, self.step - 1, T, res), immediate=True)])
        return res
