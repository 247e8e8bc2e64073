"""The ``file`` loader: a user's own CSV/TSV/ARFF/parquet file (optionally gzipped).

Same parsers, same fixes and same errors as catalog datasets::

    datasets:
      - name: file
        params: {path: data/mine.csv.gz, label: outcome, categorical: [colour]}
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from treebench.data.base import Dataset
from treebench.data.catalog import frame_to_dataset, parse_file
from treebench.data.locate import sha256_file
from treebench.data.parsers import FORMATS, guess_format
from treebench.errors import DataError, ParameterError
from treebench.registry import DATASETS


@DATASETS.register("file", tags=("user",))
def file(
    path: str | None = None,
    format: str | None = None,  # noqa: A002 - the config key users write
    label: str | int | None = None,
    categorical: Sequence[str] | str | None = None,
    delimiter: str | None = None,
    header: bool | None = None,
    missing: Sequence[str] = ("?",),
    drop_columns: Sequence[str | int] = (),
    skip_lines: Sequence[int] = (),
    drop_trailing_lines: int = 0,
    label_map: dict[str, Any] | None = None,
    test_path: str | None = None,
    name: str | None = None,
) -> Dataset:
    """A local data file: ``path`` (csv/tsv/arff/parquet/dl85, optionally .gz) and its ``label``.

    ``label`` is a column name or position (default: the last column; the first for ``dl85``);
    ``categorical`` a list of columns, ``"all"`` or ``"auto"`` (non-numeric columns, the default);
    ``missing`` the tokens read as missing values; ``test_path`` an optional second file that
    becomes a predefined test split. Line fixes as in the catalog (``skip_lines``,
    ``drop_trailing_lines``, ``drop_columns``).
    """
    if not path:
        raise ParameterError("dataset `file` needs `path`: the data file to load.")
    p = Path(path).expanduser()
    if not p.is_file():
        raise DataError(f"data file `{p}` does not exist; check the `path` of dataset `file` (relative paths start at {Path.cwd()}).")
    fmt = format or guess_format(p)
    if fmt not in FORMATS:
        raise ParameterError(f"dataset `file`: format {fmt!r} is unknown; use one of {', '.join(FORMATS)}.")
    if isinstance(missing, str):
        missing = (missing,)
    fixes: dict[str, Any] = {}
    if drop_columns:
        fixes["drop_columns"] = list(drop_columns)
    if skip_lines:
        fixes["skip_lines"] = list(skip_lines)
    if drop_trailing_lines:
        fixes["drop_trailing_lines"] = int(drop_trailing_lines)
    if label_map:
        fixes["label_map"] = dict(label_map)
    opts = {
        "format": fmt,
        "delimiter": delimiter,
        "header": header,
        "label": label if label is not None else (0 if fmt == "dl85" else -1),
        "categorical": categorical if categorical is not None else "auto",
        "missing": list(missing),
        "fixes": fixes,
        "split": "files" if test_path else None,
    }
    paths = [p] + ([Path(test_path).expanduser()] if test_path else [])
    parts = []
    for role, q in zip(("train" if test_path else "full", "test"), paths, strict=False):
        if not q.is_file():
            raise DataError(f"data file `{q}` does not exist; check `test_path` of dataset `file`.")
        df, kinds = parse_file(q, opts)
        parts.append((role, df, kinds))
    X, y, cats, n_train = frame_to_dataset(name or p.name, parts, opts, f"data file `{p}`")
    tr = te = None
    if n_train is not None:
        tr, te = np.arange(n_train), np.arange(n_train, X.shape[0])
    meta = {
        "task": "classification",
        "origin": {"file": str(p.resolve())},
        "citation": "",
        "licence": "",
        "files": [{"path": str(q), "role": r, "sha256": sha256_file(q), "bytes": q.stat().st_size} for (r, _, _), q in zip(parts, paths, strict=True)],
    }
    return Dataset(name=name or p.stem, X=X, y=y, categorical=cats, train_index=tr, test_index=te, meta=meta)
