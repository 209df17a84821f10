#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""lhflood: many connections to a listener at once, for it_flood.sh.

Strangers' traffic only (no key): what an attacker without the shared
key can do to the listening side of docs/protocol.md.

  lhflood.py connect ADDR N [--source IP]     N connections at once: how
      many get their CHALLENGE, how many are closed without one
  lhflood.py bighello ADDR N --pid PID        after each CHALLENGE, a HELLO
      header announcing a 16 MiB payload, then as much of it as the
      listener takes: how many are closed, and the listener's RSS
  lhflood.py idle ADDR N --hold S             N connections that never
      send a byte, held S seconds (prints "opened N" once connected)
  lhflood.py garbage ADDR N                   N connections that send an
      HTTP request: how many are closed

Prints one "key value ..." line of results; exit 0 unless it could not
run at all.
"""
import argparse
import errno
import resource
import selectors
import socket
import struct
import sys
import time

HDR = 40
MAC = 32
MAGIC = b"LHVD"
CHALLENGE, HELLO = 1, 2


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (min(want, hard) if hard != resource.RLIM_INFINITY
                            else want, hard))


def open_many(addr, n, source=None):
    """n non-blocking connects; the sockets, connected or in progress."""
    host, port = addr.rsplit(":", 1)
    host = host.strip("[]")
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    socks = []
    for _ in range(n):
        s = socket.socket(fam, socket.SOCK_STREAM)
        if source:
            s.bind((source, 0))
        s.setblocking(False)
        e = s.connect_ex((host, int(port)))
        if e not in (0, errno.EINPROGRESS):
            s.close()
            raise OSError(e, "connect: " + errno.errorcode.get(e, str(e)))
        socks.append(s)
    return socks


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def read_round(socks, bufs, closed, want, timeout):
    """Read until every socket holds `want(buf)` bytes or is closed."""
    sel = selectors.DefaultSelector()
    for i, s in enumerate(socks):
        if i not in closed and len(bufs[i]) < want(bufs[i]):
            sel.register(s, selectors.EVENT_READ, i)
    end = time.monotonic() + timeout
    while sel.get_map() and time.monotonic() < end:
        for key, _ in sel.select(timeout=max(0.0, end - time.monotonic())):
            i = key.data
            try:
                d = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                d = b""
            if not d:
                closed.add(i)
                sel.unregister(key.fileobj)
                continue
            bufs[i] += d
            if len(bufs[i]) >= want(bufs[i]):
                sel.unregister(key.fileobj)
    sel.close()


def frame_len(buf):
    if len(buf) < HDR:
        return HDR
    return HDR + struct.unpack(">I", buf[8:12])[0] + MAC


def challenged(buf):
    return len(buf) >= HDR and buf[:4] == MAGIC and buf[5] == CHALLENGE


def cmd_connect(a):
    t0 = time.monotonic()
    socks = open_many(a.addr, a.n, a.source)
    bufs = [b""] * a.n
    closed = set()
    read_round(socks, bufs, closed, lambda b: HDR, a.timeout)
    got = [i for i in range(a.n) if challenged(bufs[i])]
    print("challenged %d closed %d of %d elapsed %.2f" %
          (len(got), len([i for i in closed if i not in got]), a.n,
           time.monotonic() - t0))
    for s in socks:
        s.close()


def cmd_bighello(a):
    socks = open_many(a.addr, a.n)
    bufs = [b""] * a.n
    closed = set()
    read_round(socks, bufs, closed, frame_len, a.timeout)
    before = rss_kb(a.pid)
    peak = before
    live = []
    for i, s in enumerate(socks):
        if i in closed or not challenged(bufs[i]):
            continue
        # Key id 0, the listener's own version: only the length is wrong.
        hdr = MAGIC + bytes([bufs[i][4], HELLO]) + struct.pack(
            ">HIIQQQ", 0, (16 << 20) - HDR - MAC, 0, 1, 1, 0)
        try:
            s.send(hdr)
        except OSError:
            closed.add(i)
            continue
        live.append(i)
    chunk = bytes(65536)
    sent = dict((i, 0) for i in live)
    end = time.monotonic() + a.timeout
    while time.monotonic() < end:
        busy = False
        for i in live:
            if i in closed or sent[i] >= a.bytes:
                continue
            try:
                sent[i] += socks[i].send(chunk)
                busy = True
            except BlockingIOError:
                pass
            except OSError:
                closed.add(i)
        for i in live:
            if i in closed:
                continue
            try:
                if socks[i].recv(4096) == b"":
                    closed.add(i)
            except BlockingIOError:
                pass
            except OSError:
                closed.add(i)
        peak = max(peak, rss_kb(a.pid))
        if len(closed) == a.n:
            break
        if not busy:
            time.sleep(0.05)
    peak = max(peak, rss_kb(a.pid))
    print("closed %d of %d rss_before_kb %d rss_peak_kb %d sent_kb %d" %
          (len(closed), a.n, before, peak, sum(sent.values()) // 1024))
    for s in socks:
        s.close()


def cmd_idle(a):
    socks = open_many(a.addr, a.n, a.source)
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_WRITE)
    end = time.monotonic() + a.timeout
    ok = 0
    while sel.get_map() and time.monotonic() < end:
        for key, _ in sel.select(timeout=0.5):
            sel.unregister(key.fileobj)
            if key.fileobj.getsockopt(socket.SOL_SOCKET,
                                      socket.SO_ERROR) == 0:
                ok += 1
    sel.close()
    print("opened %d of %d" % (ok, a.n), flush=True)
    time.sleep(a.hold)
    for s in socks:
        s.close()


def cmd_garbage(a):
    socks = open_many(a.addr, a.n, a.source)
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_WRITE)
    end = time.monotonic() + a.timeout
    while sel.get_map() and time.monotonic() < end:
        for key, _ in sel.select(timeout=0.5):
            sel.unregister(key.fileobj)
            try:
                key.fileobj.send(b"GET / HTTP/1.0\r\n\r\n")
            except OSError:
                pass
    sel.close()
    bufs = [b""] * a.n
    closed = set()
    read_round(socks, bufs, closed, lambda b: 1 << 30, a.timeout)
    print("closed %d of %d" % (len(closed), a.n))
    for s in socks:
        s.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cmd", choices=["connect", "bighello", "idle", "garbage"])
    p.add_argument("addr")
    p.add_argument("n", type=int)
    p.add_argument("--source")
    p.add_argument("--pid", type=int)
    p.add_argument("--bytes", type=int, default=4 << 20)
    p.add_argument("--hold", type=float, default=10)
    p.add_argument("--timeout", type=float, default=10)
    a = p.parse_args()
    raise_nofile(a.n)
    {"connect": cmd_connect, "bighello": cmd_bighello, "idle": cmd_idle,
     "garbage": cmd_garbage}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
