#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""dnsstub: a tiny authoritative DNS server for the reverse DNS tests.

Python standard library only.  Listens on UDP 127.0.0.1 (port 0 = the
kernel picks one; "port N" is printed on stdout once it listens) and
answers PTR queries for in-addr.arpa and ip6.arpa names from a mapping
file, one entry per line:

    address name [ttl]      # '#' starts a comment
    192.0.2.1 host1.example
    2001:db8::1 v6host.example 60
    192.0.2.3 -             # the name exists but has no PTR record (NODATA)

Every other name gets NXDOMAIN.  --drop ADDR never answers ADDR (to test
timeouts), --drop-other never answers anything but a PTR query of an
address (evdns's probes of a server it thinks down: "google.com" A),
--delay ADDR=SECONDS answers it late, --delay-all SECONDS answers
everything late.  The queries are counted per address; the counts
go to --counts FILE on SIGUSR1 and on exit (SIGTERM, SIGINT), written to
a temporary file and renamed, as lines "ADDR N" plus "total N", "other N"
(queries that are not a PTR of an address: evdns's probes, for one) and
"peak_pending N" (the most answers held back by a delay at one moment:
the concurrency the client allowed itself).

The question is echoed byte for byte: evdns randomizes the case of the
names it asks for (0x20 hardening) and drops answers whose question
differs; names are matched case-insensitively.
"""
import argparse
import heapq
import ipaddress
import os
import select
import signal
import socket
import struct
import sys
import time

TYPE_PTR = 12
CLASS_IN = 1
RCODE_NXDOMAIN = 3


def parse_map(path, default_ttl):
    table = {}
    with open(path, encoding="ascii") as f:
        for lineno, line in enumerate(f, 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            if len(fields) not in (2, 3):
                sys.exit(f"{path}:{lineno}: want 'address name [ttl]'")
            addr = ipaddress.ip_address(fields[0])
            ttl = int(fields[2]) if len(fields) == 3 else default_ttl
            name = None if fields[1] == "-" else fields[1]
            table[addr.reverse_pointer.lower()] = (name, ttl)
    return table


def addr_of(qname):
    """The address a reverse name is about, or None."""
    labels = qname.split(".")
    try:
        if labels[-2:] == ["in-addr", "arpa"] and len(labels) == 6:
            return str(ipaddress.IPv4Address(".".join(reversed(labels[:4]))))
        if labels[-2:] == ["ip6", "arpa"] and len(labels) == 34:
            nibbles = "".join(reversed(labels[:32]))
            return str(ipaddress.IPv6Address(int(nibbles, 16)))
    except ValueError:
        return None
    return None


def encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        raw = label.encode("ascii")
        if not 0 < len(raw) < 64:
            raise ValueError(f"bad label in {name!r}")
        out += bytes([len(raw)]) + raw
    return out + b"\0"


def parse_query(pkt):
    """(id, flags, qname, qtype, question bytes) or None."""
    if len(pkt) < 12:
        return None
    qid, flags, qd = struct.unpack(">HHH", pkt[:6])
    if flags & 0x8000 or qd != 1:
        return None
    pos, labels = 12, []
    while True:
        if pos >= len(pkt):
            return None
        n = pkt[pos]
        pos += 1
        if n == 0:
            break
        if n & 0xC0 or pos + n > len(pkt):
            return None
        labels.append(pkt[pos:pos + n].decode("ascii", "replace"))
        pos += n
    if pos + 4 > len(pkt):
        return None
    qtype, _ = struct.unpack(">HH", pkt[pos:pos + 4])
    return qid, flags, ".".join(labels).lower(), qtype, pkt[12:pos + 4]


def reply(qid, qflags, question, rcode, answer=None):
    flags = 0x8000 | (qflags & 0x7900) | 0x0400 | rcode  # QR, opcode, RD, AA
    hdr = struct.pack(">HHHHHH", qid, flags, 1, 1 if answer else 0, 0, 0)
    body = question
    if answer:
        name, ttl = answer
        rdata = encode_name(name)
        body += struct.pack(">HHHIH", 0xC00C, TYPE_PTR, CLASS_IN, ttl,
                            len(rdata)) + rdata
    return hdr + body


class Stub:
    def __init__(self, args):
        self.table = parse_map(args.map, args.ttl)
        self.drop = {str(ipaddress.ip_address(a)) for a in args.drop}
        self.delay = {}
        for d in args.delay:
            a, _, s = d.partition("=")
            self.delay[str(ipaddress.ip_address(a))] = float(s)
        self.delay_all = args.delay_all
        self.drop_other = args.drop_other
        self.counts_path = args.counts
        self.counts = {}
        self.total = self.other = self.peak = 0
        self.held = []  # heap of (due, seq, packet, peer)
        self.seq = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
                                 1 << 20)
        except OSError:
            pass
        self.sock.bind(("127.0.0.1", args.port))
        self.sock.setblocking(False)

    def write_counts(self):
        if not self.counts_path:
            return
        tmp = self.counts_path + ".tmp"
        with open(tmp, "w", encoding="ascii") as f:
            f.write(f"total {self.total}\nother {self.other}\n"
                    f"peak_pending {self.peak}\n")
            for a in sorted(self.counts):
                f.write(f"{a} {self.counts[a]}\n")
        os.replace(tmp, self.counts_path)

    def handle(self, pkt, peer):
        q = parse_query(pkt)
        self.total += 1
        if q is None:
            self.other += 1
            return
        qid, qflags, qname, qtype, question = q
        addr = addr_of(qname)
        if addr is None or qtype != TYPE_PTR:
            self.other += 1
            if self.drop_other:
                return
            self.sock.sendto(reply(qid, qflags, question, RCODE_NXDOMAIN),
                             peer)
            return
        self.counts[addr] = self.counts.get(addr, 0) + 1
        if addr in self.drop:
            return
        entry = self.table.get(qname)
        if entry is None:
            out = reply(qid, qflags, question, RCODE_NXDOMAIN)
        elif entry[0] is None:
            out = reply(qid, qflags, question, 0)
        else:
            out = reply(qid, qflags, question, 0, entry)
        wait = self.delay.get(addr, self.delay_all)
        if wait <= 0:
            self.sock.sendto(out, peer)
            return
        self.seq += 1
        heapq.heappush(self.held, (time.monotonic() + wait, self.seq, out,
                                   peer))
        self.peak = max(self.peak, len(self.held))

    def run(self):
        while True:
            now = time.monotonic()
            while self.held and self.held[0][0] <= now:
                _, _, out, peer = heapq.heappop(self.held)
                self.sock.sendto(out, peer)
            timeout = max(0.0, self.held[0][0] - now) if self.held else None
            readable, _, _ = select.select([self.sock], [], [], timeout)
            if not readable:
                continue
            while True:
                try:
                    pkt, peer = self.sock.recvfrom(4096)
                except BlockingIOError:
                    break
                self.handle(pkt, peer)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--map", required=True, help="'address name [ttl]' lines")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--ttl", type=int, default=300, help="default TTL")
    p.add_argument("--drop", action="append", default=[], metavar="ADDR")
    p.add_argument("--delay", action="append", default=[],
                   metavar="ADDR=SECONDS")
    p.add_argument("--drop-other", action="store_true",
                   help="never answer what is not a PTR of an address")
    p.add_argument("--delay-all", type=float, default=0.0, metavar="SECONDS")
    p.add_argument("--counts", help="where SIGUSR1 and exit write counts")
    args = p.parse_args()
    stub = Stub(args)

    def on_usr1(signum, frame):
        stub.write_counts()

    def on_term(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGUSR1, on_usr1)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    print(f"port {stub.sock.getsockname()[1]}", flush=True)
    try:
        stub.run()
    finally:
        stub.write_counts()


if __name__ == "__main__":
    main()
