"""aggprobe: aggregator_check.py's probes: gmond's XML polled into a file
(poll), and connections to an aggregator that are not gatherers
(garbage).  Standard library only."""

import json
import os
import signal
import socket
import struct
import threading
import time
import xml.etree.ElementTree as ET


def read_xml(port, timeout=5.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        chunks = []
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks)


def parse_xml(data):
    """({host: {"ip": ip, "m": {metric: [val, tn, units, group, spoof]}}},
    [[host, ip], ...] of every HOST element whose NAME an earlier one had:
    its metrics are merged into the first one's)."""
    hosts, dups = {}, []
    root = ET.fromstring(data)
    for h in root.iter("HOST"):
        ms = {}
        for m in h.findall("METRIC"):
            extra = {e.get("NAME"): e.get("VAL") for e in m.iter("EXTRA_ELEMENT")}
            ms[m.get("NAME")] = [m.get("VAL"), int(m.get("TN", "0")), m.get("UNITS"),
                                 extra.get("GROUP"), extra.get("SPOOF_HOST")]
        name = h.get("NAME")
        if name in hosts:
            dups.append([name, h.get("IP")])
            for k, v in ms.items():
                hosts[name]["m"].setdefault(k, v)
        else:
            hosts[name] = {"ip": h.get("IP"), "m": ms}
    return hosts, dups


def cmd_poll(a):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    with open(a.out, "a") as out:
        while not stop:
            now = time.time()
            due = (int(now / a.every) + 1) * a.every + a.every / 2
            if due - now > a.every:
                due -= a.every
            while not stop and time.time() < due:
                time.sleep(min(0.05, max(0.0, due - time.time())))
            if stop:
                break
            t = time.time()
            try:
                hosts, dups = parse_xml(read_xml(a.port))
                rec = {"t": round(t, 3), "hosts": hosts, "dups": dups}
            except (OSError, ET.ParseError) as e:
                rec = {"t": round(t, 3), "error": str(e)}
            out.write(json.dumps(rec, sort_keys=True) + "\n")
            out.flush()
    return 0


def _hdr(typ, length, key_id=b"\0" * 4, sender=b"\0" * 8, seq=1, sweep=0,
         magic=b"LHVD", version=2, flags=0):
    return (magic + bytes([version, typ]) + struct.pack(">HI", flags, length) +
            key_id + sender + struct.pack(">QQ", seq, sweep))


def _one(addr, kind, send=b"", close_first=False, wait=5.0):
    host, port = addr.rsplit(":", 1)
    r = {"kind": kind, "local": None, "closed_after": None, "error": None}
    try:
        s = socket.create_connection((host, int(port)), timeout=wait)
    except OSError as e:
        r["error"] = str(e)
        return r
    r["local"] = "%s:%d" % s.getsockname()[:2]
    t0 = time.monotonic()
    try:
        if close_first:
            if send:
                s.sendall(send)
            return r
        if send:
            s.sendall(send)
        s.settimeout(0.2)
        while time.monotonic() - t0 < wait:
            try:
                b = s.recv(4096)
            except socket.timeout:
                continue
            except OSError:          # reset by the peer: closed too
                b = b""
            if not b:
                r["closed_after"] = round(time.monotonic() - t0, 3)
                break
    except OSError as e:
        r["error"] = str(e)
    finally:
        s.close()
    return r


def cmd_garbage(a):
    out = []
    idle = {}
    th = threading.Thread(target=lambda: idle.update(_one(a.addr, "idle", wait=a.idle_max)))
    th.start()
    out.append(_one(a.addr, "scan", close_first=True))
    out.append(_one(a.addr, "scan", close_first=True))
    out.append(_one(a.addr, "junk", send=b"GET / HTTP/1.0\r\n\r\n" + os.urandom(300)))
    out.append(_one(a.addr, "huge", send=_hdr(2, 0x7FFFFFF0)))
    body = os.urandom(80)
    out.append(_one(a.addr, "badmac", send=_hdr(2, len(body), key_id=os.urandom(4),
                                                 sender=os.urandom(8)) + body + os.urandom(32)))
    out.append(_one(a.addr, "midframe", send=_hdr(2, 500)[:20], close_first=True))
    th.join()
    out.append(idle)
    for r in out:
        print(json.dumps(r, sort_keys=True))
    return 0
