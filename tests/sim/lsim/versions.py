"""Lustre version profiles.

Everything that differs between Lustre releases and matters for the per-client
export stats lives here, taken from docs LUSTRE-FORMATS.md §1-§4 and §10:

* the stats header style (secs.usecs / secs.nsecs / 3 header lines / monotonic),
* the OST and MDT export counter tables (names, print order, units, flags),
* where files live (proc vs debugfs exports, proc vs sys version/num_exports),
* feature switches (Data-on-MDT, idle disconnect, IPv6 NIDs, enable_stats_header).

A profile is chosen from a version string such as "2.15", "2.15.4", "2.15.0",
"2.12.9" or "2.7".
"""

from collections import namedtuple

# Counter flags (§3): count only, count+min/max/sum, and +sumsq.
C, MMS, FULL = "C", "MMS", "FULL"

# key: unique id inside one table; name: what is printed.  They differ only for
# the 2.6-2.11 obd-op counters that repeat an ofd counter name (key "obd_statfs"
# prints as "statfs"), which is how one file can carry the same name twice.
CounterDef = namedtuple("CounterDef", "key name unit flags")

# Header styles (§2.1)
HDR_USECS = "usecs"     # <= 2.9: "%lu.%lu secs.usecs", unpadded microseconds
HDR_NSECS = "nsecs"     # 2.10 - 2.14: one line, 9-digit nanoseconds
HDR_NSECS3 = "nsecs3"   # 2.15.2+: snapshot/start/elapsed, wall clock
HDR_MONO3 = "mono3"     # 2.15.0/2.15.1: 3 lines, monotonic, start_time 0

# Per-client OST operations a scenario can request (besides bulk read/write).
OST_MISC_OPS = ("getattr", "setattr", "punch", "sync", "destroy", "create",
                "statfs", "get_info", "set_info", "quotactl", "prealloc")
# Per-client MDT metadata operations a scenario can request.  "rename" also
# drives samedir/crossdir/parallel_rename_*/rename_trylocks (engine.py).
MDT_MISC_OPS = ("open", "close", "mknod", "link", "unlink", "mkdir", "rmdir",
                "rename", "getattr", "setattr", "getxattr", "setxattr",
                "statfs", "sync", "punch", "migrate", "fallocate")

_OFD12 = ("getattr", "setattr", "punch", "sync", "destroy", "create", "statfs",
          "get_info", "set_info", "quotactl")
# obd-op counters seen on a 2.5 OST export, in lprocfs_init_ops_stats() order (§3.1)
_OBD_OPS_25 = ("get_info", "set_info_async", "disconnect", "create", "destroy",
               "setattr", "getattr", "punch", "sync", "preprw", "commitrw",
               "quotactl", "ping")
# 2.6-2.11: punch/sync are no longer obd ops; statfs sits after disconnect in
# the obd_ops order.  Names also in the ofd table get an "obd_" key.
_OBD_OPS_26 = ("get_info", "set_info_async", "disconnect", "statfs", "create",
               "destroy", "setattr", "getattr", "preprw", "commitrw",
               "quotactl", "ping")
_MDT16 = ("open", "close", "mknod", "link", "unlink", "mkdir", "rmdir",
          "rename", "getattr", "setattr", "getxattr", "setxattr", "statfs",
          "sync", "samedir_rename", "crossdir_rename")

# Default full version string written to the version file for each profile.
_DEFAULT_FULL = {
    "2.5": "2.5.3", "2.7": "2.7.0", "2.10": "2.10.8", "2.11": "2.11.0",
    "2.12": "2.12.9", "2.13": "2.13.0", "2.14": "2.14.0", "2.15": "2.15.4",
    "2.15.0": "2.15.0", "2.16": "2.16.1", "2.17": "2.17.0",
}

SUPPORTED = tuple(_DEFAULT_FULL)


def _ost_table(v):
    if v <= (2, 5):
        t = [CounterDef("read_bytes", "read_bytes", "bytes", MMS),
             CounterDef("write_bytes", "write_bytes", "bytes", MMS)]
        t += [CounterDef(n, n, "reqs", C) for n in _OBD_OPS_25]
        return t
    if v <= (2, 13):
        t = [CounterDef("read_bytes", "read_bytes", "bytes", MMS),
             CounterDef("write_bytes", "write_bytes", "bytes", MMS)]
        t += [CounterDef(n, n, "reqs", C) for n in _OFD12]
        if v <= (2, 11):
            # The obd-op counters follow the ofd ones (removed by LU-11052).
            for n in _OBD_OPS_26:
                key = "obd_" + n if n in _OFD12 else n
                t.append(CounterDef(key, n, "reqs", C))
        return t
    t = [CounterDef("read_bytes", "read_bytes", "bytes", FULL),
         CounterDef("write_bytes", "write_bytes", "bytes", FULL),
         CounterDef("read", "read", "usecs", FULL),
         CounterDef("write", "write", "usecs", FULL)]
    t += [CounterDef(n, n, "usecs", FULL) for n in _OFD12 + ("prealloc",)]
    return t


