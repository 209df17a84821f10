"""Sim's streams: what each client (or server peer) does on a target in
a step, compiled from its workload profile."""

from .formats import NS
from .model import (K_BULK, K_OP, K_RENAME, MDT_LAT, OST_LAT, PEER_OST_RATES,
                    PING_RATE, SimError, _lat_triple)


class StreamsMixin:
    """Part of engine.Sim (a mixin: it uses Sim's state)."""

    # ------------------------------------------------------------ streams

    def _fs(self, fs):
        try:
            return self._fs_by_name[fs]
        except KeyError:
            raise SimError("unknown filesystem %s" % fs)

    def _streams(self, client, tgt, step):
        """Compiled streams of one client on one target for this step,
        cached per (client, phase, target); tuples of floats/keys only."""
        ph_i, ph = client.phase(tgt.fs, step)
        if tgt.ttype == "ost":
            # Striping: a client's OST I/O goes to stripe_count OSTs starting
            # at its stripe offset (all OSTs evenly when stripe_count <= 0).
            n = self._fs(tgt.fs)["osts"]
            sc = ph.get("stripe_count", -1)
            if sc is None or sc <= 0 or sc >= n:
                share = 1.0 / n
            else:
                share = 1.0 / sc if (tgt.index - client.stripe_off[tgt.fs]) % n < sc else 0.0
        else:
            share = 1.0 / self._fs(tgt.fs)["mdts"]
        ck = (client.nid, tgt.fs, tgt.ttype, ph_i, share)
        st = self._stream_cache.get(ck)
        if st is not None:
            return st
        scale = client.scale
        lf = client.lat_factor
        out = []
        keys = self.profile.keys[tgt.ttype]
        if tgt.ttype == "ost":
            sizes = ph["rpc_sizes"]
            avg = sum(s * f for s, f in sizes)
            for d, bps in (("r", ph.get("read_bps", 0)), ("w", ph.get("write_bps", 0))):
                bps = bps * scale * share
                if bps <= 0:
                    continue
                bkey = "read_bytes" if d == "r" else "write_bytes"
                lkey = ("read" if d == "r" else "write")
                lkey = lkey if lkey in keys else None
                extra = tuple(k for k in ("preprw", "commitrw") if k in keys)
                rpc_rate = bps / avg
                for size, frac in sizes:
                    lat = _lat_triple((150 + size // 4096 * 3) * lf)
                    out.append((K_BULK, d + str(size), rpc_rate * frac / NS, size,
                                bkey, lkey, lat, extra))
            for op, rate in sorted(ph.get("oss_ops", {}).items()):
                key = self._ost_op_key.get(op)
                rate = rate * scale * share
                if key is None or rate <= 0:
                    continue
                # 2.6-2.11: a client statfs may also bump the obd-op statfs,
                # printed as a second "statfs" line (quirk #5); it is derived
                # from the first so it never prints without it.
                dup = "obd_statfs" if (op == "statfs" and "obd_statfs" in keys
                                       and ph.get("dup_statfs", True)) else None
                out.append((K_OP, "o" + op, rate / NS, key,
                            _lat_triple(OST_LAT[op] * lf), dup))
        else:
            for op, rate in sorted(ph.get("mds_ops", {}).items()):
                rate = rate * scale * share
                key = self._mdt_op_key.get(op)
                if key is None or rate <= 0:
                    continue
                lat = _lat_triple(MDT_LAT[op] * lf)
                if op == "rename":
                    split = (ph.get("crossdir_frac", 0.2), ph.get("parallel_frac", 0.5),
                             ph.get("parallel_dir_frac", 0.2), ph.get("trylock_frac", 0.05))
                    out.append((K_RENAME, "mrename", rate / NS, key, lat, split))
                else:
                    out.append((K_OP, "m" + op, rate / NS, key, lat, None))
            if self.profile.dom:
                dsize = ph.get("dom_rpc_size", 65536)
                for d, bps in (("r", ph.get("dom_read_bps", 0)), ("w", ph.get("dom_write_bps", 0))):
                    bps = bps * scale * share
                    if bps <= 0:
                        continue
                    bkey = "read_bytes" if d == "r" else "write_bytes"
                    lkey = ("read" if d == "r" else "write")
                    lkey = lkey if lkey in keys else None
                    lat = _lat_triple((80 + dsize // 4096 * 4) * lf)
                    out.append((K_BULK, "d" + d, bps / dsize / NS, dsize, bkey, lkey, lat, ()))
        if tgt.ttype == "ost" and "ping" in keys:
            out.append((K_OP, "ping", PING_RATE / NS, "ping", (1, 1, 1), None))
        st = tuple(out)
        self._stream_cache[ck] = st
        return st

    def _peer_streams(self, tgt):
        ck = ("<peer>", tgt.ttype)
        st = self._stream_cache.get(ck)
        if st is not None:
            return st
        out = []
        if tgt.ttype == "ost":
            for op, rate in sorted(PEER_OST_RATES.items()):
                key = self._ost_op_key.get(op)
                if key:
                    dup = "obd_statfs" if op == "statfs" and "obd_statfs" in self.profile.keys["ost"] else None
                    out.append((K_OP, "p" + op, rate / NS, key, _lat_triple(OST_LAT[op]), dup))
            if "ping" in self.profile.keys["ost"]:
                out.append((K_OP, "ping", PING_RATE / NS, "ping", (1, 1, 1), None))
        st = tuple(out)
        self._stream_cache[ck] = st
        return st
