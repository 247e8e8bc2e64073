"""The dataset catalog: one YAML entry per dataset in ``datasets/`` (see ``datasets/README.md``).

Each entry names its files (path relative to a data directory, sha256, role full/train/test,
public origin), the format and parsing options, the label column, categorical columns, missing
value tokens, per-file fixes, a predefined split if any, a label mapping where a paper binarizes
the target, and provenance (origin, citation, licence). Importing this module registers one
loader per entry (and per alias) in `treebench.registry.DATASETS`.

Parsed datasets are cached as memory-mapped Arrow files under ``<cache>/parsed/``
(`treebench.data.parsed_cache`), keyed by the checksums of the source files and the parsing
options, so a second load skips parsing.
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from treebench.data.base import Dataset
from treebench.data.locate import FileSpec, cache_root, locate
from treebench.data.parsed_cache import SUFFIX, cache_key, read_parsed, slug, write_parsed
from treebench.data.parsers import (
    guess_format, header_mode, parquet_kinds, read_arff, read_delimited, read_dl85, read_parquet,
)
from treebench.errors import DataError
from treebench.utils.text import clip, quote, quote_list, show
from treebench import envvars
from treebench.utils import safe_yaml
from treebench.errors import did_you_mean
from treebench.data.openml_source import find_cached, load_openml
from treebench.registry import DATASETS, Entry
from treebench.data.base import data_dirs_from_env

PARSER_VERSION = "8"  # bump to invalidate parsed caches after a parsing change
PARSE_KEYS = (
    "format", "delimiter", "header", "label", "categorical", "missing", "fixes", "split", "quotechar",
    "bad_values",
)
BAD_VALUES = ("error", "missing")
TASKS = ("classification",)


def catalog_dirs() -> list[Path]:
    """Where catalog YAML files live: ``TREEBENCH_CATALOG`` (path list), the repo's ``datasets/``,
    and the copy installed inside the package (``treebench/_catalog``)."""
    out = envvars.path_list("TREEBENCH_CATALOG")
    for d in out:
        if d.exists() and not d.is_dir():
            raise DataError(f"TREEBENCH_CATALOG names `{d}`, which is a file; give the folders "
                            f"that hold catalog YAML files (a path list).")
    here = Path(__file__).resolve().parent
    out += [here.parents[1] / "datasets", here.parent / "_catalog"]
    return [d for d in out if d.is_dir()]


@dataclass
class CatalogEntry:
    """A validated catalog entry (the YAML mapping plus parsed `FileSpec` objects)."""

    name: str
    spec: dict[str, Any]
    files: list[FileSpec]
    source: Path | None = None
    aliases: list[str] = field(default_factory=list)

    @property
    def task(self) -> str:
        return self.spec.get("task", "classification")

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(self.spec.get("tags", ()))

    def parse_options(self) -> dict[str, Any]:
        return {k: self.spec.get(k) for k in PARSE_KEYS}

    def provenance(self) -> dict[str, Any]:
        return {
            "origin": self.spec.get("origin", {}),
            "citation": self.spec.get("citation", ""),
            "licence": self.spec.get("licence", ""),
            "files": [
                {"path": f.path, "role": f.role, "sha256": f.sha256, "bytes": f.bytes, "url": f.url} for f in self.files
            ],
        }


#: the keys of a catalog entry (datasets/README.md, "Entry schema"), of its files and of its
#: ``fixes``: any other key is refused (a misspelt ``sha256`` would turn its check off)
ENTRY_KEYS = (*PARSE_KEYS, "name", "title", "task", "tags", "aliases", "files", "shape",
              "n_classes", "n_train", "origin", "citation", "licence", "notes",
              "unseen_test_labels", "openml_label")
FILE_KEYS = ("path", "role", "sha256", "bytes", "alt_paths", "url", "url_sha256")
FIX_KEYS = ("skip_lines", "drop_trailing_lines", "unquote_lines", "column_names", "drop_columns",
            "label_map", "label_strip_suffix", "label_from_onehot")


def _known_keys(d: Any, known: tuple[str, ...], what: str, where: str) -> None:
    """Refuse a mapping that is not one, or a key of it that is not ``known``."""
    if not isinstance(d, dict):
        raise DataError(f"{where}: {what} must be a mapping, got {show(d)}.")
    for key in d:
        if key not in known:
            raise DataError(f"{where}: {what} has an unknown key {quote(key)}"
                            f"{did_you_mean(str(key), known)}; the keys are listed in the "
                            f"catalog's entry schema (datasets/README.md).")


def entry_from_dict(d: dict[str, Any], source: Path | None = None) -> CatalogEntry:
    where = f"catalog file `{source}`" if source else "catalog entry"
    if not isinstance(d, dict) or "name" not in d:
        raise DataError(f"{where} must be a mapping with a `name`.")
    where = f"{where}, entry {quote(d['name'])}"
    _known_keys(d, ENTRY_KEYS, "the entry", where)
    if d.get("fixes") is not None:
        _known_keys(d["fixes"], FIX_KEYS, "`fixes`", where)
    if not isinstance(d.get("files", []) or [], list):
        raise DataError(f"{where}: `files` must be a list of files, got {show(d['files'])}.")
    files = []
    for f in d.get("files", []) or []:
        _known_keys(f, FILE_KEYS, "a file", where)
        if "path" not in f:
            raise DataError(f"{where}: every file needs a `path`.")
        role = f.get("role", "full")
        if role not in ("full", "train", "test"):
            raise DataError(f"{where}: file {quote(f['path'])} has role {show(role)}; expected full, train or test.")
        files.append(
            FileSpec(
                path=f["path"], role=role, sha256=f.get("sha256"), bytes=f.get("bytes"),
                alt_paths=tuple(f.get("alt_paths", ())), url=f.get("url"), url_sha256=f.get("url_sha256"),
            )
        )
    task = d.get("task", "classification")
    if task not in TASKS:
        raise DataError(f"{where}: task {show(task)} is not supported; expected one of {', '.join(TASKS)}.")
    return CatalogEntry(name=d["name"], spec=d, files=files, source=source, aliases=list(d.get("aliases", [])))


def _yaml_problem(exc: Exception) -> str:
    """PyYAML's error as one clause: its problem and where (line and column, 1-based)."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{str(problem).rstrip('.')}{at}"


