#!/usr/bin/env python3
"""cutproxy: a TCP relay on loopback that can cut the network and restore it,
for the fault tests (tests/integration/it_faults.sh).

    cutproxy.py --target HOST:PORT [--listen 127.0.0.1:0]

prints "listening on ADDR:PORT" once it accepts.  SIGUSR1 cuts: nothing
is relayed in either direction and new connections are accepted but not
connected on, as when a link goes down and packets are lost (no RST, no
FIN: both ends only see silence).  SIGUSR2 restores: what was held goes
through, held connections are connected on.  A side that closes closes
the other.  Each change is a line on stdout: "cut", "restored".
"""
import argparse
import signal
import socket
import sys
import threading

flowing = threading.Event()
flowing.set()


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            flowing.wait()
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(conn, target):
    flowing.wait()
    try:
        up = socket.create_connection(target, timeout=5)
        up.settimeout(None)
    except OSError:
        conn.close()
        return
    for a, b in ((conn, up), (up, conn)):
        threading.Thread(target=pump, args=(a, b), daemon=True).start()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", default="127.0.0.1:0")
    p.add_argument("--target", required=True)
    a = p.parse_args()
    lh, lp = a.listen.rsplit(":", 1)
    th, tp = a.target.rsplit(":", 1)
    target = (th, int(tp))

    def cut(*_):
        flowing.clear()
        print("cut", flush=True)

    def restore(*_):
        flowing.set()
        print("restored", flush=True)

    signal.signal(signal.SIGUSR1, cut)
    signal.signal(signal.SIGUSR2, restore)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((lh, int(lp)))
    ls.listen(128)
    print("listening on %s:%d" % ls.getsockname(), flush=True)
    while True:
        try:
            conn, _ = ls.accept()
        except InterruptedError:
            continue
        threading.Thread(target=serve, args=(conn, target), daemon=True).start()


if __name__ == "__main__":
    main()
