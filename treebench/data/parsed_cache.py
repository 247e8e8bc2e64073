"""Cache of parsed datasets, keyed by the source files' checksums and the parse options.

A cached file (``<cache>/parsed/<name>-<key>.tbarrow``) is an uncompressed Arrow IPC file
holding the feature columns plus the label (``__label__``), followed by a trailer: the sha256
of the Arrow bytes, their length and a magic (`treebench.data.cachefile`). The categorical
column names and the number of training rows (predefined split) are in the schema metadata.
It is read through a memory map: numeric columns without missing values and text columns
become pandas columns over the mapped file without a copy, so a load takes a fraction of a
second instead of seconds and its pages are shared by every process that maps the file (KDD
Cup 99: 1.7-2.3 s from parquet into 380 MB of private memory; 0.1 s here, plus 0.2 s for the
checksum, once per process). A damaged file (checksum mismatch, short, garbled, of another
version) is removed with a note and the dataset parsed again; failing to write one only warns.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from treebench.data.cachefile import CacheWarning, Damaged, check_content, discard, hash_range, remember
from treebench.data.locate import sha256_file
from treebench.utils.text import slug


def cache_key(version: str, options: dict[str, Any], paths: list[Path]) -> str:
    h = hashlib.sha256()
    h.update(version.encode())
    h.update(json.dumps(options, sort_keys=True, default=str).encode())
    for p in paths:
        h.update(sha256_file(p).encode())
    return h.hexdigest()[:20]


#: the file name ending of a cached parsed dataset (an Arrow IPC file plus a checksum trailer)
SUFFIX = ".tbarrow"
#: the trailer's last bytes; a new format version gets a new magic
MAGIC = b"TBARROW1"
#: trailer: sha256 of the Arrow bytes (32), their length (8, little-endian), `MAGIC` (8)
TRAILER = 32 + 8 + len(MAGIC)
#: what a damaged file's note says happens next
REBUILD = "removed it; the dataset is parsed again from its source files"


def read_parsed(path: Path) -> tuple[pd.DataFrame, np.ndarray, list[str], int | None] | None:
    """The parsed dataset cached in ``path``, or None when there is none. A file that is there
    but damaged (checksum mismatch, short, garbled, of another version) is removed with a
    `CacheWarning` and None is returned: the caller parses again."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - the mapping below outlives this function
    except (FileNotFoundError, NotADirectoryError):  # no such file: a miss
        return None
    except OSError as exc:
        warnings.warn(f"could not read the parsed-data cache {path}: {exc}", CacheWarning, stacklevel=2)
        return None
    with fh:
        try:
            return _read(fh)
        except Damaged as exc:
            discard(path, str(exc), REBUILD, fh)
        except Exception as exc:  # a garbled Arrow file behind a valid checksum: never trusted
            discard(path, f"unreadable: {type(exc).__name__}", REBUILD, fh)
    return None


def _read(fh) -> tuple[pd.DataFrame, np.ndarray, list[str], int | None]:
    import mmap

    import pyarrow as pa
    import pyarrow.ipc as ipc

    size = os.fstat(fh.fileno()).st_size
    if size < TRAILER:
        raise Damaged("shorter than its trailer")
    fh.seek(size - TRAILER)
    tail = fh.read(TRAILER)
    if tail[-len(MAGIC):] != MAGIC:
        raise Damaged("not a cache file of this version")
    digest, n = tail[:32].hex(), int.from_bytes(tail[32:40], "little")
    if n + TRAILER != size:
        raise Damaged("its length does not match its trailer")
    check_content(fh, 0, n, digest)
    # the mapping of the very file just verified (not the path again: it may have been replaced)
    mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    table = ipc.open_file(pa.py_buffer(mm).slice(0, n)).read_all()
    meta = json.loads(table.schema.metadata[b"treebench"].decode())
    # one block per column: numeric columns stay views of the mapped file (no consolidation)
    df = table.to_pandas(split_blocks=True)
    del table
    y = df.pop("__label__").to_numpy()
    return df, y, list(meta["categorical"]), meta["n_train"]


def write_parsed(path: Path, X: pd.DataFrame, y: np.ndarray, categorical: list[str], n_train: int | None) -> None:
    """Cache a parsed dataset in ``path``: the Arrow file, then its checksum trailer, written
    to a temporary name and renamed into place. A failure only warns."""
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        import pyarrow as pa
        import pyarrow.ipc as ipc

        df = X.copy()
        df["__label__"] = y
        # one chunk per column: a column of several chunks would be copied into one on load
        table = pa.Table.from_pandas(df, preserve_index=False).combine_chunks()
        meta = dict(table.schema.metadata or {})
        meta[b"treebench"] = json.dumps({"categorical": categorical, "n_train": n_train}).encode()
        table = table.replace_schema_metadata(meta)
        path.parent.mkdir(parents=True, exist_ok=True)
        with ipc.new_file(str(tmp), table.schema) as writer:  # uncompressed: mapped as it is
            writer.write_table(table)
        with open(tmp, "r+b") as fh:
            n = os.fstat(fh.fileno()).st_size
            digest = hash_range(fh, 0, n)  # what is in the file, read back from the page cache
            fh.seek(n)
            fh.write(bytes.fromhex(digest) + n.to_bytes(8, "little") + MAGIC)
            fh.flush()
            os.replace(tmp, path)
            remember(fh, digest)  # this process wrote it: no need to read it back
    except Exception as exc:  # caching is an optimisation; never fail a load because of it
        try:
            tmp.unlink()
        except OSError:
            pass
        warnings.warn(f"could not cache parsed dataset at {path}: {exc}", CacheWarning, stacklevel=2)
