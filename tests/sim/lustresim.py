#!/usr/bin/env python3
"""lustresim: simulated Lustre OSS/MDS /proc + /sys trees for lharvestd tests.

  lustresim.py tree   --root DIR [--version V] [--servers N] ...   one static snapshot
  lustresim.py big    --root DIR [--osts 8] [--clients 10000] ...  benchmark tree
  lustresim.py run    --root DIR [--scenario FILE] [--steps N] ... run / resume a scenario
  lustresim.py event  --root DIR TYPE [--target T] [--nid N] ...   inject an event
  lustresim.py status --root DIR                                   where a scenario is

See tests/sim/README.md.  Python 3 standard library only.
"""

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lsim import engine, scenario  # noqa: E402
from lsim.engine import Sim, SimError, STATE_DIR  # noqa: E402
from lsim.scenario import ScenarioError  # noqa: E402
from lsim.versions import SUPPORTED  # noqa: E402

OUTPUTS = ("truth.jsonl", "truth-latest.json", "events.jsonl", "scenario.json")


@contextlib.contextmanager
def locked(root, wait=False):
    """One process at a time drives a scenario directory."""
    d = os.path.join(root, STATE_DIR)
    os.makedirs(d, exist_ok=True)
    fd = os.open(os.path.join(d, "lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise SimError("%s is being driven by another lustresim process" % root)
        yield
    finally:
        os.close(fd)


def wipe(root, extra_servers=()):
    """Remove what a previous simulation wrote into root (and nothing else)."""
    servers = set(extra_servers)
    try:
        servers |= set(Sim.load(root).servers)
    except Exception:
        pass
    for s in servers:
        p = os.path.join(root, s)
        if os.path.isdir(p):
            shutil.rmtree(p)
    for f in OUTPUTS:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(root, f))
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(os.path.join(root, STATE_DIR)):
            if name != "lock":
                p = os.path.join(root, STATE_DIR, name)
                shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)


def start(root, scn, force, raw):
    """Create a Sim for a normalised scenario in root; raw is the scenario as
    given (with command-line overrides), kept as root/scenario.json."""
    os.makedirs(root, exist_ok=True)
    names = [s["name"] for s in scn["servers"]]
    have_state = os.path.exists(os.path.join(root, STATE_DIR, engine.STATE_FILE))
    clash = [n for n in names if os.path.lexists(os.path.join(root, n))]
    if have_state or clash:
        if not force:
            raise SimError("%s already holds a simulation (%s); use --force/--fresh to replace it"
                           % (root, ", ".join(clash) or "state"))
        wipe(root, names)
    sim = Sim(root, scn)
    with open(os.path.join(root, "scenario.json"), "w") as f:
        json.dump(raw, f, indent=None if len(raw.get("clients", ())) > 100 else 1, sort_keys=True)
        f.write("\n")
    return sim


def _summary(sim, t0=None):
    n_exp = sum(len(t.exports) for t in sim.targets.values())
    msg = "step %d written at %.6f: %d servers, %d mounted targets, %d export dirs, %d clients" % (
        sim.step - 1, sim.last_T / 1e9, len(sim.servers),
        sum(1 for t in sim.targets.values() if t.server), n_exp,
        sum(1 for c in sim.clients.values() if c.seen))
    if t0 is not None:
        msg += " (%.2f s)" % (time.monotonic() - t0)
    print(msg)


# ------------------------------------------------------------- commands

def cmd_tree(a):
    scn = scenario.tree_scenario(
        version=a.version, servers=a.servers, osts_per_server=a.osts_per_server,
        mdts=a.mdts, clients=a.clients, fsnames=a.fs or ["scratch"], seed=a.seed,
        start_time=a.time, history=a.history, colocate=a.colocate,
        stats_header=0 if a.no_stats_header else 1, mds_servers=a.mds_servers)
    raw, scn = scn, scenario.normalise(scn)
    t0 = time.monotonic()
    with locked(a.root):
        sim = start(a.root, scn, a.force, raw)
        sim.run_step()
        sim.save()
    _summary(sim, t0)