@lru_cache(maxsize=1)
def _load_catalog_cached(dirs: tuple[str, ...]) -> dict[str, CatalogEntry]:
    import yaml


    out: dict[str, CatalogEntry] = {}
    for d in dirs:
        for p in sorted(Path(d).rglob("*.yaml")):
            try:
                docs = safe_yaml.load_all(p.read_text())
            except yaml.YAMLError as exc:
                raise DataError(f"catalog file `{p}` is not valid YAML: {_yaml_problem(exc)}; "
                                f"fix it or move it out of the catalog folder.") from None
            for doc in docs:
                if doc is None:
                    continue
                for item in doc if isinstance(doc, list) else [doc]:
                    e = entry_from_dict(item, p)
                    out.setdefault(e.name, e)
    return out


def load_catalog() -> dict[str, CatalogEntry]:
    """All catalog entries by name (first definition wins across catalog directories)."""
    return _load_catalog_cached(tuple(str(d) for d in catalog_dirs()))


def get_entry(name: str) -> CatalogEntry:
    cat = load_catalog()
    if name in cat:
        return cat[name]
    for e in cat.values():
        if name in e.aliases:
            return e
    raise DataError(f"no catalog entry `{name}`{did_you_mean(name, cat)}; run `treebench datasets list`.")


# ------------------------------------------------------------------------------------- building


def _resolve_column(df: pd.DataFrame, key: Any, what: str, where: str) -> str:
    if isinstance(key, bool):
        raise DataError(f"{where}: {what} must be a column name or position, got {show(key)}.")
    if isinstance(key, int):
        if not -df.shape[1] <= key < df.shape[1]:
            raise DataError(f"{where}: {what} position {key} is outside the {df.shape[1]} columns.")
        return str(df.columns[key])
    if str(key) not in df.columns:
        raise DataError(f"{where}: {what} {quote(key)} is not a column{did_you_mean(str(key), map(str, df.columns))}.")
    return str(key)


