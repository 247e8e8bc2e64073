"""The prepared-matrix cache: a large dataset's binarized rows, stored once, memory-mapped.

Prepared data reaches cells without copies: memory-mapped arrays prepared once per dataset and
binarizer, float32 or uint8 where exact. For a large dataset (the
runner's chunked path, `fold.CHUNKED_ABOVE`) the matrix of *every* row under a fitted
binarizer is written once to ``<cache>/prepared/`` (next to the parsed-dataset cache, same root:
``TREEBENCH_CACHE_DIR``), in the type the learner takes (`treebench.execute.precision`:
float32 for CART, float64 for learners that need exact values, uint8 for 0/1 columns), row-major.
Later cells, in this or any other process or run, map it read-only:

* rows that form one ascending run (a predefined split: training rows first, then the test
  file's rows) are a *view* of the mapped file: no copy, no page written; the learner's reads
  come from the page cache, shared by every worker. scikit-learn's ``check_array`` takes a
  C-ordered read-only float32 array as it is (tested with ``np.shares_memory``);
* other rows (permutation, k-fold, hold-out splits) are gathered into a fresh array in the
  split's own order (`gather_rows`, the order the learner always saw); the source pages the
  gather touched are then dropped from the process (``madvise(MADV_DONTNEED)``).

The transform of a row depends only on the fitted binarizer's column table (every binarizer is
a `TableBinarizer`: "the column table is the single source of truth"), so a file is keyed by
the dataset's identity (``Dataset.meta["data_key"]``: the checksums of its source files and the
parse options), the binarizer classes, the column table, the column order and the matrix type.
Folds whose training rows give the same table (a predefined split, ``fit_on: all``, a ``raw``
binarization with every category in every fold) share one file.

Files are written to a temporary name and renamed into place (never modified in place: a
mapped file stays valid while another process replaces or evicts it). A file is a header
(magic, key, shape, type and the sha256 of the matrix bytes) padded to a page, then the rows.
On open the header, the file size and the checksum are checked (the checksum once per process
and file: `treebench.data.cachefile`); a file that fails any check (truncated, garbled, of
another version or key, or with changed bytes) is removed with a note and rebuilt. A changed
source file changes the key.
The binarizer fitted on a fold's training rows is kept beside the matrices, as data
(`treebench.execute.fitted`), so a later cell of the same fold skips the copy of the training
rows out of the frame and the fit.

The directory is capped at ``TREEBENCH_PREPARED_CACHE_GB`` (default 8; 0 turns the cache off):
least recently used files are removed first. Writing is an optimisation: a failure warns and
the cell is prepared in memory as before.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from treebench.data.cachefile import (
    ALGORITHM,
    CacheWarning,
    Damaged,
    check_content,
    discard,
    header,
    new_hash,
    read_header,
    remember,
)
from treebench.data.locate import cache_root
from treebench import envvars
from treebench.utils.text import slug

#: bump to invalidate every prepared file after a change of the format or of the transforms
VERSION = "2"
MAGIC = b"TBPREP2\n"
SUFFIX = ".tbm"
#: the matrix starts at a multiple of this (a page): the mapped rows are page-aligned
ALIGN = 4096


def cache_dir() -> Path:
    return cache_root() / "prepared"


def cap_bytes() -> float:
    """The directory's size cap: ``TREEBENCH_PREPARED_CACHE_GB`` (default 8; 0 disables)."""
    return envvars.number("TREEBENCH_PREPARED_CACHE_GB") * 2**30


_CODE: list[str] = []


def code_fingerprint() -> str:
    """A digest of the binarizers' source (``treebench/binarize/*.py``) and of this module:
    a change to how columns are fitted or evaluated gives new keys, so no file written by other
    code is ever read (computed once per process)."""
    if not _CODE:
        import treebench.binarize as pkg

        h = hashlib.sha256()
        files = sorted(Path(pkg.__file__).parent.glob("*.py")) + [Path(__file__)]
        for f in files:
            try:
                h.update(f.name.encode() + b"\0" + f.read_bytes())
            except OSError:  # pragma: no cover - a packaged install without sources
                h.update(f.name.encode())
        _CODE.append(h.hexdigest()[:16])
    return _CODE[0]


