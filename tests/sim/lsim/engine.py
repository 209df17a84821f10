"""The simulation model: servers, targets, per-NID exports, clients, events.

Time model
----------
Every counter is the integral of the owning client's scripted rate on that
target up to the snapshot_time printed in that very file.  Each step k has a
step time T_k; each file gets its own snapshot time s >= T_k (fake clock:
T_k + a fixed per-file offset, so s advances by exactly one period per step;
wall clock: the time the file is rendered).  An export keeps `last_ns`, the
time it was integrated to, and a fractional "carry" per stream, so integer
counters follow the integral exactly (error < one op / one RPC) and nothing
is lost or double counted between steps.

Ground truth
------------
Whenever an increment is applied to a client export's counter it is also
added, with the lharvestd rules (formats.classify), to truth[(fs, nid)]:
a list of formats.NACC ints, the six reported fields followed by the per-op
MDT counts (formats.MDT_OPS).
Resets/clears/failovers only zero the displayed counters, so the truth stays
the cumulative "what the client really did" and is exactly consistent with
what the files showed at each step.

On the wall clock a file's snapshot time is when it was rendered, which on
a busy machine can be long after T_k, and by a different amount at every
step: rates taken from the step times are then off by that difference
over the window.  So each truth row also carries, per target, the part of
the truth that target's file accounts for and the snapshot time printed in
it (truth_files): a checker divides what was written by the time it was
written over, as lharvestd does.  The fake clock needs none of this (its
snapshot times advance by exactly one period per step).

Sim is spread over modules by job: model.py (its parts), streams.py (what
clients do), events.py (topology and events), outputs.py (expected-once,
truth, event log); this file holds the state, the clock, integration and
the step.
"""

import gc
import json
import os
import pickle
import random
import time
import zlib

from . import formats, fsio, nids
from .events import EventsMixin
from .formats import NS
from .model import (K_BULK, K_OP, Client, Export, Server,  # noqa: F401 (Export...: old pickles)
                    SimError, Target, bump)
from .outputs import OutputsMixin
from .streams import StreamsMixin
from .versions import get_profile, MDT_MISC_OPS

STATE_DIR = ".lustresim"
STATE_FILE = "state.pickle"
PENDING_FILE = "pending-events.jsonl"

