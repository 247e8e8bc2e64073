"""OpenML as a dataset origin (catalog ``origin: {openml: <integer id>}``).

Online, the ``openml`` package downloads the dataset description and data file into its cache
under ``<treebench cache>/openml``. Reading never goes through ``openml``'s own loaders (which
unpickle their cached frames): treebench parses the cached ``description.xml`` and the ARFF or
parquet data file itself, with the same parsers as every other file. Offline, only that cache is
read; when it lacks the dataset the error says how to fill it.
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np

from treebench.data.base import Dataset
from treebench.data.locate import cache_root
from treebench.data.parsers import read_arff, read_parquet
from treebench.errors import DataError

OML = "{http://openml.org/openml}"


def openml_cache(cache_dir: Path | None = None) -> Path:
    return cache_root(cache_dir) / "openml"


def find_cached(dataset_id: int, cache_dir: Path | None = None) -> Path | None:
    """The cached dataset directory (holding ``description.xml``) of an OpenML id, or None."""
    root = openml_cache(cache_dir)
    if not root.is_dir():
        return None
    for desc in root.rglob(f"datasets/{int(dataset_id)}/description.xml"):
        return desc.parent
    return None


def download_openml(dataset_id: int, cache_dir: Path | None = None) -> Path:
    """Fill the OpenML cache for ``dataset_id`` through the ``openml`` package (network)."""
    try:
        import openml
    except ImportError:  # pragma: no cover - openml is a dependency
        raise DataError("fetching from OpenML needs the `openml` package; `pip install openml`.") from None
    openml.config.set_root_cache_directory(str(openml_cache(cache_dir)))
    try:
        openml.datasets.get_dataset(
            int(dataset_id), download_data=True, download_qualities=False, download_features_meta_data=False
        )
    except Exception as exc:  # network and server errors of many kinds
        raise DataError(f"could not download OpenML dataset {dataset_id}: {exc}.") from None
    found = find_cached(dataset_id, cache_dir)
    if found is None:  # pragma: no cover - depends on the openml package's layout
        raise DataError(f"OpenML dataset {dataset_id} was downloaded but its cache was not found under {openml_cache(cache_dir)}.")
    return found


def read_description(did_dir: Path) -> dict[str, Any]:
    root = ET.parse(did_dir / "description.xml").getroot()  # noqa: S314 - the file is openml's own cache

    def text(tag: str) -> str | None:
        el = root.find(OML + tag)
        return el.text.strip() if el is not None and el.text else None

    ignore = [el.text.strip() for el in root.findall(OML + "ignore_attribute") if el.text]
    return {
        "id": text("id"),
        "name": text("name"),
        "version": text("version"),
        "default_target_attribute": text("default_target_attribute"),
        "row_id_attribute": text("row_id_attribute"),
        "ignore_attribute": ignore,
        "licence": text("licence"),
        "citation": text("citation"),
        "md5_checksum": text("md5_checksum"),
        "url": text("url"),
    }


def load_cached_openml(
    dataset_id: int, *, name: str, label: str | None = None, cache_dir: Path | None = None, drop: list[str] | None = None
) -> tuple[Dataset, dict[str, Any]]:
    """Parse a cached OpenML dataset into a `Dataset` (no network, no unpickling)."""
    did = find_cached(dataset_id, cache_dir)
    if did is None:
        raise DataError(
            f"OpenML dataset {dataset_id} (for `{name}`) is not in the cache {openml_cache(cache_dir)}; run "
            f"`treebench datasets fetch {name}` while online, or put its files in a data directory."
        )
    desc = read_description(did)
    arff = did / "dataset.arff"
    pqs = sorted(did.glob("*.pq"))
    if arff.is_file():
        if desc["md5_checksum"]:
            got = hashlib.md5(arff.read_bytes()).hexdigest()  # noqa: S324 - OpenML publishes md5
            if got != desc["md5_checksum"]:
                raise DataError(
                    f"checksum mismatch for `{arff}`: OpenML says md5 {desc['md5_checksum']}, got {got}; delete "
                    f"{did} and fetch again."
                )
        df, kinds = read_arff(arff)
    elif pqs:
        df, kinds = read_parquet(pqs[0]), {}
    else:
        raise DataError(f"the OpenML cache {did} has no data file (dataset.arff or *.pq); fetch `{name}` again online.")
    target = label or desc["default_target_attribute"]
    if not target or target not in df.columns:
        raise DataError(f"OpenML dataset {dataset_id} has no target column {target!r}; set `label` in the catalog entry.")
    drops = [c for c in [desc["row_id_attribute"], *desc["ignore_attribute"], *(drop or [])] if c and c in df.columns]
    y = df[target]
    if y.isna().any():
        raise DataError(f"OpenML dataset {dataset_id}: the target `{target}` has missing values.")
    X = df.drop(columns=[target, *drops]).reset_index(drop=True)
    import pandas as pd

    categorical = [c for c in X.columns if kinds.get(c) in ("nominal", "string") or not pd.api.types.is_numeric_dtype(X[c].dtype)]
    for c in X.columns:
        if c not in categorical:
            X[c] = X[c].astype(np.float64)
    files = [{"path": str(p), "role": "full", "sha256": hashlib.sha256(p.read_bytes()).hexdigest(), "bytes": p.stat().st_size}
             for p in ([arff] if arff.is_file() else pqs[:1])]
    meta = {
        "task": "classification",
        "origin": {"openml": int(dataset_id), "openml_name": desc["name"], "openml_version": desc["version"]},
        "citation": desc["citation"] or "",
        "licence": desc["licence"] or "",
        "files": files,
    }
    yv = y.to_numpy()
    if yv.dtype == object and all(isinstance(v, str) for v in yv):
        yv = yv.astype(str)
    return Dataset(name=name, X=X, y=yv, categorical=[str(c) for c in categorical], meta=meta), desc


def load_openml(entry, *, offline: bool, cache_dir: Path | None = None) -> Dataset:
    """Load a catalog entry whose data comes from OpenML (``origin.openml``)."""
    oid = (entry.spec.get("origin") or {}).get("openml")
    if oid is None:
        raise DataError(f"catalog entry `{entry.name}` has neither files nor an OpenML id.")
    if find_cached(oid, cache_dir) is None and not offline:
        download_openml(oid, cache_dir)
    ds, _ = load_cached_openml(
        oid, name=entry.name, label=entry.spec.get("openml_label"), cache_dir=cache_dir,
        drop=(entry.spec.get("fixes") or {}).get("drop_columns"),
    )
    expect = entry.spec.get("shape")
    if expect and list(ds.X.shape) != list(expect):
        raise DataError(
            f"OpenML dataset {oid} for `{entry.name}` has shape {ds.X.shape[0]}×{ds.X.shape[1]}, but the catalog "
            f"expects {expect[0]}×{expect[1]}; the OpenML version differs from the catalog's files."
        )
    ds.meta.update({"catalog": str(entry.source) if entry.source else None})
    return ds
