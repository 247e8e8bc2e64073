"""Damaged cache files are never read, through `treebench run` in a fresh process (as a user
meets them): a parsed dataset, a prepared matrix or a fitted binarizer whose bytes changed
(same size), or a crafted pickle put in their place, give the numbers of a clean run and a
note on the console, and the file is rebuilt. Nothing in the cache folder is ever unpickled.

The runner prepares a dataset through the prepared-matrix cache only when it is large; the
runs here count every dataset as large (`fold.CHUNKED_ABOVE` = 0 in the child process), so
that a small catalog dataset goes through all three caches."""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from runs import result_rows

RUN = ("import sys; from treebench.execute import fold; fold.CHUNKED_ABOVE = 0; "
       "from treebench.cli import main; sys.argv = ['treebench', *sys.argv[1:]]; main()")
NOTE = "was damaged"
KINDS = ("parsed", "matrix", "fit")


def _frame(rng, n: int) -> pd.DataFrame:
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    c = rng.choice(["u", "v", "w"], n)
    y = np.where(x1 + 0.5 * x2 + (c == "u") + rng.normal(scale=0.5, size=n) > 0.3, "pos", "neg")
    return pd.DataFrame({"x1": x1.round(3), "x2": x2.round(3), "c": c, "label": y})


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A catalog dataset (training and test file), an experiment on it, and a first run that
    filled the cache: ``(root, its results)``."""
    root = tmp_path_factory.mktemp("damage")
    rng = np.random.default_rng(0)
    data = root / "data" / "toycache"
    data.mkdir(parents=True)
    files = []
    for role, n in (("train", 3000), ("test", 1000)):
        _frame(rng, n).to_csv(data / f"{role}.csv", index=False)
        files.append({"path": f"toycache/{role}.csv", "role": role,
                      "sha256": hashlib.sha256((data / f"{role}.csv").read_bytes()).hexdigest()})
    (root / "catalog").mkdir()
    (root / "catalog" / "toycache.yaml").write_text(yaml.safe_dump({
        "name": "toycache", "format": "csv", "label": "label", "categorical": ["c"], "files": files,
        "task": "classification", "origin": {"repository": "here"}, "citation": "c", "licence": "l"}))
    (root / "exp.yaml").write_text(yaml.safe_dump({
        "name": "damage", "seed": 0, "datasets": ["toycache"], "split": {"kind": "predefined"},
        "binarization": [{"method": "quantile", "params": {"max_splits": 8}}],
        "algorithms": [{"name": "cart", "params": {"max_depth": 3}}],
        "execution": {"n_jobs": 1, "backend": "sequential"}}))
    first = _run(root, root / "cache", root / "clean")
    assert NOTE not in first.stderr
    rows = result_rows(root / "clean")
    assert (rows["status"] == "ok").all() and rows["test_accuracy"].iloc[0] > 0.75
    return root, rows


def _run(root: Path, cache: Path, out: Path, **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k != "TREEBENCH_PREPARED_CACHE_GB"}
    env = {**base, "TREEBENCH_CATALOG": str(root / "catalog"), "TREEBENCH_DATA_DIR": str(root / "data"),
           "TREEBENCH_CACHE_DIR": str(cache), **env}
    got = subprocess.run([sys.executable, "-c", RUN, "run", str(root / "exp.yaml"), "--out", str(out),
                          "--no-report"], capture_output=True, text=True, env=env, timeout=300)
    assert got.returncode == 0, got.stderr
    return got


def _cache_file(cache: Path, kind: str) -> Path:
    """The one file of the cache ``kind`` (whatever its format version calls it)."""
    folder, pick = {"parsed": ("parsed", lambda p: True),
                    "matrix": ("prepared", lambda p: not p.name.endswith(".fit")),
                    "fit": ("prepared", lambda p: p.name.endswith(".fit"))}[kind]
    files = [p for p in (cache / folder).iterdir() if not p.name.endswith(".lock") and pick(p)]
    assert len(files) == 1, files
    return files[0]


def _flip_middle(path: Path) -> None:
    """Invert the bytes of the file's middle sixth: same size, other content."""
    b = bytearray(path.read_bytes())
    for i in range(len(b) // 3, len(b) // 2):
        b[i] ^= 0xFF
    path.write_bytes(bytes(b))


def _copy_cache(root: Path, tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(root / "cache", cache)
    return cache


def test_flipped_bytes_give_the_clean_numbers_a_note_and_a_rebuilt_file(clean, tmp_path):
    """The three files damaged at once: the parsed data is parsed again, and the matrix and the
    binarizer are rebuilt from it (an unchecked parsed file would spoil both)."""
    root, want = clean
    cache = _copy_cache(root, tmp_path)
    damaged = {kind: _cache_file(cache, kind) for kind in KINDS}
    sizes = {kind: p.stat().st_size for kind, p in damaged.items()}
    for p in damaged.values():
        _flip_middle(p)
    got = _run(root, cache, tmp_path / "out")
    pd.testing.assert_frame_equal(result_rows(tmp_path / "out"), want)
    notes = [line for line in got.stderr.splitlines() if NOTE in line]
    assert len(notes) == 3, got.stderr
    for kind, p in damaged.items():
        assert any(f"cache file {p} was damaged (checksum mismatch)" in n for n in notes), (kind, got.stderr)
        assert _readable(p, kind)  # rebuilt
        if kind != "fit":  # (a fitted binarizer's state holds its fit time)
            assert p.stat().st_size == sizes[kind]


def _readable(path: Path, kind: str) -> bool:
    """True when ``path`` is a whole cache file of ``kind`` (read without any warning)."""
    import warnings

    from treebench.data.cachefile import forget_all, read_header
    from treebench.data.parsed_cache import read_parsed
    from treebench.execute import fitted, prepared

    forget_all()  # checked as a new process would
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if kind == "parsed":
            return read_parsed(path) is not None
        with open(path, "rb") as fh:
            if kind == "fit":
                meta, _ = read_header(fh, fitted.FIT_MAGIC)
                return fitted.read_fitted(fh, meta["key"]) is not None
            meta, _ = read_header(fh, prepared.MAGIC, prepared.ALIGN)
        return prepared.open_matrix(path, meta["key"], tuple(meta["shape"]), meta["dtype"]) is not None


class _Marker:
    """Unpickling this creates the file ``path``: it stands for any code a pickle can run."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_crafted_pickle_in_the_cache_folder_is_never_executed(clean, tmp_path):
    root, want = clean
    cache = _copy_cache(root, tmp_path)
    marker = tmp_path / "pwned"
    crafted = pickle.dumps(_Marker(str(marker)))
    planted = [_cache_file(cache, kind) for kind in KINDS]
    for p in planted:
        p.write_bytes(crafted)
    got = _run(root, cache, tmp_path / "out")
    assert not marker.exists()
    pd.testing.assert_frame_equal(result_rows(tmp_path / "out"), want)
    for p in planted:
        assert f"cache file {p} was damaged" in got.stderr, got.stderr
        assert p.read_bytes() != crafted  # replaced by a rebuilt entry
