"""The parsed-data cache (`treebench.data.parsed_cache`): a file whose bytes changed (same size
included), a short, garbage or older-format file, or a crafted pickle in its place is never
read: the dataset is parsed again, with a note, and the file rebuilt."""

from __future__ import annotations

import hashlib
import pickle
import re
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from treebench.data import cachefile
from treebench.data.cachefile import CacheWarning, forget_all
from treebench.data.catalog import build_dataset, entry_from_dict
from treebench.data.parsed_cache import MAGIC, SUFFIX, TRAILER, read_parsed


@pytest.fixture
def toy(tmp_path):
    """A catalog entry of a small CSV (numbers with missing values, text) and its data dir."""
    rng = np.random.default_rng(0)
    data = tmp_path / "data" / "toy"
    data.mkdir(parents=True)
    n = 500
    df = pd.DataFrame({"a": rng.normal(size=n).round(3), "b": rng.integers(0, 9, n).astype(float),
                       "color": rng.choice(["red", "green", "blue"], n), "label": rng.choice(["yes", "no"], n)})
    df.loc[::11, "b"] = np.nan
    df.to_csv(data / "toy.csv", index=False)
    entry = entry_from_dict({
        "name": "toy", "format": "csv", "label": "label", "categorical": "auto",
        "files": [{"path": "toy/toy.csv", "sha256": hashlib.sha256((data / "toy.csv").read_bytes()).hexdigest()}],
        "origin": {"repository": "here"}, "citation": "c", "licence": "l"})
    return entry, tmp_path / "data"


def _load(toy, cache):
    entry, data = toy
    return build_dataset(entry, data_dirs=[data], offline=True, cache_dir=cache)


def _only(cache):
    (f,) = (cache / "parsed").glob(f"*{SUFFIX}")
    return f


def _same(a, b):
    pd.testing.assert_frame_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert a.categorical == b.categorical


class _Marker:
    """Unpickling this creates the file ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _damage(f, how, marker):
    data = f.read_bytes()
    n = len(data)
    if how == "flip":
        f.write_bytes(data[: n // 3] + bytes(b ^ 0xFF for b in data[n // 3 : n // 2]) + data[n // 2 :])
    elif how == "one-bit":
        f.write_bytes(data[: n // 2] + bytes([data[n // 2] ^ 1]) + data[n // 2 + 1 :])
    elif how == "truncate":
        f.write_bytes(data[: n // 2])
    elif how == "garbage":
        f.write_bytes(np.random.default_rng(2).integers(0, 256, n, dtype=np.uint8).tobytes())
    elif how == "old-version":  # the previous format: the Arrow file alone, no checksum
        f.write_bytes(data[:-TRAILER])
    elif how == "other-magic":  # a later version's trailer
        f.write_bytes(data[: -len(MAGIC)] + b"TBARROW9")
    elif how == "pickle":
        f.write_bytes(pickle.dumps(_Marker(marker)))
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["flip", "one-bit", "truncate", "garbage", "old-version", "other-magic", "pickle"])
def test_a_damaged_parsed_file_is_parsed_again_with_a_note(toy, tmp_path, how):
    cache = tmp_path / "cache"
    clean = _load(toy, cache)
    f = _only(cache)
    size = f.stat().st_size
    marker = tmp_path / "pwned"
    _damage(f, how, marker)
    forget_all()  # the next run: a new process
    with pytest.warns(CacheWarning, match=f"cache file {re.escape(str(f))} was damaged"):
        again = _load(toy, cache)
    _same(again, clean)
    assert not marker.exists()
    assert f.stat().st_size == size  # rebuilt
    forget_all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(_load(toy, cache), clean)


def test_a_clean_file_is_read_without_a_note_and_hashed_once_per_process(toy, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    clean = _load(toy, cache)
    f = _only(cache)
    calls = []
    real = cachefile.hash_range
    monkeypatch.setattr(cachefile, "hash_range", lambda *a: calls.append(1) or real(*a))
    forget_all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            got = read_parsed(f)
            assert got is not None
            pd.testing.assert_frame_equal(got[0], clean.X)
    assert len(calls) == 1
    # a change in place by another program, same size: caught by this process too
    time.sleep(0.05)  # a later change time than the write's (coarse file-system clocks)
    data = f.read_bytes()
    with open(f, "r+b") as fh:
        fh.seek(len(data) // 2)
        fh.write(bytes([data[len(data) // 2] ^ 0x10]))
    with pytest.warns(CacheWarning, match="checksum mismatch"):
        assert read_parsed(f) is None
    assert not f.exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_parsed(f) is None  # missing: a plain miss, no note