def matrix_key(data_key: str, binz: Any, dtype: Any, n_rows: int) -> str:
    """The key of the matrix of all ``n_rows`` rows of the dataset ``data_key`` transformed by
    the fitted binarizer ``binz`` into ``dtype``."""
    parts = getattr(binz, "parts_", None)
    classes = [f"{type(p).__module__}.{type(p).__qualname__}" for p, _ in parts] if parts else [
        f"{type(binz).__module__}.{type(binz).__qualname__}"]
    table = [[c.feature, c.op, c.value] for c in binz.columns_]
    spec = {
        "version": VERSION,
        "code": code_fingerprint(),
        "data": data_key,
        "rows": int(n_rows),
        "classes": classes,
        "columns": table,
        "starts": getattr(binz, "feature_start_", None),
        "dtype": np.dtype(dtype).str,
    }
    fills = getattr(binz, "fill_values_", None)
    if fills:  # `missing: impute`: the training fold's fill values change every row they fill
        spec["fills"] = {str(k): fills[k] for k in sorted(fills, key=str)}
    # repr keeps every float exactly (and tells 1 from 1.0 from True)
    text = json.dumps(spec, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def path_for(name: str, key: str) -> Path:
    return cache_dir() / f"{slug(name)}-{key}{SUFFIX}"


# ------------------------------------------------------------------------------ the file

#: what a damaged matrix's note says happens next
REBUILD = "removed it; the matrix is binarized again"


def _header(key: str, shape: tuple[int, int], dtype: np.dtype, digest: str) -> bytes:
    meta = {"key": key, "shape": list(shape), "dtype": dtype.str, ALGORITHM: digest}
    return header(MAGIC, meta, ALIGN)


def open_matrix(path: Path, key: str, shape: tuple[int, int], dtype: Any) -> np.ndarray | None:
    """The read-only mapped matrix in ``path``, or None when there is none. A file that is
    there but does not hold this matrix (another key, shape or type), is truncated, grown,
    garbled, of another version, or whose bytes do not match its checksum is removed with a
    `CacheWarning` (the caller builds it again). The checksum is computed once per process
    and file (`treebench.data.cachefile.check_content`)."""
    dtype = np.dtype(dtype)
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below; the mapping keeps its own handle
    except (FileNotFoundError, NotADirectoryError):  # no such file: a miss
        return None
    except OSError as exc:
        warnings.warn(f"could not read the prepared matrix {path}: {exc}", CacheWarning, stacklevel=2)
        return None
    with fh:
        try:
            offset, nbytes, digest = _check_header(fh, key, shape, dtype)
            check_content(fh, offset, nbytes, digest)
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if nbytes else None
        except Damaged as exc:
            discard(path, str(exc), REBUILD, fh)
            return None
        except (OSError, ValueError) as exc:
            discard(path, f"unreadable: {exc}", REBUILD, fh)
            return None
        _touch(path, fh, digest)
    if mm is None:
        return np.zeros(shape, dtype=dtype)
    # the array keeps the mapping alive; it is read-only (an ACCESS_READ buffer)
    return np.frombuffer(mm, dtype=dtype, count=int(shape[0]) * int(shape[1]), offset=offset).reshape(shape)


def _check_header(fh, key: str, shape: tuple[int, int], dtype: np.dtype) -> tuple[int, int, str]:
    """``(offset, nbytes, checksum)`` of the matrix in ``fh``; `Damaged` when the file is not
    the matrix ``key`` of ``shape`` and ``dtype`` or has not exactly its size."""
    meta, offset = read_header(fh, MAGIC, ALIGN)
    if meta.get("key") != key or meta.get("shape") != list(shape) or meta.get("dtype") != dtype.str:
        raise Damaged("it holds another matrix than its name says")
    digest = meta.get(ALGORITHM)
    if not isinstance(digest, str):
        raise Damaged("no checksum")
    nbytes = int(shape[0]) * int(shape[1]) * dtype.itemsize
    if os.fstat(fh.fileno()).st_size != offset + nbytes:
        raise Damaged("truncated or grown")
    return offset, nbytes, digest


#: a file used again within this many seconds of its last use keeps its time stamp
TOUCH_SECONDS = 600


def _touch(path: Path, fh, digest: str) -> None:
    """Mark the verified file ``path`` as just used (least recently used goes first, `evict`),
    at most every `TOUCH_SECONDS`: a touch changes the file's times, so that other processes
    that verified it would check it again."""
    import time

    try:
        if time.time() - os.fstat(fh.fileno()).st_mtime > TOUCH_SECONDS:
            os.utime(path)
            remember(fh, digest)
    except OSError:
        pass


def write_matrix(path: Path, key: str, shape: tuple[int, int], dtype: Any,
                 blocks: Iterator[np.ndarray]) -> bool:
    """Write the matrix given as consecutive row ``blocks`` to ``path`` with its checksum
    (atomically: a temporary file renamed into place), then evict old files over the cap.
    Returns False (and warns) when it could not: no room under the cap or on the disk, or an
    OS error."""
    dtype = np.dtype(dtype)
    nbytes = int(shape[0]) * int(shape[1]) * dtype.itemsize
    cap = cap_bytes()
    if nbytes > cap:
        return False
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if shutil.disk_usage(path.parent).free < nbytes + (256 << 20):
            warnings.warn(f"no room to cache the prepared matrix ({nbytes / 2**20:.0f} MB) in "
                          f"{path.parent}; preparing in memory.", CacheWarning, stacklevel=3)
            return False
        with open(tmp, "wb") as fh:
            digest = _write_rows(fh, key, shape, dtype, nbytes, blocks)
            os.replace(tmp, path)
            remember(fh, digest)  # this process wrote it: no need to read it back
    except OSError as exc:
        warnings.warn(f"could not cache the prepared matrix at {path}: {exc}", CacheWarning, stacklevel=3)
        remove_file(tmp)
        return False
    except BaseException:  # the binarizer's own error (bad data) or an interrupt: no file left
        remove_file(tmp)
        raise
    evict(cap, keep=path)
    return True


def _write_rows(fh, key: str, shape: tuple[int, int], dtype: np.dtype, nbytes: int,
                blocks: Iterator[np.ndarray]) -> str:
    """Write the header (its checksum a placeholder of the same length), the rows, hashed as
    they go, then the header again with the checksum; return the checksum."""
    placeholder = "0" * len(new_hash().hexdigest())
    fh.write(_header(key, shape, dtype, placeholder))
    h, written = new_hash(), 0
    for block in blocks:
        block = np.ascontiguousarray(block, dtype=dtype)
        view = memoryview(block).cast("B")
        fh.write(view)
        h.update(view)
        written += block.nbytes
    if written != nbytes:
        raise OSError(f"wrote {written} bytes of a {nbytes}-byte matrix")
    digest = h.hexdigest()
    fh.seek(0)
    fh.write(_header(key, shape, dtype, digest))
    fh.flush()
    return digest


def remove_file(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def evict(cap: float, keep: Path | None = None) -> None:
    """Remove the least recently used prepared files until the directory is under ``cap``
    bytes (``keep`` stays; a file another process has mapped stays valid there)."""
    try:
        files = [(p.stat().st_mtime_ns, p.stat().st_size, p) for p in cache_dir().iterdir()
                 if p.name.endswith((SUFFIX, FIT_SUFFIX))]
    except OSError:
        return
    total = sum(s for _, s, _ in files)
    for _, size, p in sorted(files):
        if total <= cap:
            break
        if keep is not None and p == keep:
            continue
        try:
            p.unlink()
            total -= size
            remove_file(p.with_name(p.name + ".lock"))
        except OSError:
            pass


# ------------------------------------------------------------------------------ fitted binarizers

#: the file name ending of a fitted binarizer (`treebench.execute.fitted`)
FIT_SUFFIX = ".fit"


# ------------------------------------------------------------------------------ the rows


def all_rows_matrix(ds: Any, binz: Any, dtype: Any,
                    fill_blocks: Callable[[], Iterator[np.ndarray]]) -> np.ndarray | None:
    """The mapped matrix of every row of the dataset ``ds`` under the fitted ``binz`` in
    ``dtype``: read from the cache, else built by ``fill_blocks()`` (consecutive row blocks of
    every row), written and mapped. None when the dataset has no identity (a generated or
    in-memory dataset), the cache is off, or the file cannot be written."""
    data_key = (getattr(ds, "meta", None) or {}).get("data_key")
    if not data_key or cap_bytes() <= 0:
        return None
    shape = (int(ds.X.shape[0]), int(binz.n_columns_))
    key = matrix_key(str(data_key), binz, dtype, shape[0])
    path = path_for(ds.name, key)
    M = open_matrix(path, key, shape, dtype)
    if M is not None:
        return M
    with _build_lock(path):  # workers that need the same matrix at once build it once
        M = open_matrix(path, key, shape, dtype)
        if M is None and write_matrix(path, key, shape, dtype, fill_blocks()):
            M = open_matrix(path, key, shape, dtype)
    return M


@contextmanager
def _build_lock(path: Path):
    """An exclusive ``flock`` on ``<path>.lock`` while the matrix is built (none where the
    lock cannot be taken: building twice is only slower)."""
    fh = None
    try:
        import fcntl

        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path.with_name(path.name + ".lock"), "a+b")  # noqa: SIM115
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
    except (ImportError, OSError):
        if fh is not None:
            fh.close()
        fh = None
    try:
        yield
    finally:
        if fh is not None:
            fh.close()  # releases the lock


def _mapping(M: np.ndarray) -> tuple[mmap.mmap | None, int]:
    """The mmap under ``M`` (a `open_matrix` array or a row slice of one) and ``M``'s byte
    offset inside it; ``(None, 0)`` for arrays in ordinary memory."""
    base: Any = M
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):  # `np.frombuffer` keeps a memoryview of the mmap
        base = base.obj
    if not isinstance(base, mmap.mmap):
        return None, 0
    # the offset of M's first byte in the mapping: both addresses through the array interface
    root = np.frombuffer(base, dtype=np.uint8, count=1)
    return base, int(M.__array_interface__["data"][0] - root.__array_interface__["data"][0])


