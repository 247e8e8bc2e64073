"""What every on-disk cache file shares: a checksum of its content, checked on read, and the
note when a file turns out damaged.

A cache file (a parsed dataset, a prepared matrix, a fitted binarizer) carries the sha256 of
its content, written with it. On read the content is hashed again and compared: a file that
is short, garbled, of another format version or whose bytes changed (same size included) is
*damaged*: it is removed, the caller rebuilds the entry from the source data as on a miss,
and a `CacheWarning` says so ("cache file X was damaged (checksum mismatch); ..."). A missing
file is an ordinary miss, silently.

sha256 because it is the fastest strong hash in :mod:`hashlib` on current processors (SHA
instructions: 1.6 GB/s, against 0.9 GB/s for blake2b; `docs/architecture.md`, "Caches").
A large file is hashed once per process: its identity (device, inode, size, modification and
change times) is remembered with the checksum it matched, so a memory-mapped file read again
by later cells of the same process is not read twice. A new process (the next run) checks
again, and so does this one when the file was changed in any way since (which moves its change
time).

No cache file is ever read with `pickle` (nor ``np.load(allow_pickle=True)``): a crafted file
in the cache folder is data, never code.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any, BinaryIO

#: the checksum written in every cache file
ALGORITHM = "sha256"
#: read block size while hashing
BLOCK = 8 << 20
#: header JSON larger than this is not ours
MAX_HEADER = 1 << 20


class CacheWarning(RuntimeWarning):
    """A cache file was damaged (and rebuilt) or could not be written."""


class Damaged(Exception):
    """A cache file that exists but cannot be trusted; the message says why."""


def new_hash() -> Any:
    return hashlib.sha256()


def hash_range(fh: BinaryIO, start: int, length: int) -> str:
    """The hex checksum of the ``length`` bytes at ``start`` of the open file ``fh``, read in
    blocks through one buffer (the process's memory does not grow with the file). Raises
    `Damaged` when the file is shorter."""
    h = new_hash()
    buf = bytearray(min(BLOCK, max(length, 1)))
    view = memoryview(buf)
    fh.seek(start)
    left = length
    while left > 0:
        n = fh.readinto(view[: min(left, len(buf))])
        if not n:
            raise Damaged("shorter than its header says")
        h.update(view[:n])
        left -= n
    return h.hexdigest()


# ------------------------------------------------------------------ verified once per process

#: (device, inode, size, mtime, ctime, checksum) of files this process has verified
_VERIFIED: set[tuple] = set()
_VERIFIED_MAX = 4096


def _identity(st: os.stat_result, digest: str) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest)


def check_content(fh: BinaryIO, start: int, length: int, digest: str) -> None:
    """Raise `Damaged` unless the bytes ``[start, start + length)`` of ``fh`` hash to ``digest``
    (skipped when this process already verified this very file, unchanged since)."""
    ident = _identity(os.fstat(fh.fileno()), digest)
    if ident in _VERIFIED:
        return
    if hash_range(fh, start, length) != digest:
        raise Damaged("checksum mismatch")
    remember(fh, digest)


def remember(fh: BinaryIO, digest: str) -> None:
    """Record the open file ``fh`` (as it is now) as holding content with ``digest``: after
    this process wrote it, or touched a verified file (which moves its times)."""
    if len(_VERIFIED) >= _VERIFIED_MAX:
        _VERIFIED.clear()
    _VERIFIED.add(_identity(os.fstat(fh.fileno()), digest))


def forget_all() -> None:
    """Forget every verification (as a new process would)."""
    _VERIFIED.clear()


# ------------------------------------------------------------------ the header of a file


def header(magic: bytes, meta: dict[str, Any], align: int = 8) -> bytes:
    """``magic``, the length of the JSON ``meta`` (8 bytes, little-endian), the JSON, zeros up to
    a multiple of ``align``: the content starts there."""
    text = json.dumps(meta, sort_keys=True).encode()
    head = magic + len(text).to_bytes(8, "little") + text
    return head + b"\0" * (-len(head) % align)


def read_header(fh: BinaryIO, magic: bytes, align: int = 8) -> tuple[dict[str, Any], int]:
    """The ``meta`` of a file written with `header` and the offset of its content. Raises
    `Damaged` for another magic (a foreign file, or one of another format version), a short
    or garbled header."""
    fh.seek(0)
    head = fh.read(len(magic) + 8)
    if len(head) < len(magic) + 8:
        raise Damaged("shorter than a header")
    if head[: len(magic)] != magic:
        raise Damaged("not a cache file of this version")
    n = int.from_bytes(head[len(magic):], "little")
    if n > MAX_HEADER:
        raise Damaged("garbled header")
    text = fh.read(n)
    try:
        meta = json.loads(text.decode())
    except (UnicodeDecodeError, ValueError):
        raise Damaged("garbled header") from None
    if not isinstance(meta, dict):
        raise Damaged("garbled header")
    offset = len(magic) + 8 + n
    return meta, offset + (-offset % align)


# ------------------------------------------------------------------ damaged files


def discard(path: Path, reason: str, action: str, fh: BinaryIO | None = None) -> None:
    """Remove the damaged cache file ``path`` and warn: "cache file X was damaged (reason);
    action". With the open ``fh``, the file is removed only while ``path`` is still that file
    (another process may have just replaced it with a good one)."""
    try:
        if fh is None or os.path.samestat(os.fstat(fh.fileno()), os.stat(path)):
            os.unlink(path)
    except OSError:
        pass
    warnings.warn(f"cache file {path} was damaged ({reason}); {action}.", CacheWarning, stacklevel=3)
