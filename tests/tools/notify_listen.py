#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Stand in for systemd's notification socket (sd_notify(3)).

    notify_listen.py SOCKET_PATH OUT_FILE [--seconds N]

Binds a unix datagram socket at SOCKET_PATH (point NOTIFY_SOCKET at it),
then writes one line per datagram received to OUT_FILE, flushed at once:

    <CLOCK_MONOTONIC seconds> <sender pid> <assignments joined by '|'>

for example "12345.678901 4242 RELOADING=1|MONOTONIC_USEC=12345678123".
The sender's pid comes from SCM_CREDENTIALS (SO_PASSCRED), as systemd
reads it to enforce NotifyAccess=main.  Stops on SIGTERM, SIGINT or after
--seconds (default 300), and removes the socket.
"""
import argparse
import os
import signal
import socket
import struct
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("socket")
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=300.0)
    args = ap.parse_args()

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    try:
        os.unlink(args.socket)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    s.bind(args.socket)
    s.settimeout(0.1)
    end = time.monotonic() + args.seconds
    ucred = struct.calcsize("3i")
    with open(args.out, "a", encoding="utf-8") as out:
        while not stop and time.monotonic() < end:
            try:
                data, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(ucred))
            except socket.timeout:
                continue
            except InterruptedError:
                continue
            pid = 0
            for level, kind, cdata in anc:
                if (level == socket.SOL_SOCKET and
                        kind == socket.SCM_CREDENTIALS and
                        len(cdata) >= ucred):
                    pid = struct.unpack("3i", cdata[:ucred])[0]
            text = data.decode("utf-8", "replace").strip("\n")
            out.write("%.6f %d %s\n" % (time.monotonic(), pid,
                                        text.replace("\n", "|")))
            out.flush()
    s.close()
    try:
        os.unlink(args.socket)
    except FileNotFoundError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
