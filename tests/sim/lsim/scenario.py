"""Scenario files: normalisation/validation, built-in workload profiles, and
the generated scenarios behind the `tree` and `big` subcommands.

See tests/sim/README.md for the JSON format.  normalise() returns a plain
dict in which every client has explicit, fully merged phases per filesystem,
so the engine never has to look at defaults.
"""

import copy
import random
import time

from . import nids
from .versions import get_profile, OST_MISC_OPS, MDT_MISC_OPS

MiB = 1 << 20

# Defaults every phase starts from (a phase only lists what changes).
PHASE_DEFAULTS = {
    "read_bps": 0.0, "write_bps": 0.0,
    "rpc_sizes": [[4 * MiB, 1.0]],      # [size, fraction of RPCs]
    "stripe_count": -1,                  # -1: spread evenly over all OSTs
    "oss_ops": {}, "mds_ops": {},        # op -> ops/s over the whole fs
    "dom_read_bps": 0.0, "dom_write_bps": 0.0, "dom_rpc_size": 65536,
    "crossdir_frac": 0.2, "parallel_frac": 0.5, "parallel_dir_frac": 0.2,
    "trylock_frac": 0.05, "dup_statfs": True,
}

# Built-in workload profiles (a profile is a list of phases).
PROFILES = {
    "idle": [{"from_step": 0}],
    "writer": [{"from_step": 0, "write_bps": 120e6, "read_bps": 2e6,
                "rpc_sizes": [[4 * MiB, 0.93], [MiB, 0.05], [4096, 0.02]],
                "oss_ops": {"punch": 0.05, "setattr": 0.02, "sync": 0.01, "statfs": 0.01,
                            "getattr": 0.02, "set_info": 0.002, "destroy": 0.005},
                "mds_ops": {"open": 2, "close": 2, "getattr": 8, "setattr": 0.5,
                            "statfs": 0.05, "mknod": 0.3, "unlink": 0.1}}],
    "reader": [{"from_step": 0, "read_bps": 250e6, "write_bps": 1e6,
                "rpc_sizes": [[4 * MiB, 0.9], [MiB, 0.08], [4096, 0.02]],
                "oss_ops": {"getattr": 0.05, "statfs": 0.01, "setattr": 0.01,
                            "punch": 0.005, "sync": 0.002},
                "mds_ops": {"open": 3, "close": 3, "getattr": 20, "getxattr": 2}}],
    "mixed": [{"from_step": 0, "read_bps": 60e6, "write_bps": 40e6,
               "rpc_sizes": [[4 * MiB, 0.8], [MiB, 0.15], [4096, 0.05]],
               "oss_ops": {"getattr": 0.1, "setattr": 0.05, "punch": 0.1, "sync": 0.02,
                           "statfs": 0.02, "set_info": 0.01, "destroy": 0.01},
               "mds_ops": {"open": 5, "close": 5, "getattr": 30, "setattr": 1,
                           "getxattr": 3, "unlink": 0.5, "mknod": 0.5, "rename": 0.2,
                           "statfs": 0.1, "sync": 0.02},
               "dom_read_bps": 200e3, "dom_write_bps": 50e3}],
    "meta": [{"from_step": 0, "read_bps": 1e6, "write_bps": 1e6,
              "rpc_sizes": [[65536, 0.7], [4096, 0.3]],
              "oss_ops": {"getattr": 2, "setattr": 1, "punch": 0.5, "destroy": 0.5,
                          "statfs": 0.1},
              "mds_ops": {"open": 200, "close": 200, "getattr": 800, "setattr": 40,
                          "mknod": 30, "unlink": 30, "mkdir": 2, "rmdir": 2,
                          "rename": 10, "link": 1, "getxattr": 100, "setxattr": 5,
                          "statfs": 1, "sync": 0.5},
              "dom_read_bps": 2e6, "dom_write_bps": 1e6}],
    "checkpoint": [{"from_step": 0, "write_bps": 0.0,
                    "mds_ops": {"getattr": 1}},
                   {"from_step": 2, "write_bps": 800e6, "rpc_sizes": [[16 * MiB, 1.0]],
                    "mds_ops": {"open": 10, "close": 10, "getattr": 5}},
                   {"from_step": 6, "write_bps": 0.0, "mds_ops": {"getattr": 1}}],
}


class ScenarioError(ValueError):
    pass


