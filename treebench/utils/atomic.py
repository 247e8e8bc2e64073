"""Files written whole or not at all, and files read back without surprises.

Every file treebench writes (cell records, manifests, indexes, report pages, caches of ids) is
written to a temporary name in the same folder, ``.<name>.<pid>.tmp``, then renamed over the
target: a kill at any moment leaves the old file or the new one, never half of one. The
temporary file is removed when the write fails (a full disk, Ctrl-C); one left by a killed
process carries its pid, so the next writer of the folder can tell it is stale
(`treebench.execute.lock`). No fsync: the rename is atomic, and a killed process (SIGKILL
included) loses nothing the kernel already holds; only a power cut could.

Nothing is written through a link. The temporary file is created anew (``O_EXCL``: a link or
file already under its name is removed first, never opened), and the rename replaces the
target's *name*: a symbolic link ``results.csv -> ~/.bashrc`` becomes a file of the folder and
``~/.bashrc`` is left as it was.

`read_regular` reads what treebench reads back from a results folder (cell files, its JSON
records): a regular file of the folder of bounded size, opened without following a link. A
FIFO would block the reader for ever, ``/dev/zero`` would fill its memory, and a link could
read (and a repair move) files outside the folder; each is refused with `NotRegularFile`.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

#: bytes read at a time when a file is hashed
HASH_BLOCK = 1 << 20


def sha256_of(fh: BinaryIO) -> str:
    """The hex sha256 of what is left to read of the open binary file ``fh``, read in blocks of
    `HASH_BLOCK` bytes (a data file of gigabytes is never held in memory)."""
    h = hashlib.sha256()
    for block in iter(lambda: fh.read(HASH_BLOCK), b""):
        h.update(block)
    return h.hexdigest()

def files_key(root: Path, pattern: str = "*.py") -> str:
    """A key of the files under ``root`` whose names match ``pattern``: each one's path
    relative to ``root``, size and modification time, hashed (16 hex digits). An edited,
    added, removed or reinstalled file changes it; for treebench's own modules it is about 150
    stat calls, a millisecond. A file that vanishes while it is read counts as absent."""
    h = hashlib.sha256()
    for p in sorted(root.rglob(pattern)):
        try:
            st = p.stat()
        except OSError:
            continue
        h.update(f"{p.relative_to(root).as_posix()}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()[:16]


#: the largest file `read_regular` reads (a cell record, a manifest or an index is far smaller)
MAX_READ = 256 * 2**20


class NotRegularFile(OSError):
    """A file treebench does not read: a link, a FIFO, a device, a directory, or too large.
    ``strerror`` says which, as the end of a sentence (``it is a FIFO, not a regular file``)."""


def temp_path(path: Path) -> Path:
    """The temporary name a write of ``path`` by this process uses."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; raise OSError (after removing the temporary
    file) when it cannot be written. The temporary file is created anew, never opened through
    a link left under its name."""
    path = Path(path)
    tmp = temp_path(path)
    try:
        tmp.unlink(missing_ok=True)  # a link under that name is removed, its target untouched
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o666)
        with open(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | Path, obj: Any) -> Path:
    """Write ``obj`` as compact JSON atomically (values JSON cannot hold are written as text).
    ``json.dumps`` runs the C encoder; ``json.dump`` would stream through the Python one."""
    return write_bytes(path, json.dumps(obj, default=str, allow_nan=True).encode("utf-8"))


_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"))


def kind_of(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words (``a FIFO``, ``a regular file``)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def _not_regular(mode: int) -> NotRegularFile:
    return NotRegularFile(errno.EINVAL, f"it is {kind_of(mode)}, not a regular file")


def check_regular(path: str | Path) -> os.stat_result:
    """The ``lstat`` of ``path``; `NotRegularFile` when it is no regular file (a link, a FIFO,
    a device, a directory); OSError when it cannot be examined (FileNotFoundError: none)."""
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(st.st_mode)
    return st


def read_regular(path: str | Path, limit: int = MAX_READ) -> bytes:
    """The bytes of the regular file ``path``, opened without following a link and without
    blocking; `NotRegularFile` when it is a link, a FIFO, a device or a directory (none of
    which is opened), or holds more than ``limit`` bytes; OSError when it cannot be read."""
    check_regular(path)  # a device is never opened: opening some has effects
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link since the lstat
            raise _not_regular(stat.S_IFLNK) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced since the lstat
            raise _not_regular(st.st_mode)
        if st.st_size > limit:
            raise NotRegularFile(errno.EFBIG, f"it holds {st.st_size:,} bytes, more than the "
                                              f"{limit:,} treebench reads")
        parts, n = [], 0
        while True:
            block = os.read(fd, min(1 << 20, limit + 1 - n))
            if not block:
                break
            parts.append(block)
            n += len(block)
            if n > limit:  # grew while read
                raise NotRegularFile(errno.EFBIG, f"it holds more than the {limit:,} bytes "
                                                  f"treebench reads")
        return b"".join(parts)
    finally:
        os.close(fd)


def read_json_object(path: str | Path) -> dict[str, Any]:
    """The JSON object in ``path``; an empty dict when the file is missing, unreadable, no
    regular file (`read_regular`), not JSON or not an object (the callers treat those files
    as caches or optional records)."""
    try:
        obj = json.loads(read_regular(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


def stat_key(st: os.stat_result) -> list[int]:
    """The parts of a file's status that change whenever its content can have changed: inode,
    size, modification and change time (the change time is set by the kernel on every write
    and cannot be copied or restored, so an edit that keeps size and modification time shows)."""
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def files_unchanged(files: dict[str, list[int]]) -> bool:
    """Every file of ``files`` (path → `stat_key` when it was read) still has that status."""
    for path, key in files.items():
        try:
            if stat_key(os.stat(path)) != list(key):
                return False
        except OSError:
            return False
    return True
