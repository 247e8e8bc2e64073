"""Cache of parsed datasets, keyed by the source files' checksums and the parse options.

A cached file is an uncompressed Arrow IPC file (``.arrow``) holding the feature columns plus
the label (``__label__``); the categorical column names and the number of training rows
(predefined split) are in the schema metadata. It is read through a memory map: numeric
columns without missing values and text columns become pandas columns over the mapped file
without a copy, so a load takes milliseconds instead of seconds and its pages are shared by
every process that maps the file, read from the page cache as they are used (issue 9,
item 10: KDD Cup 99 loaded in 1.7-2.3 s from parquet into 380 MB of private memory; 0.16 s
here). A corrupt or foreign cache file is ignored and rebuilt; failing to write one only warns.
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


#: the file name ending of a cached parsed dataset
SUFFIX = ".arrow"


def read_parsed(path: Path) -> tuple[pd.DataFrame, np.ndarray, list[str], int | None] | None:
    try:
        import pyarrow as pa
        import pyarrow.ipc as ipc

        table = ipc.open_file(pa.memory_map(str(path), "r")).read_all()
        meta = json.loads(table.schema.metadata[b"treebench"].decode())
        # one block per column: numeric columns stay views of the mapped file (no consolidation)
        df = table.to_pandas(split_blocks=True)
        del table
    except Exception:  # a corrupt or foreign cache file is ignored and rebuilt
        return None
    y = df.pop("__label__").to_numpy()
    return df, y, list(meta["categorical"]), meta["n_train"]


def write_parsed(path: Path, X: pd.DataFrame, y: np.ndarray, categorical: list[str], n_train: int | None) -> None:
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
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        with ipc.new_file(str(tmp), table.schema) as writer:  # uncompressed: mapped as it is
            writer.write_table(table)
        os.replace(tmp, path)
    except Exception as exc:  # caching is an optimisation; never fail a load because of it
        warnings.warn(f"could not cache parsed dataset at {path}: {exc}", RuntimeWarning, stacklevel=2)