def _merge_phases(phases, where):
    if isinstance(phases, dict):
        phases = [phases]
    if not phases:
        raise ScenarioError("%s: empty phase list" % where)
    out = []
    cur = dict(copy.deepcopy(PHASE_DEFAULTS))
    last = -1
    for ph in sorted(phases, key=lambda p: p.get("from_step", 0)):
        frm = int(ph.get("from_step", 0))
        if frm == last:
            raise ScenarioError("%s: two phases start at step %d" % (where, frm))
        last = frm
        for k, v in ph.items():
            if k == "from_step":
                continue
            if k not in PHASE_DEFAULTS and k != "rpc_size":
                raise ScenarioError("%s: unknown phase key %r" % (where, k))
            cur[k] = copy.deepcopy(v)
        if "rpc_size" in ph:
            cur["rpc_sizes"] = [[int(ph["rpc_size"]), 1.0]]
        cur.pop("rpc_size", None)
        for op in cur["oss_ops"]:
            if op not in OST_MISC_OPS:
                raise ScenarioError("%s: unknown OST op %r (known: %s)" % (where, op, " ".join(OST_MISC_OPS)))
        for op in cur["mds_ops"]:
            if op not in MDT_MISC_OPS:
                raise ScenarioError("%s: unknown MDT op %r (known: %s)" % (where, op, " ".join(MDT_MISC_OPS)))
        tot = sum(f for _, f in cur["rpc_sizes"])
        if tot <= 0 or any(s <= 0 for s, _ in cur["rpc_sizes"]):
            raise ScenarioError("%s: bad rpc_sizes %r" % (where, cur["rpc_sizes"]))
        cur["rpc_sizes"] = [[int(s), f / tot] for s, f in cur["rpc_sizes"]]
        out.append([frm, copy.deepcopy(cur)])
    if out[0][0] != 0:
        out.insert(0, [0, dict(copy.deepcopy(PHASE_DEFAULTS), rpc_sizes=[[4 * MiB, 1.0]])])
    return out


def _client_phases(c, profiles, fss, where, memo):
    """Per-fs merged phases: "workloads": {fs: profile-or-phases} wins, then
    "phases", then "profile".  Named profiles are merged once and shared
    (the engine never mutates phases)."""
    def resolve(p, fs):
        if isinstance(p, str):
            if p not in profiles:
                raise ScenarioError("%s: unknown profile %r" % (where, p))
            if p not in memo:
                memo[p] = _merge_phases(profiles[p], "profile %s" % p)
            return memo[p]
        return _merge_phases(p, "%s/%s" % (where, fs))
    base = c.get("phases", c.get("profile", "idle"))
    wl = c.get("workloads", {})
    return {fs: resolve(wl.get(fs, base), fs) for fs in fss}


