"""numba's cache does not see a change of a module a kernel imports: the stamp of the search
layer, where every kernel lives, drops treebench's cached kernels when its sources change, and
only then."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from treebench.search._cache_stamp import (
    cache_folders, drop_stale_kernels, numba_subpath, source_stamp,
)


def _package(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    for folder in ("search", "algorithms", "report"):
        (pkg / folder / "__pycache__").mkdir(parents=True)
    (pkg / "search" / "state.py").write_text("A = 1\n")
    (pkg / "search" / "topk.py").write_text("B = 1\n")
    return pkg


def _cached(pkg: Path) -> list[str]:
    return sorted(p.name for p in pkg.rglob("*.nb[ic]"))


def _compile(pkg: Path) -> None:
    (pkg / "search" / "__pycache__" / "state.f-1.py311.nbi").write_bytes(b"i")
    (pkg / "search" / "__pycache__" / "topk.solve-9.py311.nbi").write_bytes(b"i")
    (pkg / "search" / "__pycache__" / "topk.solve-9.py311.1.nbc").write_bytes(b"c")


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)


def test_kept_while_the_layer_is_unchanged_dropped_when_it_changes(tmp_path):
    pkg = _package(tmp_path)
    _compile(pkg)
    assert drop_stale_kernels(pkg) == 3  # no stamp yet: nothing proves the caches fresh
    _compile(pkg)
    assert drop_stale_kernels(pkg) == 0
    assert len(_cached(pkg)) == 3
    # the estimators hold no kernel
    (pkg / "algorithms" / "topk.py").write_text("C = 2\n")
    assert drop_stale_kernels(pkg) == 0
    # a change in the layer the kernels import drops every cached kernel
    (pkg / "search" / "state.py").write_text("A = 2\n")
    assert drop_stale_kernels(pkg) == 3
    assert _cached(pkg) == []
    assert drop_stale_kernels(pkg) == 0
    # and so does a change of an objective module: the search engine is compiled with the
    # objective modules it dispatches to
    _compile(pkg)
    (pkg / "search" / "topk.py").write_text("B = 2\n")
    assert drop_stale_kernels(pkg) == 3
    assert _cached(pkg) == []


def test_other_folders_and_python_bytecode_untouched(tmp_path):
    pkg = _package(tmp_path)
    keep = [pkg / "report" / "__pycache__" / "x.f-1.py311.nbi",
            pkg / "search" / "__pycache__" / "state.cpython-311.pyc"]
    for path in keep:
        path.write_bytes(b"k")
    drop_stale_kernels(pkg)
    assert all(path.exists() for path in keep)


def test_a_user_cache_dir_is_checked_in_its_own_folders(tmp_path, monkeypatch):
    pkg = _package(tmp_path)
    _compile(pkg)  # in-tree kernels: not the ones numba reads with NUMBA_CACHE_DIR set
    user = tmp_path / "elsewhere"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(user))
    search = user / numba_subpath(pkg / "search")
    other = user / numba_subpath(pkg / "report")
    for folder, name in ((search, "state.f-1.py311.nbi"), (search, "topk.solve-9.py311.nbi"),
                         (search, "topk.solve-9.py311.1.nbc"), (other, "x.f-1.py311.nbi")):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"k")
    assert drop_stale_kernels(pkg) == 3  # no stamp yet
    assert len(_cached(pkg)) == 3 and (other / "x.f-1.py311.nbi").exists()
    (search / "topk.solve-9.py311.nbi").write_bytes(b"k")
    assert drop_stale_kernels(pkg) == 0  # stamp current
    (pkg / "search" / "state.py").write_text("A = 3\n")
    assert drop_stale_kernels(pkg) == 1  # the layer changed: the user folder's kernels go
    assert not list(search.glob("*.nb[ic]"))
    assert (other / "x.f-1.py311.nbi").exists() and len(_cached(pkg)) == 3


def test_numba_names_its_folders_under_a_user_cache_dir_as_assumed(tmp_path):
    """The folder name `numba_subpath` predicts is the one numba writes a kernel's cache to."""
    src = tmp_path / "src" / "kmod"
    src.mkdir(parents=True)
    (src / "kern.py").write_text(
        "from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return x + 1\n")
    cache = tmp_path / "cache"
    code = "import sys; sys.path.insert(0, sys.argv[1]); import kern; kern.f(1)"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "NUMBA_DISABLE_JIT": "0"}
    subprocess.run([sys.executable, "-c", code, str(src)], env=env, check=True, timeout=120)
    assert [p.name for p in cache.iterdir()] == [numba_subpath(src)]
    assert list((cache / numba_subpath(src)).glob("kern.f-*.nbi"))


def test_stamp_covers_names_and_bytes(tmp_path):
    pkg = _package(tmp_path)
    before = source_stamp(pkg)
    (pkg / "search" / "state.py").rename(pkg / "search" / "state2.py")
    assert source_stamp(pkg) != before


def test_the_installed_package_has_a_current_stamp():
    import treebench.search  # noqa: F401  (the import runs the check)

    pkg = Path(os.path.abspath(treebench.search.__file__)).parent.parent
    stamp = cache_folders(pkg)[0] / "treebench-search.stamp"
    if not stamp.parent.exists() or not stamp.exists():
        pytest.skip("the package's folder is read-only here")
    assert stamp.read_text(encoding="ascii") == source_stamp(pkg)


def test_every_kernel_on_the_search_layer_lives_in_it():
    """The stamp hashes the search layer's sources only: a numba kernel elsewhere in the
    package that imported the layer would be compiled against it without the stamp seeing its
    own file change (the binarizers' kernels import numpy and numba only)."""
    pkg = Path(os.path.abspath(__file__)).parents[2] / "treebench"
    elsewhere = [str(p.relative_to(pkg)) for p in pkg.rglob("*.py") if p.parent.name != "search"
                 and "@njit" in (src := p.read_text(encoding="utf-8")) and "treebench." in src]
    assert elsewhere == []