def cmd_big(a):
    t0 = time.monotonic()
    raw = scenario.big_scenario(
        version=a.version, osts=a.osts, clients=a.clients, mdt=not a.no_mdt,
        seed=a.seed, start_time=a.time, fsname=a.fs)
    scn = scenario.normalise(raw)
    with locked(a.root):
        sim = start(a.root, scn, a.force, raw)
        sim.jobs = max(1, a.jobs)
        sim.keep_state = a.save_state
        sim.run_step()
        t_tree = time.monotonic() - t0
        if a.save_state:
            sim.save()
    _summary(sim)
    print("tree generated in %.2f s%s" % (t_tree, "" if a.save_state else " (state not saved; use --save-state to `run` on)"))


def _load_or_start(a):
    if a.scenario:
        with open(a.scenario) as f:
            raw = json.load(f)
        over = {"period": a.period, "clock": a.clock, "start_time": a.start_time,
                "version": a.version, "seed": a.seed}
        scn = scenario.normalise(raw, over)
        raw = dict(raw, **{k: v for k, v in over.items() if v is not None})
        have = os.path.exists(os.path.join(a.root, STATE_DIR, engine.STATE_FILE))
        if have and not a.fresh:
            raise SimError("%s already has a running scenario; omit --scenario to resume it, "
                           "or add --fresh to start over" % a.root)
        return start(a.root, scn, True, raw), scn.get("steps")
    if a.fresh:
        raise SimError("--fresh needs --scenario")
    sim = Sim.load(a.root)
    if a.period:
        sim.period_ns = int(round(a.period * 1e9))
    if a.clock:
        sim.clock = a.clock
    return sim, None


def _prepare_events(sim, evs):
    """Queued/CLI events: future-step ones are scheduled, the rest apply now."""
    now = []
    for ev in evs:
        if ev.get("type") == "client_appear" and ev.get("nid") not in sim.clients and "spec" not in ev:
            ev["spec"] = scenario.client_spec(sim.scn, ev, sim.rng)
        if ev.get("step") is not None and ev["step"] > sim.step:
            sim.scheduled.append(ev)
        else:
            ev.pop("step", None)
            now.append(ev)
    return now


