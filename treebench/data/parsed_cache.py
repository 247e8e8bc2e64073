"""Parquet cache of parsed datasets, keyed by the source files' checksums and the parse options.

A cached file holds the feature columns plus the label (``__label__``); the categorical column
names and the number of training rows (predefined split) are in the parquet schema metadata.
A corrupt or foreign cache file is ignored and rebuilt; failing to write one only warns.
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

from treebench.data.locate import sha256_file
from treebench.text import slug


def cache_key(version: str, options: dict[str, Any], paths: list[Path]) -> str:
    h = hashlib.sha256()
    h.update(version.encode())
    h.update(json.dumps(options, sort_keys=True, default=str).encode())
    for p in paths:
        h.update(sha256_file(p).encode())
    return h.hexdigest()[:20]


def read_parsed(path: Path) -> tuple[pd.DataFrame, np.ndarray, list[str], int | None] | None:
    try:
        import pyarrow.parquet as pq

        import pyarrow as pa

        table = pq.read_table(path)
        meta = json.loads(table.schema.metadata[b"treebench"].decode())
        # free each Arrow column as it is converted and hand the freed pages back: without
        # this a loaded KDD Cup 99 keeps ~300 MB of Arrow memory beside its 270 MB DataFrame
        df = table.to_pandas(self_destruct=True, split_blocks=True)
        del table
        pa.default_memory_pool().release_unused()
    except Exception:  # a corrupt or foreign cache file is ignored and rebuilt
        return None
    y = df.pop("__label__").to_numpy()
    return df, y, list(meta["categorical"]), meta["n_train"]


def write_parsed(path: Path, X: pd.DataFrame, y: np.ndarray, categorical: list[str], n_train: int | None) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        df = X.copy()
        df["__label__"] = y
        table = pa.Table.from_pandas(df, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[b"treebench"] = json.dumps({"categorical": categorical, "n_train": n_train}).encode()
        table = table.replace_schema_metadata(meta)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except Exception as exc:  # caching is an optimisation; never fail a load because of it
        warnings.warn(f"could not cache parsed dataset at {path}: {exc}", RuntimeWarning, stacklevel=2)