def parse_file(path: Path, opts: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, str]]:
    """Parse one file with catalog options; returns the table and ARFF kinds (empty otherwise).
    A damaged compressed file (truncated, or not gzip past its first bytes) is a `DataError`."""
    try:
        return _parse_file(path, opts)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        why = str(exc).strip().rstrip(".") or type(exc).__name__
        raise DataError(f"cannot read `{path}`: the compressed file is damaged or truncated "
                        f"({why}); copy or download it again.") from None


def _parse_file(path: Path, opts: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, str]]:
    fmt = opts.get("format") or guess_format(path)
    fixes = opts.get("fixes") or {}
    missing = opts.get("missing")
    missing = ("?",) if missing is None else tuple(str(m) for m in missing)
    if fmt == "arff":
        return read_arff(path, missing=missing)
    if fmt == "dl85":
        return read_dl85(path), {}
    if fmt == "parquet":
        return read_parquet(path), parquet_kinds(path)
    if fmt not in ("csv", "tsv"):
        raise DataError(f"unknown format {fmt!r} for `{path}`; expected csv, tsv, arff, dl85 or parquet.")
    delim = opts.get("delimiter") or ("\t" if fmt == "tsv" else ",")
    names = fixes.get("column_names")
    header = header_mode(opts.get("header"), default="first-row")
    df = read_delimited(
        path,
        delimiter=delim,
        header=header,
        missing=missing,
        names=names if isinstance(names, list) else None,
        quotechar=opts.get("quotechar") or '"',
        skip_lines=fixes.get("skip_lines", ()),
        drop_trailing_lines=fixes.get("drop_trailing_lines", 0),
        unquote_lines=bool(fixes.get("unquote_lines", False)),
    )
    if names == "auto":
        df.columns = [f"x{j}" for j in range(df.shape[1])]
    return df, {}


def _map_labels(y: pd.Series, fixes: dict[str, Any], where: str = "the data") -> pd.Series:
    suffix = fixes.get("label_strip_suffix")
    if suffix:
        s = y.astype(str)
        y = s.where(~s.str.endswith(suffix), s.str.slice(0, -len(suffix)))
    mapping = fixes.get("label_map")
    if mapping:
        default = mapping.get("*")
        keys = {str(k): v for k, v in mapping.items() if k != "*"}
        s = _label_tokens(y)
        mapped = s.map(keys)  # hash lookups, vectorised
        if keys and not mapped.notna().any():
            seen = quote_list(sorted(set(s)), max_values=8)
            raise DataError(f"{where}: `label_map`: none of its labels ({quote_list(sorted(keys), max_values=8)}) "
                            f"is a label of the data ({seen}); write the labels as the file has them.")
        y = mapped.where(mapped.notna(), default if default is not None else y)
    return y


def _label_tokens(y: pd.Series) -> pd.Series:
    """The labels as the keys of a ``label_map`` name them: whole numbers without a fraction
    (a file's ``1.0`` is the class 1, as `_label_values` reads it, so the key ``1`` maps it),
    anything else as text."""
    v = y.to_numpy()
    if whole_labels(v):
        return pd.Series(v.astype(np.int64), index=y.index).astype(str)
    return y.astype(str)


def whole_labels(v: np.ndarray) -> bool:
    """Whether labels ``v`` are floats that are whole numbers of at most 2**53 in size (where
    every whole float is one integer): they are read as the integer classes (``1.0`` is 1);
    larger ones stay floats, which an int64 would wrap or merge."""
    return bool(v.dtype.kind == "f" and np.all(np.isfinite(v)) and np.all(v == np.round(v))
                and (not len(v) or float(np.abs(v).max()) <= 2.0 ** 53))


def _row_origin(i: int, spans: list[tuple[int, int, str]]) -> str:
    """``data row N of `file``` for row ``i`` of the concatenated table."""
    for start, stop, label in spans:
        if start <= i < stop:
            return f"data row {i - start + 1} of {label}"
    return f"data row {i + 1}"