def normalise(scn, overrides=None):
    """Validate a scenario dict and fill in defaults.  `overrides` (from the
    command line) replaces top-level keys such as period/clock/start_time."""
    scn = copy.deepcopy(scn)
    for k, v in (overrides or {}).items():
        if v is not None:
            scn[k] = v
    prof = get_profile(scn.get("version", "2.15"))
    scn["version"] = prof.full
    scn.setdefault("seed", 1)
    scn.setdefault("period", 5.0)
    scn.setdefault("clock", "fake")
    if scn["clock"] not in ("fake", "wall"):
        raise ScenarioError("clock must be 'fake' or 'wall'")
    if scn.get("start_time") is None:
        scn["start_time"] = (1712345678.0 if scn["clock"] == "fake" else time.time())
    if float(scn["period"]) <= 0:
        raise ScenarioError("period must be > 0")
    if "enable_stats_header" in scn and not prof.has_stats_header_switch and not scn["enable_stats_header"]:
        raise ScenarioError("enable_stats_header=0 needs Lustre 2.16+")
    rng = random.Random(scn["seed"])

    fss = []
    for f in scn.get("filesystems", [{"name": "scratch", "osts": 2, "mdts": 1}]):
        if isinstance(f, str):
            f = {"name": f}
        f = dict(f)
        name = f.get("name", "")
        if not name or len(name) > 8 or not all(ch.isalnum() or ch in "_-" for ch in name):
            raise ScenarioError("bad fsname %r (1-8 chars of [A-Za-z0-9_-])" % name)
        fss.append(f)
    fsnames = [f["name"] for f in fss]

    # Servers: explicit list, or a "layout" {oss, osts_per_oss, mds, mdts_per_mds, colocate}.
    if "servers" not in scn:
        lay = dict(scn.get("layout", {}))
        scn["servers"] = layout_servers(fss, lay)
    hosted = {}
    for s in scn["servers"]:
        for t in s.get("targets", []):
            fsn, lab = t.rsplit("-", 1)
            kind, idx = lab[:3].lower(), int(lab[3:], 16)
            if fsn not in fsnames or kind not in ("ost", "mdt"):
                raise ScenarioError("server %s: bad target name %s" % (s["name"], t))
            hosted.setdefault((fsn, kind), set()).add(idx)
    for f in fss:
        for kind in ("ost", "mdt"):
            n = max(hosted.get((f["name"], kind), {-1})) + 1
            f.setdefault(kind + "s", n)
        if f["mdts"] < 1 or f["osts"] < 1:
            raise ScenarioError("fs %s needs at least one MDT and one OST" % f["name"])
    scn["filesystems"] = fss

    profiles = dict(PROFILES)
    profiles.update(scn.get("profiles", {}))
    clients = []
    used = set()
    memo = {}
    for i, c in enumerate(scn.get("clients", [])):
        clients.append(_norm_client(c, profiles, fsnames, "clients[%d]" % i, rng, prof, memo))
    counters = {}
    for gi, g in enumerate(scn.get("client_groups", [])):
        nets = g.get("nets", ["o2ib"])
        profs = g.get("profiles", [g.get("profile", "idle")])
        for j in range(int(g.get("count", 1))):
            net = nets[j % len(nets)]
            if net == "tcp6" and not prof.ipv6_nids:
                net = "tcp"        # IPv6 NIDs exist only from 2.16
            counters[net] = counters.get(net, 0) + 1
            c = {k: v for k, v in g.items() if k not in ("count", "nets", "profiles", "profile", "scale_range")}
            c["nid"] = nids.make_nid(net, counters[net] - 1 + g.get("first", 0))
            c["profile"] = profs[j % len(profs)]
            if "scale_range" in g:
                lo, hi = g["scale_range"]
                c["scale"] = lo + (hi - lo) * rng.random()
            clients.append(_norm_client(c, profiles, fsnames, "client_groups[%d]" % gi, rng, prof, memo))
    for c in clients:
        if c["nid"] in used:
            raise ScenarioError("duplicate client nid %s" % c["nid"])
        used.add(c["nid"])
    snids = {s.get("nid") for s in scn["servers"]}
    if used & snids:
        raise ScenarioError("client nid collides with a server nid: %s" % sorted(used & snids))
    scn["clients"] = clients
    scn["profiles"] = profiles

    evs = []
    for e in scn.get("events", []):
        e = dict(e)
        if "step" not in e or "type" not in e:
            raise ScenarioError("event needs step and type: %r" % e)
        if e["type"] == "client_appear" and e["nid"] not in used:
            if "profile" not in e and "phases" not in e:
                raise ScenarioError("client_appear of unknown nid %s needs a profile" % e["nid"])
            spec = {k: v for k, v in e.items() if k not in ("step", "type")}
            spec["state"] = "absent"
            e["spec"] = _norm_client(spec, profiles, fsnames, "event", rng, prof, memo)
        evs.append(e)
    scn["events"] = evs
    return scn


def client_spec(scn, ev, rng):
    """Normalised client spec for a CLI client_appear of a new NID."""
    prof = get_profile(scn["version"])
    spec = {k: v for k, v in ev.items() if k not in ("step", "type", "spec", "now")}
    spec["state"] = "absent"
    fsnames = [f["name"] for f in scn["filesystems"]]
    return _norm_client(spec, scn["profiles"], fsnames, "client_appear", rng, prof)


def _norm_client(c, profiles, fsnames, where, rng, prof, memo=None):
    c = dict(c)
    if "nid" not in c:
        raise ScenarioError("%s: client without nid" % where)
    if nids.is_ipv6(c["nid"]) and not prof.ipv6_nids:
        raise ScenarioError("%s: IPv6 NID %s needs Lustre 2.16+" % (where, c["nid"]))
    fss = c.get("fs") or list(fsnames)
    if isinstance(fss, str):
        fss = [fss]
    for fs in fss:
        if fs not in fsnames:
            raise ScenarioError("%s: unknown fs %s" % (where, fs))
    c["fs"] = fss
    c["phases"] = _client_phases(c, profiles, fss, where, memo if memo is not None else {})
    c.setdefault("state", "active")
    if c["state"] not in ("active", "stale", "absent"):
        raise ScenarioError("%s: state must be active, stale or absent" % where)
    c.setdefault("mounts", 1)
    c.setdefault("scale", 1.0)
    c.setdefault("lat_factor", round(0.7 + 1.3 * rng.random(), 3))
    c.pop("profile", None)
    c.pop("workloads", None)
    return c


