"""Filesystem helpers.

Readers (lharvestd) list exports/ and read files while the simulator writes,
so every update must be atomic:
* files: write a temp file next to the target, then rename() over it.  Temp
  names start with "." and live inside the file's own directory (never
  directly in exports/ for per-export files), and are removed on failure;
* directory removal: rename the directory out of the tree into
  <root>/.lustresim/trash first, then delete it, so a reader sees it vanish
  at once instead of a half-deleted directory.
"""

import os
import shutil

_seq = [0]


def atomic_write(path, data, mode=0o644):
    if isinstance(data, str):
        data = data.encode()
    d, base = os.path.split(path)
    _seq[0] += 1
    tmp = os.path.join(d, ".%s.tmp.%d.%d" % (base, os.getpid(), _seq[0]))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def direct_write(path, data, mode=0o644):
    """Plain write, used only while building a tree in a private staging dir
    that is renamed into place afterwards (fresh trees, `big`).  (Writer
    threads were tried: no gain on tmpfs, 4x slower on ext4.)"""
    if isinstance(data, str):
        data = data.encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def atomic_rmtree(path, trash_dir):
    """Make a directory disappear from the tree in one rename, then delete it."""
    if not os.path.lexists(path):
        return
    os.makedirs(trash_dir, exist_ok=True)
    _seq[0] += 1
    dst = os.path.join(trash_dir, "%s.%d.%d" % (os.path.basename(path), os.getpid(), _seq[0]))
    os.rename(path, dst)
    shutil.rmtree(dst, ignore_errors=True)


def append_line_block(path, text):
    """Append complete lines with a single write() (O_APPEND), so a reader
    only ever sees whole lines of earlier steps plus possibly a prefix of
    this one; readers must ignore a trailing line without '\\n'."""
    if not text:
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        data = text.encode()
        while data:
            n = os.write(fd, data)
            data = data[n:]
    finally:
        os.close(fd)