def _force_numeric(X: pd.DataFrame, columns: list[str], opts: dict[str, Any], where: str,
                   spans: list[tuple[int, int, str]], notes: list[str]) -> None:
    """Make ``columns`` numeric; a value that is no number is an error (``bad_values: error``,
    the default) or a missing value reported in ``notes`` (``bad_values: missing``)."""
    mode = opts.get("bad_values") or "error"
    if mode not in BAD_VALUES:
        raise DataError(f"{where}: `bad_values` must be error or missing, got {show(mode)}.")
    for c in columns:
        s = X[c]
        if pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            continue
        conv = pd.to_numeric(s, errors="coerce")
        bad = np.flatnonzero((conv.isna() & s.notna()).to_numpy())
        if bad.size:
            i = int(bad[0])
            first = f"{_row_origin(i, spans)}, column {quote(c)}: {show(s.iloc[i])}"
            if mode == "error":
                raise DataError(
                    f"{where}: {first} is not a number, and {quote(c)} is numeric because `categorical:` does not "
                    f"list it ({bad.size} such value{'s' if bad.size > 1 else ''}); list it as categorical, fix "
                    f"the file, or set `bad_values: missing` to read such values as missing."
                )
            notes.append(
                f"column {quote(c)}: {bad.size} value{'s' if bad.size > 1 else ''} that {'are' if bad.size > 1 else 'is'} "
                f"not a number read as missing (first: {first})"
            )
        X[c] = conv


def _note_nearly_numeric(X: pd.DataFrame, columns: list[str], spans: list[tuple[int, int, str]], notes: list[str]) -> None:
    """With ``categorical: auto``, say which text columns are text only because of a few values
    (at least 90 % of the values are numbers): one stray string should not silently make a
    numeric feature categorical."""
    for c in columns:
        s = X[c]
        head = s.dropna().iloc[:200]
        if len(head) and pd.to_numeric(head, errors="coerce").isna().mean() > 0.5:
            _note_comma_numbers(c, head, notes)
            continue  # mostly text among the first values: a real text column (fast on big files)
        present = s.notna()
        conv = pd.to_numeric(s, errors="coerce")
        bad = np.flatnonzero((conv.isna() & present).to_numpy())
        n = int(present.sum())
        if n and not bad.size:  # every value a number, kept as text
            notes.append(_numbers_as_text(s, c, n, spans))
        if bad.size and n and bad.size <= 0.1 * n:
            i = int(bad[0])
            notes.append(
                f"column `{c}` is read as categorical because {bad.size} of its {n} values "
                f"{'is' if bad.size == 1 else 'are'} not a number (first: {_row_origin(i, spans)}: {s.iloc[i]!r}); "
                f"if it is numeric, list the categorical columns in `categorical:` (with `bad_values: missing`) "
                f"or add the token to `missing_tokens:`"
            )


_COMMA_NUMBER = re.compile(r"^[-+]?(?:\d+,\d+|\d{1,3}(?:[,.]\d{3})+(?:[.,]\d+)?)$")


def _note_comma_numbers(c: str, head: pd.Series, notes: list[str]) -> None:
    """Say when a text column's values are numbers written with a decimal comma (``1,5``) or
    thousands separators (``1,000``): treebench reads them as categories, one per value."""
    text = head.astype(str).str.strip()
    comma = text.str.match(_COMMA_NUMBER).to_numpy(dtype=bool)
    plain = pd.to_numeric(text, errors="coerce").notna().to_numpy()
    if len(text) and comma.any() and (comma | plain).mean() >= 0.9:
        notes.append(f"column `{c}` is read as categorical, but its values look like numbers "
                     f"written with a decimal comma or thousands separators (first: "
                     f"{text[comma].iloc[0]!r}); treebench reads numbers with a decimal point and no "
                     f"separators, so convert the file, or list the column in `categorical:` "
                     f"to keep it as categories")


#: texts that files write for a missing value, which are no missing token unless `missing:`
#: lists them (only ``?`` and the empty field are, by default)
MISSING_SPELLINGS = frozenset({"na", "nan", "n/a", "null", "none", "-", "--", "missing", "#n/a"})


