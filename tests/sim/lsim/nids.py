"""LNet NIDs as Lustre prints them in exports/ directory names (§4):
"<addr>@<net><num>", num omitted when 0; IPv4 for o2ib/tcp, a decimal for
gni/lo, compressed RFC 5952 IPv6 for tcp in 2.16+ (large NIDs)."""

import ipaddress

# net id -> how to build the i-th address on it
NETS = ("o2ib", "o2ib2", "tcp102", "gni", "tcp6")


def make_nid(net, i):
    """Deterministic unique NID number i (0-based) on a client net."""
    hi, lo = divmod(i, 250)
    if net == "o2ib":
        return "10.1.%d.%d@o2ib" % (hi, lo + 1)
    if net == "o2ib2":
        return "10.2.%d.%d@o2ib2" % (hi, lo + 1)
    if net == "tcp102":
        return "192.168.%d.%d@tcp102" % (hi, lo + 1)
    if net == "tcp":
        return "172.16.%d.%d@tcp" % (hi, lo + 1)
    if net == "gni":
        return "%d@gni" % (i + 12)
    if net == "tcp6":
        addr = ipaddress.IPv6Address("2001:db8::17") + i
        return "%s@tcp" % addr.compressed
    raise ValueError("unknown client net %r (known: %s)" % (net, ", ".join(NETS)))


def server_nid(i):
    """Server NIDs live on their own subnet so they never collide with clients."""
    return "10.0.%d.%d@o2ib" % divmod(i + 1, 250)


LOCAL_NID = "0@lo"


def is_ipv6(nid):
    return ":" in nid.rsplit("@", 1)[0]