def gather_rows(M: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``M[rows]`` as a fresh C-ordered array, in the order of ``rows`` (the order the learner
    has always seen), then the source pages this process touched are dropped (`release`).

    One ``np.take`` in the split's order: random reads of whole rows from the page cache. On
    KDD Cup 99 (80 % of 805 k rows of 472 bytes) it took 0.23 s where walking the source in
    ascending row order and scattering each block into the result's order took 0.5-1.3 s (the
    scatter costs more than the random reads); the walk kept at most one block of the source
    resident, the take holds the touched source pages (clean page-cache pages, which the
    kernel may reclaim at any time) until the release right after it."""
    rows = np.asarray(rows, dtype=np.intp)
    out = np.take(M, rows, axis=0)
    release(M)
    return np.ascontiguousarray(out)


def release(M: np.ndarray) -> None:
    """Drop the pages of the mapped matrix ``M`` from this process (``madvise(MADV_DONTNEED)``
    on a read-only shared mapping: they stay in the page cache and are read back on the next
    access); nothing for arrays in ordinary memory."""
    mm, off = _mapping(M)
    if mm is None or M.ndim != 2 or not hasattr(mm, "madvise"):
        return
    page = mmap.PAGESIZE
    start = (off // page) * page
    end = min(len(mm), -(-(off + M.shape[0] * int(M.strides[0])) // page) * page)
    if end > start:
        try:
            mm.madvise(mmap.MADV_DONTNEED, start, end - start)
        except (OSError, ValueError):  # pragma: no cover - not Linux
            pass