def _note_label_spellings(y: pd.Series, spans: list[tuple[int, int, str]], notes: list[str]) -> None:
    """Say when a label of numbers also holds a text that files write for a missing value
    (``NA``, ``nan``, ``null``, ...): it is then a class of its own."""
    if y.dtype.kind in "biuf" or not len(y):
        return
    text = y.astype(str).str.strip()
    odd = text.str.lower().isin(MISSING_SPELLINGS).to_numpy()
    if not odd.any() or pd.to_numeric(y[~odd], errors="coerce").isna().any():
        return
    i = int(np.flatnonzero(odd)[0])
    notes.append(f"the label is numbers but for {int(odd.sum())} row(s) holding "
                 f"{sorted(set(text[odd]))[0]!r} (first: {_row_origin(i, spans)}), which is a class "
                 f"of its own; if it stands for a missing label, add it to `missing_tokens:` (a row "
                 f"without a label is then refused)")


def _too_big(v: Any) -> bool:
    """Whether ``v`` is an integer written with more digits than a 64-bit integer holds."""
    try:
        return abs(int(str(v).strip())) > np.iinfo(np.int64).max
    except ValueError:
        return False


def _numbers_as_text(s: pd.Series, c: str, n: int, spans: list[tuple[int, int, str]]) -> str:
    """The note on a column read as categorical whose ``n`` values are all numbers: stored as
    text, or integers too large for 64 bits (which a reader keeps as text)."""
    present = np.flatnonzero(s.notna().to_numpy())
    big = [i for i in present[:10_000] if _too_big(s.iloc[i])]
    i = int(big[0] if big else present[0])
    why = "integers too large for 64 bits" if big else "numbers stored as text"
    rounding = " (floats, which round such integers)" if big else ""
    return (f"column `{c}` is read as categorical: each of its {n} values is a number, but the "
            f"file holds them as text ({why}, e.g. {_row_origin(i, spans)}: "
            f"{clip(s.iloc[i])!r}); to read them as numbers{rounding}, list the categorical "
            f"columns in `categorical:`")


def frame_to_dataset(
    name: str, parts: list[tuple[str, pd.DataFrame, dict[str, str]]], opts: dict[str, Any], where: str,
    paths: list[Path] | None = None, notes: list[str] | None = None,
) -> tuple[pd.DataFrame, np.ndarray, list[str], int | None]:
    """Apply label/categorical/fixes to parsed parts (role, table, kinds); rows of train then test.

    ``categorical`` is ``auto`` (non-numeric and ARFF nominal columns), ``all``, ``none`` or a
    list of column names or positions (positions count the file's columns, label included). A
    list is the truth: every other column is numeric, and a value there that is no number is an
    error naming its row, column and value, or with ``bad_values: missing`` a missing value
    reported in ``notes``. Returns X, y, categorical names and the number of
    training rows (None without a split).
    """
    notes = [] if notes is None else notes
    labels = [f"`{p}`" for p in paths] if paths else [r for r, _, _ in parts]
    fixes = opts.get("fixes") or {}
    df, kinds, n_train = _stack_parts(parts, opts.get("split"), where)
    spans = _row_spans(parts, labels, opts.get("split"))
    df, y, label = _take_label(df, fixes, opts, where)
    drops = [_resolve_column(df, c, "column to drop", where) for c in fixes.get("drop_columns", [])]
    X = df.drop(columns=[c for c in [label, *drops] if c is not None])
    if len(y) and y.isna().all():
        raise DataError(f"{where}: the label column {quote(str(label))} is empty in every row (a "
                        f"delimiter at the end of each line makes an empty last column); set "
                        f"`label:` to the label's column, or remove the trailing delimiters.")
    if y.isna().any():
        i = int(np.flatnonzero(y.isna().to_numpy())[0])
        raise DataError(f"{where}: the label is missing in data row {i + 1}; remove the row or fix the file.")
    y = _map_labels(y, fixes, where)
    _note_label_spellings(y, spans, notes)
    categorical = _categorical_columns(df, X, kinds, opts, where, spans, notes)
    if X.shape[1] == 0:
        raise DataError(f"{where}: no feature column besides the label; check the delimiter, the "
                        f"header and `label:` (a data file needs at least one feature column).")
    cats = set(categorical)
    numeric = [c for c in X.columns if c not in cats]
    if numeric and X.columns.is_unique:  # one float block (column by column is quadratic)
        floats = pd.DataFrame(X[numeric].to_numpy(dtype=np.float64, na_value=np.nan),
                              columns=numeric, index=X.index)
        X = pd.concat([floats, X[[c for c in X.columns if c in cats]]], axis=1)[list(X.columns)]
    else:
        for c in numeric:
            X[c] = X[c].astype(np.float64)
    return X.reset_index(drop=True), _label_values(y), categorical, n_train


