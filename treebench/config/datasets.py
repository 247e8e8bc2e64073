"""What a config's dataset entries stand for, known without loading any data: whether a
short form names a file, their unique display names, whether one ships its own test rows, and
the kind of target it declares."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from treebench.errors import ConfigError
from treebench.registry import DATASETS

if TYPE_CHECKING:
    from treebench.config.schema import DatasetSpec


def looks_like_file(text: str) -> bool:
    """Whether a ``datasets`` entry written as a string names a local file: it is no registered
    dataset name and has a data file's extension, exists, or has a recognisable format."""
    if text in DATASETS:
        return False
    from treebench.data.parsers import guess_format

    low = text.lower().removesuffix(".gz")
    known = (".csv", ".tsv", ".arff", ".data", ".txt", ".parquet", ".pq", ".dat", ".dl85")
    return low.endswith(known) or Path(text).expanduser().is_file() or guess_format(text) != "csv"


def unique_dataset_names(datasets: list[DatasetSpec], source: str = "<config>") -> list[str]:
    """Display names, one per entry, unique across files.

    A dataset's identity is its resolved file path; its display name is the short one it asks
    for. Two different files with the same file name are shown with as many of their folders as
    it takes to tell them apart (``a/x.csv``, ``b/x.csv``); the same file listed twice with
    different options gets a position suffix (``x.csv#2``, ``x.csv#3``). A name given explicitly (``name``/``alias``) that two
    entries share is a config error.
    """
    names = [d.display_name for d in datasets]
    explicit = [d.alias is not None or (d.path is not None and d.name is not None) for d in datasets]
    seen_explicit: dict[str, int] = {}
    for i, (n, e) in enumerate(zip(names, explicit, strict=True)):
        if e:
            if n in seen_explicit:
                raise ConfigError(
                    f"{source}: key `datasets[{i}]`: the name `{n}` is already used by datasets[{seen_explicit[n]}]; "
                    f"give each dataset its own `name`."
                )
            seen_explicit[n] = i
    files = {i: Path(d.file_path() or "") for i, d in enumerate(datasets) if d.is_file and not explicit[i]}
    for _ in range(64):  # each round lengthens the clashing file names by one folder
        groups: dict[str, list[int]] = {}
        for i, n in enumerate(names):
            groups.setdefault(n, []).append(i)
        clash = [idx for idx in groups.values() if len(idx) > 1 and any(i in files for i in idx)]
        if not clash:
            return names
        for idx in clash:
            same_file = len({files[i].expanduser().resolve() for i in idx if i in files}) <= 1
            grown = False
            if not same_file:
                for i in idx:
                    parts = files[i].parts if i in files else ()
                    k = len(Path(names[i]).parts)
                    if i in files and k < len(parts):
                        names[i] = str(Path(*parts[-(k + 1):]))
                        grown = True
            if not grown:  # one file listed twice, or names no folder can separate: number them
                for rank, i in enumerate([i for i in idx if i in files][1:], start=2):
                    names[i] = f"{names[i]}#{rank}"
    return names  # pragma: no cover - 64 folders deep


def predefined_split_available(ds: DatasetSpec) -> bool:
    """True when the dataset ships its own test rows (a catalog ``split: files|prefix`` entry or
    a local file with ``test_path``), known without loading it."""
    if ds.path is not None:
        return ds.test_path is not None
    if ds.name == "file":
        return bool(ds.params.get("test_path"))
    if ds.name not in DATASETS:
        return False
    cname = DATASETS.get(str(ds.name)).extra.get("catalog")
    if not cname:  # no catalog entry: the catalog need not load
        return False
    from treebench.data.catalog import load_catalog

    entry = load_catalog().get(cname)
    return bool(entry is not None and entry.spec.get("split") in ("files", "prefix"))


def dataset_task(ds: DatasetSpec) -> str:
    """``"regression"`` or ``"classification"``: the target kind a dataset declares without
    being loaded (a registered loader tagged ``regression``, a catalog entry's ``task:``);
    local files are classification data."""
    if ds.path is not None or ds.name not in DATASETS:
        return "classification"
    entry = DATASETS.get(ds.name)
    if "regression" in entry.tags:
        return "regression"
    if "catalog" in entry.extra:
        from treebench.data.catalog import get_entry

        return get_entry(entry.extra["catalog"]).task
    return "classification"
