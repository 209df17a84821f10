#!/usr/bin/env python3
"""httpprobe.py: clients an HTTP listener must survive (it_http.sh).

    httpprobe.py slow ADDR [--every S] [--max S]
        a request head a byte every S seconds; prints the seconds until
        the server closed the connection, and what it answered (if any)
    httpprobe.py idle ADDR N [--hold S]
        N connections that send nothing; prints how many the server
        closed within a second (refused at once) and how many it kept
    httpprobe.py flood ADDR N [--within S]
        N connections at once, as fast as they go; prints how many the
        server closed within S seconds (default 2), and how many stayed
    httpprobe.py from ADDR SOURCE
        one request from the local address SOURCE; prints the answer's
        status line, or "closed" when the server closed without one
    httpprobe.py raw ADDR TEXT
        TEXT (with \\r\\n escapes) as the request; prints the status line
        and the body

ADDR is HOST:PORT.  Everything on the loopback interface.
"""
import argparse
import resource
import select
import socket
import sys
import time


def addr_of(s):
    host, port = s.rsplit(":", 1)
    return host, int(port)


def read_all(sk, limit):
    """What the server sends until it closes, at most limit seconds."""
    data = b""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        r, _, _ = select.select([sk], [], [], max(0.0, end - time.monotonic()))
        if not r:
            break
        try:
            chunk = sk.recv(65536)
        except ConnectionResetError:
            return data, True
        if not chunk:
            return data, True
        data += chunk
    return data, False


def closed_within(sks, limit):
    """How many of sks the server closed (EOF or reset) within limit s,
    all watched at once."""
    poller = select.poll()
    byfd = {}
    for sk in sks:
        poller.register(sk, select.POLLIN)
        byfd[sk.fileno()] = sk
    closed = 0
    end = time.monotonic() + limit
    while byfd and time.monotonic() < end:
        ms = max(0, int((end - time.monotonic()) * 1000))
        for fd, _ in poller.poll(ms):
            try:
                gone = byfd[fd].recv(65536) == b""
            except OSError:
                gone = True
            if gone:
                closed += 1
                poller.unregister(fd)
                del byfd[fd]
    return closed


def status_line(data):
    return data.split(b"\r\n", 1)[0].decode("latin-1") if data else "closed"


def cmd_slow(a):
    sk = socket.create_connection(addr_of(a.addr), timeout=5)
    sk.setblocking(False)
    head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000
    t0 = time.monotonic()
    for b in head:
        try:
            sk.send(bytes([b]))
        except OSError:
            break
        data, closed = read_all(sk, a.every)
        if closed or data:
            break
        if time.monotonic() - t0 > a.max:
            print("open after %.1f s" % (time.monotonic() - t0))
            return 1
    data, _ = read_all(sk, 2)
    print("%.2f %s" % (time.monotonic() - t0, status_line(data)))
    return 0


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def cmd_idle(a):
    raise_nofile()
    sks = [socket.create_connection(addr_of(a.addr), timeout=5)
           for _ in range(a.n)]
    closed = closed_within(sks, 1.0)
    print("closed %d kept %d" % (closed, a.n - closed))
    time.sleep(a.hold)
    return 0


def cmd_flood(a):
    raise_nofile()
    sks = []
    t0 = time.monotonic()
    for _ in range(a.n):
        sk = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sk.setblocking(False)
        try:
            sk.connect(addr_of(a.addr))
        except BlockingIOError:
            pass
        sks.append(sk)
    closed = closed_within(sks, a.within)
    print("closed %d stayed %d in %.2f s" %
          (closed, a.n - closed, time.monotonic() - t0))
    for sk in sks:
        sk.close()
    return 0


def cmd_from(a):
    sk = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sk.bind((a.source, 0))
    sk.settimeout(5)
    sk.connect(addr_of(a.addr))
    try:
        sk.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
    except OSError:
        pass
    data, _ = read_all(sk, 3)
    print(status_line(data))
    return 0


def cmd_raw(a):
    sk = socket.create_connection(addr_of(a.addr), timeout=5)
    text = a.text.encode("latin-1").decode("unicode_escape").encode("latin-1")
    try:
        sk.sendall(text)
    except OSError:
        pass
    data, _ = read_all(sk, 5)
    _, _, body = data.partition(b"\r\n\r\n")
    print(status_line(data))
    print(body.decode("latin-1"))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("slow")
    s.add_argument("addr")
    s.add_argument("--every", type=float, default=1.0)
    s.add_argument("--max", type=float, default=30.0)
    s = sub.add_parser("idle")
    s.add_argument("addr")
    s.add_argument("n", type=int)
    s.add_argument("--hold", type=float, default=0.0)
    s = sub.add_parser("flood")
    s.add_argument("addr")
    s.add_argument("n", type=int)
    s.add_argument("--within", type=float, default=2.0)
    s = sub.add_parser("from")
    s.add_argument("addr")
    s.add_argument("source")
    s = sub.add_parser("raw")
    s.add_argument("addr")
    s.add_argument("text")
    a = p.parse_args()
    return {"slow": cmd_slow, "idle": cmd_idle, "flood": cmd_flood,
            "from": cmd_from, "raw": cmd_raw}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