def _stack_parts(
    parts: list[tuple[str, pd.DataFrame, dict[str, str]]], split: str | None, where: str,
) -> tuple[pd.DataFrame, dict[str, str], int | None]:
    """One table of the parsed parts (training rows first), its column kinds and the number of
    training rows (None without a split)."""
    roles = [r for r, _, _ in parts]
    if split == "prefix":  # Quant-BnB: the train file is a prefix of the full file
        full = next(df for r, df, _ in parts if r == "full")
        train = next(df for r, df, _ in parts if r == "train")
        if len(train) > len(full) or not np.allclose(
            train.to_numpy(dtype=float), full.iloc[: len(train)].to_numpy(dtype=float), equal_nan=True
        ):
            raise DataError(f"{where}: the training file is not the first rows of the full file, as the catalog expects.")
        return full, parts[0][2], len(train)
    if "train" in roles:
        order = [p for p in parts if p[0] == "train"] + [p for p in parts if p[0] == "test"]
        n_train = sum(len(p[1]) for p in order if p[0] == "train")
        cols = order[0][1].columns
        frames = [order[0][1]] + [_aligned(d, cols, where) for _, d, _ in order[1:]]
        return pd.concat(frames, ignore_index=True), order[0][2], n_train
    df = pd.concat([d for _, d, _ in parts], ignore_index=True) if len(parts) > 1 else parts[0][1]
    return df, parts[0][2], None


def _aligned(d: pd.DataFrame, cols: pd.Index, where: str) -> pd.DataFrame:
    """The test part ``d`` with the training part's columns ``cols``. Headers that name the same
    columns in another order are lined up by name (matching by position would feed each
    feature another's values); headers with names of their own (MONK-3's test file says
    ``a1, a2`` where its training file says ``head_shape, body_shape``) are matched by
    position, as long as every name the two share sits at the same position."""
    names, train = [str(c) for c in d.columns], [str(c) for c in cols]
    if names == train:
        return d
    if d.shape[1] != len(cols):
        raise DataError(f"{where}: train and test files have different columns "
                        f"({len(cols)} and {d.shape[1]}).")
    moved = [c for c in set(names) & set(train) if names.index(c) != train.index(c)]
    if not moved:
        return d.set_axis(cols, axis=1)
    if sorted(names) == sorted(train) and len(set(names)) == len(names):
        return d[[d.columns[names.index(c)] for c in train]].set_axis(cols, axis=1)
    c = sorted(moved)[0]
    raise DataError(f"{where}: the test file's header has column {quote(c)} at position "
                    f"{names.index(c) + 1} and the training file's at {train.index(c) + 1}, "
                    f"and their other names differ: give both files the same columns.")


def _row_spans(parts: list[tuple[str, pd.DataFrame, dict[str, str]]], labels: list[str],
               split: str | None) -> list[tuple[int, int, str]]:
    """(first row, end row, file label) of each file in the stacked table, for messages."""
    roles = [r for r, _, _ in parts]
    if split == "prefix":
        return [(0, len(parts[roles.index("full")][1]), labels[roles.index("full")])]
    if "train" in roles:
        ordered = [k for k, r in enumerate(roles) if r == "train"] + [k for k, r in enumerate(roles) if r == "test"]
    else:
        ordered = list(range(len(parts)))
    spans, start = [], 0
    for k in ordered:
        spans.append((start, start + len(parts[k][1]), labels[k]))
        start += len(parts[k][1])
    return spans