def cmd_run(a):
    stop = []

    def on_signal(signum, frame):
        stop.append(signum)     # finish the current step, then exit cleanly

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    os.makedirs(a.root, exist_ok=True)
    with locked(a.root):
        sim, scn_steps = _load_or_start(a)
        extra = [json.loads(e) for e in (a.event or [])]
        steps = a.steps if a.steps is not None else scn_steps
        done = 0
        due = None
        forever = not steps          # None or 0: until SIGTERM/SIGINT
        while not stop and (forever or done < steps):
            T = None
            if sim.clock == "wall":
                now = time.time()
                if due is None:
                    p = sim.period_ns / 1e9
                    due = (now // p + 1) * p if a.align else now
                while not stop and time.time() < due:
                    time.sleep(min(0.05, max(0.0, due - time.time())))
                if stop:
                    break
                due += sim.period_ns / 1e9
                if due < time.time():          # fell behind: do not burst
                    due = time.time() + sim.period_ns / 1e9
            elif a.pace and done:
                deadline = time.monotonic() + sim.period_ns / 1e9
                while not stop and time.monotonic() < deadline:
                    time.sleep(0.05)
                if stop:
                    break
            evs = _prepare_events(sim, extra + engine.take_pending(sim.root))
            extra = []
            sim.run_step(T, extra_events=evs)
            sim.save()
            done += 1
            if not a.quiet:
                _summary(sim)
    if stop:
        print("stopped by signal %d after %d step(s)" % (stop[0], done))


def cmd_event(a):
    ev = {"type": a.type}
    for k in ("target", "nid", "to", "server", "profile", "gap", "value", "step"):
        v = getattr(a, k)
        if v is not None:
            ev[k] = v
    if a.from_server:
        ev["from"] = a.from_server
    if a.fs:
        ev["fs"] = a.fs
    if a.now:
        with locked(a.root):
            sim = Sim.load(a.root)
            (ev,) = _prepare_events(sim, [dict(ev, step=None)])
            res = sim.apply_now(ev)
            sim.save()
        print(json.dumps({"applied": ev["type"], "result": res}))
    else:
        engine.queue_event(os.path.abspath(a.root), ev)
        print("queued %s for %s" % (a.type, "step %d" % a.step if a.step is not None else "the next step"))


def cmd_status(a):
    sim = Sim.load(a.root)
    out = {"version": sim.profile.full, "next_step": sim.step,
           "last_time": None if sim.last_T is None else sim.last_T / 1e9,
           "clock": sim.clock, "period": sim.period_ns / 1e9,
           "targets": {t.name: t.server for t in sorted(sim.targets.values(), key=lambda t: t.name)},
           "clients": {c.nid: c.state for c in sim.clients.values()},
           "scheduled": sim.scheduled}
    print(json.dumps(out, indent=1))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="lustresim.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("tree", help="write one static snapshot")
    p.add_argument("--root", required=True)
    p.add_argument("--version", default="2.15", help="one of %s (or e.g. 2.15.4)" % ", ".join(SUPPORTED))
    p.add_argument("--servers", type=int, default=2, help="OSS nodes")
    p.add_argument("--osts-per-server", type=int, default=2)
    p.add_argument("--mdts", type=int, default=1, help="MDTs per filesystem")
    p.add_argument("--mds-servers", type=int, default=1)
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--fs", action="append", help="filesystem name (repeatable)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--time", type=float, help="snapshot time (default: now)")
    p.add_argument("--history", type=float, default=7 * 86400, help="seconds the targets were up")
    p.add_argument("--colocate", action="store_true", help="MDT and OSTs on one node (0@lo peers)")
    p.add_argument("--no-stats-header", action="store_true", help="2.16+: enable_stats_header=0")
    p.add_argument("--force", action="store_true", help="replace an earlier simulation in root")
    p.set_defaults(func=cmd_tree)

    p = sub.add_parser("big", help="large static benchmark tree")
    p.add_argument("--root", required=True)
    p.add_argument("--version", default="2.15")
    p.add_argument("--osts", type=int, default=8)
    p.add_argument("--clients", type=int, default=10000)
    p.add_argument("--no-mdt", action="store_true", help="the MDT lives on another server")
    p.add_argument("--fs", default="scratch")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--time", type=float)
    p.add_argument("--save-state", action="store_true", help="allow `run` to continue it (slower)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="processes used to build the tree (default: min(2, CPUs))")
    p.add_argument("--force", action="store_true")
    p.set_defaults(func=cmd_big)

    p = sub.add_parser("run", help="run or resume a scenario")
    p.add_argument("--root", required=True)
    p.add_argument("--scenario", help="scenario JSON (omit to resume the one in root)")
    p.add_argument("--fresh", action="store_true", help="discard an existing simulation in root")
    p.add_argument("--steps", type=int, help="steps to run now (default: scenario 'steps', else forever)")
    p.add_argument("--period", type=float, help="seconds between steps")
    p.add_argument("--clock", choices=("fake", "wall"))
    p.add_argument("--start-time", type=float, help="fake clock: time of step 0")
    p.add_argument("--version")
    p.add_argument("--seed", type=int)
    p.add_argument("--align", action="store_true", help="wall clock: steps on multiples of period")
    p.add_argument("--pace", action="store_true", help="fake clock: still sleep one period per step")
    p.add_argument("--event", action="append", help="extra event as JSON, e.g. '{\"type\":\"clear\",\"target\":\"scratch-OST0000\",\"step\":3}'")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("event", help="inject an event (next step, --step N, or --now)")
    p.add_argument("--root", required=True)
    p.add_argument("type", choices=("clear", "reset_export", "failover", "unmount", "mount",
                                    "client_appear", "client_idle", "client_return", "stats_header"))
    p.add_argument("--target")
    p.add_argument("--nid")
    p.add_argument("--to", help="failover: destination server")
    p.add_argument("--from", dest="from_server", help="failover: expected current server")
    p.add_argument("--gap", type=int, help="failover: steps the target is away")
    p.add_argument("--server", help="mount: server")
    p.add_argument("--profile", help="client_appear of a new NID: workload profile")
    p.add_argument("--fs", action="append", help="client_appear: filesystem(s)")
    p.add_argument("--value", type=int, help="stats_header: 0 or 1")
    p.add_argument("--step", type=int, help="apply at this step instead of the next one")
    p.add_argument("--now", action="store_true", help="apply immediately (no scenario may be running)")
    p.set_defaults(func=cmd_event)

    p = sub.add_parser("status", help="print the scenario state as JSON")
    p.add_argument("--root", required=True)
    p.set_defaults(func=cmd_status)

    a = ap.parse_args(argv)
    a.root = os.path.abspath(a.root)
    try:
        a.func(a)
    except (SimError, ScenarioError) as e:
        print("lustresim: error: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
