"""Stale compiled kernels after a change of the search layer.

numba's on-disk cache (``@njit(cache=True)``) checks only the source file of the function it
caches. A kernel of `treebench.search.topk` or `treebench.search.gosdt` is compiled together
with the helpers and records it imports from this package (`state.Scratch`, `counts`, ...), and
the search engine (`engine`) with the objective modules it dispatches to (`topk`, `gosdt`,
`dpdt_layer`); when one of those changes and the kernel's own file does not, numba loads
machine code built for the old layout: wrong numbers or a crash. A fresh install is never
affected (every file is new), a working checkout after ``git pull`` is. Every numba kernel of
treebench lives in this package, so the stamp covers its sources.

`drop_stale_kernels` keeps one stamp, a hash of these sources, beside numba's cache files
and deletes treebench's cached kernels when the stamp no longer matches, so they are compiled
again. It runs once per process when `treebench.search` is imported (about a millisecond).
numba keeps the kernels of a source file in the ``__pycache__`` folder beside it, or, with
``NUMBA_CACHE_DIR`` set, in a folder of that directory named after the source's folder
(`numba_subpath`: its name, then the SHA-1 of its absolute path); the stamp and the deletion
follow the kernels there, and touch only the folders of treebench's own kernel modules.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

#: The package's folders whose ``__pycache__`` holds kernels compiled against this layer.
KERNEL_FOLDERS = ("search",)
STAMP_NAME = "treebench-search.stamp"


def source_stamp(package: Path) -> str:
    """Hash of the sources of the kernel folders (names and bytes, in name order)."""
    digest = hashlib.sha1()
    for path in [p for folder in KERNEL_FOLDERS for p in sorted((package / folder).glob("*.py"))]:
        digest.update(f"{path.parent.name}/{path.name}".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def numba_subpath(folder: Path) -> str:
    """The folder, under ``NUMBA_CACHE_DIR``, where numba keeps the kernels of the source files
    in ``folder``: the folder's name, ``_``, and the SHA-1 of its absolute path (numba's
    ``UserProvidedCacheLocator``; a test compiles a kernel to check it)."""
    path = os.path.abspath(folder)
    return f"{os.path.basename(path)}_{hashlib.sha1(path.encode()).hexdigest()}"


def cache_folders(package: Path) -> list[Path]:
    """The folders holding numba's cached kernels of `package`'s kernel modules (the stamp is
    kept in the first)."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        return [Path(user) / numba_subpath(package / folder) for folder in KERNEL_FOLDERS]
    return [package / folder / "__pycache__" for folder in KERNEL_FOLDERS]


def drop_stale_kernels(package: Path | None = None) -> int:
    """Delete numba's cached kernels of `package` when the search layer or a kernel module
    changed since they were written; returns how many cache files were deleted (0 when the
    stamp matched)."""
    # (the path as numba sees a module's file, links not resolved: numba names its folders
    # under NUMBA_CACHE_DIR after that path)
    package = Path(os.path.abspath(__file__)).parent.parent if package is None else package
    stamp = source_stamp(package)
    folders = cache_folders(package)
    stamp_file = folders[0] / STAMP_NAME
    try:
        if stamp_file.read_text(encoding="ascii") == stamp:
            return 0
    except OSError:
        pass
    removed = 0
    for cache in folders:
        for path in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass  # gone already (another process) or read-only: numba recompiles or reads
    try:
        stamp_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = stamp_file.with_name(f"{STAMP_NAME}.{os.getpid()}.tmp")
        tmp.write_text(stamp, encoding="ascii")
        os.replace(tmp, stamp_file)
    except OSError:
        pass  # a read-only install: nothing was cached there by us either
    return removed
