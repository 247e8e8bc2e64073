"""The ``file`` loader: a user's own CSV/TSV/ARFF/parquet file (optionally gzipped).

Same parsers, same fixes and same errors as catalog datasets::

    datasets:
      - {path: data/mine.csv.gz, label: outcome, categorical: [colour]}
      - {name: file, params: {path: data/mine.csv.gz, label: outcome}}   # the same loader
"""

from __future__ import annotations

import inspect
import stat
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from treebench.data.base import Dataset
from treebench.data.catalog import PARSER_VERSION, frame_to_dataset, parse_file
from treebench.data.locate import sha256_file
from treebench.data.parsed_cache import cache_key
from treebench.data.parsers import (
    FORMATS, RENAMED_COLUMNS, UNNAMED_COLUMNS, guess_format, header_mode,
)
from treebench.errors import DataError, DataWarning, ParameterError
from treebench.registry import DATASETS
from treebench.utils.text import show


def _file_kind(mode: int) -> str | None:
    """What a path that is no regular file is (None for a regular file)."""
    kinds = (
        (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
    )
    for test, what in kinds:
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "not a regular file"


def check_data_path(p: Path, key: str, dataset: str | None = None) -> None:
    """Refuse, in one sentence, a data path that does not exist or is no regular file (a
    directory, ``/dev/zero``, a pipe): reading it would hang, fail deep in a parser, or say
    "does not exist" about something that does. The sentence names the dataset as the config
    does (``dataset``, default the file's name)."""
    ds = dataset or p.name
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        raise DataError(
            f"data file `{p}` does not exist (looked for {p.absolute()}); check the `{key}` of "
            f"dataset `{ds}` (a relative path in a config starts at the config file's folder)."
        ) from None
    except OSError as exc:
        raise DataError(f"data file `{p}` cannot be read ({exc.strerror}); check the `{key}` of dataset `{ds}`.") from None
    what = _file_kind(mode)
    if what == "a directory":
        raise DataError(
            f"data file `{p}` is a directory, not a file; set the `{key}` of dataset `{ds}` to a data file inside it."
        )
    if what is not None:
        raise DataError(
            f"data file `{p}` is {what}, not a regular file; set the `{key}` of dataset `{ds}` to a data file "
            f"(csv, tsv, arff, parquet or dl85, optionally gzipped)."
        )


def check_unnamed_columns(df: Any, opts: dict[str, Any], path: Path) -> None:
    """Refuse a header line that leaves a column without a name (``,x2,y``), unless that
    column is dropped (``drop_columns``) or is the label given by position: it would be a
    feature nobody can name in a rule or a config, and before this check such a header was
    read as a data row."""
    unnamed = df.attrs.get(UNNAMED_COLUMNS) or []
    if not unnamed:
        return
    width = df.shape[1]
    keys = [*(opts.get("fixes") or {}).get("drop_columns", []), opts.get("label")]
    taken = {k % width for k in keys if isinstance(k, int) and not isinstance(k, bool)
             and -width <= k < width}
    left = [j for j in unnamed if j not in taken]
    if not left:
        return
    j = left[0]
    named = [k for k in range(width) if k not in unnamed]
    nxt = next((k for k in named if k > j), None)
    prev = next((k for k in reversed(named) if k < j), None)
    place = (f"before `{df.columns[nxt]}`" if nxt is not None
             else f"after `{df.columns[prev]}`" if prev is not None else "no column has a name")
    more = f" (and {len(left) - 1} more)" if len(left) > 1 else ""
    raise DataError(
        f"data file `{path}`: the header line gives column {j + 1} of {width} ({place}) no "
        f"name{more}; write its name in the header, or leave the column out with "
        f"`drop_columns: [{', '.join(map(str, left))}]` (a row index saved by pandas has no name)."
    )


@dataclass(frozen=True)
class FileOptions:
    """The keys of dataset `file` as a config writes them (`file` says what each means)."""

    path: str | None = None
    format: str | None = None  # noqa: A003 - the config key users write
    label: str | int | None = None
    categorical: Sequence[str | int] | str | None = None
    delimiter: str | None = None
    header: bool | str | None = "auto"
    missing: Sequence[str] | str = ("?",)
    missing_tokens: Sequence[str] | str | None = None
    drop_columns: Sequence[str | int] = ()
    skip_lines: Sequence[int] = ()
    drop_trailing_lines: int = 0
    label_map: dict[str, Any] | None = None
    test_path: str | None = None
    name: str | None = None
    bad_values: str = "error"
    unseen_test_labels: str = "error"


def _takes(options: type) -> Callable[[Callable[..., Dataset]], Callable[..., Dataset]]:
    """Give a loader that takes ``**keys`` the signature of its ``options`` dataclass: the
    registry lists a loader's keys, and a config's keys are checked, from its signature."""

    def deco(loader: Callable[..., Dataset]) -> Callable[..., Dataset]:
        loader.__signature__ = inspect.signature(options).replace(return_annotation=Dataset)
        return loader

    return deco


def _parse_options(o: FileOptions, p: Path) -> dict[str, Any]:
    """The parser options of file ``p`` (`treebench.data.catalog.parse_file`), after refusing
    an unknown format or a bad value of ``bad_values`` / ``unseen_test_labels``."""
    fmt = o.format or guess_format(p)
    if fmt not in FORMATS:
        raise ParameterError(f"dataset `file`: format {show(fmt)} is unknown; use one of {', '.join(FORMATS)}.")
    if o.bad_values not in ("error", "missing"):
        raise ParameterError(f"dataset `file`: `bad_values` must be error or missing, got {show(o.bad_values)}.")
    if o.unseen_test_labels not in ("error", "allow"):
        raise ParameterError(f"dataset `file`: `unseen_test_labels` must be error or allow, got {show(o.unseen_test_labels)}.")
    missing = o.missing_tokens if o.missing_tokens is not None else o.missing
    if isinstance(missing, str):
        missing = (missing,)
    categorical = o.categorical
    if isinstance(categorical, str) and categorical not in ("auto", "all", "none"):
        categorical = [categorical]
    fixes = _line_fixes(o)
    return {
        "format": fmt,
        "delimiter": o.delimiter,
        "header": header_mode(o.header, default="auto"),
        "label": o.label if o.label is not None else (0 if fmt == "dl85" else -1),
        "categorical": categorical if categorical is not None else "auto",
        "missing": list(missing),
        "fixes": fixes,
        "split": "files" if o.test_path else None,
        "bad_values": o.bad_values,
    }


def _items(value: Any, key: str, kinds: tuple[type, ...]) -> list[Any]:
    """``value`` of option ``key`` as a list: one name or number is a list of one (``id`` is
    the column `id`, never its letters), a list is checked item by item."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for v in items:
        if isinstance(v, bool) or not isinstance(v, kinds):
            raise ParameterError(f"dataset `file`: `{key}` takes "
                                 f"{'column names or positions' if str in kinds else 'line numbers'}"
                                 f", got {show(v)}.")
    return items


def _line_fixes(o: FileOptions) -> dict[str, Any]:
    """The catalog's line fixes that options ``o`` ask for, each value checked."""
    fixes: dict[str, Any] = {}
    if o.drop_columns not in ((), [], None):
        fixes["drop_columns"] = _items(o.drop_columns, "drop_columns", (str, int))
    if o.skip_lines not in ((), [], None):
        lines = _items(o.skip_lines, "skip_lines", (int,))
        if any(n < 1 for n in lines):
            raise ParameterError("dataset `file`: `skip_lines` numbers lines from 1.")
        fixes["skip_lines"] = lines
    n = o.drop_trailing_lines
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ParameterError(f"dataset `file`: `drop_trailing_lines` takes a count of 0 or more, "
                             f"got {show(n)}.")
    if n:
        fixes["drop_trailing_lines"] = n
    if o.label_map is not None and not isinstance(o.label_map, dict):
        raise ParameterError(f"dataset `file`: `label_map` maps labels to labels (in a config: "
                             f"`label_map: {{0: neg, 1: pos}}`), got {show(o.label_map)}.")
    if o.label_map:
        for k, v in o.label_map.items():
            if isinstance(v, bool) or not isinstance(v, (str, int, float)) or v != v:
                raise ParameterError(f"dataset `file`: `label_map` maps {show(k)} to {show(v)}; "
                                     f"a label is a text or a number (true, null, NaN and lists "
                                     f"are not labels).")
        fixes["label_map"] = {str(k): v for k, v in dict(o.label_map).items()}
    return fixes


@DATASETS.register("file", tags=("user",))
@_takes(FileOptions)
def file(**keys: Any) -> Dataset:
    """A local data file: ``path`` (csv/tsv/arff/parquet/dl85, optionally .gz) and its ``label``.

    ``label`` is a column name or position (default: the last column; the first for ``dl85``);
    ``header`` is ``auto`` (a first row of names is detected: `treebench.data.parsers.detect_header`),
    ``first-row`` or ``none``; ``categorical`` a list of columns (names or positions), ``"all"``,
    ``"none"`` or ``"auto"`` (non-numeric columns, the default): a list is the truth, the other
    columns are numeric and a value there that is no number is an error naming row, column and
    value, or a missing value with ``bad_values: missing``; ``missing`` (or ``missing_tokens``,
    the config's key for it, which wins) the tokens read as missing values; ``label_map`` maps label values to others (``"*"`` for every other value);
    ``test_path`` a second file that becomes the predefined test split: a test label never seen
    in training is an error unless ``unseen_test_labels: allow``. Line fixes as in the catalog
    (``skip_lines``, ``drop_trailing_lines``, ``drop_columns``). The keys, with their
    defaults, are the fields of `FileOptions`.
    """
    o = FileOptions(**keys)
    if not o.path:
        raise ParameterError("dataset `file` needs `path`: the data file to load.")
    p = Path(o.path).expanduser()
    check_data_path(p, "path", o.name)
    opts = _parse_options(o, p)
    test_path, name, unseen_test_labels = o.test_path, o.name, o.unseen_test_labels
    paths = [p] + ([Path(test_path).expanduser()] if test_path else [])
    parts = []
    notes: list[str] = []
    for role, q in zip(("train" if test_path else "full", "test"), paths, strict=False):
        check_data_path(q, "path" if q is p else "test_path", o.name)
        df, kinds = parse_file(q, opts)
        check_unnamed_columns(df, opts, q)
        renamed = df.attrs.get(RENAMED_COLUMNS) or {}
        if renamed and role != "test":
            notes.append("its header names " + ", ".join(sorted({f"`{g}`" for g in renamed.values()}))
                         + " more than once; the repeats are read as "
                         + ", ".join(f"`{c}`" for c in renamed))
        parts.append((role, df, kinds))
    X, y, cats, n_train = frame_to_dataset(name or p.name, parts, opts, f"data file `{p}`", paths=paths, notes=notes)
    if notes:
        warnings.warn(f"data file `{p}`: " + "; ".join(notes), DataWarning, stacklevel=2)
    tr = te = None
    if n_train is not None:
        tr, te = np.arange(n_train), np.arange(n_train, X.shape[0])
    meta = {
        "task": "classification",
        "origin": {"file": str(p.resolve())},
        "citation": "",
        "licence": "",
        "files": [{"path": str(q), "role": r, "sha256": sha256_file(q), "bytes": q.stat().st_size} for (r, _, _), q in zip(parts, paths, strict=True)],
        "parse_notes": notes,
        "unseen_test_labels": unseen_test_labels,
        # the parsed data's identity (checksums + parse options): the prepared-matrix cache's key
        "data_key": "file:" + cache_key(PARSER_VERSION, {**opts, "unseen_test_labels": unseen_test_labels}, paths),
    }
    return Dataset(name=name or p.name, X=X, y=y, categorical=cats, train_index=tr, test_index=te, meta=meta)
