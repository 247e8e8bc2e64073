"""Library functions behind ``treebench datasets list|info|fetch``.

Downloads never happen inside workers: before cells start, the runner loads every dataset of
the run once in the parent process (`treebench.api.preflight_datasets`, which downloads what is
missing unless offline), and workers then load with ``offline=True``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from treebench.data.base import Dataset, data_dirs_from_env, load_dataset, offline_from_env
from treebench.data.locate import FileSpec, cache_root, find_local
from treebench.errors import DataError, UserError
from treebench.data.catalog import build_dataset, get_entry, load_catalog, origin_page
from treebench.data.openml_source import find_cached
from treebench.registry import DATASETS
from treebench.data.checks import infinite_per_column


def _file_status(spec: FileSpec, dirs: list[Path], cache_dir: Path | None, name: str) -> tuple[str, str | None]:
    try:
        p = find_local(spec, dirs, cache_dir, name)
    except DataError as exc:
        return "checksum mismatch", str(exc)
    if p is None:
        return "missing", None
    where = "cache" if str(p).startswith(str(cache_root(cache_dir))) else "data dir"
    return where, str(p)


def _source(entry: Any, openml_id: Any) -> str | None:
    """Where to get a catalog dataset: the first file's public URL, the OpenML id, or the page
    or repository the catalog names (for files with no public download)."""
    for f in entry.files:
        if getattr(f, "url", None):
            return str(f.url)
    if openml_id is not None:
        return f"openml:{openml_id}"
    return origin_page(entry)


def list_datasets(
    data_dirs: Iterable[str | Path] | None = None, cache_dir: Path | None = None, tags: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """One row per registered dataset: name, tags, kind, availability, size (bytes), where found.

    ``availability`` is ``embedded`` (bundled or generated), ``local`` (every file in a data
    directory or the cache), ``downloadable`` (some file missing, but every missing one has a public
    URL or the dataset an OpenML id), ``missing`` or ``checksum mismatch``. Never touches the network.
    """
    dirs = data_dirs_from_env(list(data_dirs or []))
    catalog = load_catalog()
    want = set(tags)
    rows = []
    for e in DATASETS:
        if want and not want <= set(e.tags):
            continue
        row: dict[str, Any] = {"name": e.name, "tags": list(e.tags), "description": e.description}
        cname = e.extra.get("catalog")
        if cname is None:
            row.update(kind="generator" if "generator" in e.tags else ("user" if "user" in e.tags else "embedded"),
                       availability="embedded" if "user" not in e.tags else "n/a", bytes=None, where=None)
            rows.append(row)
            continue
        entry = catalog[cname]
        statuses = [_file_status(f, dirs, cache_dir, cname) for f in entry.files]
        oid = (entry.spec.get("origin") or {}).get("openml")
        if any(s == "checksum mismatch" for s, _ in statuses):
            avail = "checksum mismatch"
        elif all(s in ("data dir", "cache") for s, _ in statuses):
            avail = "local"
        elif oid is not None and find_cached(oid, cache_dir) is not None:
            avail = "local (openml cache)"
        elif all(s != "missing" or f.url for (s, _), f in zip(statuses, entry.files, strict=True)) or oid is not None:
            avail = "downloadable"
        else:
            avail = "missing"
        row.update(
            kind="catalog", alias_of=cname if cname != e.name else None, availability=avail,
            bytes=sum(f.bytes or 0 for f in entry.files), where=[w for _, w in statuses],
            source=_source(entry, oid),
            shape=entry.spec.get("shape"), n_classes=entry.spec.get("n_classes"),
        )
        rows.append(row)
    return rows


def describe(ds: Dataset) -> dict[str, Any]:
    """Shape, class balance, feature types, missing and infinite values per feature, split and
    provenance of a loaded dataset."""
    classes, counts = np.unique(ds.y, return_counts=True)
    inf = infinite_per_column(ds.X)
    features = []
    for c in ds.X.columns:
        s = ds.X[c]
        vals = set(s.dropna().unique())
        kind = "categorical" if c in set(ds.categorical) else ("binary" if vals and vals <= {0, 1} else "numeric")
        features.append({"name": str(c), "type": kind, "distinct": int(s.nunique()), "missing": int(s.isna().sum()),
                         "infinite": inf.get(str(c), 0)})
    kinds = {k: sum(f["type"] == k for f in features) for k in ("numeric", "binary", "categorical")}
    info = {
        "name": ds.name,
        "n_samples": ds.n_samples,
        "n_features": ds.n_features,
        "shape": [ds.n_samples, ds.n_features],
        "n_classes": int(classes.size),
        "class_balance": {str(k): int(v) for k, v in zip(classes, counts, strict=True)},
        "feature_types": kinds,
        "features": features,
        "missing_values": int(ds.X.isna().sum().sum()),
        "infinite_values": int(sum(inf.values())),
        "split": None if ds.train_index is None else {"train": int(len(ds.train_index)), "test": int(len(ds.test_index))},
        "provenance": {k: ds.meta.get(k) for k in ("origin", "citation", "licence", "files", "task", "title", "notes", "params") if k in ds.meta},
        "parse_notes": list(ds.meta.get("parse_notes", []) or []),
    }
    return info


def dataset_info(
    name: str, params: dict[str, Any] | None = None, *, data_dirs: Iterable[str | Path] | None = None, offline: bool | None = None
) -> dict[str, Any]:
    """Load ``name`` (with loader ``params``) and `describe` it."""
    ds = load_dataset(name, params, data_dirs=list(data_dirs or []), offline=offline)
    return describe(ds)


def fetch(
    names: Iterable[str],
    *,
    data_dirs: Iterable[str | Path] | None = None,
    offline: bool | None = None,
    cache_dir: Path | None = None,
    raise_errors: bool = True,
) -> list[dict[str, Any]]:
    """Make every named catalog dataset available locally and parsed (fills the user cache).

    Files already in a data directory or the cache are only verified; missing ones are downloaded
    from their origin unless offline. Embedded datasets and generators need nothing. Returns one
    row per name (``status`` ok/error, ``message``, ``shape``); with ``raise_errors`` a failure
    raises `DataError` naming every dataset that failed, after all were tried.
    """
    dirs = data_dirs_from_env(list(data_dirs or []))
    off = offline_from_env() if offline is None else offline
    rows = []
    for name in names:
        try:
            if name not in DATASETS and Path(name).is_file():
                raise DataError(f"`{name}` is a local file, which needs no fetching (`treebench "
                                f"datasets fetch` gets catalog datasets); `treebench datasets "
                                f"info {name}` shows what treebench reads from it.")
            entry = DATASETS.get(name)
            cname = entry.extra.get("catalog")
            if cname is None:
                rows.append({"name": name, "status": "ok", "message": "embedded or generated; nothing to fetch", "shape": None})
                continue
            ds = build_dataset(get_entry(cname), data_dirs=dirs, offline=off, cache_dir=cache_dir)
            rows.append({"name": name, "status": "ok", "message": "available", "shape": [ds.n_samples, ds.n_features]})
        except UserError as exc:
            rows.append({"name": name, "status": "error", "message": str(exc), "shape": None})
    failed = [r for r in rows if r["status"] == "error"]
    if failed and raise_errors:
        raise DataError(" ".join(r["message"] for r in failed))
    return rows


def binarization_summary(ds: Dataset, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """What binarizer ``method`` with ``params`` makes of ``ds``: the number of binary columns in
    all and per original feature. Fitted on the training file when the dataset has one, else on
    every row (a fold of a k-fold split gives about the same counts)."""
    from treebench.binarize import make_binarizer

    b = make_binarizer(method, dict(params or {}), list(ds.categorical))
    rows = ds.train_index if ds.train_index is not None else np.arange(ds.n_samples)
    b.fit(ds.X.iloc[rows], np.asarray(ds.y)[rows])
    return {
        "method": method,
        "params": dict(params or {}),
        "fitted_on": "training file" if ds.train_index is not None else "all rows",
        "n_binary_columns": int(b.n_columns_),
        "per_feature": dict(b.columns_per_feature_),
    }


def format_info(info: dict[str, Any]) -> str:
    """`describe` (and an optional ``binarization`` summary) as readable text."""
    kinds = info["feature_types"]
    lines = [
        f"{info['name']}: {info['n_samples']} rows, {info['n_features']} features "
        f"({kinds['numeric']} numeric, {kinds['binary']} binary, {kinds['categorical']} categorical), "
        f"{info['missing_values']} missing values"
        + (f", {info['infinite_values']} infinite values (refused by `treebench run`)" if info.get("infinite_values") else ""),
    ]
    for f in info.get("provenance", {}).get("files", []) or []:
        lines.append(f"file:  {f.get('found_at') or f.get('path')} ({f.get('role')})")
    if info.get("split"):
        lines.append(f"split: predefined, {info['split']['train']} training rows, {info['split']['test']} test rows")
    balance = info["class_balance"]
    shown = ", ".join(f"{k}: {v}" for k, v in list(balance.items())[:20])
    more = f", ... ({len(balance) - 20} more)" if len(balance) > 20 else ""
    lines.append(f"label: {info['n_classes']} classes ({shown}{more})")
    for note in info.get("parse_notes", []) or []:
        lines.append(f"note:  {note}")
    feats = info.get("features") or []
    if feats:
        width = max(7, *(len(f["name"]) for f in feats))
        lines.append("")
        lines.append(f"{'feature':<{width}}  {'kind':<11}  {'distinct':>8}  {'missing':>7}  {'inf':>5}")
        for f in feats:
            lines.append(
                f"{f['name']:<{width}}  {f['type']:<11}  {f['distinct']:>8}  {f['missing']:>7}  {f.get('infinite', 0):>5}"
            )
    b = info.get("binarization")
    if b:
        params = ", ".join(f"{k}={v}" for k, v in b["params"].items())
        lines.append("")
        lines.append(
            f"binarization {b['method']}{f' ({params})' if params else ''}: {b['n_binary_columns']} binary columns "
            f"(fitted on {b['fitted_on']})"
        )
        per = b["per_feature"]
        if per:
            width = max(len(k) for k in per)
            lines += [f"  {k:<{width}}  {v}" for k, v in per.items()]
    return "\n".join(lines)
