"""Fitted binarizers kept beside the prepared matrices, as data.

The binarizer fitted on a fold's training rows of a large dataset is stored in
``<cache>/prepared/<dataset>-<key>.fit`` (keyed by the dataset's identity, the binarizer's
method and parameters, its categorical columns and a digest of the training rows), so a later
cell of the same fold, in any process or run, skips the copy of the training rows out of the
frame and the fit (0.8 s on a permuted KDD Cup 99 fold).

A file is a header (magic, key, payload length and the sha256 of the payload:
`treebench.data.cachefile`) followed by an ``.npz``: the binarizer's state as JSON (member
``state``) plus its numeric arrays (`treebench.binarize.state`). It is read with
``allow_pickle=False`` and rebuilt by `treebench.binarize.state.from_state`, which creates only
imported `Binarizer` subclasses: no file in the cache folder is ever unpickled. A damaged or
foreign file is removed with a `CacheWarning` and the binarizer fitted again.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from treebench.data.cachefile import ALGORITHM, Damaged, check_content, discard, header, new_hash, read_header
from treebench.execute.prepared import FIT_SUFFIX, VERSION, remove_file, cache_dir, cap_bytes, code_fingerprint
from treebench.utils.text import slug

#: the first bytes of a fitted-binarizer file; a new format version gets a new magic
FIT_MAGIC = b"TBFIT1\n\0"

#: what a damaged fitted binarizer's note says happens next
REFIT = "removed it; the binarizer is fitted again"


def fit_key(data_key: str, spec: str, categorical: list[str], train: np.ndarray) -> str:
    """The key of a binarizer ``spec`` (canonical JSON of its method and parameters) fitted on
    the rows ``train`` of the dataset ``data_key`` (its labels included)."""
    h = hashlib.sha256()
    h.update(json.dumps([VERSION, code_fingerprint(), data_key, spec, list(categorical)]).encode())
    h.update(np.ascontiguousarray(train, dtype=np.int64).tobytes())
    return h.hexdigest()[:24]


def _fit_path(ds: Any, spec: str, train: np.ndarray) -> tuple[Path, str] | None:
    data_key = (getattr(ds, "meta", None) or {}).get("data_key")
    if not data_key or cap_bytes() <= 0:
        return None
    key = fit_key(str(data_key), spec, list(ds.categorical), train)
    return cache_dir() / f"{slug(ds.name)}-{key}{FIT_SUFFIX}", key


def load_fitted(ds: Any, spec: str, train: np.ndarray) -> Any | None:
    """The binarizer ``spec`` fitted on the rows ``train`` of ``ds`` by an earlier cell (in
    any process), or None. A large dataset's permuted training rows are a copy of its frame
    (0.8 s on KDD Cup 99) that the fit needs and the prepared matrix does not. A damaged file
    is removed with a `CacheWarning` (the caller fits again)."""
    where = _fit_path(ds, spec, train)
    if where is None:
        return None
    path, key = where
    try:
        fh = open(path, "rb")  # noqa: SIM115
    except OSError:
        return None
    with fh:
        try:
            return read_fitted(fh, key)
        except Damaged as exc:
            discard(path, str(exc), REFIT, fh)
        except Exception as exc:  # a state behind a valid checksum that is not ours: never used
            discard(path, f"unreadable: {type(exc).__name__}: {exc}", REFIT, fh)
    return None


def read_fitted(fh, key: str) -> Any:
    """The fitted binarizer in the open file ``fh``, checked against ``key`` and its checksum.
    Arrays are read with ``allow_pickle=False``: an object array is an error, never code."""
    from treebench.binarize.state import from_state

    meta, offset = read_header(fh, FIT_MAGIC)
    n, digest = meta.get("length"), meta.get(ALGORITHM)
    if meta.get("key") != key or not isinstance(n, int) or not isinstance(digest, str):
        raise Damaged("it holds another binarizer than its name says")
    if os.fstat(fh.fileno()).st_size != offset + n:
        raise Damaged("truncated or grown")
    check_content(fh, offset, n, digest)
    fh.seek(offset)
    with np.load(io.BytesIO(fh.read(n)), allow_pickle=False) as z:
        state = json.loads(bytes(z["state"]).decode())
        binz = from_state(state, {k: z[k] for k in z.files if k != "state"})
    if not hasattr(binz, "columns_"):
        raise Damaged("not a fitted binarizer")
    return binz


def store_fitted(ds: Any, spec: str, train: np.ndarray, binz: Any) -> None:
    """Keep the fitted ``binz`` for `load_fitted`, as data (atomically; a failure, e.g. a
    binarizer whose state holds a type `treebench.binarize.state` does not keep, only skips it)."""
    where = _fit_path(ds, spec, train)
    if where is None:
        return
    path, key = where
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        payload = fitted_bytes(binz)
        h = new_hash()
        h.update(payload)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(header(FIT_MAGIC, {"key": key, "length": len(payload), ALGORITHM: h.hexdigest()}))
            fh.write(payload)
        os.replace(tmp, path)
    except Exception:  # caching is an optimisation
        remove_file(tmp)


def fitted_bytes(binz: Any) -> bytes:
    """The ``.npz`` bytes of the fitted ``binz``: its JSON state as ``state`` plus its arrays."""
    from treebench.binarize.state import to_state

    state, arrays = to_state(binz)
    text = json.dumps(state, allow_nan=False, separators=(",", ":")).encode()
    buf = io.BytesIO()
    np.savez(buf, state=np.frombuffer(text, dtype=np.uint8), **arrays)
    return buf.getvalue()