def layout_servers(fss, lay):
    """Generate servers: `mds` MDS nodes sharing each fs's MDTs and `oss` OSS
    nodes sharing its OSTs round-robin; colocate=True puts everything on
    one node (peer exports then show up as 0@lo)."""
    n_oss = int(lay.get("oss", 2))
    n_mds = int(lay.get("mds", 1))
    if lay.get("colocate"):
        names = ["oss1"]
        targets = {"oss1": []}
    else:
        names = ["mds%d" % (i + 1) for i in range(n_mds)] + ["oss%d" % (i + 1) for i in range(n_oss)]
        targets = {n: [] for n in names}
    for f in fss:
        mdts = int(f.get("mdts", lay.get("mdts_per_fs", 1)))
        osts = int(f.get("osts", lay.get("osts_per_oss", 2) * n_oss))
        f["mdts"], f["osts"] = mdts, osts
        for i in range(mdts):
            srv = "oss1" if lay.get("colocate") else "mds%d" % (i % n_mds + 1)
            targets[srv].append("%s-MDT%04x" % (f["name"], i))
        for i in range(osts):
            srv = "oss1" if lay.get("colocate") else "oss%d" % (i % n_oss + 1)
            targets[srv].append("%s-OST%04x" % (f["name"], i))
    return [{"name": n, "nid": nids.server_nid(i), "targets": targets[n]}
            for i, n in enumerate(names)]


# ----------------------------------------------------------- generators

def generated_clients(n, prof, rng, nets=None, stale_frac=0.05, idle_frac=0.1, first=0):
    """A realistic mixed population of n clients on several LNets."""
    # interleaved so every LNet shows up even in small trees
    nets = nets or (["o2ib", "o2ib2", "tcp102", "o2ib", "gni", "o2ib", "o2ib2", "tcp102",
                     "o2ib", "tcp6" if prof.ipv6_nids else "o2ib2"] * 2
                    + ["o2ib", "o2ib2", "tcp102", "o2ib", "o2ib"] * 2)
    kinds = ["writer"] * 3 + ["reader"] * 3 + ["mixed"] * 5 + ["meta"]
    counters, out = {}, []
    for i in range(n):
        net = nets[i % len(nets)]
        counters[net] = counters.get(net, 0) + 1
        nid = nids.make_nid(net, first + counters[net] - 1)
        r = rng.random()
        state = "stale" if r < stale_frac else "active"
        kind = "idle" if stale_frac <= r < stale_frac + idle_frac else rng.choice(kinds)
        out.append({"nid": nid, "profile": kind, "state": state,
                    "scale": round(0.02 + 2.0 * rng.random() ** 2, 4)})
    return out


def tree_scenario(version="2.15", servers=2, osts_per_server=2, mdts=1, clients=20,
                  fsnames=("scratch",), seed=1, start_time=None, history=7 * 86400,
                  colocate=False, stats_header=1, mds_servers=1):
    """One static snapshot: `servers` OSS nodes, `mds_servers` MDS nodes."""
    prof = get_profile(version)
    rng = random.Random(seed)
    fss = [{"name": n, "osts": servers * osts_per_server, "mdts": mdts} for n in fsnames]
    scn = {"version": version, "seed": seed, "period": 5.0, "clock": "fake",
           "start_time": start_time if start_time is not None else float(int(time.time())),
           "history": history, "filesystems": fss,
           "layout": {"oss": servers, "mds": mds_servers, "colocate": colocate},
           "clients": generated_clients(clients, prof, rng)}
    if prof.has_stats_header_switch:
        scn["enable_stats_header"] = stats_header
    return scn


def big_scenario(version="2.15", osts=8, clients=10000, mdt=True, seed=1, start_time=None,
                 history=7 * 86400, fsname="scratch"):
    """Benchmark tree: one server with `osts` OSTs (+ the MDT) and `clients`
    clients connected to every target."""
    prof = get_profile(version)
    rng = random.Random(seed)
    targets = ["%s-OST%04x" % (fsname, i) for i in range(osts)]
    if mdt:
        targets.insert(0, "%s-MDT0000" % fsname)
    servers = [{"name": "oss1", "nid": nids.server_nid(0), "targets": targets}]
    if not mdt:
        # the MDT still exists (peer exports need it), on another server
        servers.append({"name": "mds1", "nid": nids.server_nid(1), "targets": ["%s-MDT0000" % fsname]})
    scn = {"version": version, "seed": seed, "period": 5.0, "clock": "fake",
           "start_time": start_time if start_time is not None else float(int(time.time())),
           "history": history, "watch_clear": False,
           "filesystems": [{"name": fsname, "osts": osts, "mdts": 1}],
           "servers": servers,
           "clients": generated_clients(clients, prof, rng, stale_frac=0.04, idle_frac=0.08)}
    return scn
