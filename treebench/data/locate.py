"""Finding data files: data directories, then the user cache, then the origin when online.

Lookup order for every catalog file:
1. each directory of ``--data-dir`` / ``TREEBENCH_DATA_DIR`` (a path list), at the file's catalog
   path or one of its alternative paths, compressed (``.gz``) or not;
2. the user cache ``~/.cache/treebench/files/`` (``TREEBENCH_CACHE_DIR`` overrides the root);
3. when not offline, the file's public origin URL (downloaded into the cache, checksum verified).

``TREEBENCH_OFFLINE=1`` (or ``offline=True``) never touches the network. A missing file or a
checksum mismatch raises `DataError` naming the file, what was expected and where to put it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from treebench import envvars
from treebench.utils.atomic import sha256_of
from treebench.errors import DataError

_HASH_MEMO: dict[tuple[str, int, int, int, int], str] = {}


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """The user cache: ``cache_dir``, else ``TREEBENCH_CACHE_DIR``, else ``~/.cache/treebench``."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = envvars.directory("TREEBENCH_CACHE_DIR")
    if env is not None:
        return env
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "treebench"


def data_dirs_from_env(extra: list[str | Path] | None = None) -> list[Path]:
    """Data directories in lookup order: explicit ones, then ``TREEBENCH_DATA_DIR`` (a path
    list)."""
    dirs: list[Path] = [Path(p) for p in (extra or [])]
    return dirs + envvars.path_list("TREEBENCH_DATA_DIR")


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes (memoised on path, inode, size, modification and change
    time: an edit that keeps the size and restores the modification time still changes the
    change time, which no copy or ``touch`` can set)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if key not in _HASH_MEMO:
        with open(path, "rb") as fh:
            _HASH_MEMO[key] = sha256_of(fh)
    return _HASH_MEMO[key]


@dataclass(frozen=True)
class FileSpec:
    """One catalog file: where it lives relative to a data directory and how to check it."""

    path: str
    role: str = "full"
    sha256: str | None = None
    bytes: int | None = None
    alt_paths: tuple[str, ...] = ()
    url: str | None = None
    url_sha256: str | None = None  # checksum of the file as published at ``url`` (often uncompressed)
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def checksums(self) -> set[str]:
        return {c for c in (self.sha256, self.url_sha256) if c}

    def candidates(self) -> list[str]:
        out: list[str] = []
        for p in (self.path, *self.alt_paths):
            variants = [p, p[:-3]] if p.endswith(".gz") else [p, p + ".gz"]
            out += [v for v in variants if v not in out]
        return out


def verify(path: Path, spec: FileSpec, dataset: str) -> None:
    if not spec.checksums:
        return
    got = sha256_file(path)
    if got not in spec.checksums:
        raise DataError(
            f"checksum mismatch for `{path}` (dataset `{dataset}`): expected sha256 {spec.sha256} "
            f"(the catalog's copy of `{spec.path}`), got {got}; replace the file with the catalog's "
            f"version or remove it so treebench can fetch it."
        )


def find_local(spec: FileSpec, data_dirs: list[Path], cache_dir: Path | None, dataset: str) -> Path | None:
    """The verified local copy of ``spec`` (data dirs first, then the cache), or None."""
    roots = [Path(d) for d in data_dirs] + [cache_root(cache_dir) / "files"]
    for root in roots:
        for rel in spec.candidates():
            p = root / rel
            if p.is_file():
                verify(p, spec, dataset)
                return p
    return None


def missing_message(spec: FileSpec, data_dirs: list[Path], cache_dir: Path | None, dataset: str,
                    offline: bool, origin: str | None = None) -> str:
    """Where a missing data file was looked for and how to get it (``origin``: the page or
    repository the catalog names for a file without a public download)."""
    where = ", ".join(str(d) for d in data_dirs) or "none set"
    if spec.url and offline:
        how = ", or run without --offline (unset TREEBENCH_OFFLINE) so treebench can download it from its origin"
    elif spec.url:
        how = f", or run `treebench datasets fetch {dataset}` while online"
    elif origin:
        how = f"; it has no public download: get it from {origin}"
    else:
        how = " (the catalog names no public download for this file)"
    return (
        f"data file `{spec.path}` of dataset `{dataset}` was not found (data dirs: {where}; cache: "
        f"{cache_root(cache_dir) / 'files'}); put it at <data dir>/{spec.path} and pass --data-dir or set "
        f"TREEBENCH_DATA_DIR{how}."
    )


def download(spec: FileSpec, cache_dir: Path | None, dataset: str, timeout: float = 60.0) -> Path:
    """Download ``spec.url`` into the cache (atomically), verifying its checksum."""
    if not spec.url:
        raise DataError(f"data file `{spec.path}` of dataset `{dataset}` has no public download URL in the catalog.")
    target_rel = spec.path if not (spec.path.endswith(".gz") and not spec.url.endswith(".gz")) else spec.path[:-3]
    target = cache_root(cache_dir) / "files" / target_rel
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(spec.url, timeout=timeout) as resp:  # noqa: S310
            shutil.copyfileobj(resp, out)
        got = sha256_file(Path(tmp))
        if spec.checksums and got not in spec.checksums:
            raise DataError(
                f"the download of `{spec.url}` for dataset `{dataset}` has sha256 {got}, expected "
                f"{spec.url_sha256 or spec.sha256}; the origin changed, so get the file elsewhere and "
                f"put it at <data dir>/{spec.path}."
            )
        os.replace(tmp, target)
    except OSError as exc:
        raise DataError(f"could not download `{spec.url}` for dataset `{dataset}`: {exc}.") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def locate(
    spec: FileSpec,
    data_dirs: list[Path],
    *,
    offline: bool,
    cache_dir: Path | None = None,
    dataset: str = "?",
    origin: str | None = None,
) -> Path:
    """Path of a verified copy of ``spec``; downloads into the cache when allowed and online.
    ``origin`` (the page or repository of a file with no public download) goes into the error."""
    p = find_local(spec, data_dirs, cache_dir, dataset)
    if p is not None:
        return p
    if offline or not spec.url:
        raise DataError(missing_message(spec, data_dirs, cache_dir, dataset, offline, origin))
    return download(spec, cache_dir, dataset)
