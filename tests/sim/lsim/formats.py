"""Exact text of a Lustre exports/<nid>/stats file, and the lharvestd
counting rules applied to it.

The kernel side (lprocfs_stats_seq_show / lprocfs_stats_header) prints:

    header:  "%-25s %lu.%lu secs.usecs\n"           <= 2.9 (unpadded usecs)
             "%-25s %llu.%09lu secs.nsecs\n"        2.10+ (x3 lines in 2.15+)
    counter: "%-25s %lld samples [%s]"  [" %lld %lld %lld" [" %llu"]] "\n"

Counters with a zero count are not printed.  A counter is represented here as
a list [count, min, max, sum, sumsq]; sumsq is kept as an unbounded int and
printed modulo 2^64 like the kernel's wrapping 64-bit accumulator.
"""

from .versions import C, MMS, HDR_USECS, HDR_NSECS, HDR_NSECS3, HDR_MONO3

NAME_WIDTH = 25
U64 = 1 << 64
NS = 1000000000

# Counter slot indexes
CNT, MIN, MAX, SUM, SSQ = range(5)


def new_counter():
    return [0, 0, 0, 0, 0]


def _ts(ns, usecs):
    """Format a timestamp given in integer nanoseconds."""
    sec, frac = divmod(ns, NS)
    if usecs:
        return "%d.%d" % (sec, frac // 1000)   # unpadded microseconds (<= 2.9)
    return "%d.%09d" % (sec, frac)


def render_header(profile, snap_ns, start_ns=None, full_header=True):
    """Header lines.  snap_ns/start_ns are already in the clock the version
    prints (wall clock, or monotonic for 2.15.0); for HDR_MONO3 start_ns is 0."""
    style = profile.header
    if style == HDR_USECS:
        return "%-25s %s secs.usecs\n" % ("snapshot_time", _ts(snap_ns, True))
    line = "%-25s %s secs.nsecs\n" % ("snapshot_time", _ts(snap_ns, False))
    if style == HDR_NSECS or not full_header:
        return line
    assert style in (HDR_NSECS3, HDR_MONO3)
    if style == HDR_MONO3:
        start_ns = 0
    return (line
            + "%-25s %s secs.nsecs\n" % ("start_time", _ts(start_ns, False))
            + "%-25s %s secs.nsecs\n" % ("elapsed_time", _ts(snap_ns - start_ns, False)))


def render_counters(table, counters):
    """Counter lines in table order; zero counters omitted."""
    out = []
    get = counters.get
    for cdef in table:
        c = get(cdef.key)
        if not c or c[CNT] == 0:
            continue
        if cdef.flags == C:
            out.append("%-25s %d samples [%s]\n" % (cdef.name, c[CNT], cdef.unit))
        elif cdef.flags == MMS:
            out.append("%-25s %d samples [%s] %d %d %d\n"
                       % (cdef.name, c[CNT], cdef.unit, c[MIN], c[MAX], c[SUM]))
        else:
            out.append("%-25s %d samples [%s] %d %d %d %d\n"
                       % (cdef.name, c[CNT], cdef.unit, c[MIN], c[MAX], c[SUM],
                          c[SSQ] % U64))
    return "".join(out)


def render_stats(profile, ttype, counters, snap_ns, start_ns=None, full_header=True):
    """Whole stats file for an OST ('ost') or MDT ('mdt') export."""
    return (render_header(profile, snap_ns, start_ns, full_header)
            + render_counters(profile.tables[ttype], counters))


# ---------------------------------------------------------------- parsing

def parse_stats(text):
    """Parse a stats file.  Returns (header, lines):
    header: {name: (ns, unitword)}  -- ns exact for both secs.usecs and secs.nsecs
    lines:  [(name, count, unit, [min, max, sum, sumsq...])] in file order."""
    header, lines = {}, []
    for raw in text.splitlines():
        tok = raw.split()
        if not tok:
            continue
        if tok[0] in ("snapshot_time", "start_time", "elapsed_time"):
            sec, frac = tok[1].split(".")
            mult = 1000 if tok[2] == "secs.usecs" else 1
            header[tok[0]] = (int(sec) * NS + int(frac) * mult, tok[2])
            continue
        if len(tok) < 4 or tok[2] != "samples":
            raise ValueError("unparsable stats line %r" % raw)
        lines.append((tok[0], int(tok[1]), tok[3].strip("[]"),
                      [int(x) for x in tok[4:]]))
    return header, lines


def counters_from_lines(profile, ttype, lines):
    """Map parsed lines back to counter keys of the profile's table: the i-th
    line with a given name is the i-th table entry with that name."""
    by_name = {}
    for cdef in profile.tables[ttype]:
        by_name.setdefault(cdef.name, []).append(cdef.key)
    seen, counters = {}, {}
    for name, count, _unit, vals in lines:
        i = seen.get(name, 0)
        seen[name] = i + 1
        key = by_name[name][i]
        c = new_counter()
        c[CNT] = count
        if len(vals) >= 3:
            c[MIN], c[MAX], c[SUM] = vals[:3]
        if len(vals) >= 4:
            c[SSQ] = vals[3]
        counters[key] = c
    return counters


# --------------------------------------------- lharvestd counting semantics

FIELDS = ("read_bytes", "write_bytes", "read_ops", "write_ops", "oss_ops", "mds_ops")
F_RB, F_WB, F_RO, F_WO, F_OSS, F_MDS = range(6)

# Per-operation metadata counts (MDT exports only): the samples of these
# counter lines, each also part of mds_ops.  In an accumulator they follow
# the six fields: MDT_OPS[i] is at index F_MDT_OP0 + i, NACC slots in all.
MDT_OPS = ("open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename",
           "getattr", "setattr", "getxattr", "setxattr", "statfs", "sync", "punch",
           "migrate", "fallocate")
F_MDT_OP0 = len(FIELDS)
NACC = F_MDT_OP0 + len(MDT_OPS)
_MDT_OP_FIELD = {name: F_MDT_OP0 + i for i, name in enumerate(MDT_OPS)}

_OST_SKIP = frozenset(("ping", "read", "write", "preprw", "commitrw"))
_MDT_SKIP = frozenset(("ping", "read", "write", "samedir_rename", "crossdir_rename",
                       "parallel_rename_file", "parallel_rename_dir",
                       "rename_trylocks"))


def classify(ttype, name):
    """What one counter line contributes to the six reported values and the
    per-op MDT counts (accumulator indexes, see NACC):
    returns (fields incremented by the line's sample count,
             field incremented by its sum, or None)."""
    if name == "read_bytes":
        return ((F_RO, F_OSS) if ttype == "ost" else (F_RO,)), F_RB
    if name == "write_bytes":
        return ((F_WO, F_OSS) if ttype == "ost" else (F_WO,)), F_WB
    if ttype == "ost":
        return ((), None) if name in _OST_SKIP else ((F_OSS,), None)
    if name in _MDT_SKIP:
        return (), None
    op = _MDT_OP_FIELD.get(name)
    return ((F_MDS,) if op is None else (F_MDS, op)), None


def mdt_ops(acc):
    """{op name: count} of the non-zero per-op counts of an accumulator."""
    return {name: acc[F_MDT_OP0 + i] for i, name in enumerate(MDT_OPS)
            if acc[F_MDT_OP0 + i]}


def add_lines(acc, ttype, lines):
    """Add parsed/rendered lines [(name, count, sum)] to acc (list of NACC
    ints) with the lharvestd rules; a repeated name counts only its first line."""
    seen = set()
    for name, count, ssum in lines:
        if name in seen:
            continue
        seen.add(name)
        cfields, sfield = classify(ttype, name)
        for f in cfields:
            acc[f] += count
        if sfield is not None:
            acc[sfield] += ssum
    return acc


def printed_lines(table, counters):
    """(name, count, sum) of the lines render_counters() would print."""
    out = []
    for cdef in table:
        c = counters.get(cdef.key)
        if c is not None and c[CNT]:
            out.append((cdef.name, c[CNT], c[SUM]))
    return out
