"""A dataset's fingerprint: what a cell read, as part of the cell's identity.

A cell's id hashes its spec (`treebench.results.cell.cell_spec`), and the spec holds the
fingerprint of the data the cell loads, so the same config on changed data gives other cells: a
rerun after a data file was edited runs the new cells and the old ones are left out of the
experiment's tables like any cell the config no longer defines. The fingerprint is computed on
the driver when the config is expanded, without parsing the data:

* a user's file (the ``file`` loader): ``sha256:<hex>`` of the file's bytes, the same value
  ``sha256sum`` prints (with a ``test_path``, ``sha256:<train>+<test>``). Hashes are kept in
  the user cache (``fingerprints.json``) keyed by the file's resolved path, inode, size,
  modification and change times, so an unchanged 5 GB file is not read again by the next run;
  any change to the file (also one that keeps its size and restores its modification time)
  changes its change time and so reads it again.
* a catalog dataset: ``catalog:<hex>``, a hash of the checksums its entry records for its files
  and its parse options (the loader refuses files that do not match those checksums). An entry
  that records no checksum for a file is fingerprinted by the file found in the data
  directories, or, when none is found (it would be downloaded), by its origin.
* an embedded or generated dataset: ``generated:<hex>``, a hash of the loader's name and
  parameters (its content is a function of them); a plug-in loader may define
  ``fingerprint(params) -> str`` on its registered object to say more.

`Fingerprint.files` lists the files the value depends on with their stat keys
(`treebench.utils.atomic.stat_key`), so that a rerun answered from the plan cache can tell in a few
``stat`` calls that none changed (`treebench.utils.atomic.files_unchanged`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from treebench.utils.atomic import read_json_object, sha256_of, stat_key, write_json
from treebench.data.locate import cache_root, locate
from treebench.errors import DataError
from treebench.registry import DATASETS

#: the user-cache file of file hashes
CACHE_FILE = "fingerprints.json"
#: the most entries the cache keeps (the oldest go first)
MAX_ENTRIES = 4096


@dataclass(frozen=True)
class Fingerprint:
    """The fingerprint of one dataset, and the files (path → stat key) it was computed from."""

    value: str
    files: dict[str, list[int]] = field(default_factory=dict)


def _sha(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class FileHashes:
    """sha256 of files, remembered by (resolved path, stat key) in memory and in the user
    cache; a cache that cannot be read or written only costs a read of the file."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.path = cache_root(cache_dir) / CACHE_FILE
        self._known: dict[str, Any] | None = None
        self._dirty = False

    def _load(self) -> dict[str, Any]:
        if self._known is None:
            self._known = read_json_object(self.path)
        return self._known

    def sha256(self, p: Path) -> tuple[str, str, list[int]]:
        """(the file's sha256, its resolved path, its stat key)."""
        real = p.resolve()
        st = real.stat()
        key = stat_key(st)
        known = self._load()
        hit = known.get(str(real))
        if isinstance(hit, list) and len(hit) == 5 and hit[:4] == key and isinstance(hit[4], str):
            return hit[4], str(real), key
        with open(real, "rb") as fh:
            digest = sha256_of(fh)
        after = stat_key(real.stat())
        if after != key:  # written while it was read: hash what is there now, next time
            raise DataError(f"data file `{p}` changed while treebench read it; run again once "
                            f"it is written.")
        known.pop(str(real), None)
        known[str(real)] = key + [digest]
        self._dirty = True
        return digest, str(real), key

    def save(self) -> None:
        if not self._dirty or self._known is None:
            return
        while len(self._known) > MAX_ENTRIES:
            self._known.pop(next(iter(self._known)))
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_json(self.path, self._known)
        self._dirty = False


def _file_fingerprint(params: dict[str, Any], hashes: FileHashes,
                      dataset: str | None = None) -> Fingerprint:
    from treebench.data.files import check_data_path

    parts, files = [], {}
    for key in ("path", "test_path"):
        if not params.get(key):
            continue
        p = Path(str(params[key])).expanduser()
        check_data_path(p, key, dataset or params.get("name"))
        digest, real, st = hashes.sha256(p)
        parts.append(digest)
        files[real] = st
    return Fingerprint("sha256:" + "+".join(parts), files)


def _catalog_fingerprint(name: str, hashes: FileHashes,
                         data_dirs: list[Path] | None) -> Fingerprint:
    from treebench.data.catalog import get_entry

    entry = get_entry(name)
    files: dict[str, list[int]] = {}
    if entry.source is not None:
        with contextlib.suppress(OSError):
            files[str(Path(entry.source).resolve())] = stat_key(Path(entry.source).stat())
    sums: list[Any] = []
    for f in entry.files:
        recorded = f.sha256 or f.url_sha256
        if recorded:
            sums.append([f.role, recorded])
            continue
        try:
            p = locate(f, list(data_dirs or []), offline=True, dataset=entry.name)
            digest, real, st = hashes.sha256(Path(p))
            files[real] = st
            sums.append([f.role, digest])
        except DataError:  # not here: the loader finds (or downloads) it, by its origin
            sums.append([f.role, None, f.path, f.url])
    if not entry.files:
        sums.append(["origin", entry.spec.get("origin")])
    return Fingerprint("catalog:" + _sha([sums, entry.parse_options()])[:32], files)


def fingerprint(loader: str, params: dict[str, Any], *, data_dirs: list[Path] | None = None,
                hashes: FileHashes | None = None, dataset: str | None = None) -> Fingerprint:
    """The fingerprint of the dataset that ``loader`` loads with ``params``; raises
    `treebench.errors.DataError` (one sentence, naming the dataset as ``dataset`` when given:
    the config's name for it) for a data file that is not there."""
    own = hashes is None
    hashes = hashes if hashes is not None else FileHashes()
    try:
        if loader == "file":
            return _file_fingerprint(params, hashes, dataset)
        entry = DATASETS.get(loader) if loader in DATASETS else None
        catalog = (entry.extra or {}).get("catalog") if entry is not None else None
        if catalog:
            return _catalog_fingerprint(str(catalog), hashes, data_dirs)
        custom = getattr(entry.obj, "fingerprint", None) if entry is not None else None
        if callable(custom):
            return Fingerprint(f"{loader}:{custom(dict(params))}")
        return Fingerprint("generated:" + _sha([loader, params])[:32])
    finally:
        if own:
            hashes.save()