def _take_label(df: pd.DataFrame, fixes: dict[str, Any], opts: dict[str, Any],
                where: str) -> tuple[pd.DataFrame, pd.Series, Any]:
    """(the table, the label, the label's column), or, with ``label_from_onehot`` (steel plates
    faults), the table without those columns, the name of each row's 1 column and None."""
    onehot = fixes.get("label_from_onehot")
    if not onehot:
        label = _resolve_column(df, opts.get("label", -1) if opts.get("label") is not None else -1, "label column", where)
        return df, df[label], label
    cols = [_resolve_column(df, c, "label_from_onehot column", where) for c in onehot]
    block = df[cols].to_numpy()
    if not np.all(block.sum(axis=1) == 1):
        raise DataError(f"{where}: the one-hot label columns {quote_list(cols)} do not have exactly one 1 per row.")
    y = pd.Series(np.asarray(cols, dtype=object)[block.argmax(axis=1)])
    return df.drop(columns=cols), y, None


def _categorical_columns(df: pd.DataFrame, X: pd.DataFrame, kinds: dict[str, str],
                         opts: dict[str, Any], where: str, spans: list[tuple[int, int, str]],
                         notes: list[str]) -> list[str]:
    """The categorical feature columns by the ``categorical`` option, in column order; with a
    list, every other column is made numeric in place (`_force_numeric`)."""
    cat_opt = opts.get("categorical", "auto")
    numeric = {t: pd.api.types.is_numeric_dtype(t) for t in set(X.dtypes)}  # not per column
    auto = [c for c, t in zip(X.columns, X.dtypes)
            if kinds.get(c) in ("nominal", "string") or not numeric[t]]
    if cat_opt in (None, "auto"):
        categorical = auto
        _note_nearly_numeric(X, [c for c in auto if kinds.get(c) not in ("nominal", "string")], spans, notes)
    elif cat_opt == "all":
        categorical = list(X.columns)
    elif cat_opt == "none":
        categorical = []
        if auto:
            raise DataError(f"{where}: column {quote(auto[0])} is not numeric but the catalog says no categorical columns.")
    else:
        named = [_resolve_column(df, c, "categorical column", where) for c in cat_opt]
        gone = [c for c in named if c not in X.columns]
        if gone:
            raise DataError(f"{where}: categorical column {quote(gone[0])} is the label or a dropped column.")
        categorical = list(dict.fromkeys(named))
        _force_numeric(X, [c for c in X.columns if c not in set(categorical)], opts, where, spans, notes)
    return [str(c) for c in X.columns if c in set(categorical)]


def _label_values(y: pd.Series) -> np.ndarray:
    """The label as an array: whole floats as integers (`whole_labels`), text labels as
    written, and whole numbers beyond 64 bits as their decimal text."""
    yv = y.to_numpy()
    if whole_labels(yv):
        yv = yv.astype(np.int64)  # labels written as 0.0/1.0 are the classes 0/1
    if yv.dtype == object or pd.api.types.is_string_dtype(y.dtype):
        kind = pd.api.types.infer_dtype(y, skipna=False)
        # "string", or labels of several types (numbers in one file, text in the other): the
        # classes are the tokens as written, so "1" in a test file is the class 1 of training
        # "integer" in an object column: whole numbers beyond 64 bits, which no numeric type
        # holds exactly: their decimal text keeps every one distinct
        yv = y.astype(str).to_numpy(dtype=str) if kind in ("string", "integer") or \
            kind.startswith("mixed") else y.to_numpy(dtype=object)
    return np.asarray(yv)


def origin_page(entry: CatalogEntry) -> str | None:
    """The page or repository a catalog entry names as its origin (where to get files that
    have no public download), or None."""
    origin = entry.spec.get("origin") or {}
    return next((str(origin[k]) for k in ("page", "repository", "url", "paper") if origin.get(k)), None)


