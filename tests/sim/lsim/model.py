"""The simulated cluster's parts: exports, targets, clients, servers, the
latencies and peer rates they use, and the counter arithmetic (see
engine.py for the time model)."""

from .formats import CNT, MAX, MIN, SSQ, SUM, U64

PING_RATE = 1.0 / 25        # clients/OSPs ping each target every obd_timeout/4
U64M = U64 - 1

# Mean service latencies (usecs) used for [usecs] counters (2.14+).  Each
# batch of n samples is the multiset {lo, hi, (n-2) x mean}, so min/max/sum/
# sumsq are always those of an explicit set of samples.
OST_LAT = {"getattr": 20, "setattr": 40, "punch": 30, "sync": 20000,
           "destroy": 200, "create": 500, "statfs": 5, "get_info": 5,
           "set_info": 8, "quotactl": 50, "prealloc": 300}
MDT_LAT = {"open": 300, "close": 40, "mknod": 400, "link": 200, "unlink": 300,
           "mkdir": 500, "rmdir": 400, "rename": 600, "getattr": 30,
           "setattr": 60, "getxattr": 15, "setxattr": 60, "statfs": 10,
           "sync": 5000, "punch": 200, "migrate": 50000, "fallocate": 300}

# Peer (server-to-server) export op rates per second.  An MDT's OSP on each
# OST creates objects, polls statfs and pushes set_info; MDT lwp/OSP peers on
# an MDT stay header-only (as in the real 2.10/2.14 captures).
PEER_OST_RATES = {"create": 0.02, "statfs": 0.66, "set_info": 0.087, "get_info": 0.00001}

# stream kinds
K_BULK, K_OP, K_RENAME = 0, 1, 2


def _lat_triple(mean):
    mean = max(1, int(mean))
    return mean // 4, mean * 12 + 7, mean


def bump(ctrs, key, n, lo, hi, mean):
    """Add n samples {lo, hi, (n-2) x mean} (n==1: {mean}) to counter key;
    returns the sum added."""
    c = ctrs.get(key)
    if c is None:
        c = ctrs[key] = [0, 0, 0, 0, 0]
    if n == 1:
        s, sq, mn, mx = mean, mean * mean, mean, mean
    elif n == 2:
        s, sq, mn, mx = lo + hi, lo * lo + hi * hi, lo, hi
    else:
        m = n - 2
        s, sq, mn, mx = lo + hi + m * mean, lo * lo + hi * hi + m * mean * mean, lo, hi
    if c[CNT] == 0:
        c[MIN], c[MAX] = mn, mx
    else:
        if mn < c[MIN]:
            c[MIN] = mn
        if mx > c[MAX]:
            c[MAX] = mx
    c[CNT] += n
    c[SUM] += s
    c[SSQ] = (c[SSQ] + sq) & U64M      # kernel sumsq wraps modulo 2^64
    return s


def new_uuid(rng):
    h = "%032x" % rng.getrandbits(128)
    return "%s-%s-4%s-%s-%s" % (h[:8], h[8:12], h[13:16], h[16:20], h[20:32])


class Export:
    """One exports/<nid>/ directory (a nid_stat): counters shared by all
    exports from that NID; `uuids` lists the live exports (empty = stale)."""
    __slots__ = ("nid", "client", "uuids", "ctr", "start_ns", "last_ns",
                 "carry", "uuid_dirty", "stats_dirty", "last_act_ns", "on_disk")

    def __init__(self, nid, client, uuids, t_ns):
        self.nid = nid
        self.client = client          # client nid, or None for a server peer
        self.uuids = list(uuids)
        self.ctr = {}
        self.start_ns = t_ns          # allocation / last clear (start_time)
        self.last_ns = t_ns           # integrated up to here
        self.carry = {}
        self.uuid_dirty = True
        self.stats_dirty = True       # content changed outside integration
        self.last_act_ns = t_ns
        self.on_disk = False

    def zero(self, t_ns):
        """Counters zeroed at t_ns (clear / stats write).  Integration
        restarts at t_ns, so the next file's counters cover (t_ns, s]."""
        self.ctr = {}
        self.start_ns = t_ns
        self.last_ns = max(self.last_ns, t_ns)
        self.stats_dirty = True


class Target:
    def __init__(self, name, fs, ttype, index):
        self.name, self.fs, self.ttype, self.index = name, fs, ttype, index
        self.server = None            # hosting server name, None = unmounted
        self.last_server = None
        self.mount_ns = None
        self.exports = {}
        self.num_exports_written = None

    @property
    def label(self):                  # "OST000a" / "MDT0000"
        return self.name.rsplit("-", 1)[1]


class Client:
    def __init__(self, nid, fss, phases, state, mounts, scale, lat_factor, stripe_off):
        self.nid = nid
        self.fss = list(fss)
        self.phases = phases          # {fs: [(from_step, merged phase dict)]}
        self.state = state            # absent | active | idle
        self.mounts = mounts
        self.scale = scale
        self.lat_factor = lat_factor
        self.stripe_off = stripe_off  # {fs: first OST index of its stripe}
        self.uuids = []
        self.seen = False

    def phase(self, fs, step):
        cur = None
        for i, (frm, ph) in enumerate(self.phases[fs]):
            if frm <= step:
                cur = (i, ph)
            else:
                break
        return cur


class Server:
    def __init__(self, name, nid):
        self.name, self.nid = name, nid


class SimError(Exception):
    pass