class Sim(StreamsMixin, EventsMixin, OutputsMixin):
    """Holds the whole simulated cluster; pickled between `--steps` runs."""

    def __init__(self, root, scn):
        self.root = os.path.abspath(root)
        self.scn = scn
        self.profile_key = scn["version"]
        self.rng = random.Random(scn["seed"])
        self.step = 0                 # next step to run
        self.last_T = None
        self.truth = {}
        # wall clock: (fs, nid) -> {target: [snapshot_ns, NACC ints]}
        self.truth_files = {}
        self.scheduled = [dict(e) for e in scn.get("events", [])]
        self.stats_header = bool(scn.get("enable_stats_header", 1))
        self.period_ns = int(round(scn["period"] * NS))
        self.start_ns = int(round(scn["start_time"] * NS))
        self.jitter_ns = int(round(scn.get("jitter_ms", 20) * 1e6))
        self.history_ns = int(round(scn.get("history", 0) * NS))
        self.idle_timeout_ns = int(round(scn.get("idle_disconnect", 0) * NS))
        self.clock = scn.get("clock", "fake")
        self.direct_io = False        # True only while building a fresh tree
        self.tree_root = self.root    # where server trees are written
        self.initialised = False
        self.jobs = 1                 # processes for a fresh build (big trees)
        self.keep_state = True        # forked build: ship exports back to parent
        self.fork_min_exports = 20000 # below this forking costs more than it saves
        self.state_incomplete = False
        self._init_runtime()
        self.servers = {}
        for i, s in enumerate(scn["servers"]):
            self.servers[s["name"]] = Server(s["name"], s.get("nid") or nids.server_nid(i))
        self.targets = {}
        for fs in scn["filesystems"]:
            for ttype, n in (("mdt", fs["mdts"]), ("ost", fs["osts"])):
                for idx in range(n):
                    name = "%s-%s%04x" % (fs["name"], ttype.upper(), idx)
                    self.targets[name] = Target(name, fs["name"], ttype, idx)
        placed = {}
        for s in scn["servers"]:
            for t in s.get("targets", []):
                if t not in self.targets:
                    raise SimError("server %s: unknown target %s" % (s["name"], t))
                if t in placed:
                    raise SimError("target %s on two servers" % t)
                placed[t] = s["name"]
        self.placement = placed
        self.clients = {}
        for c in scn["clients"]:
            self.clients[c["nid"]] = self._make_client(c)
        self.boot_ns = self.start_ns - self.history_ns - 600 * NS

    # ------------------------------------------------------------ runtime

    def _init_runtime(self):
        """Derived, unpickled data."""
        self.profile = get_profile(self.profile_key)
        self._stream_cache = {}
        self._fs_by_name = {f["name"]: f for f in self.scn["filesystems"]}
        self._key_class = {}
        for ttype, table in self.profile.tables.items():
            seen, kc = set(), {}
            for cdef in table:
                kc[cdef.key] = (((), None) if cdef.name in seen
                                else formats.classify(ttype, cdef.name))
                seen.add(cdef.name)
            self._key_class[ttype] = kc
            # _advance relies on these never counting (it skips crediting them)
            for k in ("read", "write", "preprw", "commitrw", "ping"):
                assert kc.get(k, ((), None)) == ((), None), k
        keys = self.profile.keys
        self._ost_op_key = {}
        for op in ("getattr", "setattr", "punch", "sync", "destroy", "create",
                   "statfs", "get_info", "set_info", "quotactl", "prealloc"):
            k = op if op in keys["ost"] else None
            if op == "set_info" and k is None and "set_info_async" in keys["ost"]:
                k = "set_info_async"            # 2.5 obd-op name
            self._ost_op_key[op] = k
        self._mdt_op_key = {op: (op if op in keys["mdt"] else None)
                            for op in MDT_MISC_OPS}

    def __getstate__(self):
        d = dict(self.__dict__)
        for k in ("profile", "_stream_cache", "_key_class", "_ost_op_key", "_mdt_op_key",
                  "_fs_by_name"):
            d.pop(k, None)
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        # State saved before the per-op MDT counts had 6-int truth lists:
        # their op counts start at 0 from here (deltas stay exact).
        for acc in self.truth.values():
            if len(acc) < formats.NACC:
                acc.extend([0] * (formats.NACC - len(acc)))
        self.__dict__.setdefault("truth_files", {})
        self._init_runtime()

    def _make_client(self, c):
        fss = c.get("fs") or [f["name"] for f in self.scn["filesystems"]]
        phases = {fs: c["phases"][fs] for fs in fss}
        noss = {f["name"]: f["osts"] for f in self.scn["filesystems"]}
        off = {}
        for fs in fss:
            so = c.get("stripe_offset")
            off[fs] = (so if so is not None
                       else zlib.crc32(("%s/%s" % (c["nid"], fs)).encode()) % max(1, noss[fs]))
        return Client(c["nid"], fss, phases, c.get("state", "active"),
                      c.get("mounts", 1), c.get("scale", 1.0),
                      c.get("lat_factor", 1.0), off)

    # ------------------------------------------------------------ paths

    def server_root(self, server):
        return os.path.join(self.tree_root, server)

    def target_dir(self, server, tgt):
        return os.path.join(self.tree_root, server, "proc/fs/lustre",
                            "obdfilter" if tgt.ttype == "ost" else "mdt", tgt.name)

    def exports_dir(self, server, tgt):
        if self.profile.exports_in_debugfs:
            base = os.path.join(self.tree_root, server, "sys/kernel/debug/lustre")
        else:
            base = os.path.join(self.tree_root, server, "proc/fs/lustre")
        return os.path.join(base, "obdfilter" if tgt.ttype == "ost" else "mdt",
                            tgt.name, "exports")

    def num_exports_path(self, server, tgt):
        typ = "obdfilter" if tgt.ttype == "ost" else "mdt"
        if self.profile.num_exports_in_sys:
            return os.path.join(self.tree_root, server, "sys/fs/lustre", typ, tgt.name, "num_exports")
        return os.path.join(self.target_dir(server, tgt), "num_exports")

    @property
    def trash(self):
        return os.path.join(self.root, STATE_DIR, "trash")

    def _write(self, path, data, mode=0o644):
        if self.direct_io:
            fsio.direct_write(path, data, mode)
        else:
            fsio.atomic_write(path, data, mode)

    # ------------------------------------------------------------ clock

    def _q(self, t):
        """<= 2.9 print microseconds: keep times on that grid so the rates a
        reader computes from printed times match the integrated counters."""
        return t - t % 1000 if self.profile.usec_resolution else t

    def step_time(self, k):
        if self.clock == "fake":
            return self._q(self.start_ns + k * self.period_ns)
        return self._q(time.time_ns())

    def file_time(self, T, tgt, nid):
        if self.clock == "fake":
            if not self.jitter_ns:
                return T
            off = zlib.crc32(("%s/%s" % (tgt.name, nid)).encode()) % self.jitter_ns
            return self._q(T + off)
        return max(T, self._q(time.time_ns()))

    # ------------------------------------------------------------ integrate

    def _advance(self, tgt, exp, t_ns, step):
        """Integrate export exp up to t_ns (see module docstring)."""
        dt = t_ns - exp.last_ns
        if dt <= 0:
            return
        exp.last_ns = t_ns
        if exp.client is None:
            if not exp.uuids:
                return
            streams = self._peer_streams(tgt)
            acc = None
        else:
            client = self.clients[exp.client]
            if client.state != "active":
                return
            streams = self._streams(client, tgt, step)
            acc = self.truth[(tgt.fs, exp.nid)]
        if not streams:
            return
        facc = self._file_truth(tgt, exp.nid) if acc is not None else None
        before = list(acc) if facc is not None else None
        ctr, carry = exp.ctr, exp.carry
        kc = self._key_class[tgt.ttype]
        did = False
        for st in streams:
            kind, sid, rate = st[0], st[1], st[2]
            c = carry.get(sid, 0.0) + rate * dt
            n = int(c)
            carry[sid] = c - n
            if n <= 0:
                continue
            if sid != "ping":
                did = True
            if kind == K_BULK:
                _, _, _, size, bkey, lkey, lat, extra = st
                s = bump(ctr, bkey, n, size, size, size)
                if acc is not None:
                    # bulk byte counters: sum -> *_bytes, count -> *_ops (+oss_ops)
                    cf, sf = kc[bkey]
                    for f in cf:
                        acc[f] += n
                    acc[sf] += s
                if lkey:
                    bump(ctr, lkey, n, *lat)      # read/write [usecs]: not counted
                for k in extra:
                    bump(ctr, k, n, 1, 1, 1)      # preprw/commitrw: not counted
            elif kind == K_OP:
                _, _, _, key, lat, dup = st
                s = bump(ctr, key, n, *lat)
                if acc is not None:
                    for f in kc[key][0]:
                        acc[f] += n
                if dup:
                    d = carry.get(sid + ".dup", 0.0) + n * 0.5
                    nd = int(d)
                    carry[sid + ".dup"] = d - nd
                    if nd:
                        bump(ctr, dup, nd, 1, 1, 1)
                        self._credit(acc, kc, dup, nd, nd)
            else:
                _, _, _, key, lat, (xf, pf, pdf, tf) = st
                self._credit(acc, kc, key, n, bump(ctr, key, n, *lat))
                nx = self._split(carry, sid + ".x", n, xf)
                same = n - nx
                parts = [("samedir_rename", same), ("crossdir_rename", nx)]
                if "parallel_rename_file" in self.profile.keys["mdt"]:
                    npar = self._split(carry, sid + ".p", same, pf)
                    npd = self._split(carry, sid + ".pd", npar, pdf)
                    parts += [("parallel_rename_file", npar - npd), ("parallel_rename_dir", npd)]
                if "rename_trylocks" in self.profile.keys["mdt"]:
                    parts.append(("rename_trylocks", self._split(carry, sid + ".t", n, tf)))
                for k, m in parts:
                    if m > 0:
                        self._credit(acc, kc, k, m, bump(ctr, k, m, *lat))
        if before is not None:
            for i, (now, was) in enumerate(zip(acc, before)):
                facc[i + 1] += now - was
        if did:
            exp.last_act_ns = t_ns
            if exp.client is not None and not exp.uuids:
                # idle-disconnected OST export: new I/O reconnects it
                exp.uuids = list(self.clients[exp.client].uuids)
                exp.uuid_dirty = True

    def _file_truth(self, tgt, nid):
        """[snapshot_ns, NACC ints]: the truth that tgt's file of client nid
        accounts for, and the snapshot time last printed in it (wall clock
        only, else None)."""
        if self.clock != "wall":
            return None
        per = self.truth_files.setdefault((tgt.fs, nid), {})
        rec = per.get(tgt.name)
        if rec is None:
            rec = per[tgt.name] = [0] * (1 + formats.NACC)
        return rec

    @staticmethod
    def _split(carry, sid, n, frac):
        c = carry.get(sid, 0.0) + n * frac
        m = int(c)
        if m > n:
            m = n
        carry[sid] = c - m
        return m

    @staticmethod
    def _credit(acc, kc, key, n, s, base=0):
        """Add n samples of sum s of counter key to the accumulator acc,
        whose NACC slots start at index base."""
        if acc is None:
            return
        cf, sf = kc[key]
        for f in cf:
            acc[base + f] += n
        if sf is not None:
            acc[base + sf] += s

    # ------------------------------------------------------------ init

    def initialise(self):
        """Build the step-0 topology: mount targets (history_ns in the past),
        connect peers and initial clients.  Files are written by run_step(0)."""
        T0 = self.step_time(0)
        mount_T = self._q(T0 - self.history_ns)
        initial = {}
        for c in self.clients.values():
            if c.state in ("active", "stale"):
                initial[c.nid] = c.state
                c.state = "absent"
        for srv in self.servers:
            os.makedirs(self.server_root(srv), exist_ok=True)
            self._write_version_files(srv)
        for tname, srv in sorted(self.placement.items()):
            self._mount(self.targets[tname], srv, mount_T)
        self._sync_peers(mount_T)
        # Initial clients mount at some point during the history window; a
        # "stale" client did I/O for a while, then disconnected before step 0.
        for nid, state in initial.items():
            c = self.clients[nid]
            t_mount = self._q(mount_T + int(self.rng.random() * 0.3 * self.history_ns))
            self._activate(c, t_mount)
            if state == "stale":
                t_gone = self._q(t_mount + int((0.2 + 0.4 * self.rng.random()) * (T0 - t_mount)))
                self.apply_event({"type": "client_idle", "nid": nid}, t_gone, 0)
        self.initialised = True

    def _write_version_files(self, srv):
        sroot = self.server_root(srv)
        p = self.profile
        if p.version_in_sys:
            d = os.path.join(sroot, "sys/fs/lustre")
            os.makedirs(d, exist_ok=True)
            self._write(os.path.join(d, "version"), p.full + "\n")
            if p.has_stats_header_switch:
                self._write(os.path.join(d, "enable_stats_header"),
                            "%d\n" % int(self.stats_header))
        else:
            d = os.path.join(sroot, "proc/fs/lustre")
            os.makedirs(d, exist_ok=True)
            self._write(os.path.join(d, "version"),
                        "lustre: %s\nkernel: patchless_client\nbuild:  %s-RC1\n" % (p.full, p.full))

    # ------------------------------------------------------------ one step

    def run_step(self, T=None, extra_events=()):
        """Run step self.step at time T: events, integrate, write all files,
        expected-once, truth and the event log.  Returns the step number."""
        k = self.step
        if T is None:
            T = self.step_time(k)
        T = self._q(T)
        if self.last_T is not None and T <= self.last_T:
            T = self.last_T + (1000 if self.profile.usec_resolution else 1)
        log = []
        fresh = not self.initialised
        if fresh:
            # A fresh build allocates ~10 objects per export; the cyclic GC
            # would repeatedly walk them all (and, after fork, un-share every
            # page).  Nothing here creates reference cycles.
            gc_was = gc.isenabled()
            gc.disable()
            self._begin_fresh_build()
            self.initialise()
        events = [e for e in self.scheduled if e.get("step") == k]
        self.scheduled = [e for e in self.scheduled if e.get("step") != k]
        events += list(extra_events)
        events += self._external_clears()
        for ev in events:
            res = self.apply_event(ev, T, k)
            log.append(self._log_entry(ev, k, T, res))
        self._connect_missing(T, k)
        mounted = [t for t in sorted(self.targets.values(), key=lambda t: t.name) if t.server]
        partial = None
        if fresh and self.jobs > 1 and sum(len(t.exports) for t in mounted) >= self.fork_min_exports:
            partial = self._write_targets_forked(mounted, T, k)
        else:
            for tgt in mounted:
                self._write_target(tgt, T, k)
        self._idle_disconnect(T)
        if fresh:
            self._end_fresh_build()
        self._finish_step(k, T, log, partial)
        self.step = k + 1
        self.last_T = T
        if fresh and gc_was:
            gc.enable()
        return k

    def _write_targets_forked(self, mounted, T, k):
        """Fresh-build speed-up: fork jobs-1 children that each integrate,
        render and write a share of the targets (into the private build
        dir), and send back their truth deltas, expected-once partial sums
        and, if keep_state, the updated exports.  Returns the expected-once
        partials of the children's targets (the parent's copy of those
        targets is stale unless keep_state)."""
        groups = [mounted[i::self.jobs] for i in range(self.jobs)]
        truth0 = {key: list(v) for key, v in self.truth.items()}
        kids = []
        for g in groups[1:]:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:                           # child
                code = 0
                try:
                    os.close(r)
                    for tgt in g:
                        self._write_target(tgt, T, k)
                    res = {"truth": {key: [a - b for a, b in zip(v, truth0[key])]
                                     for key, v in self.truth.items() if v != truth0[key]},
                           "expected": self._expected_acc(g),
                           "num": {t.name: t.num_exports_written for t in g},
                           "exports": ({t.name: t.exports for t in g} if self.keep_state else None)}
                    with os.fdopen(w, "wb") as f:
                        pickle.dump(res, f, protocol=pickle.HIGHEST_PROTOCOL)
                except BaseException:
                    import traceback
                    traceback.print_exc()
                    code = 1
                finally:
                    os._exit(code)
            os.close(w)
            kids.append((pid, r, g))
        for tgt in groups[0]:
            self._write_target(tgt, T, k)
        partial = {"targets": set(), "rows": {}}
        for pid, r, g in kids:
            with os.fdopen(r, "rb") as f:
                data = f.read()
            _, status = os.waitpid(pid, 0)
            if status != 0 or not data:
                raise SimError("tree-building child process failed")
            res = pickle.loads(data)
            for key, d in res["truth"].items():
                acc = self.truth[key]
                for i, v in enumerate(d):
                    acc[i] += v
            for key, acc in res["expected"].items():
                tot = partial["rows"].setdefault(key, [0] * formats.NACC)
                for i, v in enumerate(acc):
                    tot[i] += v
            for tgt in g:
                partial["targets"].add(tgt.name)
                tgt.num_exports_written = res["num"][tgt.name]
                if res["exports"] is not None:
                    tgt.exports = res["exports"][tgt.name]
        if self.keep_state:
            return None
        self.state_incomplete = True      # must not be saved / resumed
        return partial

    def _connect_missing(self, T, k):
        """An active client whose export on a target was removed (clear while
        idle-disconnected) reconnects when it does I/O there again."""
        for tgt in self.targets.values():
            if not tgt.server:
                continue
            for c in self.clients.values():
                if c.state == "active" and tgt.fs in c.fss and c.nid not in tgt.exports:
                    if tgt.ttype == "mdt" or not self.idle_timeout_ns or any(
                            s[1] != "ping" for s in self._streams(c, tgt, k)):
                        tgt.exports[c.nid] = Export(c.nid, c.nid, c.uuids, T)

    def _idle_disconnect(self, T):
        """2.12+ clients drop idle OST connections (osc idle_timeout): the
        export goes away (uuid empty) but the NID dir and counters stay."""
        if not self.idle_timeout_ns or not self.profile.idle_disconnect:
            return
        for tgt in self.targets.values():
            if tgt.server and tgt.ttype == "ost":
                for exp in tgt.exports.values():
                    if (exp.client and exp.uuids and
                            T - exp.last_act_ns >= self.idle_timeout_ns and
                            self.clients[exp.client].state == "active"):
                        exp.uuids = []
                        exp.uuid_dirty = True

    def _external_clears(self):
        """Honour a write to exports/clear made by a test (or the daemon)."""
        out = []
        if not self.scn.get("watch_clear", True):
            return out
        for tgt in self.targets.values():
            if not tgt.server:
                continue
            p = os.path.join(self.exports_dir(tgt.server, tgt), "clear")
            try:
                if os.stat(p).st_size > 0:
                    self._write(p, b"")
                    out.append({"type": "clear", "target": tgt.name, "source": "external"})
            except FileNotFoundError:
                pass
        return out

    def _render_export(self, tgt, exp, s):
        p = self.profile
        snap = s - self.boot_ns if p.header == "mono3" else s
        return formats.render_stats(p, tgt.ttype, exp.ctr, snap, exp.start_ns, self.stats_header)

    def _begin_fresh_build(self):
        """The first step builds each server tree in a private directory and
        renames it into place afterwards: atomic, and fast (no per-file
        temp+rename).  Used only if no server tree exists yet."""
        if any(os.path.lexists(os.path.join(self.root, s)) for s in self.servers):
            return
        self.tree_root = os.path.join(self.root, STATE_DIR, "build.%d" % os.getpid())
        if os.path.exists(self.tree_root):
            fsio.atomic_rmtree(self.tree_root, self.trash)
        os.makedirs(self.tree_root)
        self.direct_io = True

    def _end_fresh_build(self):
        if self.tree_root == self.root:
            return
        for s in sorted(self.servers):
            os.rename(os.path.join(self.tree_root, s), os.path.join(self.root, s))
        os.rmdir(self.tree_root)
        self.tree_root = self.root
        self.direct_io = False

    def _write_target(self, tgt, T, k, integrate=True):
        """Write the target's export files for this step.  integrate=False
        (immediate CLI events) rewrites only exports whose content changed,
        with snapshot_time T and without advancing their counters."""
        edir = self.exports_dir(tgt.server, tgt)
        staging = os.path.join(self.root, STATE_DIR, "staging")
        live = 0
        for nid in sorted(tgt.exports):
            exp = tgt.exports[nid]
            live += len(exp.uuids)
            if integrate:
                s = self.file_time(T, tgt, nid)
                self._advance(tgt, exp, s, k)
            elif exp.stats_dirty or exp.uuid_dirty or not exp.on_disk:
                s = T
            else:
                continue
            text = self._render_export(tgt, exp, s)
            if exp.client is not None and (tgt.fs, nid) in self.truth:
                facc = self._file_truth(tgt, nid)
                if facc is not None:
                    facc[0] = s
            exp.stats_dirty = False
            if exp.on_disk:
                d = edir + "/" + nid
                self._write(d + "/stats", text)
                if exp.uuid_dirty:
                    self._write(d + "/uuid", "".join(u + "\n" for u in exp.uuids), 0o444)
            elif self.direct_io:
                d = edir + "/" + nid
                os.mkdir(d)
                fsio.direct_write(d + "/stats", text)
                fsio.direct_write(d + "/uuid", "".join(u + "\n" for u in exp.uuids), 0o444)
            else:
                # Build the new NID dir outside the tree, then rename it in,
                # so it never appears without its stats/uuid files.
                os.makedirs(staging, exist_ok=True)
                tmpd = os.path.join(staging, "%d.%s" % (os.getpid(), nid))
                if os.path.exists(tmpd):
                    fsio.atomic_rmtree(tmpd, self.trash)
                os.mkdir(tmpd)
                fsio.direct_write(os.path.join(tmpd, "stats"), text)
                fsio.direct_write(os.path.join(tmpd, "uuid"), "".join(u + "\n" for u in exp.uuids), 0o444)
                os.rename(tmpd, os.path.join(edir, nid))
            exp.on_disk = True
            exp.uuid_dirty = False
        if tgt.num_exports_written != live:
            self._write(self.num_exports_path(tgt.server, tgt), "%d\n" % live)
            tgt.num_exports_written = live

    # ------------------------------------------------------------ persistence

    def save(self):
        if self.state_incomplete:
            raise SimError("state of a forked build without keep_state cannot be saved")
        d = os.path.join(self.root, STATE_DIR)
        os.makedirs(d, exist_ok=True)
        fsio.atomic_write(os.path.join(d, STATE_FILE),
                          pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL))

    @staticmethod
    def load(root):
        p = os.path.join(os.path.abspath(root), STATE_DIR, STATE_FILE)
        try:
            with open(p, "rb") as f:
                sim = pickle.load(f)
        except FileNotFoundError:
            raise SimError("no simulator state in %s (start with `run --scenario` or `tree`)" % root)
        sim.root = os.path.abspath(root)
        return sim


def take_pending(root):
    """Atomically take the queued CLI events (rename, then read)."""
    d = os.path.join(root, STATE_DIR)
    p = os.path.join(d, PENDING_FILE)
    tmp = p + ".taking.%d" % os.getpid()
    try:
        os.rename(p, tmp)
    except FileNotFoundError:
        return []
    with open(tmp) as f:
        evs = [json.loads(line) for line in f if line.strip()]
    os.unlink(tmp)
    return evs


def queue_event(root, ev):
    d = os.path.join(root, STATE_DIR)
    os.makedirs(d, exist_ok=True)
    fsio.append_line_block(os.path.join(d, PENDING_FILE), json.dumps(ev) + "\n")