def _mdt_table(v):
    ops = list(_MDT16)
    if v >= (2, 16):
        i = ops.index("samedir_rename") + 1
        ops[i:i] = ["parallel_rename_file", "parallel_rename_dir"]
    if v >= (2, 17):
        ops.insert(ops.index("crossdir_rename") + 1, "rename_trylocks")
    if v <= (2, 13):
        t = [CounterDef(n, n, "reqs", C) for n in ops]
        if v >= (2, 11):
            # Data-on-MDT; 2.12/2.13 print [reqs] on byte counters (LU-9855).
            bunit = "bytes" if v == (2, 11) else "reqs"
            t += [CounterDef("read_bytes", "read_bytes", bunit, MMS),
                  CounterDef("write_bytes", "write_bytes", bunit, MMS),
                  CounterDef("punch", "punch", "reqs", C)]
        return t
    t = [CounterDef(n, n, "usecs", FULL) for n in ops]
    t += [CounterDef("read_bytes", "read_bytes", "bytes", FULL),
          CounterDef("write_bytes", "write_bytes", "bytes", FULL)]
    if v >= (2, 15):
        t += [CounterDef(n, n, "usecs", FULL)
              for n in ("read", "write", "punch", "migrate", "fallocate")]
    else:
        t += [CounterDef(n, n, "usecs", FULL) for n in ("punch", "migrate")]
    return t


class Profile:
    """All version-dependent behaviour of one simulated Lustre release."""

    def __init__(self, key, full):
        self.key = key                      # e.g. "2.15", "2.15.0"
        self.full = full                    # e.g. "2.15.4" (version file)
        v = tuple(int(x) for x in key.split(".")[:2])
        self.v = v
        if v <= (2, 9):
            self.header = HDR_USECS
        elif v <= (2, 14):
            self.header = HDR_NSECS
        elif key == "2.15.0":
            self.header = HDR_MONO3
        else:
            self.header = HDR_NSECS3
        self.tables = {"ost": _ost_table(v), "mdt": _mdt_table(v)}
        self.keys = {t: {c.key: c for c in tab} for t, tab in self.tables.items()}
        self.has_stats_header_switch = v >= (2, 16)   # enable_stats_header
        self.exports_in_debugfs = v >= (2, 17)
        self.version_in_sys = v >= (2, 10)
        self.num_exports_in_sys = v >= (2, 13)
        self.dom = v >= (2, 11)
        self.idle_disconnect = v >= (2, 12)
        self.ipv6_nids = v >= (2, 16)
        self.ost_obd_ops = v <= (2, 11)

    @property
    def usec_resolution(self):
        """<= 2.9 print microseconds; keep simulated times on that grid."""
        return self.header == HDR_USECS

    def __repr__(self):
        return "Profile(%s, full=%s)" % (self.key, self.full)


def get_profile(version):
    """Map a version string to a Profile.

    "2.15" means 2.15.2+ (wall-clock 3-line header); "2.15.0" and "2.15.1"
    select the monotonic variant.  "2.6".."2.9" use the 2.7 profile.  A
    three-part version is kept as the full version written to the tree.
    """
    s = str(version).strip()
    parts = s.split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
        patch = int(parts[2].split("_")[0]) if len(parts) > 2 else None
    except (ValueError, IndexError):
        raise ValueError("bad Lustre version %r (want e.g. 2.15 or 2.15.4)" % s)
    if major != 2 or not 5 <= minor <= 17:
        raise ValueError("unsupported Lustre version %r (2.5 .. 2.17)" % s)
    if minor == 15 and patch in (0, 1):
        key = "2.15.0"
    elif 6 <= minor <= 9:
        key = "2.7"
    else:
        key = "2.%d" % minor
        if key not in _DEFAULT_FULL:
            raise ValueError("unsupported Lustre version %r" % s)
    full = s if patch is not None else _DEFAULT_FULL[key]
    return Profile(key, full)