def build_dataset(
    entry: CatalogEntry,
    *,
    data_dirs: list[Path],
    offline: bool,
    cache_dir: Path | None = None,
    use_cache: bool = True,
) -> Dataset:
    """Locate, verify, parse (or read the parsed cache) and assemble a catalog dataset."""
    oid = (entry.spec.get("origin") or {}).get("openml")
    try:
        paths = [locate(f, data_dirs, offline=offline, cache_dir=cache_dir, dataset=entry.name,
                        origin=origin_page(entry)) for f in entry.files]
    except DataError:
        # origin fallback: the dataset's OpenML copy (cached, or downloaded when online)
        if oid is not None and (not offline or find_cached(oid, cache_dir) is not None):
            return _openml_dataset(entry, offline=offline, cache_dir=cache_dir)
        raise
    if not paths:
        return _openml_dataset(entry, offline=offline, cache_dir=cache_dir)
    opts = entry.parse_options()
    key = cache_key(PARSER_VERSION, entry.parse_options(), paths)
    cpath = cache_root(cache_dir) / "parsed" / f"{slug(entry.name)}-{key}{SUFFIX}"
    got = read_parsed(cpath) if use_cache and cpath.is_file() else None
    if got is None:
        parts = []
        for f, p in zip(entry.files, paths, strict=True):
            df, kinds = parse_file(p, opts)
            parts.append((f.role, df, kinds))
        got = frame_to_dataset(entry.name, parts, opts, f"dataset `{entry.name}` ({paths[0]})", paths=paths)
        if use_cache:
            write_parsed(cpath, *got)
    X, y, categorical, n_train = got
    expect = entry.spec.get("shape")
    if expect and [X.shape[0], X.shape[1]] != list(expect):
        raise DataError(
            f"dataset `{entry.name}` loaded from `{paths[0]}` has shape {X.shape[0]}×{X.shape[1]}, but the "
            f"catalog expects {expect[0]}×{expect[1]}; the file or the catalog entry is wrong."
        )
    train_index = test_index = None
    if n_train is not None:
        train_index = np.arange(n_train)
        test_index = np.arange(n_train, X.shape[0])
    meta = {"task": entry.task, "catalog": str(entry.source) if entry.source else None, **entry.provenance()}
    # the parsed data's identity (source checksums + parse options): the prepared-matrix cache's key
    meta["data_key"] = f"catalog:{key}"
    meta["files"] = [dict(m, found_at=str(p)) for m, p in zip(meta["files"], paths, strict=True)]
    for k in ("title", "notes", "paper", "unseen_test_labels"):
        if k in entry.spec:
            meta[k] = entry.spec[k]
    return Dataset(name=entry.name, X=X, y=y, categorical=categorical, train_index=train_index, test_index=test_index, meta=meta)


def _openml_dataset(entry: CatalogEntry, *, offline: bool, cache_dir: Path | None) -> Dataset:
    return load_openml(entry, offline=offline, cache_dir=cache_dir)


# ----------------------------------------------------------------------------------- registry


class CatalogLoader:
    """The registered loader of one catalog entry: ``loader(data_dirs=..., offline=...)``."""

    def __init__(self, name: str):
        self.name = name
        self.__doc__ = f"Catalog dataset `{name}`."

    def __call__(self, data_dirs: list[Path] | None = None, offline: bool = False, cache_dir: Path | None = None) -> Dataset:
        dirs = list(data_dirs) if data_dirs is not None else data_dirs_from_env()
        return build_dataset(get_entry(self.name), data_dirs=dirs, offline=offline, cache_dir=cache_dir)


def register_catalog() -> None:
    for entry in load_catalog().values():
        for n in [entry.name, *entry.aliases]:
            if DATASETS.registered(n):  # first registration wins
                continue
            title = entry.spec.get("title") or entry.name
            DATASETS.add(
                Entry(
                    name=n, obj=CatalogLoader(entry.name), kind="dataset", tags=("catalog", *entry.tags),
                    description=f"{title}" + (f" (alias of `{entry.name}`)" if n != entry.name else ""),
                    extra={"catalog": entry.name},
                )
            )


register_catalog()
